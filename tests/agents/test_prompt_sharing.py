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
    from agents.sampling import CACHE_MIN_TOKENS

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


def _red_blue() -> tuple[np.ndarray, np.ndarray]:
    red, blue = np.zeros((56, 56, 3), np.uint8), np.zeros((56, 56, 3), np.uint8)
    red[..., 0], blue[..., 2] = 255, 255
    return red, blue


IMAGE_CONV = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "click cell a"}]}]


@pytest.mark.parametrize("mode", ["auto", "cache", "encode", "none"])
def test_vlm_greedy_gives_repeated_conversations_one_completion(tiny_vlm_path: Path, mode: str) -> None:
    # generate refuses num_return_sequences > 1 without sampling; greedy is deterministic, so each distinct
    # conversation is decoded once and its completion copied to its rows, equal counts or not.
    red, blue = _red_blue()
    gen = HFGenerator(str(tiny_vlm_path), device="cpu", prompt_sharing=mode)
    sp = SamplingParams(max_new_tokens=4, temperature=0)
    alone = {
        name: gen.generate([IMAGE_CONV], [[img]], sp)[0][0] for name, img in (("red", red), ("blue", blue))
    }
    for names in (["red", "red", "blue", "blue"], ["red", "blue", "red"], ["blue"] * 3):
        groups = gen.generate([IMAGE_CONV] * len(names), [[red if n == "red" else blue] for n in names], sp)
        assert [len(g) for g in groups] == [1] * len(names)
        for name, (g,) in zip(names, groups, strict=True):
            assert g.token_ids == alone[name].token_ids
            np.testing.assert_allclose(g.logprobs, alone[name].logprobs, atol=1e-4)


def test_greedy_groups_are_refused_for_every_batch(tiny_vlm_path: Path) -> None:
    red, _ = _red_blue()
    gen = HFGenerator(str(tiny_vlm_path), device="cpu")
    sp = SamplingParams(max_new_tokens=2, temperature=0, num_samples=2)
    with pytest.raises(ValueError, match="identical samples"):
        gen.generate([IMAGE_CONV], [[red]], sp)
    with pytest.raises(ValueError, match="identical samples"):
        gen.generate([A], None, sp)


def test_vlm_calls_of_every_strategy_in_any_order_use_fresh_positions(tiny_vlm_path: Path) -> None:
    # Qwen2-VL keeps the M-RoPE offsets of its last call (``rope_deltas``); a call continuing a prefilled cache
    # (generate_shared) must not add another batch's offsets to its positions.
    red, blue = _red_blue()
    greedy = SamplingParams(max_new_tokens=4, temperature=0)
    fresh = HFGenerator(str(tiny_vlm_path), device="cpu", prompt_sharing="encode")
    expected = {len(c): fresh.generate(c, None, greedy) for c in ([A, B, A], [A, B])}
    gen = HFGenerator(str(tiny_vlm_path), device="cpu", prompt_sharing="cache")
    calls = [
        ("hf", [A, B, A], None),  # generate_shared
        ("hf", [A, B], None),  # generate_shared, another batch size
        ("hf", [IMAGE_CONV] * 2, [[red]] * 2),  # generate_groups: one image, offsets of one row
        ("hf", [A, B], None),
        ("loop", [A, B, A], None),  # loop_shared
        ("hf", [IMAGE_CONV] * 3, [[red], [blue], [red]]),
        ("hf", [A, B, A], None),
    ]
    for decoder, convs, images in calls:
        gen.decoder = decoder
        groups = gen.generate(convs, images, greedy)
        if images is None:
            for got, want in zip(groups, expected[len(convs)], strict=True):
                assert got[0].token_ids == want[0].token_ids
                # A shared cache moves the logits by ~1e-6; a stale offset of -2 moved them by ~1e-3.
                np.testing.assert_allclose(got[0].logprobs, want[0].logprobs, atol=1e-5)
