"""APIAgent against a small OpenAI-compatible server started by the test (the client code is the real one)."""

from __future__ import annotations

import base64
import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from PIL import Image

from agents.api_agent import APIAgent, APIError
from gui_envs.schema.actions import Action


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            if body["model"] == "broken":
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b"boom")
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
            data = json.dumps({"choices": choices}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", requests
    httpd.shutdown()
    httpd.server_close()


def test_screenshot_goes_as_base64_png_and_the_answer_parses(
    server: tuple[str, list[dict[str, Any]]],
) -> None:
    url, requests = server
    agent = APIAgent(url, "gui-model", api_key="secret", request_logprobs=True)
    obs = {"screenshot": np.zeros((30, 40, 3), np.uint8), "instruction": "click ok", "elements": []}
    out = agent.act(obs)
    assert out.action == Action.click(40, 30)
    assert out.logprobs == [-0.25] and out.token_ids is None
    (req,) = requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer secret"
    assert req["body"]["logprobs"] is True and req["body"]["temperature"] == 0.0
    assert "click ok" in req["body"]["messages"][0]["content"][1]["text"]


def test_batches_and_groups(server: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = server
    agent = APIAgent(url, "gui-model", temperature=1.0)
    shots = [{"screenshot": np.zeros((10 + i, 20, 3), np.uint8), "instruction": "x"} for i in range(3)]
    outs = agent.act_batch(shots)
    assert [o.action.point for o in outs] == [(20.0, 10.0), (20.0, 11.0), (20.0, 12.0)]
    requests.clear()
    (group,) = agent.sample_groups(shots[:1], 3)
    assert len(group) == 3 and [r["body"]["n"] for r in requests] == [3, 1]  # topped up after a short reply


def test_server_errors_are_named(server: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = server
    with pytest.raises(APIError, match="HTTP 500"):
        APIAgent(url, "broken").act({"screenshot": np.zeros((5, 5, 3), np.uint8)})
    with pytest.raises(APIError, match="could not reach"):
        APIAgent("http://127.0.0.1:9/v1", "m", timeout=2).act({"screenshot": np.zeros((5, 5, 3), np.uint8)})
