"""guigym's own sampling loop for text-only causal LMs: a lean stand-in for Hugging Face ``generate``.

``HFGenerator(decoder="loop")`` uses it. It draws from the same distribution as ``generate`` with the same
settings (temperature, top-k, top-p, suppressed tokens, padding after end-of-sequence) and returns the same
``(tokens, log-probs)``, but skips ``generate``'s per-token machinery (its logits-processor and stopping-criteria
lists, input preparation, output bookkeeping): on the tests' tiny CPU model that machinery is a third of the
sampling time, which is most of a small GRPO step. On a large model the forward pass dominates and both
decoders cost the same.

What it does per batch: one forward pass over each *distinct* prompt (a GRPO group's ``N`` samples share one
prefill, and its KV cache is copied to the ``N`` rows), then one forward pass per new token with the cache.
Image inputs (a VLM's pixel tensors, multimodal rotary positions) are not handled here: ``HFGenerator`` sends
them to ``generate``.

With the same torch seed, a batch without shared prompts draws the same tokens as ``generate`` (both call
``torch.multinomial`` on ``softmax`` of identically processed logits, row for row); with shared prompts the
first token of each row is drawn from the shared prompt's logits, so the draws differ but the distribution
does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

#: Generation-config settings that ``generate`` would apply and this loop does not, with their neutral values. A
#: checkpoint that sets one (Qwen2.5-VL's ``generation_config.json`` sets ``repetition_penalty=1.05``) is sampled
#: with ``generate``, so that both decoders always draw from the same distribution.
NEUTRAL_SETTINGS: dict[str, Any] = {
    "repetition_penalty": (None, 1.0),
    "encoder_repetition_penalty": (None, 1.0),
    "no_repeat_ngram_size": (None, 0),
    "bad_words_ids": (None,),
    "sequence_bias": (None,),
    "min_length": (None, 0),
    "min_new_tokens": (None, 0),
    "forced_bos_token_id": (None,),
    "forced_eos_token_id": (None,),
    "begin_suppress_tokens": (None,),
    "exponential_decay_length_penalty": (None,),
    "min_p": (None,),
    "top_h": (None,),
    "typical_p": (None, 1.0),
    "epsilon_cutoff": (None, 0.0),
    "eta_cutoff": (None, 0.0),
    "watermarking_config": (None,),
    "num_beams": (None, 1),
}


def settings_the_loop_ignores(model: Any) -> list[str]:
    """``name=value`` of each setting in ``model.generation_config`` that :func:`sample_tokens` does not apply."""
    config = getattr(model, "generation_config", None)
    if config is None:
        return []
    out = []
    for name, neutral in NEUTRAL_SETTINGS.items():
        value = getattr(config, name, None)
        if value not in neutral:
            out.append(f"{name}={value!r}")
    return out


def _cache_of(output: Any) -> tuple[Any, str]:
    """The KV cache a forward pass returned and the argument that takes it back: ``cache`` in transformers 5,
    ``past_key_values`` in 4.x. Read off the output, not the signature: a wrapper (a ``peft`` model) takes either
    through ``**kwargs``, and a misnamed argument would be dropped silently, decoding without the context."""
    cache = getattr(output, "cache", None)
    if cache is not None:
        return cache, "cache"
    return output.past_key_values, "past_key_values"


def process_logits(
    logits: torch.Tensor,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    suppress_ids: Sequence[int] = (),
) -> torch.Tensor:
    """``(B, V)`` next-token scores the way ``generate`` processes them: suppressed tokens to ``-inf``, then
    divided by ``temperature``, then top-k, then top-p (filtered tokens to ``-inf``). ``temperature=0`` (greedy)
    skips the warpers."""
    scores = logits.float()
    if suppress_ids:
        scores = scores.clone()
        scores[:, list(suppress_ids)] = float("-inf")
    if temperature == 0:
        return scores
    if temperature != 1.0:
        scores = scores / temperature
    if top_k:
        k = min(int(top_k), scores.shape[-1])
        kth = torch.topk(scores, k, dim=-1).values[:, -1:]  # (B, 1)
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        # Keep the smallest set of most likely tokens whose mass reaches top_p (at least one token).
        sorted_scores, order = torch.sort(scores, descending=False)
        cum = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
        drop_sorted = cum <= (1 - top_p)
        drop_sorted[:, -1] = False
        drop = drop_sorted.scatter(1, order, drop_sorted)
        scores = scores.masked_fill(drop, float("-inf"))
    return scores


def sample_tokens(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    source: Sequence[int],
    *,
    max_new_tokens: int,
    eos_ids: Sequence[int],
    pad_id: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    suppress_ids: Sequence[int] = (),
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample continuations of left-padded prompts with a KV cache.

    Args:
        model: a Hugging Face causal LM (text only).
        input_ids, attention_mask: ``(U, P)`` distinct prompts, left padded.
        source: ``(R,)`` the distinct prompt each sampled row continues (several rows may share one).
        max_new_tokens: budget per row, in tokens.
        eos_ids: tokens that end a row; a finished row is padded with ``pad_id`` until every row is done.
        pad_id: the token written after a row's end.
        temperature, top_k, top_p, suppress_ids: as :func:`process_logits`; ``temperature=0`` is greedy.

    Returns:
        ``(R, T)`` new tokens and ``(R, T)`` their log-probs under the processed scores (``T <= max_new_tokens``:
        the loop stops early once every row has ended).
    """
    device = input_ids.device
    index = torch.as_tensor(list(source), dtype=torch.long, device=device)  # (R,)
    rows, prompt_len = len(source), input_ids.shape[1]
    padded = bool((attention_mask == 0).any())
    positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)  # (U, P): left padding does not shift positions
    kwargs: dict[str, Any] = {"attention_mask": attention_mask} if padded else {}
    out = model(input_ids=input_ids, position_ids=positions, use_cache=True, logits_to_keep=1, **kwargs)
    cache, cache_arg = _cache_of(out)
    if len(source) != input_ids.shape[0] or not torch.equal(index, torch.arange(rows, device=device)):
        cache.batch_select_indices(index)
    logits = out.logits[:, -1][index]  # (R, V)
    # The whole mask is built once and sliced per step (rows x (P + T)); without padding none is passed, which
    # lets attention skip the mask.
    mask = None
    if padded:
        mask = torch.ones((rows, prompt_len + max_new_tokens), dtype=attention_mask.dtype, device=device)
        mask[:, :prompt_len] = attention_mask[index]
    next_pos = positions[index, -1:] + 1  # (R, 1)
    eos = torch.as_tensor(sorted(set(eos_ids)) or [-1], device=device)
    unfinished = torch.ones(rows, dtype=torch.bool, device=device)
    tokens, logprobs = [], []
    for t in range(max_new_tokens):
        scores = process_logits(logits, temperature, top_k, top_p, suppress_ids)  # (R, V)
        if temperature == 0:
            token = scores.argmax(dim=-1)
        else:
            token = torch.multinomial(scores.softmax(dim=-1), num_samples=1).squeeze(1)
        token = torch.where(unfinished, token, torch.full_like(token, pad_id))
        logprobs.append(scores.log_softmax(dim=-1).gather(1, token[:, None]).squeeze(1))
        tokens.append(token)
        unfinished &= ~torch.isin(token, eos)
        if t + 1 == max_new_tokens or not bool(unfinished.any()):
            break
        step_kwargs: dict[str, Any] = {cache_arg: cache}
        if mask is not None:
            step_kwargs["attention_mask"] = mask[:, : prompt_len + t + 1]
        out = model(input_ids=token[:, None], position_ids=next_pos + t, use_cache=True, **step_kwargs)
        cache, cache_arg = _cache_of(out)
        logits = out.logits[:, -1]
    return torch.stack(tokens, dim=1), torch.stack(logprobs, dim=1)


__all__ = ["NEUTRAL_SETTINGS", "process_logits", "sample_tokens", "settings_the_loop_ignores"]
