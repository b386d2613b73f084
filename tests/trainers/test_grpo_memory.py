"""GRPO in less memory (issue 25, item 2): micro-batches by a token budget give the one-pass gradient, and
chunked log-probs give the full computation's values and gradients without a full-vocabulary fp32 tensor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from trainers.grpo import Sample, _accelerator, update
from trainers.grpo_config import LOSS_AGGREGATIONS, GRPOConfig
from trainers.logprobs import completion_logprobs, encode_batch, split_by_tokens


@pytest.fixture(scope="module")
def gen(tiny_lm_path: Path) -> Any:
    from agents.hf_agent import HFGenerator

    return HFGenerator(str(tiny_lm_path), device="cpu")


def grpo_samples(gen: Any) -> list[Sample]:
    """8 samples over 3 prompts of unequal length, completions of 1 to 8 tokens, mixed-sign advantages."""
    prompts = ["click cell a", "click the cell named e now please", "go"]
    g = torch.Generator().manual_seed(0)
    out = []
    for i in range(8):
        n = 1 + i % 8
        ids = torch.randint(10, len(gen.tokenizer), (n,), generator=g).tolist()
        out.append(Sample(prompts[i % 3], ids, None, float(i % 3) - 1.0 + 0.1 * i, None, i % 4))
    return out


class GradSpy:
    """Stands in for the optimiser: records the gradients ``update`` accumulated when it would step (zeros for a
    parameter no loss reached)."""

    def __init__(self, model: Any) -> None:
        self.model, self.grads = model, []

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.model.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        self.grads.append([p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in self.model.parameters()])


@pytest.mark.parametrize("loss_agg", LOSS_AGGREGATIONS)
def test_micro_batches_accumulate_the_one_pass_gradient(gen: Any, tiny_lm_path: Path, loss_agg: str) -> None:
    samples = grpo_samples(gen)

    def grads(micro_batch_tokens: int, chunk: int) -> tuple[list[torch.Tensor], dict[str, float]]:
        config = GRPOConfig(model=str(tiny_lm_path), device="cpu", loss_agg=loss_agg, beta=0.1, max_grad_norm=0.0,
                            micro_batch_tokens=micro_batch_tokens, logprob_chunk_size=chunk, temperature=0.9,
                            max_new_tokens=8)  # fmt: skip
        spy = GradSpy(gen.model)
        torch.manual_seed(0)
        stats = update(
            config, _accelerator(config), gen.model, gen, gen.model, spy, samples, untempered=False
        )
        assert len(spy.grads) == 1
        return spy.grads[0], stats

    whole, s_whole = grads(0, 0)
    full = encode_batch(gen, [s.prompt for s in samples], [s.token_ids for s in samples])
    width = full.inputs["input_ids"].shape[1]
    assert (
        len(split_by_tokens(list(range(8)), [0] * 8, [0] * 8, 3 * width, (width, 0))) == 3
    )  # 3 + 3 + 2 rows
    for budget, chunk in ((3 * width, 0), (width, 4), (3 * width, 5)):
        got, s_got = grads(budget, chunk)
        for a, b in zip(got, whole, strict=True):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
        for key in ("loss", "clip_frac", "kl", "ratio_mean", "entropy"):
            assert s_got[key] == pytest.approx(s_whole[key], abs=1e-5), key


def test_split_by_tokens() -> None:
    assert split_by_tokens([3, 1, 2, 0], [5, 5, 5, 5], [1, 2, 3, 4], 0) == [[3, 1, 2, 0]]
    # Cost |R| * (max prompt + max completion): rows 3 (9) and 1 (7) cost 2 * 9 = 18 > 16.
    assert split_by_tokens([3, 1, 2, 0], [5, 5, 5, 5], [1, 2, 3, 4], 16) == [[3], [1, 2], [0]]
    assert split_by_tokens([0, 1], [50, 5], [1, 1], 16) == [
        [0],
        [1],
    ]  # too long alone: a micro-batch of its own


class _Float32Sizes(TorchDispatchMode):
    """Records the element count of every fp32 tensor an op creates."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and t.dtype == torch.float32:
                self.largest = max(self.largest, t.numel())
        return out


@pytest.mark.parametrize("suppressed", [(), (3, 4, 5)])
def test_chunked_logprobs_equal_the_full_computation(gen: Any, suppressed: tuple[int, ...]) -> None:
    samples = grpo_samples(gen)
    batch = encode_batch(gen, [s.prompt for s in samples], [s.token_ids for s in samples])
    batch.suppressed = suppressed
    b, t = batch.completion_ids.shape
    vocab = gen.model.get_output_embeddings().weight.shape[0]
    weights = torch.randn(b, t, generator=torch.Generator().manual_seed(1)) * batch.completion_mask

    def run(chunk: int) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor], int]:
        gen.model.zero_grad(set_to_none=True)
        with _Float32Sizes() as sizes:
            logp, ent = completion_logprobs(gen.model, batch, 0.7, with_entropy=True, chunk_size=chunk)
            (logp * weights).sum().backward()
        return logp.detach(), ent, [p.grad.clone() for p in gen.model.parameters()], sizes.largest

    logp, ent, grads, largest_full = run(0)
    for chunk in (b, 3 * b):  # 1 and 3 positions per chunk
        c_logp, c_ent, c_grads, largest = run(chunk)
        torch.testing.assert_close(c_logp, logp, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(c_ent, ent, atol=1e-6, rtol=1e-5)
        for a, g in zip(c_grads, grads, strict=True):
            torch.testing.assert_close(a, g, atol=1e-6, rtol=1e-5)
        assert largest_full >= b * t * vocab  # the full computation does make one
        assert largest < b * t * vocab, (largest, b * t * vocab)  # chunks never do, forward or backward
