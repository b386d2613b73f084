"""Batched log-probs of completions under the trained policy, as GRPO, SFT and DPO score them.

Every trainer scores completions the same way: prompt tokens (left padded, as generation saw them) followed by
completion tokens (right padded), one forward pass, ``log_softmax(logits / T)`` gathered at the completion
tokens. Positions follow the attention mask so that left padding does not shift them (generation counts
positions the same way), which keeps the recomputed log-probs equal to the sampler's. :func:`split_by_tokens`
cuts a batch into micro-batches under a token budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class TokenBatch:
    """Prompts and completions of ``B`` samples, ready for one forward pass.

    Attributes:
        inputs: model inputs (``input_ids``, ``attention_mask``, and image tensors for a VLM), ``(B, P + T)``.
        completion_ids: ``(B, T)`` completion tokens (pad where ``completion_mask`` is 0).
        completion_mask: ``(B, T)`` 1 on real completion tokens.
        prompt_len: ``P``, the padded prompt length.
        suppressed: token ids the sampler never draws (a VLM's image placeholders; see
            ``HFGenerator.suppress_ids``); scoring gives them probability 0 too, as sampling did.
    """

    inputs: dict[str, torch.Tensor]
    completion_ids: torch.Tensor
    completion_mask: torch.Tensor
    prompt_len: int
    suppressed: tuple[int, ...] = ()

    def select(self, rows: Sequence[int]) -> TokenBatch:
        """The sub-batch of ``rows`` of a text batch (a VLM's image tensors do not split by row: encode those
        samples instead)."""
        if set(self.inputs) - {"input_ids", "attention_mask", "position_ids"}:
            raise ValueError("select() splits text batches only; encode a VLM's mini-batch with encode_batch")
        idx = torch.as_tensor(list(rows), dtype=torch.long, device=self.completion_ids.device)
        inputs = {k: v[idx] for k, v in self.inputs.items()}
        return TokenBatch(
            inputs, self.completion_ids[idx], self.completion_mask[idx], self.prompt_len, self.suppressed
        )


def encode_batch(
    generator: Any,
    prompts: Sequence[str],
    completions: Sequence[Sequence[int]],
    images: Sequence[Sequence[Any]] | None = None,
) -> TokenBatch:
    """Tokenise ``prompts`` (chat template already applied) and append ``completions`` (token ids).

    Args:
        generator: an :class:`agents.hf_agent.HFGenerator` (its tokenizer / processor and device).
        prompts: rendered prompt texts, one per sample.
        completions: completion token ids, one list per sample (at least one token each).
        images: per-sample screenshots for a VLM, or ``None``.
    """
    from agents.hf_agent import to_pil

    tok = generator.tokenizer
    tok.padding_side = "left"
    flat = [to_pil(img) for imgs in (images or []) for img in imgs]
    if flat:
        enc = generator.processor(text=list(prompts), images=flat, padding=True, return_tensors="pt")
    else:
        # A group's samples share one prompt: tokenise each distinct prompt once, then index rows.
        distinct = list(dict.fromkeys(prompts))
        row = {text: i for i, text in enumerate(distinct)}
        enc = tok(distinct, padding=True, return_tensors="pt", add_special_tokens=False)
        enc = {k: v[[row[text] for text in prompts]] for k, v in enc.items()}
    b, t = len(completions), max(len(c) for c in completions)
    comp = torch.full((b, t), tok.pad_token_id, dtype=torch.long)
    cmask = torch.zeros((b, t), dtype=torch.long)
    for i, c in enumerate(completions):
        comp[i, : len(c)] = torch.as_tensor(list(c), dtype=torch.long)
        cmask[i, : len(c)] = 1
    inputs = {k: v for k, v in enc.items()}
    p = inputs["input_ids"].shape[1]
    inputs["input_ids"] = torch.cat([inputs["input_ids"], comp], dim=1)  # (B, P + T)
    inputs["attention_mask"] = torch.cat([inputs["attention_mask"], cmask], dim=1)
    if "mm_token_type_ids" in inputs:
        inputs["mm_token_type_ids"] = torch.cat([inputs["mm_token_type_ids"], torch.zeros_like(comp)], dim=1)
    if not flat and not getattr(generator, "supports_images", False):
        # Text models take positions as given: count them along the mask, as generate() does.
        inputs["position_ids"] = (inputs["attention_mask"].cumsum(-1) - 1).clamp(min=0)
    device = generator.device
    suppressed = tuple(getattr(generator, "suppress_ids", ()))
    return TokenBatch(
        {k: v.to(device) for k, v in inputs.items()}, comp.to(device), cmask.to(device), p, suppressed
    )


def completion_logprobs(
    model: Any, batch: TokenBatch, temperature: float = 1.0, with_entropy: bool = False, chunk_size: int = 0
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``log pi(y_t | x, y_<t)`` of every completion token, ``(B, T)``, and optionally the entropy ``(B, T)``.

    Log-probs are of ``softmax(logits / temperature)`` with ``batch.suppressed`` tokens at probability 0 (the
    distribution the sampler drew from).
    Gradients flow unless called under ``torch.no_grad``; the entropy never carries gradients.

    ``chunk_size`` > 0: the LM head runs on the final hidden states ``chunk_size // B`` completion positions at a
    time (at least one), and each chunk's fp32 ``(B, c, V)`` logits are dropped after the forward and recomputed
    in the backward (activation checkpointing). The largest fp32 tensor is then one chunk's logits, never the
    ``(B, T, V)`` of the whole batch (18.6 GiB for 128 x 257 tokens of Qwen2.5's 151,936-token vocabulary).
    0: the whole ``(B, T, V)`` at once (the fastest when it fits).
    """
    from agents.hf_agent import suppress_logits

    t = batch.completion_ids.shape[1]
    if chunk_size > 0:
        return _chunked_logprobs(model, batch, temperature, with_entropy, chunk_size)
    # Only the last T + 1 positions get the LM head (TRL does the same): the prompt's logits are never read,
    # and on a small model the head over the whole prompt costs as much as the layers.
    logits = model(**batch.inputs, logits_to_keep=t + 1).logits  # (B, T + 1, V): positions p-1 .. p+T-1
    step_logits = logits[:, :t].float() / temperature  # (B, T, V): position p-1 predicts y_0
    step_logits = suppress_logits(step_logits, batch.suppressed)  # tokens the sampler never draws
    logp_all = torch.log_softmax(step_logits, dim=-1)
    logp = logp_all.gather(-1, batch.completion_ids[..., None]).squeeze(-1)  # (B, T)
    entropy = None
    if with_entropy:
        with torch.no_grad():
            entropy = -(logp_all.exp() * logp_all).sum(-1)  # (B, T)
    return logp, entropy


def _head_logprobs(
    head: Any, hidden: torch.Tensor, ids: torch.Tensor, temperature: float, suppressed: tuple[int, ...]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chosen-token log-probs ``(B, c)`` and entropy ``(B, c)`` (no gradient) of hidden states ``(B, c, H)``."""
    from agents.hf_agent import suppress_logits

    logits = suppress_logits(head(hidden).float() / temperature, suppressed)  # (B, c, V) fp32
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, ids[..., None]).squeeze(-1)  # (B, c)
    with torch.no_grad():
        entropy = -(logp_all.exp() * logp_all).sum(-1)  # (B, c)
    return logp, entropy


def _chunked_logprobs(
    model: Any, batch: TokenBatch, temperature: float, with_entropy: bool, chunk_size: int
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """:func:`completion_logprobs` chunk by chunk of completion positions (see its ``chunk_size``)."""
    from torch.utils.checkpoint import checkpoint

    b, t = batch.completion_ids.shape
    # The forward goes through the model (and a DDP wrapper's hooks) as usual; its own head runs on one position
    # only, and the post-norm final hidden states feed the chunked head below.
    out = model(**batch.inputs, logits_to_keep=1, output_hidden_states=True)
    hidden = out.hidden_states[-1][:, -(t + 1) : -1]  # (B, T, H): position p-1+i predicts y_i
    head = getattr(model, "module", model).get_output_embeddings()
    step = max(1, chunk_size // b)
    parts, ents = [], []
    for s in range(0, t, step):
        h, ids = hidden[:, s : s + step], batch.completion_ids[:, s : s + step]
        if torch.is_grad_enabled() and h.requires_grad:
            # Only h and ids are saved; the chunk's fp32 logits are recomputed in the backward pass.
            logp, ent = checkpoint(
                _head_logprobs, head, h, ids, temperature, batch.suppressed, use_reentrant=False
            )
        else:
            logp, ent = _head_logprobs(head, h, ids, temperature, batch.suppressed)
        parts.append(logp)
        ents.append(ent)
    return torch.cat(parts, dim=1), (torch.cat(ents, dim=1) if with_entropy else None)


def split_by_tokens(
    rows: list[int],
    prompt_lens: Sequence[int],
    comp_lens: Sequence[int],
    budget: int,
    width: tuple[int, int] | None = None,
) -> list[list[int]]:
    """``rows`` in order, cut into micro-batches of at most ``budget`` padded tokens (``budget`` 0: one part).

    A micro-batch of rows ``R`` costs ``|R| * (max_R prompt + max_R completion)`` tokens, or ``|R| * (P + T)``
    with a fixed ``width = (P, T)`` (a text batch sliced from the full batch keeps its padding). A row that
    alone exceeds the budget forms a micro-batch of its own.

    >>> split_by_tokens([0, 1, 2, 3], [4, 4, 8, 2], [2, 2, 2, 2], 12)
    [[0, 1], [2], [3]]
    """
    if budget <= 0:
        return [list(rows)]
    parts: list[list[int]] = []
    cur: list[int] = []
    p_max = t_max = 0
    for r in rows:
        p, t = width if width is not None else (max(p_max, prompt_lens[r]), max(t_max, comp_lens[r]))
        if cur and (len(cur) + 1) * (p + t) > budget:
            parts.append(cur)
            cur, p_max, t_max = [], 0, 0
            p, t = width if width is not None else (prompt_lens[r], comp_lens[r])
        cur.append(r)
        p_max, t_max = p, t
    parts.append(cur)
    return parts


def prompt_lengths(
    generator: Any, prompts: Sequence[str], images: Sequence[Sequence[Any]] | None = None
) -> list[int]:
    """Tokens of each prompt as :func:`encode_batch` encodes it, without padding (a VLM's image tokens included):
    the prompt side of :func:`split_by_tokens`' costs, for batches encoded micro-batch by micro-batch.

    Text prompts are tokenised once per distinct text. With ``images`` each row goes through the processor on the
    CPU by itself and only its length is kept, so no batch of pixel values is built on the device.
    """
    from agents.hf_agent import to_pil

    tok = generator.tokenizer
    if not images or not any(images):
        distinct = list(dict.fromkeys(prompts))
        ids = tok(distinct, add_special_tokens=False)["input_ids"]
        length = {text: len(i) for text, i in zip(distinct, ids, strict=True)}
        return [length[text] for text in prompts]
    out = []
    for text, imgs in zip(prompts, images, strict=True):
        enc = generator.processor(text=[text], images=[to_pil(i) for i in imgs] or None, return_tensors="pt")
        out.append(int(enc["input_ids"].shape[1]))
    return out
