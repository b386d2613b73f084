"""The generation interface: chat conversations in, sampled completions (with log-probs) out.

Agents never call a model directly; they hand conversations to a :class:`Generator`. Hugging Face
``generate`` serves it on CPU or GPU (:class:`agents.hf_agent.HFGenerator`), an OpenAI-compatible server
serves it over HTTP (:class:`agents.api_agent.APIGenerator`), and a vLLM engine may serve it later without
any agent changing.

A conversation is a list of chat messages ``{"role": ..., "content": ...}`` where ``content`` is a string or a
list of parts ``{"type": "text", "text": ...}`` / ``{"type": "image"}``. The ``i``-th ``{"type": "image"}``
part of a conversation refers to the ``i``-th image passed beside it (an (H, W, 3) uint8 array or a PIL
image).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]
Conversation = list[Message]


class SamplingConfigError(ValueError):
    """A sampling parameter is out of range."""


@dataclass(frozen=True)
class SamplingParams:
    """How to sample.

    Attributes:
        temperature: softmax temperature; ``0`` means greedy decoding.
        top_p: nucleus sampling mass in ``(0, 1]``; ``1`` or ``None`` turns it off.
        top_k: keep the ``k`` most likely tokens; ``0`` or ``None`` turns it off.
        max_new_tokens: generation budget per sample, in tokens.
        num_samples: completions per conversation (a group, for GRPO-style training).
    """

    temperature: float = 1.0
    top_p: float | None = None
    top_k: int | None = None
    max_new_tokens: int = 256
    num_samples: int = 1

    def __post_init__(self) -> None:
        if not (math.isfinite(self.temperature) and self.temperature >= 0):
            raise SamplingConfigError(f"temperature must be >= 0 (0 = greedy), got {self.temperature}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise SamplingConfigError(f"top_p must be in (0, 1] or None, got {self.top_p}")
        if self.top_k is not None and self.top_k < 0:
            raise SamplingConfigError(f"top_k must be >= 0 or None, got {self.top_k}")
        if self.max_new_tokens < 1:
            raise SamplingConfigError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.num_samples < 1:
            raise SamplingConfigError(f"num_samples must be >= 1, got {self.num_samples}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass
class Generation:
    """One sampled completion.

    Attributes:
        text: the decoded completion (special tokens removed).
        token_ids: generated token ids, ending with the end-of-sequence token when the model stopped by
            itself; padding is never included. ``None`` for generators that do not expose tokens.
        logprobs: ``log pi(token_t | prompt, tokens_<t)`` for each id in ``token_ids`` under the sampling
            policy, in nats (see :mod:`agents.sampling` for exactly which distribution).
        prompt: the prompt text the model read (chat template applied), for trainers.
        finish_reason: ``stop`` (end-of-sequence), ``length`` (budget exhausted) or what the server said.
    """

    text: str
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt: str | None = None
    finish_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Generator(Protocol):
    """Anything that samples completions for a batch of conversations in one call."""

    def generate(
        self,
        conversations: Sequence[Conversation],
        images: Sequence[Sequence[Any]] | None = None,
        sampling: SamplingParams | None = None,
    ) -> list[list[Generation]]:
        """Return ``sampling.num_samples`` generations per conversation (outer list: conversations)."""
        ...


def count_images(conversation: Conversation) -> int:
    """How many ``{"type": "image"}`` parts the conversation holds."""
    n = 0
    for message in conversation:
        content = message.get("content")
        if isinstance(content, list):
            n += sum(1 for part in content if isinstance(part, dict) and part.get("type") == "image")
    return n


def flatten_text(conversation: Conversation, image_placeholder: str = "<image>") -> str:
    """A plain-text rendering for tokenizers without a chat template (``role: content`` blocks)."""
    blocks = []
    for message in conversation:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(
                image_placeholder if part.get("type") == "image" else str(part.get("text", ""))
                for part in content
                if isinstance(part, dict)
            )
        blocks.append(f"{message.get('role', 'user')}: {content}")
    return "\n\n".join(blocks) + "\n\nassistant:"
