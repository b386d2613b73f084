"""The papers' comparison in miniature: GRPO with ``binary``, ``ssl`` and ``sca`` credit on a grounding task.

* **Task**: ``ClickGrid-v0`` (3x3 lettered cells, one step, target box in the privileged channel).
* **Policy**: the tiny random-initialised Llama of the tests (2 layers, hidden 32), answering a cell letter
  (:class:`agents.prompts.cell.CellFormat`), the same weights at the start of every run.
* **Variants** (same GRPO loop, same hyper-parameters, only the reward or the credit changes):
  ``binary``: reward ``binary`` (GUI-R1's 0.8 accuracy + 0.2 format), estimator ``grpo``;
  ``ssl``: reward ``ssl`` (``C + 0.2 * S_hat``, seed 000), estimator ``grpo``;
  ``sca``: reward ``binary``, estimator ``sca`` (seed 001: Residual for mixed groups, Prox for all-miss ones).
* **Metric**: the success rate of each step's rollouts (sampled at temperature 1), smoothed over 10 steps;
  reported: the first step where the smoothed rate reaches ``--threshold`` (">" budget when never), and
  the final rate (mean of the last 20 steps), per seed and averaged.

Caveat, stated rather than tuned away: a cell answer always clicks a cell centre, so a miss's distance to the
target is one of a few values; SSL's tier is 0 outside the box, so on this task ``ssl`` differs from
``binary`` only in the size of a hit's reward. Run:
``python benchmarks/grpo_rewards.py`` (3 seeds x 3 variants x 150 steps; several minutes on 2 cores). Prints a
table and writes ``benchmarks/out/grpo_rewards.png``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

VARIANTS = {"binary": ("binary", "grpo"), "ssl": ("ssl", "grpo"), "sca": ("binary", "sca")}


def run(model: Path, variant: str, seed: int, steps: int, out: Path) -> np.ndarray:
    """Per-step success rates of one GRPO run."""
    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    reward, estimator = VARIANTS[variant]
    config = GRPOConfig(
        model=str(model), env_id="ClickGrid-v0", output_format="cell", reward=reward, estimator=estimator,
        group_size=8, groups_per_step=8, num_envs=64, num_steps=steps, learning_rate=4e-3, max_new_tokens=1,
        device="cpu", seed=seed, seed_start=100_000 * seed, output_dir=str(out / f"{variant}-{seed}"),
        progress=False, plot=False,
    )  # fmt: skip
    return np.array([r["success_rate"] for r in train(config)["history"]])


def smooth(x: np.ndarray, k: int = 10) -> np.ndarray:
    return np.array([x[max(0, i - k + 1) : i + 1].mean() for i in range(len(x))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--threshold", type=float, default=0.3)
    args = parser.parse_args()

    import torch

    from tests.agents.tiny_models import build_causal_lm

    torch.set_num_threads(1)
    tmp = Path(tempfile.mkdtemp(prefix="grpo-rewards-"))
    model = build_causal_lm(tmp / "tiny")
    curves: dict[str, list[np.ndarray]] = {v: [] for v in VARIANTS}
    for variant in VARIANTS:
        for seed in args.seeds:
            curves[variant].append(run(model, variant, seed, args.steps, tmp))
            print(f"{variant} seed {seed}: final {curves[variant][-1][-20:].mean():.3f}", flush=True)

    print(f"\nGRPO on ClickGrid-v0, tiny Llama, {args.steps} steps x 64 rollouts, seeds {args.seeds}")
    print(f"| variant | steps to smoothed success >= {args.threshold} (per seed) | mean | final success (per seed) | mean |")
    print("| --- | --- | --- | --- | --- |")
    for variant, runs in curves.items():
        reach = []
        for c in runs:
            hit = np.flatnonzero(smooth(c) >= args.threshold)
            reach.append(int(hit[0]) + 1 if hit.size else None)
        shown = ", ".join(str(r) if r is not None else f">{args.steps}" for r in reach)
        mean_reach = np.mean([r if r is not None else args.steps for r in reach])
        mark = ">=" if None in reach else ""
        finals = [float(c[-20:].mean()) for c in runs]
        print(f"| {variant} | {shown} | {mark}{mean_reach:.0f} | {', '.join(f'{f:.3f}' for f in finals)} | {np.mean(finals):.3f} |")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for variant, runs in curves.items():
        m = np.mean([smooth(c) for c in runs], axis=0)
        ax.plot(np.arange(1, len(m) + 1), m, label=variant)
    ax.axhline(args.threshold, color="grey", ls=":")
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("success (smoothed, mean of seeds)")
    ax.legend()
    ax.grid(alpha=0.3)
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / "grpo_rewards.png", dpi=80)
    print(f"plot: {out / 'grpo_rewards.png'}")


if __name__ == "__main__":
    main()
