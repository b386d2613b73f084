"""GRPO with different rewards or credit on one grounding task, same loop and hyper-parameters otherwise.

The runner that ``benchmarks/grpo_rewards.py`` (the papers' comparison, 3 seeds) and ``guigym demo`` (a short
``ssl`` against ``binary`` run) share:

* **Task**: ``ClickGrid-v0`` (3x3 lettered cells, one step, target box in the privileged channel).
* **Policy**: a small causal LM answering a cell letter (:class:`agents.prompts.cell.CellFormat`), e.g. the
  tiny Llama of :func:`agents.tiny_models.build_causal_lm`, the same weights at the start of every run.
* **Variants** (only the reward or the credit changes):
  ``binary``: reward ``binary`` (GUI-R1's 0.8 accuracy + 0.2 format), estimator ``grpo``;
  ``ssl``: reward ``ssl`` (``C + 0.2 * S_hat``, seed 000 sec. 3), estimator ``grpo``;
  ``sca``: reward ``binary``, estimator ``sca`` (seed 001: Residual for mixed groups, Prox for all-miss ones).
* **Metric**: the success rate of each step's rollouts (sampled at temperature 1), per GRPO step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

#: variant name -> (reward, advantage estimator) of :class:`trainers.grpo_config.GRPOConfig`.
VARIANTS: dict[str, tuple[str, str]] = {"binary": ("binary", "grpo"), "ssl": ("ssl", "grpo"), "sca": ("binary", "sca")}


class UnknownVariantError(ValueError):
    """The variant is not one of :data:`VARIANTS`."""


def run_variant(
    model: str | Path, variant: str, seed: int, steps: int, out: str | Path, progress: bool = False
) -> np.ndarray:
    """Train one GRPO run on ``ClickGrid-v0``; return its per-step success rates, shape ``(steps,)``.

    Each step is 8 groups of 8 rollouts (64 episodes); seed ``s`` draws its tasks from seeds ``100_000 * s``
    onward, so runs with different seeds see different tasks. Logs and the final model go to ``out/<variant>-<seed>``.
    """
    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    if variant not in VARIANTS:
        raise UnknownVariantError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    reward, estimator = VARIANTS[variant]
    config = GRPOConfig(
        model=str(model), env_id="ClickGrid-v0", output_format="cell", reward=reward, estimator=estimator,
        group_size=8, groups_per_step=8, num_envs=64, num_steps=steps, learning_rate=4e-3, max_new_tokens=1,
        device="cpu", seed=seed, seed_start=100_000 * seed, output_dir=str(Path(out) / f"{variant}-{seed}"),
        progress=progress, plot=False, decoder="loop",  # generate's samples from the same seed, sooner
    )  # fmt: skip
    return np.array([r["success_rate"] for r in train(config)["history"]])


def smooth(x: np.ndarray, k: int = 10) -> np.ndarray:
    """Trailing mean over the last ``k`` steps (fewer at the start), same shape as ``x``.

    >>> smooth(np.array([0.0, 1.0, 0.5]), k=2).tolist()
    [0.0, 0.5, 0.75]
    """
    return np.array([x[max(0, i - k + 1) : i + 1].mean() for i in range(len(x))])


def first_reach(curve: np.ndarray, threshold: float, k: int = 10) -> int | None:
    """The first step (1-based) where the ``k``-step smoothed curve reaches ``threshold``; None if never.

    >>> first_reach(np.array([0.0, 0.0, 1.0, 1.0]), 0.5, k=2)
    3
    """
    hit = np.flatnonzero(smooth(curve, k) >= threshold)
    return int(hit[0]) + 1 if hit.size else None


def compare(
    model: str | Path,
    variants: Sequence[str],
    seeds: Sequence[int],
    steps: int,
    out: str | Path,
    on_run: Callable[[str, int, np.ndarray], None] | None = None,
    progress: bool = False,
) -> dict[str, list[np.ndarray]]:
    """Run every variant with every seed; ``{variant: [per-step success rates of each seed]}``.

    ``on_run(variant, seed, curve)`` is called after each run (for progress lines).
    """
    curves: dict[str, list[np.ndarray]] = {v: [] for v in variants}
    for variant in variants:
        for seed in seeds:
            curves[variant].append(run_variant(model, variant, seed, steps, out, progress=progress))
            if on_run is not None:
                on_run(variant, seed, curves[variant][-1])
    return curves


def plot_compare(curves: dict[str, list[np.ndarray]], png: str | Path, threshold: float | None = None, k: int = 10) -> Path:
    """One figure: each variant's success rate, smoothed over ``k`` steps and averaged over seeds, per GRPO step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for variant, runs in curves.items():
        m = np.mean([smooth(c, k) for c in runs], axis=0)
        ax.plot(np.arange(1, len(m) + 1), m, label=f"{variant} ({len(runs)} seed{'s' if len(runs) > 1 else ''})")
    if threshold is not None:
        ax.axhline(threshold, color="grey", ls=":")
    ax.set_xlabel("GRPO step (64 rollouts each)")
    ax.set_ylabel(f"success ({k}-step mean, mean of seeds)")
    ax.set_title("GRPO on ClickGrid-v0")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    png = Path(png)
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=80)
    plt.close(fig)
    return png


__all__ = ["VARIANTS", "UnknownVariantError", "compare", "first_reach", "plot_compare", "run_variant", "smooth"]
