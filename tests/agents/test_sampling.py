"""The sampler module's choices (``agents.sampling``): which strategy a batch gets, how rows are grouped and handed
back, where a completion ends, and the error for an unknown strategy. That each strategy samples the policy
the trainer scores is tested in ``test_decode_loop.py`` and ``test_prompt_sharing.py``."""

from __future__ import annotations

import pytest
import torch

from agents.generation import SamplingParams
from agents.sampling import (
    CACHE_MIN_TOKENS,
    STRATEGIES,
    RowPlan,
    SpecialTokens,
    choose_strategy,
    completion_length,
    decode,
)

A = [{"role": "user", "content": "click cell a"}]
B = [{"role": "user", "content": "click cell b"}]


def _text(distinct: int, prompt_len: int) -> dict[str, torch.Tensor]:
    ids = torch.ones((distinct, prompt_len), dtype=torch.long)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def _choose(inputs: dict, plan: RowPlan, decoder: str, sharing: str, n: int = 2, loop_applies=lambda: True):
    return choose_strategy(
        inputs, plan, n, decoder=decoder, prompt_sharing=sharing, loop_applies=loop_applies
    )


def test_text_batches_get_the_strategy_of_their_decoder_and_sharing() -> None:
    plan = RowPlan.of([A, A, B], None)  # two distinct prompts
    text = _text(2, 5)
    assert [_choose(text, plan, "loop", s) for s in ("auto", "cache", "encode", "none")] == [
        "loop_shared", "loop_shared", "loop_rows", "loop_rows",
    ]  # fmt: skip
    assert [_choose(text, plan, "hf", s) for s in ("cache", "encode", "none")] == [
        "generate_shared", "generate_rows", "generate_rows",
    ]  # fmt: skip
    assert (
        _choose(_text(2, 1), plan, "hf", "cache") == "generate_rows"
    )  # one prompt token: nothing to prefill apart
    # "auto" shares the prefill from CACHE_MIN_TOKENS spared prompt tokens: (rows - distinct prompts) x length.
    length = CACHE_MIN_TOKENS // 4  # 6 rows - 2 prompts = 4 spared rows
    assert _choose(_text(2, length), plan, "hf", "auto") == "generate_shared"
    assert _choose(_text(2, length - 1), plan, "hf", "auto") == "generate_rows"
    # A model the loop cannot sample goes to generate, with the sharing rules of generate.
    assert _choose(text, plan, "loop", "cache", loop_applies=lambda: False) == "generate_shared"
    assert _choose(text, plan, "loop", "encode", loop_applies=lambda: False) == "generate_rows"


def test_image_batches_are_grouped_or_encoded_per_row_and_never_ask_the_loop() -> None:
    def refuse() -> bool:
        raise AssertionError("the loop is asked about text batches only")

    images = {**_text(2, 5), "pixel_values": torch.zeros(2, 3)}
    equal = RowPlan.of([A, A, B, B], None)
    assert _choose(images, equal, "loop", "cache", loop_applies=refuse) == "generate_groups"
    unequal = RowPlan.of([A, A, B], None)
    assert _choose(images, unequal, "hf", "encode", loop_applies=refuse) is None
    # Greedy copies one completion per distinct conversation, so unequal counts need no per-row encoding.
    greedy = choose_strategy(images, unequal, 1, decoder="hf", prompt_sharing="encode", greedy=True)
    assert greedy == "generate_groups"
    assert _choose(_text(2, 5), unequal, "hf", "encode", loop_applies=refuse) == "generate_rows"


def test_rows_group_by_conversation_and_images_and_come_back_in_order() -> None:
    red, blue = [torch.zeros(2, 2, 3).numpy()], [torch.ones(2, 2, 3).numpy()]
    plan = RowPlan.of([A, B, A, A], [red, red, blue, red])  # A+red at rows 0 and 3; B+red; A+blue
    assert (plan.slot_of, plan.distinct, plan.counts) == ([0, 1, 2, 0], [0, 1, 2], [2, 1, 1])
    assert RowPlan.of([A, A], None, share=False).slot_of == [0, 1]
    assert plan.source(2) == [0, 0, 1, 1, 2, 2, 0, 0]
    # Grouped rows: A+red's 4 samples at 0-3, B+red's at 4-5, A+blue's at 6-7; row 3 takes A+red's second pair.
    assert plan.grouped_order(2) == [0, 1, 4, 5, 6, 7, 2, 3]


def test_a_completion_ends_after_its_first_end_of_sequence_token() -> None:
    assert completion_length([5, 2, 9, 2], {2}) == (2, "stop")
    assert completion_length([5, 6, 7], {2}) == (3, "length")


def test_an_unknown_strategy_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown decoding strategy 'beam'") as err:
        decode(
            "beam",
            None,
            _text(1, 3),
            RowPlan.of([A], None),
            SamplingParams(),
            SpecialTokens(frozenset({2}), 0),
        )
    assert all(name in str(err.value) for name in STRATEGIES)
