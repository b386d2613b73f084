"""APIAgent against a small OpenAI-compatible server started by the test on 127.0.0.1 (the client code is the real
one): images and answers, batches, and a server that fails, stalls and rate-limits (issue 39)."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from PIL import Image

from agents.api_agent import APIAgent, APIError, APIGenerator
from agents.generation import SamplingParams
from gui_envs.schema.actions import Action

SHOT = {"screenshot": np.zeros((5, 5, 3), np.uint8), "instruction": "x"}


@dataclass
class Stub:
    """The server's record and its misbehaviour, per model name: ``failures[model]`` lists what the next requests
    get before a normal answer (an int: that HTTP status; ``"stall"``: no answer for ``stall_s`` seconds;
    ``"429"``: a rate limit with ``Retry-After: 1``)."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, list[Any]] = field(default_factory=dict)
    stall_s: float = 3.0


@pytest.fixture
def server() -> Iterator[Stub]:
    stub = Stub(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, so the client can reuse its connection

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                stub.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body,
                                      "peer": self.client_address, "t": time.monotonic()})  # fmt: skip
                queue = stub.failures.get(body["model"], [])
                failure = queue.pop(0) if queue else None
            if failure == "stall":
                time.sleep(stub.stall_s)  # the client has given up by now; its connection is closed
                return
            if failure == "429":
                self._send(429, b'{"error": "slow down"}', {"Retry-After": "1"})
                return
            if isinstance(failure, int) or body["model"] == "broken":
                self._send(failure or 500, b"boom")
                return
            # Reply with a click at the screenshot's size, so the test sees the image arrived intact.
            parts = body["messages"][0]["content"]
            url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
            img = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
            text = f'<think>ok</think><answer>[{{"action": "click", "point": [{img.width}, {img.height}]}}]</answer>'
            choices = [
                {
                    "index": i,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": {"content": [{"token": "x", "logprob": -0.25}]},
                }
                for i in range(min(body.get("n", 1), 2))  # serve at most 2 per request, like a stingy server
            ]
            self._send(200, json.dumps({"choices": choices}).encode(), {"Content-Type": "application/json"})

        def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True  # a stalled handler must not hold the test up at shutdown

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a stalled handler writing to the socket the client closed

    httpd = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield stub
    httpd.shutdown()
    httpd.server_close()


def test_screenshot_goes_as_base64_png_and_the_answer_parses(server: Stub) -> None:
    agent = APIAgent(server.url, "gui-model", api_key="secret", request_logprobs=True)
    obs = {"screenshot": np.zeros((30, 40, 3), np.uint8), "instruction": "click ok", "elements": []}
    out = agent.act(obs)
    assert out.action == Action.click(40, 30)
    assert out.logprobs == [-0.25] and out.token_ids is None
    (req,) = server.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer secret"
    assert req["body"]["logprobs"] is True and req["body"]["temperature"] == 0.0
    assert "click ok" in req["body"]["messages"][0]["content"][1]["text"]


def test_batches_and_groups(server: Stub) -> None:
    agent = APIAgent(server.url, "gui-model", temperature=1.0)
    shots = [{"screenshot": np.zeros((10 + i, 20, 3), np.uint8), "instruction": "x"} for i in range(3)]
    outs = agent.act_batch(shots)
    assert [o.action.point for o in outs] == [(20.0, 10.0), (20.0, 11.0), (20.0, 12.0)]
    server.requests.clear()
    (group,) = agent.sample_groups(shots[:1], 3)
    assert len(group) == 3 and [r["body"]["n"] for r in server.requests] == [3, 1]  # topped up after a short reply


def test_sequential_requests_reuse_one_connection(server: Stub) -> None:
    agent = APIAgent(server.url, "gui-model")
    for _ in range(5):
        agent.act(SHOT)
    assert len(server.requests) == 5 and len({r["peer"] for r in server.requests}) == 1
    agent.generator.close()
    agent.act(SHOT)  # closing drops the kept-alive connection; the next request opens a new one
    assert len({r["peer"] for r in server.requests}) == 2


def test_server_errors_are_retried_with_growing_back_off(server: Stub) -> None:
    server.failures["gui-model"] = [500, 503, 502]
    agent = APIAgent(server.url, "gui-model", backoff=0.2)
    assert agent.act(SHOT).action == Action.click(5, 5)
    t = [r["t"] for r in server.requests]
    assert len(t) == 4  # three failures, then the answer
    # Waits of 0.2, 0.4, 0.8 s, each times a factor in [0.5, 1]: each at least half its nominal, and growing.
    gaps = np.diff(t)
    assert gaps[0] >= 0.1 and gaps[1] >= 0.2 and gaps[2] >= 0.4 and gaps[2] > gaps[0]


def test_a_stalled_request_times_out_and_is_sent_again(server: Stub) -> None:
    server.failures["gui-model"] = ["stall"]
    agent = APIAgent(server.url, "gui-model", timeout=0.5, backoff=0.01)
    t0 = time.monotonic()
    assert agent.act(SHOT).action == Action.click(5, 5)
    assert len(server.requests) == 2 and time.monotonic() - t0 < server.stall_s  # not waiting out the stall


def test_a_rate_limit_waits_for_retry_after(server: Stub) -> None:
    server.failures["gui-model"] = ["429"]
    agent = APIAgent(server.url, "gui-model", backoff=0.01)
    assert agent.act(SHOT).action == Action.click(5, 5)
    first, second = (r["t"] for r in server.requests)
    assert second - first >= 0.95  # the server's Retry-After: 1, not the 0.01 s back-off


def test_retry_after_is_capped_by_max_backoff(server: Stub) -> None:
    server.failures["gui-model"] = ["429"]
    APIAgent(server.url, "gui-model", max_backoff=0.05).act(SHOT)
    first, second = (r["t"] for r in server.requests)
    assert second - first < 0.5  # 0.05 s, not the server's 1 s


def test_a_batch_under_rate_limits_and_failures_still_completes(server: Stub) -> None:
    server.failures["gui-model"] = ["429", 500, 503, 500]
    gen = APIGenerator(server.url, "gui-model", backoff=0.01, max_backoff=0.05)
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "x"}]}]
    images = [[np.zeros((7 + i, 9, 3), np.uint8)] for i in range(6)]
    with gen:
        outs = gen.generate([conv] * 6, images, SamplingParams(num_samples=1))
    assert len(outs) == 6 and all(len(o) == 1 and "click" in o[0].text for o in outs)
    assert len(server.requests) == 6 + 4 and gen._client is None  # every failure resent once; closed on exit


def test_client_errors_fail_at_once_and_retries_give_up(server: Stub) -> None:
    server.failures["gui-model"] = [400]
    with pytest.raises(APIError, match="HTTP 400"):
        APIAgent(server.url, "gui-model", backoff=0.01).act(SHOT)
    assert len(server.requests) == 1  # a bad request is not sent again
    server.requests.clear()
    with pytest.raises(APIError, match=r"HTTP 500: boom \(gave up after 3 sends\)"):
        APIAgent(server.url, "broken", max_retries=2, backoff=0.01).act(SHOT)
    assert len(server.requests) == 3
    t0 = time.monotonic()
    with pytest.raises(APIError, match="could not reach"):
        APIAgent("http://127.0.0.1:9/v1", "m", timeout=2, backoff=0.01).act(SHOT)
    assert time.monotonic() - t0 < 5  # a refused connection fails fast, even with its retries
    with pytest.raises(ValueError, match="max_retries"):
        APIGenerator(server.url, "m", max_retries=-1)
