"""The MiniWoB learning benchmark's cut-down run (``--quick``): every arm trains and is judged on held-out seeds,
with the swap test beside its chance level measured on the same seeds, and GRPO logs what says it collapsed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.miniwob_learning import main


@pytest.mark.timeout(1200)  # about 2 minutes on 2 idle cores; the limit leaves room for a loaded machine
def test_quick_run_reports_held_out_success_and_the_swap_test(tmp_path):
    out = tmp_path / "result"
    assert main(["--quick", "--work", str(tmp_path / "runs"), "--out", str(out)]) == 0
    result = json.loads(out.with_suffix(".json").read_text())
    arms = result["arms"]
    assert set(arms) == {"init", "sft@10", "sft+grpo"}
    for arm, by_seed in arms.items():
        for task, row in by_seed["0"].items():
            assert row["episodes"] == 30, (arm, task)
            assert 0.0 < row["swap_chance"] < 1.0 and row["swap_episodes"] > 0
            assert 0.0 <= row["greedy"] <= 1.0 and 0.0 <= row["swap_rate"] <= 1.0
    # The random model writes no answer the format reads; cloning 10 demonstrations per task lifts it.
    mean = {arm: np.mean([r["greedy"] for r in by_seed["0"].values()]) for arm, by_seed in arms.items()}
    assert mean["init"] == 0.0 and mean["sft@10"] > 0.3
    curve = result["curves"]["sft+grpo"]["0"]
    assert curve[0]["step"] == 0 and {"eval_greedy_success", "eval_swap_rate", "eval_swap_chance"} <= set(curve[0])
    history = [json.loads(line) for line in (tmp_path / "runs/seed0/sft_grpo/metrics.jsonl").read_text().splitlines()]
    trained = [row for row in history if "reward_mean" in row]
    assert len(trained) == 10
    assert all({"entropy", "zero_adv_frac", "distinct_answers"} <= set(row) for row in trained)
    assert "| click-test-2 |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").exists()
