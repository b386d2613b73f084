"""GRPO's auxiliary SFT term (``GRPOConfig.sft_mix_coef``, PPO-ptx): the update's gradient is the clipped
surrogate's plus ``coef`` times the mix samples' answer NLL gradient, and a config that asks for it without a source
is refused before any model loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from tests.trainers.test_grpo_memory import GradSpy
from trainers.grpo import Sample, _accelerator, train, update
from trainers.grpo_config import GRPOConfig
from trainers.sft import SFTSample, sft_backward


@pytest.fixture(scope="module")
def gen(tiny_lm_path: Path) -> Any:
    from agents.hf_agent import HFGenerator

    return HFGenerator(str(tiny_lm_path), device="cpu")


def _mix(gen: Any) -> list[SFTSample]:
    return [SFTSample(gen.prompt_text([{"role": "user", "content": f"page {i}\nA* button ok"}]), "click A", None)
            for i in range(3)]  # fmt: skip


def test_the_update_adds_coef_times_the_sft_gradient(gen: Any, tiny_lm_path: Path) -> None:
    ids = gen.tokenizer("click B", add_special_tokens=False)["input_ids"]
    samples = [Sample("a page", ids, None, a, None, 0) for a in (0.7, -0.7)]
    calls: list[int] = []

    def source(count: int, generator: Any) -> list[SFTSample]:
        calls.append(count)
        return _mix(generator)

    def grads(coef: float, mix: Any) -> list[torch.Tensor]:
        config = GRPOConfig(model=str(tiny_lm_path), device="cpu", max_grad_norm=0.0, max_new_tokens=8,
                            sft_mix_coef=coef, sft_mix_batch=3)  # fmt: skip
        spy = GradSpy(gen.model)
        update(config, _accelerator(config), gen.model, gen, None, spy, samples, untempered=False, sft_mix=mix)
        assert len(spy.grads) == 1
        return spy.grads[0]

    policy = grads(0.0, None)
    mixed = grads(0.5, source)
    assert calls == [3]  # one draw of sft_mix_batch samples per mini-batch update

    gen.model.zero_grad(set_to_none=True)
    eos = gen.tokenizer.eos_token_id
    mix = _mix(gen)
    answers = [gen.tokenizer(m.answer, add_special_tokens=False)["input_ids"] + [eos] for m in mix]
    sft_backward(gen.model, gen, [m.prompt for m in mix], answers)
    sft = [p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in gen.model.parameters()]
    for total, pg, sg in zip(mixed, policy, sft, strict=True):
        torch.testing.assert_close(total, pg + 0.5 * sg, atol=1e-6, rtol=1e-5)
    assert any(float(sg.abs().sum()) > 0 for sg in sft)


def test_sft_backward_scales_its_gradient(gen: Any) -> None:
    mix = _mix(gen)
    answers = [gen.tokenizer(m.answer, add_special_tokens=False)["input_ids"] for m in mix]
    out = []
    for scale in (1.0, 3.0):
        gen.model.zero_grad(set_to_none=True)
        stats = sft_backward(gen.model, gen, [m.prompt for m in mix], answers, scale=scale)
        out.append(([p.grad.clone() for p in gen.model.parameters() if p.grad is not None], stats["loss"]))
    (one, loss1), (three, loss3) = out
    assert loss1 == pytest.approx(loss3)  # the reported loss is the unscaled NLL
    for a, b in zip(one, three, strict=True):
        torch.testing.assert_close(b, 3.0 * a)


def test_a_mix_coefficient_without_a_source_is_refused(tiny_lm_path: Path) -> None:
    with pytest.raises(ValueError, match="sft_mix"):
        train(GRPOConfig(model=str(tiny_lm_path), device="cpu", sft_mix_coef=0.1))
    with pytest.raises(Exception, match="sft_mix_coef must be >= 0"):
        GRPOConfig(model=str(tiny_lm_path), device="cpu", sft_mix_coef=-1.0)
