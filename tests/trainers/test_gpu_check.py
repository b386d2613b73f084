"""``benchmarks/gpu_check.py``'s Python path on CPU: a tiny Qwen2.5-VL built from a config, screenshots through
the processor, GRPO steps; the GPU script differs only by ``--device cuda --dtype bfloat16 --size small``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


def test_gpu_check_runs_the_vlm_path_on_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks/gpu_check.py")
    assert spec is not None and spec.loader is not None
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    torch.set_num_threads(1)
    history = gpu_check.main(["--device", "cpu", "--dtype", "float32", "--size", "tiny", "--steps", "2",
                              "--max-new-tokens", "8", "--cell-px", "32", "--out", str(tmp_path)])  # fmt: skip
    out = capsys.readouterr().out
    assert len(history) == 2 and "generated tokens/s" in out and "peak GPU memory" in out
    assert all(r["completion_len"] > 0 and r["tokens_per_s"] > 0 for r in history)
    # One epoch: the ratio is taken before the update, so the trainer's log-probs of the screenshot prompts
    # (pixel values, M-RoPE positions, the suppressed image placeholders) must reproduce the sampler's.
    assert all(r["ratio_mean"] == pytest.approx(1.0, abs=1e-3) for r in history)


def test_vlm_never_emits_image_placeholders(tmp_path: Path) -> None:
    from agents.generation import SamplingParams
    from agents.hf_agent import HFGenerator
    from agents.tiny_models import build_vlm

    torch.manual_seed(0)
    gen = HFGenerator(str(build_vlm(tmp_path / "vlm", "tiny")), device="cpu")
    assert len(gen.suppress_ids) == 2
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "click cell a"}]}]
    shot = torch.randint(0, 255, (64, 64, 3), dtype=torch.uint8).numpy()
    # A random model's completions would hold a placeholder about once per vocabulary-size draws (~400 here).
    (group,) = gen.generate([conv], [[shot]], SamplingParams(max_new_tokens=40, num_samples=30))
    drawn = [t for g in group for t in g.token_ids]
    assert len(drawn) > 400 and not set(drawn) & set(gen.suppress_ids)
