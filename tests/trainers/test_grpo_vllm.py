"""GRPO with ``decoder: vllm`` as far as a CPU goes: the sampler-mismatch statistics by hand, the refusal without
vLLM, and the update's old log-probs recomputed by the trained model while the sampler's are only compared."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import vllm_generator
from trainers.config_io import ConfigError
from trainers.grpo_config import GRPOConfig
from trainers.sampler_stats import logprob_mismatch, padded_logprobs


def test_mismatch_statistics_by_hand() -> None:
    # Masked tokens: d = trainer - sampler = [0.0, +0.3, -0.05, -0.2]; the fifth column is padding.
    sampler = torch.tensor([[-1.0, -2.0, -0.5, 0.0, 9.0], [-3.0, -0.1, 0.0, 0.0, 0.0]])
    trainer = torch.tensor([[-1.0, -1.7, -0.55, 0.0, -9.0], [-3.2, -0.1, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]])
    d = [0.0, 0.3, -0.05, -0.2]
    stats = logprob_mismatch(sampler, trainer, mask)
    assert stats["sampler_logprob_abs_diff_mean"] == pytest.approx((0 + 0.3 + 0.05 + 0.2) / 4, abs=1e-6)
    assert stats["sampler_ratio_mean"] == pytest.approx(sum(math.exp(x) for x in d) / 4, abs=1e-6)
    assert stats["sampler_ratio_max"] == pytest.approx(math.exp(0.3), abs=1e-6)
    assert stats["sampler_ratio_min"] == pytest.approx(math.exp(-0.2), abs=1e-6)
    assert stats["sampler_mismatch_frac"] == pytest.approx(2 / 4)  # |0.3| and |-0.2| exceed 0.1
    assert logprob_mismatch(sampler, trainer, torch.zeros_like(mask)) == {}


def test_padded_logprobs() -> None:
    out = padded_logprobs([[-1.0, -2.0], [-0.5]], 3)
    torch.testing.assert_close(out, torch.tensor([[-1.0, -2.0, 0.0], [-0.5, 0.0, 0.0]]))


def test_decoder_vllm_is_refused_at_config_time_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vllm_generator, "vllm_available", lambda: False)
    with pytest.raises(ConfigError, match=r"pip install 'guigym\[vllm\]'"):
        GRPOConfig(model="/nonexistent/model", decoder="vllm")
    monkeypatch.setattr(vllm_generator, "vllm_available", lambda: True)
    assert GRPOConfig(model="m", decoder="vllm").vllm_gpu_memory_utilization == 0.3
    with pytest.raises(ConfigError, match="vllm_gpu_memory_utilization"):
        GRPOConfig(model="m", decoder="vllm", vllm_gpu_memory_utilization=1.0)


@pytest.mark.parametrize("decoder", ["hf", "vllm"])
def test_vllm_old_logprobs_are_recomputed_and_the_gap_logged(
    decoder: str, tiny_lm_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from accelerate import Accelerator

    from agents.generation import SamplingParams
    from agents.hf_agent import HFGenerator
    from trainers.grpo import Sample, update
    from trainers.optim import adamw_with_warmup

    monkeypatch.setattr(vllm_generator, "vllm_available", lambda: True)  # the config only; HF samples here
    torch.set_num_threads(1)
    torch.manual_seed(0)
    config = GRPOConfig(model=str(tiny_lm_path), decoder=decoder, device="cpu", output_dir=str(tmp_path),
                        max_new_tokens=6, learning_rate=1e-3)  # fmt: skip
    gen = HFGenerator(str(tiny_lm_path), device="cpu")
    conv = [{"role": "user", "content": "click the search button"}]
    (group,) = gen.generate([conv], sampling=SamplingParams(1.0, max_new_tokens=6, num_samples=4))
    # A sampler whose kernels put every drawn token 0.2 nats more likely than the trained model does.
    samples = [Sample(g.prompt, g.token_ids, [lp + 0.2 for lp in g.logprobs], float(a), None, 0)
               for g, a in zip(group, np.array([1.0, -1.0, 0.5, -0.5]), strict=True)]  # fmt: skip
    optimizer, _ = adamw_with_warmup(gen.model, 1e-3, 0.0, 0.0, 1)
    stats = update(config, Accelerator(cpu=True), gen.model, gen, None, optimizer, samples, untempered=True)
    if decoder == "vllm":
        # Old log-probs recomputed by the trained model: the ratio starts at 1 (one epoch, one mini-batch).
        assert stats["ratio_mean"] == pytest.approx(1.0, abs=1e-5)
        assert stats["sampler_logprob_abs_diff_mean"] == pytest.approx(0.2, abs=1e-4)
        assert stats["sampler_ratio_mean"] == pytest.approx(math.exp(-0.2), abs=1e-4)
        assert stats["sampler_mismatch_frac"] == 1.0
    else:
        # The HF sampler's log-probs are the old log-probs as they come: the 0.2 shows up in the ratio.
        assert stats["ratio_mean"] == pytest.approx(math.exp(-0.2), abs=1e-4)
        assert not any(k.startswith("sampler_") for k in stats)


def test_docstring_examples() -> None:
    import doctest

    import agents.vllm_generator
    import trainers.sampler_stats

    for module in (agents.vllm_generator, trainers.sampler_stats):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__
