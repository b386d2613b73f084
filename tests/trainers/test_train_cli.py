"""``guigym train grpo|sft --config FILE``: the bundled tiny configs run, bad keys are reported."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from guigym.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_train_grpo_and_sft_from_the_tiny_configs(tiny_lm_path: Path, tmp_path: Path) -> None:
    grpo = runner.invoke(app, ["train", "grpo", "-c", str(ROOT / "configs/grpo_tiny_cpu.yaml"), "--set",
                               f"model={tiny_lm_path}", "--set", "num_steps=2", "--set", f"output_dir={tmp_path / 'g'}",
                               "--set", "progress=false"])  # fmt: skip
    assert grpo.exit_code == 0, grpo.output
    assert [json.loads(x)["step"] for x in (tmp_path / "g/metrics.jsonl").read_text().splitlines()] == [1, 2]
    demos = runner.invoke(app, ["run", "ClickGrid-v0", "--agent", "oracle", "-n", "4", "--record", str(tmp_path / "d")])
    assert demos.exit_code == 0, demos.output
    sft = runner.invoke(app, ["train", "sft", "-c", str(ROOT / "configs/sft_tiny_cpu.yaml"), "--set",
                              f"model={tiny_lm_path}", "--set", f"data={tmp_path / 'd'}", "--set", "epochs=1",
                              "--set", f"output_dir={tmp_path / 's'}"])  # fmt: skip
    assert sft.exit_code == 0, sft.output
    assert (tmp_path / "s/final/config.json").is_file()


def test_unknown_key_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", "grpo", "-c", str(ROOT / "configs/grpo_tiny_cpu.yaml"), "--set", "lr=0.1"])
    assert result.exit_code != 0
    assert "no field 'lr'" in result.output
