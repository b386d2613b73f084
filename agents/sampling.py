"""The decoding strategies: how a Hugging Face model samples a batch for :class:`agents.hf_agent.HFGenerator`.

``HFGenerator`` loads the model and turns conversations into padded model inputs; this module samples from them
and hands the completions back as :class:`~agents.generation.Generation` objects. The batch plumbing here
(which rows share a conversation, where a completion ends) also serves
:class:`agents.vllm_generator.VLLMGenerator`.

**Log-probs.** Every strategy returns, with each sampled token, its log-prob **under the sampling policy**: at
step ``t`` the log-prob is ``log_softmax(processed_logits_t)[token_t]``, where ``processed_logits_t`` are the
scores the token was drawn from, i.e. the raw logits after every logits processor -- the suppressed tokens at
``-inf`` (a VLM's image placeholder tokens, ``HFGenerator.suppress_ids``, which the policy never emits), then
division by the temperature, then the top-k and top-p masks (masked tokens get ``-inf``). So with
``temperature=T`` and no top-k/top-p the log-prob is ``log_softmax(logits / T)``; with greedy decoding
(``temperature=0``) nothing but the suppression is applied. Trainers that need ``log pi_theta`` at ``T = 1``
recompute it with :meth:`agents.hf_agent.HFGenerator.token_logprobs`.

**Prompt sharing** (``HFGenerator(prompt_sharing=...)``, one of :data:`PROMPT_SHARING`). A GRPO group is ``N``
copies of one conversation (``N`` env slots reset with the same seed). ``"none"`` encodes every conversation
separately. ``"encode"`` (the default) renders and tokenises each distinct conversation once and lets every
sampled row prefill its own copy. ``"cache"`` also prefills each distinct prompt once and copies its KV cache to
its rows before decoding (one extra forward call: the prefill). ``"auto"`` is ``"cache"`` when that spares at
least :data:`CACHE_MIN_TOKENS` prompt tokens of prefill, else ``"encode"``. Every mode samples the same
distribution. ``"encode"`` also draws the same random numbers as ``"none"`` (the same rows, prefilled the same
way), so seeded runs repeat what they gave before sharing existed; the cache's logits differ from a full
prefill in the last float bits, which sends a seeded run down another (equally likely) path.

**The strategies** (:data:`STRATEGIES`). :func:`choose_strategy` picks one per batch from the generator's
``decoder`` (one of :data:`DECODERS`) and ``prompt_sharing`` and from what the batch holds; :func:`decode` runs
it. Each returns ``(R, T)`` tokens and log-probs, ``R = B * num_samples`` rows in the caller's order.

* ``generate_rows``: Hugging Face ``generate`` on every row (each distinct prompt indexed out to its rows, every
  row prefilled). Text batches with ``decoder="hf"``.
* ``generate_shared``: each distinct prompt prefilled once, its KV cache copied to its rows, then ``generate``.
  Text batches with ``decoder="hf"`` and sharing ``"cache"``, or ``"auto"`` when it spares enough.
* ``generate_groups``: ``generate`` with ``num_return_sequences`` per distinct conversation, rows grouped per
  conversation. Image batches (image tensors do not index by row). Greedy: each distinct conversation decoded
  once and its completion copied to its rows.
* ``loop_rows``: guigym's KV-cache loop (:func:`sample_tokens`), every row prefilled. Text batches with
  ``decoder="loop"`` and sharing ``"encode"`` or ``"none"``.
* ``loop_shared``: the loop, each distinct prompt prefilled once. Text batches with ``decoder="loop"`` and
  sharing ``"auto"`` or ``"cache"``.

An image batch whose distinct conversations are asked for unequally often cannot be grouped when sampling: the
generator encodes every row on its own (as ``prompt_sharing="none"``) and samples that with ``generate_groups``.
``decoder="loop"`` falls back to the ``generate`` strategies when the model's generation config sets something
only ``generate`` applies (:func:`settings_the_loop_ignores`), so both decoders always draw from the same
distribution.

**Greedy decoding** (``temperature=0``) is deterministic, so the rows of a conversation that a batch holds
more than once all get the same completion, in every strategy and sharing mode: the text strategies decode each
row (or continue its shared cache), ``generate_groups`` decodes each distinct conversation once and copies the
result (``generate`` refuses ``num_return_sequences > 1`` without sampling). ``num_samples > 1`` greedy samples
of one row would be copies too, useless as a GRPO group: every generator refuses them with a ``ValueError``
(:func:`refuse_greedy_groups`).

**Model state.** Qwen2-VL-style models keep the M-RoPE offsets of their last call (``rope_deltas``, one per row)
and ``generate`` reuses them whenever it continues a non-empty cache, as ``generate_shared`` does. :func:`decode`
clears them before every strategy (:func:`reset_position_state`), so each call computes its own positions
whatever was decoded before (an earlier batch of another size, or with images).

**The loop.** :func:`sample_tokens` is a lean stand-in for ``generate`` on text-only causal LMs: the same
settings (temperature, top-k, top-p, suppressed tokens, padding after end-of-sequence), the same
``(tokens, log-probs)``, without ``generate``'s per-token machinery (its logits-processor and stopping-criteria
lists, input preparation, output bookkeeping): on the tests' tiny CPU model that machinery is a third of the
sampling time, which is most of a small GRPO step. On a large model the forward pass dominates and both
decoders cost the same. With the same torch seed, ``loop_rows`` draws the same tokens as ``generate`` (both call
``torch.multinomial`` on ``softmax`` of identically processed logits, row for row); ``loop_shared`` draws the
first token of each row from its shared prompt's logits, so the draws differ but the distribution does not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from agents.generation import Conversation, Generation, SamplingParams

#: The ``prompt_sharing`` modes of :class:`~agents.hf_agent.HFGenerator`.
PROMPT_SHARING = ("auto", "cache", "encode", "none")
#: ``prompt_sharing="auto"`` prefills once when that spares at least this many prompt tokens (rows x padded
#: length): below it the extra forward call costs more than it saves (measured with the tiny CPU model of
#: ``benchmarks/trainer_speed.py``: a 1x4 group of 60-token prompts is slower shared, an 8x8 batch faster).
CACHE_MIN_TOKENS = 512
#: The ``decoder`` values of :class:`~agents.hf_agent.HFGenerator`.
DECODERS = ("hf", "loop")

#: Generation-config settings that ``generate`` would apply and the loop does not, with their neutral values. A
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


# ----- the batch: which rows share a conversation, where each completion ends ----------------------------


def conversation_key(conversation: Conversation, images: Sequence[Any] | None) -> tuple[str, tuple[str, ...]]:
    """What makes two conversations the same prompt: their messages and the bytes of their images."""
    digests = []
    for img in images or []:
        arr = np.asarray(img)
        digests.append(
            f"{arr.shape}:{hashlib.blake2b(np.ascontiguousarray(arr).tobytes(), digest_size=16).hexdigest()}"
        )
    return json.dumps(conversation, sort_keys=True, default=str), tuple(digests)


@dataclass(frozen=True)
class RowPlan:
    """Which conversations of a batch are the same prompt, so that each distinct one is encoded once.

    Attributes:
        slot_of: ``(B,)`` the distinct conversation of each row.
        distinct: ``(U,)`` the first row of each distinct conversation.
    """

    slot_of: list[int]
    distinct: list[int]

    @classmethod
    def of(
        cls, conversations: Sequence[Conversation], images: Sequence[Sequence[Any]] | None, share: bool = True
    ) -> RowPlan:
        """Group identical conversations (same messages, same image bytes); ``share=False`` keeps every row apart."""
        slot_of: list[int] = []
        distinct: list[int] = []
        first: dict[Any, int] = {}
        for i, conversation in enumerate(conversations):
            key = conversation_key(conversation, images[i] if images else None) if share else i
            if key not in first:
                first[key] = len(distinct)
                distinct.append(i)
            slot_of.append(first[key])
        return cls(slot_of, distinct)

    @property
    def counts(self) -> list[int]:
        """``(U,)`` rows per distinct conversation (a group asks ``N`` times for one)."""
        return np.bincount(self.slot_of).tolist()

    def source(self, n: int) -> list[int]:
        """``(B * n,)`` the distinct conversation of each sampled row, in the caller's order."""
        return np.repeat(self.slot_of, n).tolist()

    def grouped_order(self, n: int) -> list[int]:
        """``(B * n,)`` where each sampled row of the caller's order sits among rows grouped per distinct
        conversation (its ``counts[u] * n`` samples together): each row takes the next ``n`` of its group's."""
        starts = np.concatenate([[0], np.cumsum(self.counts) * n]).tolist()
        taken = [0] * len(self.distinct)
        order: list[int] = []
        for u in self.slot_of:
            order.extend(range(starts[u] + taken[u], starts[u] + taken[u] + n))
            taken[u] += n
        return order


def refuse_greedy_groups(sampling: SamplingParams) -> None:
    """Raise ``ValueError`` for ``num_samples > 1`` greedy samples, which would all be the same."""
    if sampling.greedy and sampling.num_samples > 1:
        raise ValueError("greedy decoding (temperature=0) gives identical samples; use temperature > 0")


def completion_length(ids: list[int], eos_ids: Container[int]) -> tuple[int, str]:
    """Tokens up to and including the first end-of-sequence token, and the finish reason (``stop`` or
    ``length``); what follows the end is padding."""
    for t, token in enumerate(ids):
        if token in eos_ids:
            return t + 1, "stop"
    return len(ids), "length"


def to_generations(
    tokenizer: Any,
    eos_ids: Container[int],
    ids: list[list[int]],
    logprobs: list[list[float]],
    plan: RowPlan,
    n: int,
    prompts: Sequence[str],
    prompt_ids: Sequence[list[int]],
) -> list[list[Generation]]:
    """``n`` generations per row of the batch from ``(B * n)`` sampled rows in the caller's order (row ``i``'s
    samples at ``i * n ... i * n + n - 1``), each cut after its end-of-sequence token; ``prompts`` and
    ``prompt_ids`` are per distinct conversation."""
    ends = [completion_length(row, eos_ids) for row in ids]  # (rows,) (length, finish reason)
    # One batched decode for the whole batch: per-row calls cost more than the tiny model's decoding step.
    texts = tokenizer.batch_decode(
        [row[:length] for row, (length, _) in zip(ids, ends, strict=True)], skip_special_tokens=True
    )
    results: list[list[Generation]] = []
    for i, u in enumerate(plan.slot_of):
        group = []
        for row in range(i * n, i * n + n):
            length, finish = ends[row]
            group.append(
                Generation(
                    text=texts[row],
                    token_ids=ids[row][:length],
                    logprobs=logprobs[row][:length],
                    prompt=prompts[u],
                    finish_reason=finish,
                    extra={"prompt_token_ids": prompt_ids[u]},
                )
            )
        results.append(group)
    return results


# ----- choosing a strategy ---------------------------------------------------------------------------------


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


def choose_strategy(
    inputs: Any,
    plan: RowPlan,
    n: int,
    *,
    decoder: str,
    prompt_sharing: str,
    loop_applies: Callable[[], bool] = lambda: True,
    greedy: bool = False,
) -> str | None:
    """The strategy (a key of :data:`STRATEGIES`) for a batch; see the module docstring's list.

    Args:
        inputs: the encoded distinct prompts (``(U, P)`` ``input_ids`` and ``attention_mask``, plus image tensors
            for an image batch).
        plan: the batch's rows and its distinct conversations.
        n: samples per row.
        decoder, prompt_sharing: the generator's options (:data:`DECODERS`, :data:`PROMPT_SHARING`).
        loop_applies: whether the loop may sample this model (see :func:`settings_the_loop_ignores`); asked only
            for text batches with ``decoder="loop"``.
        greedy: whether the batch is decoded greedily (``temperature=0``): an image batch is then decoded once
            per distinct conversation, however often each is asked for.

    Returns:
        The strategy's name, or ``None`` for an image batch sampled (not greedy) whose distinct conversations are
        asked for unequally often: encode every row on its own (``RowPlan.of(..., share=False)``) and sample with
        ``generate_groups``.
    """
    repeats = [c * n for c in plan.counts]  # (U,) sampled rows per distinct conversation
    if set(inputs) != {"input_ids", "attention_mask"}:  # image tensors do not index by row
        return "generate_groups" if greedy or len(set(repeats)) == 1 else None
    if decoder == "loop" and loop_applies():
        # Prefilling once costs the loop no extra call, so "auto" always shares.
        return "loop_shared" if prompt_sharing in ("auto", "cache") else "loop_rows"
    prompt_len = inputs["input_ids"].shape[1]
    spared = (sum(repeats) - len(repeats)) * prompt_len  # prompt tokens not prefilled
    shared = prompt_sharing == "cache" or (prompt_sharing == "auto" and spared >= CACHE_MIN_TOKENS)
    return "generate_shared" if shared and prompt_len > 1 else "generate_rows"


# ----- the loop --------------------------------------------------------------------------------------------


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

    One forward pass over each *distinct* prompt (rows that share one share its prefill, and its KV cache is
    copied to them), then one forward pass per new token with the cache.

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


# ----- the strategies --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpecialTokens:
    """The token ids a strategy needs besides the prompts.

    Attributes:
        eos_ids: tokens that end a completion.
        pad_id: the token written after a row's end.
        suppress_ids: tokens never sampled (their scores are ``-inf``).
    """

    eos_ids: frozenset[int]
    pad_id: int
    suppress_ids: tuple[int, ...] = ()


Tokens = tuple[torch.Tensor, torch.Tensor]  # (R, T) sampled tokens and their log-probs


def _generate_kwargs(sampling: SamplingParams, special: SpecialTokens) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "max_new_tokens": sampling.max_new_tokens,
        "output_scores": True,
        "return_dict_in_generate": True,
        "pad_token_id": special.pad_id,
    }
    if sampling.greedy:
        kwargs.update(do_sample=False, temperature=None, top_k=None, top_p=None)
    else:
        # Explicit "off" values (top_k=0, top_p=1) override any generation_config.json defaults.
        kwargs.update(
            do_sample=True,
            temperature=sampling.temperature,
            top_k=sampling.top_k or 0,
            top_p=sampling.top_p if sampling.top_p is not None else 1.0,
        )
    if special.suppress_ids:
        kwargs["suppress_tokens"] = list(special.suppress_ids)
    return kwargs


def _generated(out: Any, prompt_len: int) -> Tokens:
    """The new tokens of a ``generate`` output and their log-probs under the processed (post temperature /
    top-k / top-p) scores; both ``(rows, T)``."""
    new_tokens = out.sequences[:, prompt_len:]
    logprobs = torch.stack(
        [
            torch.log_softmax(score.float(), dim=-1).gather(1, new_tokens[:, t : t + 1]).squeeze(1)
            for t, score in enumerate(out.scores)
        ],
        dim=1,
    )
    return new_tokens, logprobs


def generate_rows(
    model: Any, inputs: Any, plan: RowPlan, sampling: SamplingParams, special: SpecialTokens
) -> Tokens:
    """``generate`` on every row: each distinct prompt indexed out to its rows, ``n`` samples each."""
    rows = torch.as_tensor(plan.slot_of, device=inputs["input_ids"].device)
    out = model.generate(
        **{k: v[rows] for k, v in inputs.items()},
        num_return_sequences=sampling.num_samples,
        **_generate_kwargs(sampling, special),
    )
    return _generated(out, inputs["input_ids"].shape[1])


def generate_shared(
    model: Any, inputs: Any, plan: RowPlan, sampling: SamplingParams, special: SpecialTokens
) -> Tokens:
    """Prefill each distinct prompt once, copy its KV cache to its sampled rows, then ``generate``.

    All but the last prompt token are run here; ``generate`` runs the last one for every row (so its first
    sampling step starts from the shared cache) and counts positions along the attention mask the same way, so
    the result is the distribution of an unshared ``generate`` call.
    """
    ids, mask = inputs["input_ids"], inputs["attention_mask"]  # (U, P)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)  # left padding does not shift positions
    prefill = model(
        input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=positions[:, :-1], use_cache=True
    )
    cache, cache_arg = _cache_of(prefill)
    index = torch.as_tensor(plan.source(sampling.num_samples), device=ids.device)  # (rows,) each row's prompt
    cache.batch_select_indices(index)
    out = model.generate(
        input_ids=ids[index],
        attention_mask=mask[index],
        **{cache_arg: cache},
        **_generate_kwargs(sampling, special),
    )
    return _generated(out, ids.shape[1])


def generate_groups(
    model: Any, inputs: Any, plan: RowPlan, sampling: SamplingParams, special: SpecialTokens
) -> Tokens:
    """``generate`` with ``num_return_sequences`` samples per distinct conversation (every one asked for equally
    often); the rows, grouped per conversation, are handed back in the caller's order.

    Greedy decoding runs each distinct conversation once (asked for equally often or not) and copies its
    completion to its rows: ``generate`` refuses ``num_return_sequences > 1`` without sampling, and every copy
    would be the same anyway.
    """
    n = sampling.num_samples
    if sampling.greedy:
        out = model.generate(**inputs, **_generate_kwargs(sampling, special))
        tokens, logprobs = _generated(out, inputs["input_ids"].shape[1])
        index = torch.as_tensor(plan.source(n), device=tokens.device)  # (rows,) each row's conversation
        return tokens[index], logprobs[index]
    out = model.generate(
        **inputs, num_return_sequences=plan.counts[0] * n, **_generate_kwargs(sampling, special)
    )
    tokens, logprobs = _generated(out, inputs["input_ids"].shape[1])
    order = torch.as_tensor(plan.grouped_order(n), device=tokens.device)
    return tokens[order], logprobs[order]


def _loop(
    model: Any, inputs: Any, source: list[int], sampling: SamplingParams, special: SpecialTokens
) -> Tokens:
    return sample_tokens(
        model, inputs["input_ids"], inputs["attention_mask"], source, max_new_tokens=sampling.max_new_tokens,
        eos_ids=sorted(special.eos_ids), pad_id=special.pad_id, temperature=sampling.temperature,
        top_k=sampling.top_k, top_p=sampling.top_p, suppress_ids=special.suppress_ids,
    )  # fmt: skip


def loop_rows(
    model: Any, inputs: Any, plan: RowPlan, sampling: SamplingParams, special: SpecialTokens
) -> Tokens:
    """guigym's loop with every row prefilled on its own, as ``generate`` does (the same draws from a seed)."""
    index = torch.as_tensor(plan.source(sampling.num_samples), device=inputs["input_ids"].device)
    rows = {"input_ids": inputs["input_ids"][index], "attention_mask": inputs["attention_mask"][index]}
    return _loop(model, rows, list(range(len(index))), sampling, special)


def loop_shared(
    model: Any, inputs: Any, plan: RowPlan, sampling: SamplingParams, special: SpecialTokens
) -> Tokens:
    """guigym's loop with each distinct prompt prefilled once and its KV cache copied to its rows."""
    return _loop(model, inputs, plan.source(sampling.num_samples), sampling, special)


Strategy = Callable[[Any, Any, RowPlan, SamplingParams, SpecialTokens], Tokens]

#: The decoding strategies by name (see the module docstring's list).
STRATEGIES: dict[str, Strategy] = {
    "generate_rows": generate_rows,
    "generate_shared": generate_shared,
    "generate_groups": generate_groups,
    "loop_rows": loop_rows,
    "loop_shared": loop_shared,
}


def reset_position_state(model: Any) -> None:
    """Forget the position offsets a model kept from its last call, so that the next one computes its own.

    Qwen2-VL-style models (Qwen2-VL, Qwen2.5-VL, ...) store the M-RoPE offsets of the batch they last encoded as
    ``rope_deltas`` (``(rows, 1)``) and add them to the positions of any later call that continues a non-empty
    cache. A call that prefills its own cache outside ``generate`` (``generate_shared``) would get another batch's
    offsets: a size mismatch when the row counts differ, silently shifted positions when they broadcast. With
    ``None``, ``generate`` derives them from the call's own inputs (zero for text). Every submodule is visited, so
    wrappers (``peft``) are covered; models without the attribute are untouched.
    """
    for module in model.modules():
        if vars(module).get("rope_deltas") is not None:
            module.rope_deltas = None


def decode(
    strategy: str, model: Any, inputs: Any, plan: RowPlan, sampling: SamplingParams, special: SpecialTokens
) -> Tokens:
    """Sample ``sampling.num_samples`` completions of each row of ``plan`` with the named strategy.

    Args:
        strategy: a key of :data:`STRATEGIES` (:func:`choose_strategy` picks one).
        model: the Hugging Face model.
        inputs: the encoded distinct prompts, ``(U, P)`` and left padded.
        plan: the batch's rows and its distinct conversations.
        sampling: how to sample.
        special: end-of-sequence, padding and suppressed token ids.

    Returns:
        ``(B * n, T)`` tokens and their log-probs under the sampling policy, rows in the caller's order (row
        ``i``'s samples at ``i * n ... i * n + n - 1``), each padded after its end-of-sequence token.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown decoding strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    reset_position_state(model)
    # Inference mode, not only no_grad: no autograd bookkeeping per op (version counters, view tracking), which on
    # a small model is a sixth of the sampling time; what leaves the block is converted to lists by the caller.
    with torch.inference_mode():
        return STRATEGIES[strategy](model, inputs, plan, sampling, special)


__all__ = [
    "CACHE_MIN_TOKENS",
    "DECODERS",
    "NEUTRAL_SETTINGS",
    "PROMPT_SHARING",
    "STRATEGIES",
    "RowPlan",
    "SpecialTokens",
    "choose_strategy",
    "completion_length",
    "conversation_key",
    "decode",
    "process_logits",
    "refuse_greedy_groups",
    "reset_position_state",
    "sample_tokens",
    "settings_the_loop_ignores",
    "to_generations",
]
