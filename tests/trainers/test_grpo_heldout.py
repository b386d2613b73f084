"""GRPO's held-out evaluation: logged before, during and after training without changing the training path, and
printed by ``guigym train grpo``."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from typer.testing import CliRunner

from guigym.cli import app
from trainers.grpo import train
from trainers.grpo_config import GRPOConfig

ROOT = Path(__file__).resolve().parents[2]


def _config(model: Path, out: Path, **kw: object) -> GRPOConfig:
    base = dict(model=str(model), env_id="ClickBox-v0", output_format="box", reward="env", group_size=4,
                groups_per_step=2, num_envs=8, num_steps=3, max_new_tokens=1, learning_rate=1e-2, device="cpu",
                num_train_seeds=1000, output_dir=str(out), progress=False, plot=False)  # fmt: skip
    return GRPOConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_held_out_eval_is_logged_and_leaves_training_unchanged(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    plain = train(_config(tiny_lm_path, tmp_path / "plain"))
    split = {"start": 1000, "count": 6}
    out = train(_config(tiny_lm_path, tmp_path / "eval", eval_seeds=split, eval_every=2, eval_samples=2, plot=True))
    # Evaluation restores torch's random state: the training rollouts and updates are those of a run without it.
    for a, b in zip(plain["history"], out["history"], strict=True):
        for key in ("reward_mean", "success_rate", "loss", "entropy"):
            assert a[key] == b[key], (key, a[key], b[key])
    assert [e["step"] for e in out["eval"]] == [0, 2, 3]
    for e in out["eval"]:
        assert 0 <= e["eval_greedy_success"] <= 1 and 0 <= e["eval_sampled_success"] <= 1
        assert (e["eval_greedy_success"] * 6) % 1 == 0 and (e["eval_sampled_success"] * 12) % 1 == 0
    lines = [json.loads(x) for x in (tmp_path / "eval/metrics.jsonl").read_text().splitlines()]
    assert [x["step"] for x in lines] == [0, 1, 2, 3]
    assert [("eval_greedy_success" in x) for x in lines] == [True, False, True, True]
    assert "eval_greedy_success" not in json.dumps(plain["history"])
    assert (tmp_path / "eval/learning_curve.png").is_file()


def test_train_grpo_prints_the_held_out_figure(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    result = CliRunner().invoke(
        app,
        ["train", "grpo", "-c", str(ROOT / "configs/grpo_tiny_heldout.yaml"), "--set", f"model={tiny_lm_path}",
         "--set", "num_steps=1", "--set", "eval_seeds={start: 100000, count: 4}", "--set", "eval_samples=1",
         "--set", f"output_dir={tmp_path}", "--set", "progress=false", "--set", "save_every=0"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "held-out (4 seeds) after step 1: greedy success" in result.output
