"""A group's shared prompt is encoded once (``HFGenerator(prompt_sharing=...)``): the samples still come from
the policy the trainer scores, land on the right conversations, and the cache mode prefills each distinct
prompt once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.generation import SamplingParams
from agents.hf_agent import HFGenerator
from trainers.logprobs import completion_logprobs, encode_batch

A = [{"role": "user", "content": "click cell a"}]
B = [{"role": "user", "content": "click the cell named e now"}]


@pytest.mark.parametrize("decoder", ["hf", "loop"])
@pytest.mark.parametrize("mode", ["auto", "cache", "encode", "none"])
def test_shared_samples_match_the_trainers_logprobs(tiny_lm_path: Path, mode: str, decoder: str) -> None:
    torch.manual_seed(0)
    gen = HFGenerator(str(tiny_lm_path), device="cpu", prompt_sharing=mode, decoder=decoder)
    convs = [A, B, A, A, B]  # unequal counts (3 and 2), prompts of unequal length
    groups = gen.generate(convs, sampling=SamplingParams(max_new_tokens=6, num_samples=2, temperature=0.8))
    assert [len(g) for g in groups] == [2] * 5
    assert all(g.prompt == gen.prompt_text(c) for grp, c in zip(groups, convs, strict=True) for g in grp)
    flat = [g for grp in groups for g in grp]
    assert len({tuple(g.token_ids) for g in flat}) > 5  # ten independent draws, not copies
    batch = encode_batch(gen, [g.prompt for g in flat], [g.token_ids for g in flat])
    with torch.no_grad():
        logp, _ = completion_logprobs(gen.model, batch, temperature=0.8)
    for i, g in enumerate(flat):
        torch.testing.assert_close(logp[i, : len(g.logprobs)], torch.tensor(g.logprobs), atol=1e-4, rtol=1e-4)


def test_cache_mode_prefills_each_distinct_prompt_once(tiny_lm_path: Path) -> None:
    shapes: dict[str, list[tuple[int, ...]]] = {}
    for mode in ("cache", "none"):
        gen = HFGenerator(str(tiny_lm_path), device="cpu", prompt_sharing=mode)
        seen = shapes.setdefault(mode, [])
        gen.model.register_forward_pre_hook(
            lambda _m, _a, kw, seen=seen: seen.append(tuple(kw["input_ids"].shape)), with_kwargs=True
        )
        gen.generate([A] * 4 + [B] * 4, sampling=SamplingParams(max_new_tokens=3))
    p = shapes["none"][0][1]  # the padded prompt length
    assert shapes["none"][0] == (8, p)  # every row prefilled
    assert shapes["cache"][0] == (2, p - 1)  # two distinct prompts, all but their last token
    assert shapes["cache"][1] == (8, 1)  # then every row from its shared cache


def test_vlm_groups_share_the_processor_call(tiny_vlm_path: Path) -> None:
    torch.manual_seed(0)
    gen = HFGenerator(str(tiny_vlm_path), device="cpu")
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "click cell a"}]}]
    red, blue = np.zeros((56, 56, 3), np.uint8), np.zeros((56, 56, 3), np.uint8)
    red[..., 0], blue[..., 2] = 255, 255
    sp = SamplingParams(max_new_tokens=3)
    equal = gen.generate([conv] * 4, [[red]] * 2 + [[blue]] * 2, sp)  # two images, two rows each
    unequal = gen.generate([conv] * 3, [[red], [red], [blue]], sp)  # image tensors do not index by row
    assert [len(g) for g in equal] == [1] * 4 and [len(g) for g in unequal] == [1] * 3


def test_auto_prefills_once_only_when_that_spares_enough(tiny_lm_path: Path) -> None:
    from agents.hf_agent import CACHE_MIN_TOKENS

    gen = HFGenerator(str(tiny_lm_path), device="cpu", prompt_sharing="auto")
    seen: list[tuple[int, ...]] = []
    gen.model.register_forward_pre_hook(lambda _m, _a, kw: seen.append(tuple(kw["input_ids"].shape)), with_kwargs=True)
    gen.generate([A] * 4, sampling=SamplingParams(max_new_tokens=1))
    p = seen[0][1]
    assert 3 * p < CACHE_MIN_TOKENS and seen[0] == (4, p)  # little to spare: tokenised once, rows prefilled
    seen.clear()
    rows = CACHE_MIN_TOKENS // p + 2
    gen.generate([A] * rows, sampling=SamplingParams(max_new_tokens=1))
    assert seen[0] == (1, p - 1) and seen[1] == (rows, 1)  # enough to spare: one prefill, a shared cache
