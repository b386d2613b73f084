"""The MiniWoB learning benchmark's cut-down run (``--quick``): every arm trains and is judged on held-out seeds,
with the swap test beside its chance level measured on the same seeds, and GRPO logs what says it collapsed."""

from __future__ import annotations

import json

import pytest

from benchmarks.miniwob_learning import main


@pytest.mark.timeout(1800)  # about 6 minutes on 2 idle cores; the limit leaves room for a loaded machine
def test_quick_run_reports_held_out_success_and_the_swap_test(tmp_path):
    out = tmp_path / "result"
    assert main(["--quick", "--work", str(tmp_path / "runs"), "--out", str(out)]) == 0
    result = json.loads(out.with_suffix(".json").read_text())
    arms = result["arms"]
    assert set(arms) == {"sft@2", "sft+grpo"}
    for arm, by_seed in arms.items():
        for task, row in by_seed["0"].items():
            assert row["episodes"] == 20, (arm, task)
            assert 0.0 < row["swap_chance"] < 1.0 and row["swap_episodes"] > 0
            assert 0.0 <= row["greedy"] <= 1.0 and 0.0 <= row["swap_rate"] <= 1.0
        # click-button is the task where only the instruction tells the buttons apart: the answer must follow it
        # when it names another button on the same page, well above a uniformly drawn listed element (chance).
        button = by_seed["0"]["click-button"]
        assert button["swap_rate"] > button["swap_chance"] + 0.3, (arm, button)
        assert button["greedy"] > 0.5, (arm, button)
    # GRPO learned what two demonstrations did not teach: held-out success above its SFT start on the same seeds.
    suite = {arm: sum(row["greedy"] for row in by_seed["0"].values()) / 2 for arm, by_seed in arms.items()}
    assert suite["sft+grpo"] > suite["sft@2"] + 0.05, suite
    curve = result["curves"]["sft+grpo"]["0"]
    assert curve[0]["step"] == 0 and {"eval_greedy_success", "eval_swap_rate", "eval_swap_chance"} <= set(curve[0])
    history = [json.loads(line) for line in (tmp_path / "runs/seed0/sft_grpo/metrics.jsonl").read_text().splitlines()]
    trained = [row for row in history if "reward_mean" in row]
    assert len(trained) == 40
    assert all({"entropy", "zero_adv_frac", "distinct_answers", "informative_groups"} <= set(row) for row in trained)
    assert "| click-test-2 |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").exists()
