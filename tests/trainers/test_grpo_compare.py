"""The GRPO comparison runner (``guigym.grpo_compare``) and what the SSL and SCA benchmarks build on it: the
confidence-interval and steps-to-level arithmetic (hand-computed), disjoint splits, the policy-gradient variance
(a hand-computed case through the real loss, logged only when asked and leaving training unchanged), and each
benchmark's ``--quick`` path."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import guigym.grpo_compare as grpo_compare
from guigym.grpo_compare import (
    EVAL_SEED_START,
    TRAIN_SEEDS_PER_RUN,
    RunResult,
    UnknownVariantError,
    mean_ci,
    run_arm,
    steps_summary,
    steps_to_level,
)
from trainers.grpo import gradient_variance, grpo_loss, train
from trainers.grpo_config import GRPOConfig

ROOT = Path(__file__).resolve().parents[2]


def test_doctests() -> None:
    assert doctest.testmod(grpo_compare).failed == 0


def test_mean_ci_and_steps_to_level_by_hand() -> None:
    # Two seeds: sample std 0.1414 and 0.2828, t_{0.975, 1} = 12.706, half-width t * s / sqrt(2) = 1.2706, 2.5412.
    mean, half = mean_ci(np.array([[0.2, 0.4], [0.4, 0.8]]))
    np.testing.assert_allclose(mean, [0.3, 0.6])
    np.testing.assert_allclose(half, [1.2706, 2.5412], atol=1e-4)
    assert steps_to_level([0, 10, 20], [0.1, 0.35, 0.3], 0.35) == 10
    runs = [
        RunResult("a", s, [0, 10, 20], curve, []) for s, curve in enumerate([[0, 0.4, 0.5], [0, 0.1, 0.3]])
    ]
    assert steps_summary(runs, 0.4) == (15.0, 1, True)  # seed 1 never reaches 0.4: counted at step 20
    assert steps_summary(runs, 0.3) == (15.0, 2, False)


def test_unknown_arm_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(UnknownVariantError, match="binary, grpo, ssl, ssl_paper, sca"):
        run_arm(tmp_path / "model", "dense", 0, grpo_compare.Task(), tmp_path)


def test_every_run_trains_on_its_own_stream_and_evaluates_past_all_of_them() -> None:
    assert 1000 * TRAIN_SEEDS_PER_RUN <= EVAL_SEED_START
    # The trainer itself refuses a split that overlaps a run's stream.
    from trainers.heldout import SplitOverlapError

    with pytest.raises(SplitOverlapError):
        GRPOConfig(model="m", seed_start=EVAL_SEED_START - 5, num_train_seeds=10,
                   eval_seeds={"start": EVAL_SEED_START, "count": 3})  # fmt: skip


def test_gradient_variance_by_hand_through_the_grpo_loss() -> None:
    """Three groups of two one-token samples from a 2-way softmax at theta = 0 (pi = (0.5, 0.5)). A sample with
    action a and advantage A contributes ``-A (e_a - pi) / 2`` (token-mean over the group's 2 tokens):
    groups [(0, +1), (1, -1)] twice give (-0.5, 0.5) each, group [(1, +1), (0, -1)] gives (0.5, -0.5).
    Mean (-1/6, 1/6); squared deviations 2/9, 2/9, 8/9; grad_var = (12/9) / 2 = 2/3; ||mean||^2 = 1/18."""
    theta = torch.zeros(2, requires_grad=True)
    groups = [([0, 1], [1.0, -1.0]), ([0, 1], [1.0, -1.0]), ([1, 0], [1.0, -1.0])]

    def losses():
        for actions, adv in groups:
            logp = torch.log_softmax(theta, 0)[torch.tensor(actions)][:, None]  # (2, 1)
            yield grpo_loss(logp, logp.detach(), torch.tensor(adv), torch.ones(2, 1))[0]

    out = gradient_variance(losses(), [theta])
    assert out["grad_var"] == pytest.approx(2 / 3)
    assert out["grad_mean_sq"] == pytest.approx(1 / 18)
    assert out["grad_noise_ratio"] == pytest.approx(12.0)
    assert theta.grad is None  # measured with autograd.grad: nothing left for the optimiser


def test_gradient_variance_is_logged_only_when_asked_and_changes_no_update(
    tiny_lm_path: Path, tmp_path: Path
) -> None:
    torch.set_num_threads(1)
    base = dict(model=str(tiny_lm_path), env_id="ClickBox-v0", env_kwargs={"n_boxes": 2}, output_format="box",
                constrain_answers=True, reward="binary", estimator="sca", group_size=5, groups_per_step=3, num_envs=15,
                num_steps=2, learning_rate=1e-2, max_new_tokens=1, device="cpu", progress=False, plot=False)  # fmt: skip
    plain = train(GRPOConfig(**base, output_dir=str(tmp_path / "plain")))["history"]  # type: ignore[arg-type]
    logged = train(GRPOConfig(**base, grad_variance_every=1, output_dir=str(tmp_path / "var")))["history"]  # type: ignore[arg-type]
    assert all("grad_var" not in r for r in plain)
    for a, b in zip(plain, logged, strict=True):
        assert b["grad_var"] > 0 and np.isfinite(b["grad_var"]) and b["grad_mean_sq"] >= 0
        for key in ("reward_mean", "success_rate", "loss", "entropy"):
            assert a[key] == b[key], (key, a[key], b[key])


@pytest.mark.parametrize("script", ["ssl_grounding", "sca_grounding"])
def test_quick_benchmark_runs_and_reports(script: str, tmp_path: Path) -> None:
    """The path, not the effect: the quick run trains both arms, prints the tables and writes the plot."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), "--quick", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| arm | seeds | held-out start |" in proc.stdout
    assert (tmp_path / f"{script}_quick.png").stat().st_size > 0
    if script == "ssl_grounding":
        assert "ratio binary / ssl" in proc.stdout
        assert "format term paid to every binary rollout (a constant GRPO removes): yes" in proc.stdout
    else:
        assert "ratio sca / grpo" in proc.stdout and "grad_noise_ratio" in proc.stdout
    # --report rebuilds the same tables from the saved JSON, without training.
    again = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), "--quick", "--out", str(tmp_path / "again"),
         "--report", str(tmp_path / f"{script}_quick.json")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    table = lambda text: [line for line in text.splitlines() if line.startswith("|")]  # noqa: E731
    assert table(again.stdout) == table(proc.stdout)
