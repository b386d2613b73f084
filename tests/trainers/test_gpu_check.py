"""``benchmarks/gpu_check.py``'s Python path on CPU: the real-size SSL config (GuiWebGround-v0 screenshots, its reward,
KL reference and gradient checkpointing) with its architecture cut down to a tiny one, one step of a small batch;
``benchmarks/gpu_check.sh`` runs the same ``main`` with the real architecture on a GPU, on ``ClickBox-v0`` at the
same screen size (``--env clickbox``; its dry run: ``test_gpu_check_dry_run.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from tests.trainers.conftest import have_chromium

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not have_chromium(), reason="GuiWebGround-v0 needs Chromium (playwright)")
def test_gpu_check_runs_the_real_config_path_on_cpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks/gpu_check.py")
    assert spec is not None and spec.loader is not None
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    torch.set_num_threads(1)
    history = gpu_check.main(["--config", gpu_check.CONFIGS[0], "--size", "tiny", "--device", "cpu", "--dtype",
                              "float32", "--steps", "1", "--out", str(tmp_path), "--set", "groups_per_step=2",
                              "--set", "group_size=2", "--set", "num_envs=4", "--set", "max_new_tokens=8"])  # fmt: skip
    out = capsys.readouterr().out
    assert "grpo_ssl_qwen25vl3b_webground.yaml" in out and "| 1 |" in out and "peak GPU memory" in out
    (record,) = history
    assert record["completion_len"] > 0 and record["tokens_per_s"] > 0 and record["time_update"] > 0
    assert record["kl"] >= 0  # the config's KL reference ran (beta 0.1)
    # One epoch: the ratio is taken before the update, so the trainer's log-probs of the screenshot prompts
    # (pixel values, M-RoPE positions, the suppressed image placeholders) must reproduce the sampler's.
    assert record["ratio_mean"] == pytest.approx(1.0, abs=1e-3)
    # The model is the config's architecture, cut down: the hub vocabulary, guigym's special-token ids.
    from transformers import AutoConfig

    (folder,) = [p for p in tmp_path.iterdir() if p.name.endswith("-tiny")]
    config = AutoConfig.from_pretrained(folder)
    assert config.text_config.vocab_size == 151936 and config.text_config.num_hidden_layers == 2


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


def test_clickbox_screen_size_is_the_webground_configs() -> None:
    # --env clickbox keeps the screen size as a constant (importing GuiWebGround-v0 needs playwright, which the
    # GPU machine lacks); this holds it equal to what the 3B configs' env renders.
    pytest.importorskip("playwright")
    import yaml

    from trainers.memory_plan import env_viewport

    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks/gpu_check.py")
    assert spec is not None and spec.loader is not None
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    for name in gpu_check.CONFIGS:
        values = yaml.safe_load((ROOT / name).read_text())
        assert env_viewport(values["env_id"], values.get("env_kwargs") or {}) == gpu_check.VIEWPORT, name
