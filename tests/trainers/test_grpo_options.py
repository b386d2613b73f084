"""GRPO's other code paths on the tiny model: LoRA with the adapter-off reference, a loaded reference,
several epochs of mini-batches with recomputed old log-probs, and sampler/trainer log-prob agreement."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trainers.config_io import ConfigError
from trainers.grpo import train
from trainers.grpo_config import GRPOConfig
from trainers.logprobs import completion_logprobs, encode_batch


def _config(model: Path, out: Path, **kw: object) -> GRPOConfig:
    base = dict(model=str(model), env_id="ClickGrid-v0", output_format="cell", reward="continuous", group_size=4,
                groups_per_step=2, num_envs=8, num_steps=2, max_new_tokens=3, learning_rate=1e-2, device="cpu",
                output_dir=str(out), progress=False, plot=False, weight_decay=0.0)  # fmt: skip
    return GRPOConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_lora_with_kl_trains_only_the_adapter(tiny_lm_path: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    torch.set_num_threads(1)
    out = train(_config(tiny_lm_path, tmp_path, lora=True, lora_r=4, beta=0.1, epochs=2))
    model = out["model"]
    initial = load_file(tiny_lm_path / "model.safetensors")
    adapters = {n: p for n, p in model.named_parameters() if "lora_" in n}
    assert adapters and all(p.requires_grad for p in adapters.values())
    for name, p in model.named_parameters():
        if "lora_" not in name:
            base = name.replace("base_model.model.", "").replace(".base_layer", "")
            torch.testing.assert_close(p.detach(), initial[base], rtol=0, atol=0)
    assert any(float(p.detach().abs().sum()) > 0 for n, p in adapters.items() if "lora_B" in n)
    # Epoch 2 sees a moved policy: the KL to the adapter-off reference is positive.
    assert max(r["kl"] for r in out["history"]) > 0


def test_full_model_with_reference_and_recomputed_old_logprobs(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    # A learning rate too small to move the policy: the ratio to the stored (recomputed at T = 0.7) old
    # log-probs stays 1, so they were computed at the sampling temperature with the same positions.
    hist = train(_config(tiny_lm_path, tmp_path, beta=0.05, epochs=2, mini_batches=2, temperature=0.7,
                         learning_rate=1e-9, loss_agg="seq-mean-token-sum-norm"))["history"]  # fmt: skip
    assert len(hist) == 2 and all(r["kl"] >= 0 for r in hist)
    assert all(r["ratio_mean"] == pytest.approx(1.0, abs=1e-3) for r in hist)


def test_trainer_logprobs_equal_the_samplers(tiny_lm_path: Path) -> None:
    from agents.generation import SamplingParams
    from agents.hf_agent import HFGenerator

    torch.manual_seed(0)
    gen = HFGenerator(str(tiny_lm_path), device="cpu")
    convs = [[{"role": "user", "content": "click cell a"}], [{"role": "user", "content": "click the cell named e now"}]]
    groups = gen.generate(convs, sampling=SamplingParams(max_new_tokens=6, num_samples=2))
    flat = [g for grp in groups for g in grp]
    batch = encode_batch(gen, [g.prompt for g in flat], [g.token_ids for g in flat])  # prompts of unequal length
    with torch.no_grad():
        logp, _ = completion_logprobs(gen.model, batch)
    for i, g in enumerate(flat):
        torch.testing.assert_close(logp[i, : len(g.logprobs)], torch.tensor(g.logprobs), atol=1e-4, rtol=1e-4)


def test_vlm_policy_sees_the_screenshot(tmp_path: Path) -> None:
    from tests.agents.tiny_models import build_qwen2_vl, image_only_qwen2_vl_processor_class

    torch.set_num_threads(1)
    image_only_qwen2_vl_processor_class()  # the CPU test env lacks torchvision for the video half
    vlm = build_qwen2_vl(tmp_path / "vlm")
    # Too small a step to move the policy: the trainer's recomputed log-probs (images, M-RoPE positions)
    # must reproduce the sampler's, so the ratio stays 1.
    hist = train(_config(vlm, tmp_path / "run", temperature=0.8, learning_rate=1e-9, epochs=2))["history"]
    assert all(r["ratio_mean"] == pytest.approx(1.0, abs=1e-3) for r in hist)
    assert all(r["completion_len"] > 0 for r in hist)


def test_run_does_not_inherit_an_earlier_accelerators_precision(tiny_lm_path: Path, tmp_path: Path) -> None:
    # A notebook that ran TRL's trainer leaves accelerate's process-wide state at bf16 autocast; a run started
    # afterwards must train exactly as in a fresh process.
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    torch.set_num_threads(1)
    fresh = train(_config(tiny_lm_path, tmp_path / "fresh", deterministic=True))["model"]
    AcceleratorState._reset_state()
    try:
        Accelerator(cpu=True, mixed_precision="bf16")
        after = train(_config(tiny_lm_path, tmp_path / "after", deterministic=True))["model"]
        assert AcceleratorState().mixed_precision == "no"
    finally:
        AcceleratorState._reset_state()
    for (name, p), (_, q) in zip(fresh.named_parameters(), after.named_parameters(), strict=True):
        assert torch.equal(p, q), name
    with pytest.raises(ConfigError, match="mixed_precision"):
        _config(tiny_lm_path, tmp_path, mixed_precision="bf8")


def test_own_decoder_trains_exactly_as_generate(tiny_lm_path: Path, tmp_path: Path) -> None:
    # decoder="loop" with the default prompt_sharing draws generate's samples from the same seed, so a seeded run
    # repeats the generate run's rewards, losses and weights.
    torch.set_num_threads(1)
    runs = {d: train(_config(tiny_lm_path, tmp_path / d, decoder=d, deterministic=True, max_new_tokens=6))
            for d in ("hf", "loop")}  # fmt: skip
    keys = ("reward_mean", "success_rate", "completion_len", "loss", "clip_frac", "entropy")
    for a, b in zip(runs["hf"]["history"], runs["loop"]["history"], strict=True):
        assert {k: a[k] for k in keys} == pytest.approx({k: b[k] for k in keys}, rel=1e-6, abs=1e-7)
    for (name, p), (_, q) in zip(runs["hf"]["model"].named_parameters(), runs["loop"]["model"].named_parameters(),
                                 strict=True):  # fmt: skip
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7, msg=name)
    with pytest.raises(ConfigError, match="decoder"):
        _config(tiny_lm_path, tmp_path, decoder="sglang")  # decoder "vllm" is valid: tests/trainers/test_grpo_vllm.py


def test_group_envs_change_the_plumbing_not_the_run(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    runs = [train(_config(tiny_lm_path, tmp_path / str(g), group_envs=g))["history"] for g in (False, True)]
    keys = ("reward_mean", "reward_std", "success_rate", "adv_mean")
    assert [[r[k] for k in keys] for r in runs[0]] == [[r[k] for k in keys] for r in runs[1]]
