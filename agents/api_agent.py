"""Agents served by any OpenAI-compatible chat-completions endpoint (vLLM, TGI, llama.cpp, hosted models).

Screenshots travel as base64 PNG ``image_url`` parts (``data:image/png;base64,...``). The client is one
``httpx.Client`` per generator: its connections are kept alive and reused across requests (up to ``max_workers``
at once), every request has a connect and a read time-out, and a request that fails in a way a busy server
recovers from (no connection, a time-out, HTTP 408 / 409 / 429 / 5xx) is sent again after an exponential back-off
with jitter, or after the server's ``Retry-After``. A batch of conversations is sent as concurrent requests (one
per conversation, ``n`` samples each), so ``act_batch`` still costs one round of requests per env step.
"""

from __future__ import annotations

import base64
import io
import json
import os
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import numpy as np

from agents.generation import Conversation, Generation, SamplingParams
from agents.lm_agent import LMAgent
from agents.prompts.formats import OutputFormat

#: HTTP statuses worth sending again: time-out, conflict, rate limit and the server-side errors of a loaded or
#: restarting server. Any other error status (a bad request, a wrong key or model name) fails at once.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class APIError(RuntimeError):
    """The endpoint answered with an error or something that is not a chat completion."""


class APIGenerator:
    """A :class:`~agents.generation.Generator` over ``POST {base_url}/chat/completions``.

    Args:
        base_url: e.g. ``http://localhost:8000/v1``.
        model: the model name the server expects.
        api_key: sent as a bearer token; default ``$OPENAI_API_KEY`` (none when unset).
        timeout: seconds a request may wait for the server's answer (each read; a stalled server is abandoned
            after this long and the request is retried).
        max_workers: concurrent requests for a batch, and the connections kept alive for reuse.
        request_logprobs: ask for per-token log-probs (``logprobs: true``); servers that support it return
            them, in nats, under their own sampling settings. Token ids are never available over this API.
        supports_images: send screenshots (set ``False`` for text-only models).
        extra_body: merged into every request body (e.g. ``{"top_k": 20}`` for vLLM).
        max_retries: sends after the first for a request that failed in a retryable way (no connection, a
            time-out, HTTP 408 / 409 / 429 / 5xx); 0 never retries.
        backoff: seconds before the first retry; each next one waits twice as long (times a random factor in
            [0.5, 1], so clients that failed together do not retry together), at most ``max_backoff``.
        max_backoff: the longest wait between two sends in seconds, also the cap on a server's ``Retry-After``.
        connect_timeout: seconds to open a connection (a server that is down fails fast and is retried).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_workers: int = 8,
        request_logprobs: bool = False,
        supports_images: bool = True,
        extra_body: dict[str, Any] | None = None,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        connect_timeout: float = 10.0,
    ) -> None:
        if max_retries < 0 or backoff < 0 or max_backoff < 0 or timeout <= 0 or connect_timeout <= 0:
            raise ValueError(
                f"APIGenerator needs max_retries >= 0, backoff >= 0, max_backoff >= 0 and positive time-outs; got "
                f"max_retries={max_retries}, backoff={backoff}, max_backoff={max_backoff}, timeout={timeout}, "
                f"connect_timeout={connect_timeout}"
            )
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout = timeout
        self.max_workers = max_workers
        self.request_logprobs = request_logprobs
        self.supports_images = supports_images
        self.extra_body = dict(extra_body or {})
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.connect_timeout = connect_timeout
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()
        self._jitter = random.Random()

    # ----- connection ----------------------------------------------------------------------------------------
    def client(self) -> httpx.Client:
        """The generator's HTTP client, made on first use; its keep-alive pool holds up to ``max_workers``
        connections, reused by every later request."""
        with self._client_lock:
            if self._client is None:
                headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
                self._client = httpx.Client(
                    headers=headers,
                    timeout=httpx.Timeout(self.timeout, connect=min(self.connect_timeout, self.timeout)),
                    limits=httpx.Limits(
                        max_connections=self.max_workers, max_keepalive_connections=self.max_workers
                    ),
                )
            return self._client

    def close(self) -> None:
        """Close the kept-alive connections; a later request opens new ones. Idempotent."""
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> APIGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def generate(
        self,
        conversations: Sequence[Conversation],
        images: Sequence[Sequence[Any]] | None = None,
        sampling: SamplingParams | None = None,
    ) -> list[list[Generation]]:
        sampling = sampling or SamplingParams()
        jobs = [(conv, list(images[i]) if images else []) for i, conv in enumerate(conversations)]
        if len(jobs) <= 1:
            return [self._complete(conv, imgs, sampling) for conv, imgs in jobs]
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(jobs))) as pool:
            return list(pool.map(lambda job: self._complete(job[0], job[1], sampling), jobs))

    def request_body(
        self, conversation: Conversation, images: Sequence[Any], sampling: SamplingParams, n: int
    ) -> dict[str, Any]:
        """The JSON body for one conversation (image parts filled with the given screenshots)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(conversation, images),
            "max_tokens": sampling.max_new_tokens,
            "temperature": sampling.temperature,
            "n": n,
        }
        if sampling.top_p is not None:
            body["top_p"] = sampling.top_p
        if sampling.top_k:
            body["top_k"] = sampling.top_k  # not in OpenAI's schema; vLLM and TGI accept it
        if self.request_logprobs:
            body["logprobs"] = True
        body.update(self.extra_body)
        return body

    def _complete(
        self, conversation: Conversation, images: Sequence[Any], sampling: SamplingParams
    ) -> list[Generation]:
        out: list[Generation] = []
        # Some servers ignore n > 1; ask again for the missing samples.
        for _ in range(sampling.num_samples):
            missing = sampling.num_samples - len(out)
            if missing <= 0:
                break
            reply = self._post(self.request_body(conversation, images, sampling, missing))
            choices = reply.get("choices")
            if not isinstance(choices, list) or not choices:
                raise APIError(f"{self.url} returned no choices: {str(reply)[:300]}")
            for choice in choices[:missing]:
                out.append(_generation(choice))
        return out

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        """One chat completion, sent again after a back-off while it fails in a retryable way."""
        client = self.client()
        failure, retry_after = "", None
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self._delay(attempt, retry_after))
                retry_after = None
            try:
                response = client.post(self.url, json=body)
            except httpx.TimeoutException as exc:
                failure = (
                    f"no answer from {self.url} in time ({type(exc).__name__}; timeout={self.timeout:g} s)"
                )
                continue
            except httpx.TransportError as exc:
                failure = f"could not reach {self.url}: {exc!r}; is the server running?"
                continue
            if response.status_code in RETRY_STATUSES:
                failure = f"{self.url} answered HTTP {response.status_code}: {response.text[:300]}"
                retry_after = _retry_after(response)
                continue
            if response.is_error:
                raise APIError(f"{self.url} answered HTTP {response.status_code}: {response.text[:300]}")
            try:
                return response.json()
            except json.JSONDecodeError as exc:
                raise APIError(f"{self.url} did not return JSON: {exc}") from exc
        sends = self.max_retries + 1
        raise APIError(f"{failure} (gave up after {sends} send{'s' if sends > 1 else ''})")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before send ``attempt`` (1 = the first retry): the server's ``Retry-After`` when it gave
        one, else ``backoff * 2**(attempt - 1)`` times a random factor in [0.5, 1]; never over ``max_backoff``."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        return min(self.backoff * 2 ** (attempt - 1), self.max_backoff) * self._jitter.uniform(0.5, 1.0)


def _retry_after(response: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds (the delta-seconds form; an HTTP date or junk gives ``None``)."""
    try:
        return max(0.0, float(response.headers.get("retry-after", "")))
    except ValueError:
        return None


def _generation(choice: dict[str, Any]) -> Generation:
    message = choice.get("message") or {}
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    logprobs = None
    lp = choice.get("logprobs")
    if isinstance(lp, dict) and isinstance(lp.get("content"), list):
        logprobs = [float(t["logprob"]) for t in lp["content"] if isinstance(t, dict) and "logprob" in t]
    return Generation(text=content or "", logprobs=logprobs, finish_reason=choice.get("finish_reason"))


def to_openai_messages(conversation: Conversation, images: Sequence[Any]) -> list[dict[str, Any]]:
    """Replace each ``{"type": "image"}`` part with a base64 PNG ``image_url`` part, in order."""
    queue = list(images)
    messages = []
    for message in conversation:
        content = message.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                if part.get("type") == "image":
                    if not queue:
                        raise ValueError("the conversation has more image parts than images")
                    parts.append({"type": "image_url", "image_url": {"url": png_data_url(queue.pop(0))}})
                else:
                    parts.append({"type": "text", "text": str(part.get("text", ""))})
            content = parts
        messages.append({"role": message.get("role", "user"), "content": content})
    return messages


def png_data_url(image: Any) -> str:
    """``data:image/png;base64,...`` for an (H, W, 3) uint8 array or a PIL image."""
    from PIL import Image

    pil = image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image, dtype=np.uint8))
    buffer = io.BytesIO()
    pil.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class APIAgent(LMAgent):
    """An OpenAI-compatible endpoint as an agent (GUI-R1 prompting for GUI envs by default).

    Args:
        base_url: e.g. ``http://localhost:8000/v1``.
        model: the served model name.
        output_format: ``"auto"``, ``"gui_r1"``, ``"text"`` or an :class:`OutputFormat`.
        temperature: sampling temperature (0: greedy, as the server implements it).
        top_p: nucleus mass (``None``: the server's default).
        max_new_tokens: completion budget.
        **kwargs: passed to :class:`APIGenerator` (``api_key``, ``timeout``, ``supports_images``, ...).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        output_format: OutputFormat | str | None = "auto",
        temperature: float = 0.0,
        top_p: float | None = None,
        max_new_tokens: int = 512,
        **kwargs: Any,
    ) -> None:
        generator = APIGenerator(base_url, model, **kwargs)
        sampling = SamplingParams(temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens)
        super().__init__(generator, output_format, sampling, name=f"api:{model}")
