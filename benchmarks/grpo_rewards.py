"""The papers' comparison in miniature: GRPO with ``binary``, ``ssl`` and ``sca`` credit on a grounding task.

* **Task**: ``ClickGrid-v0`` (3x3 lettered cells, one step, target box in the privileged channel).
* **Policy**: the tiny random-initialised Llama of `agents.tiny_models` (2 layers, hidden 32), answering a cell letter
  (:class:`agents.prompts.cell.CellFormat`), the same weights at the start of every run.
* **Variants** (same GRPO loop, same hyper-parameters, only the reward or the credit changes):
  ``binary``: reward ``binary`` (GUI-R1's 0.8 accuracy + 0.2 format), estimator ``grpo``;
  ``ssl``: reward ``ssl`` (``C + 0.2 * S_hat``, seed 000), estimator ``grpo``;
  ``sca``: reward ``binary``, estimator ``sca`` (seed 001: Residual for mixed groups, Prox for all-miss ones).
* **Metric**: the success rate of each step's rollouts (sampled at temperature 1), smoothed over 10 steps;
  reported: the first step where the smoothed rate reaches ``--threshold`` (">" budget when never), and
  the final rate (mean of the last 20 steps), per seed and averaged.

The runner is `trainers.grpo_compare` (shared with `guigym demo`).

Caveat, stated rather than tuned away: a cell answer always clicks a cell centre, so a miss's distance to the
target is one of a few values; SSL's tier is 0 outside the box, so on this task ``ssl`` differs from
``binary`` only in the size of a hit's reward. Run:
``python benchmarks/grpo_rewards.py`` (3 seeds x 3 variants x 150 steps; several minutes on 2 cores), or
``--quick`` (``guigym bench``: seed 0, 40 steps; the tiny model barely starts to learn in that budget, so it
checks the path, not the comparison). Prints a table and writes ``benchmarks/out/grpo_rewards.png``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainers.grpo_compare import VARIANTS, compare, first_reach, plot_compare  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--threshold", type=float, default=0.3)
    parser.add_argument("--quick", action="store_true", help="--seeds 0 --steps 40 (overrides them)")
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.steps = [0], 40

    import torch

    from agents.tiny_models import build_causal_lm

    torch.set_num_threads(1)
    tmp = Path(tempfile.mkdtemp(prefix="grpo-rewards-"))
    model = build_causal_lm(tmp / "tiny")
    curves = compare(
        model, list(VARIANTS), args.seeds, args.steps, tmp,
        on_run=lambda v, s, c: print(f"{v} seed {s}: final {c[-20:].mean():.3f}", flush=True),
    )  # fmt: skip

    print(f"\nGRPO on ClickGrid-v0, tiny Llama, {args.steps} steps x 64 rollouts, seeds {args.seeds}")
    print(f"| variant | steps to smoothed success >= {args.threshold} (per seed) | mean | final success (per seed) | mean |")
    print("| --- | --- | --- | --- | --- |")
    for variant, runs in curves.items():
        reach = [first_reach(c, args.threshold) for c in runs]
        shown = ", ".join(str(r) if r is not None else f">{args.steps}" for r in reach)
        mean_reach = np.mean([r if r is not None else args.steps for r in reach])
        mark = ">=" if None in reach else ""
        finals = [float(c[-20:].mean()) for c in runs]
        print(f"| {variant} | {shown} | {mark}{mean_reach:.0f} | {', '.join(f'{f:.3f}' for f in finals)} | {np.mean(finals):.3f} |")

    out = Path(__file__).resolve().parent / "out"
    plot_compare(curves, out / "grpo_rewards.png", threshold=args.threshold)
    print(f"plot: {out / 'grpo_rewards.png'}")


if __name__ == "__main__":
    main()
