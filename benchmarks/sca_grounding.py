"""SCA (seed 001) in real training: GRPO with the ``sca`` estimator against ``grpo``, N = 5, on held-out layouts,
with the variance of the policy gradient measured during training.

* **Task**: ``ClickBox-v0`` as in ``benchmarks/ssl_grounding.py`` (2 boxes of 30-48 pixels per layout, drawn per
  seed; the policy names a cell of a 5 x 5 answer grid and clicks its centre, so a miss has a real distance to the
  target box for SCA's Prox branch and hits and misses of a mixed group have positions for its Residual branch).
* **Policy**: the tiny 2-layer Llama with hidden size 128, the same initial weights in every run; only cell letters
  are sampled.
* **Arms** (:mod:`guigym.grpo_compare`; same loop and hyper-parameters): reward ``binary`` in both;
  ``grpo``: ``A = (r - mean) / std`` per group; ``sca``: Spatial Credit Assignment (section 4.1: leave-one-out
  Theil-Sen Residual for mixed groups, proximity order for all-miss groups, GRPO otherwise), with
  :class:`rewards.sca_config.SCAConfig`'s defaults. N = 5 rollouts per group (the seed's setting), 8 groups per
  step (40 rollouts), learning rate 1e-3.
* **Held-out success**: greedy success on 200 layouts never trained on, every 20 steps; mean over seeds with a 95%
  t interval.
* **Gradient variance** (``GRPOConfig.grad_variance_every``, :func:`trainers.grpo.gradient_variance`): every
  4th step, before the update, each of the 8 groups gives its own policy-gradient estimate ``g_k`` (the gradient of its
  GRPO surrogate at ratio 1: ``-grad mean_i A_i log pi(a_i)``, over all 2-layer model parameters);
  ``grad_var = sum_k ||g_k - g_bar||^2 / (G - 1)`` is the trace of their sample covariance (the variance of a
  one-group estimate, summed over parameters), ``grad_mean_sq = ||g_bar||^2`` the squared norm of their mean, and
  ``grad_noise_ratio = grad_var / grad_mean_sq`` the scale-free noise-to-signal ratio. Per run the mean over all
  steps and over the first 20 (where both arms' policies are still close to the shared start); per arm the mean
  over seeds with a 95% interval, and the ratio sca / grpo. The arms' policies drift apart during training, so the
  whole-run figure compares estimators on different policies; the first-20-step figure less so.

``--grid 8 --box-min 20 --box-max 30 --lr 3e-4`` runs SSL's finer setting (two-letter answers on an 8 x 8 grid,
boxes of 20-30 px; see ``benchmarks/ssl_grounding.py``). Measured there (2026-12-03, 5 seeds x 2000 steps): grpo
0.209 +- 0.181, sca 0.127 +- 0.019; four of five sca runs collapse onto one answer cell
(``docs/learning_benchmarks.md`` has the tables).

Run: ``python benchmarks/sca_grounding.py`` (5 seeds x 2 arms x 120 steps; 47 minutes with ``--jobs 2`` on a 2-core
machine at load ~30), or ``--quick`` (1 seed, 4 steps, 16 held-out seeds: seconds; checks the
path, not the effect). Prints markdown tables; writes ``benchmarks/out/sca_grounding.png`` and ``.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guigym.grpo_compare import (  # noqa: E402
    RunResult,
    Task,
    clickbox_task_args,
    fmt_ci,
    heldout_table,
    load_curves,
    mean_ci,
    paired_final_difference,
    plot_heldout,
    run_with_progress,
    save_curves,
)

LEVELS = (0.30, 0.35, 0.40)
GRAD_KEYS = ("grad_var", "grad_mean_sq", "grad_noise_ratio")
#: Steps of the early window of the gradient statistics.
EARLY = 20
#: The gradient variance is measured on every this many steps (8 extra backward passes each: kept off most steps).
GRAD_EVERY = 4


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="1 seed, 4 steps: checks the path, not the effect"
    )
    parser.add_argument("--seeds", type=int, default=5, help="seeds per arm")
    parser.add_argument("--steps", type=int, default=120, help="GRPO steps per run")
    parser.add_argument("--jobs", type=int, default=2, help="runs trained at once (one torch thread each)")
    parser.add_argument("--grid", type=int, default=5, help="answer-grid cells per side (2-26; > 5: two letters)")
    parser.add_argument("--box-min", type=int, default=30, help="smallest box side, pixels")
    parser.add_argument("--box-max", type=int, default=48, help="largest box side, pixels")
    parser.add_argument("--lr", type=float, default=1e-3, help="AdamW learning rate")
    parser.add_argument(
        "--levels", type=float, nargs="+", default=list(LEVELS), help="held-out success levels"
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "out", help="folder of the PNG and JSON"
    )
    parser.add_argument("--work", type=Path, default=None, help="run folders (default: a temporary folder)")
    parser.add_argument(
        "--report", type=Path, default=None, help="print the tables and plot of a saved JSON, no runs"
    )
    args = parser.parse_args(argv)

    env_kwargs, format_kwargs = clickbox_task_args(args.grid, args.box_min, args.box_max)
    task = Task(env_kwargs=env_kwargs, format_kwargs=format_kwargs, group_size=5, groups_per_step=8, steps=args.steps,
                learning_rate=args.lr, grad_variance_every=GRAD_EVERY)  # fmt: skip
    seeds, jobs = list(range(args.seeds)), args.jobs
    if args.quick:
        task = Task(env_kwargs=env_kwargs, format_kwargs=format_kwargs, group_size=5, groups_per_step=4, steps=4,
                    eval_count=16, eval_every=2, grad_variance_every=2)  # fmt: skip
        seeds, jobs = [0], 1
    if args.report is not None:
        task, results = load_curves(args.report)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            results = run_with_progress(args.work or Path(tmp), ["grpo", "sca"], seeds, task, jobs)

    grid = task.format_kwargs.get("grid", 5)
    print(f"\n## GRPO estimator sca against grpo on ClickBox-v0 {task.env_kwargs}, {grid} x {grid} answer grid: held-out greedy success "
          f"({task.eval_count} layouts never trained on), N = {task.group_size}, {task.steps} steps\n")  # fmt: skip
    print("\n".join(heldout_table(results, args.levels)))
    print(
        f"\nfinal held-out success, sca - grpo (paired by seed): {fmt_ci(*paired_final_difference(results, 'grpo', 'sca'))}"
    )
    print("\n### Policy-gradient variance during training (per-group estimates; see the docstring)\n")
    print("\n".join(gradient_table(results, min(EARLY, task.steps))))
    args.out.mkdir(parents=True, exist_ok=True)
    name = "sca_grounding_quick" if args.quick else "sca_grounding"
    png = plot_heldout(results, args.out / f"{name}.png",
                       f"GRPO on ClickBox-v0 (held-out layouts): sca against grpo, N={task.group_size}",
                       level=args.levels[0], episodes_per_step=task.group_size * task.groups_per_step)  # fmt: skip
    if args.report is None:
        save_curves(results, task, args.out / f"{name}.json", extra=GRAD_KEYS)
    print(f"plot: {png}")
    return 0


def run_means(runs: list[RunResult], key: str, early: int | None = None) -> np.ndarray:
    """Per run, the mean of a per-step metric over all steps (or the first ``early``), ignoring steps without it."""
    return np.array([np.nanmean(r.metric(key)[:early]) for r in runs])


def gradient_table(results: dict[str, list[RunResult]], early: int) -> list[str]:
    """Markdown rows: per arm and window, the final held-out success and the gradient statistics (mean ± 95% CI over
    seeds of each run's mean), then the ratio sca / grpo of the means. A run's ``grad_noise_ratio`` is its mean
    ``grad_var`` over its mean ``grad_mean_sq`` (a step where every group's advantages are 0, as GRPO gives when no
    group mixes hits and misses, has a zero mean gradient and an infinite ratio of its own)."""
    head = ["arm", "window", "final held-out success", "grad_var", "grad_mean_sq", "grad_noise_ratio"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    means: dict[tuple[str, str], dict[str, float]] = {}
    for window, cut in ((f"steps 1-{early}", early), ("all steps", None)):
        for arm, runs in results.items():
            final = np.array([r.greedy[-1] for r in runs])
            cells = [arm, window, fmt_ci(*mean_ci(final))]
            per_run = {k: run_means(runs, k, cut) for k in GRAD_KEYS[:2]}
            per_run["grad_noise_ratio"] = per_run["grad_var"] / per_run["grad_mean_sq"]
            for key in GRAD_KEYS:
                m, h = mean_ci(per_run[key])
                means.setdefault((arm, window), {})[key] = float(m)
                cells.append(
                    fmt_ci(float(m), float(h), 4)
                    if key != "grad_noise_ratio"
                    else fmt_ci(float(m), float(h), 2)
                )
            rows.append("| " + " | ".join(cells) + " |")
        if {"grpo", "sca"} <= set(results):
            ratios = [f"{means['sca', window][k] / means['grpo', window][k]:.2f}" for k in GRAD_KEYS]
            rows.append(f"| ratio sca / grpo | {window} | - | " + " | ".join(ratios) + " |")
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
