"""Agents served by any OpenAI-compatible chat-completions endpoint (vLLM, TGI, llama.cpp, hosted models).

Screenshots travel as base64 PNG ``image_url`` parts (``data:image/png;base64,...``). The client is plain
``urllib``; a batch of conversations is sent as concurrent requests (one per conversation, ``n`` samples
each), so ``act_batch`` still costs one round of requests per env step.
"""

from __future__ import annotations

import base64
import io
import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from agents.generation import Conversation, Generation, SamplingParams
from agents.lm_agent import LMAgent
from agents.prompts.formats import OutputFormat


class APIError(RuntimeError):
    """The endpoint answered with an error or something that is not a chat completion."""


class APIGenerator:
    """A :class:`~agents.generation.Generator` over ``POST {base_url}/chat/completions``.

    Args:
        base_url: e.g. ``http://localhost:8000/v1``.
        model: the model name the server expects.
        api_key: sent as a bearer token; default ``$OPENAI_API_KEY`` (none when unset).
        timeout: seconds per request.
        max_workers: concurrent requests for a batch.
        request_logprobs: ask for per-token log-probs (``logprobs: true``); servers that support it return
            them, in nats, under their own sampling settings. Token ids are never available over this API.
        supports_images: send screenshots (set ``False`` for text-only models).
        extra_body: merged into every request body (e.g. ``{"top_k": 20}`` for vLLM).
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
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout = timeout
        self.max_workers = max_workers
        self.request_logprobs = request_logprobs
        self.supports_images = supports_images
        self.extra_body = dict(extra_body or {})

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
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:300]
            raise APIError(f"{self.url} answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError) as exc:
            raise APIError(f"could not reach {self.url}: {exc}; is the server running?") from exc
        except json.JSONDecodeError as exc:
            raise APIError(f"{self.url} did not return JSON: {exc}") from exc


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
