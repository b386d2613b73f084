"""GRPO learns: a tiny random Llama on CPU raises its success on ClickGrid-v0 (9 answers) well above chance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from trainers.grpo import train
from trainers.grpo_config import GRPOConfig


def test_grpo_raises_success_on_click_grid(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    config = GRPOConfig(
        model=str(tiny_lm_path), env_id="ClickGrid-v0", output_format="cell", reward="env", estimator="grpo",
        group_size=8, groups_per_step=8, num_envs=64, num_steps=300, learning_rate=4e-3, max_new_tokens=1,
        device="cpu", seed=0, output_dir=str(tmp_path), progress=False,
    )  # fmt: skip
    # 300 steps, not 200: the run's path depends on the CPU's float rounding, and on one machine seeds 0-4 ended
    # 200 steps at 0.26-0.43 (one below the bar) but 300 steps at 0.36-0.72 (start 0.02-0.03 for all).
    history = train(config)["history"]
    success = np.array([r["success_rate"] for r in history])
    start, end = success[:20].mean(), success[-20:].mean()
    print("success by 20-step block:", np.round(success.reshape(-1, 20).mean(axis=1), 3).tolist())
    assert start < 0.2
    assert end > start + 0.25, (start, end)
    assert (tmp_path / "learning_curve.png").is_file() and (tmp_path / "metrics.jsonl").is_file()
