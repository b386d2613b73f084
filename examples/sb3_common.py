"""What the two SB3 examples share: a PPO run per reward that logs episode success, and one figure.

Each run trains Stable-Baselines3 PPO on an env made by ``make_env(reward)``, and records, per finished
episode, the env step it ended at and its binary success (``info["success"]``: the task verdict, the same
for every reward), so the ``binary`` and ``ssl`` curves share a y-axis even though their rewards differ.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback

#: Where the examples write (never into the project root).
RUNS = Path("runs")


class SuccessLog(BaseCallback):
    """Collects ``(env step, success)`` for every episode that ends during training."""

    def __init__(self) -> None:
        super().__init__()
        self.points: list[tuple[int, float]] = []

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if done:
                self.points.append((self.num_timesteps, float(bool(info.get("success", False)))))
        return True


def train_one(
    make_env: Callable[[str], gym.Env[Any, Any]], reward: str, steps: int, policy: str, seed: int,
    ppo_kwargs: dict[str, Any],
) -> list[tuple[int, float]]:
    """Train PPO for ``steps`` env steps with ``reward``; returns the per-episode ``(step, success)`` log."""
    env = make_env(reward)
    try:
        model = PPO(policy, env, seed=seed, verbose=0, device="cpu", **ppo_kwargs)
        log = SuccessLog()
        model.learn(total_timesteps=steps, callback=log, progress_bar=True)
    finally:
        env.close()
    return log.points


def smooth(points: list[tuple[int, float]], window: int) -> tuple[np.ndarray, np.ndarray]:
    """Running mean of success over the last ``window`` episodes, against env steps."""
    if not points:
        return np.zeros(0), np.zeros(0)
    steps = np.array([p[0] for p in points], dtype=float)
    success = np.array([p[1] for p in points], dtype=float)
    kernel = np.ones(min(window, len(success)))
    means = np.convolve(success, kernel, mode="full")[: len(success)]
    counts = np.convolve(np.ones_like(success), kernel, mode="full")[: len(success)]
    return steps, means / counts


def plot_curves(curves: dict[str, list[tuple[int, float]]], title: str, out: Path, window: int = 50) -> Path:
    """Both rewards' success curves on one figure (PNG at ``out``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, points in curves.items():
        x, y = smooth(points, window)
        ax.plot(x, y, label=f"{name} reward ({len(points)} episodes)")
    ax.set_xlabel("env steps")
    ax.set_ylabel(f"success rate (last {window} episodes)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def final_rate(points: list[tuple[int, float]], window: int = 50) -> float:
    """Success rate over the last ``window`` episodes (0 when there were none)."""
    tail = [p[1] for p in points[-window:]]
    return float(np.mean(tail)) if tail else 0.0
