"""Sample-efficiency audit of SSL tiers: PPO on Maze-v0 navigate mode, binary vs SSL-shaped reward.

The claim (seed 000, abstract and section 4.3): sweet-spot rewards reach a binary-reward policy's
performance with fewer samples, "up to 2.5x". This script measures it in a small, fully reproducible RL
setting instead of the paper's GRPO-on-a-VLM one:

* **Task**: ``Maze-v0`` in navigate mode (``Discrete(4)`` moves, a ``(2 * size + 1)^2 x 3`` image), one
  fixed maze per run (``layout_seed``): the same start and goal every episode.
* **Rewards** (both from :mod:`gui_envs.wrappers`, so that they differ by ``alpha * S_hat`` only):
  ``binary`` = 1 on reaching the goal, else 0 (:class:`~gui_envs.wrappers.BinaryReward`);
  ``ssl`` = ``C + alpha * S_hat`` at the episode's last step, ``S_hat`` the tier of the final
  shortest-path progress (:class:`~gui_envs.wrappers.SweetSpotReward`, alpha = 0.2, K = 4, "lower").
* **Learner**: Stable-Baselines3 PPO, ``MlpPolicy`` (64, 64), ``n_envs`` copies of the run's maze in a
  ``DummyVecEnv``, one torch thread. The same seeds and hyper-parameters for both rewards (paired runs).
* **Metric**: every ``eval_every`` environment steps, the deterministic (greedy) policy plays
  ``eval_episodes`` episodes of the run's maze; success rate = fraction that reach the goal. With a fixed
  maze the greedy rollout is the same every episode, so the rate is 0 or 1 and "80 % success" means "the
  greedy policy solves the maze". Reported: the environment steps at the first evaluation with success
  >= ``threshold`` (the steps taken by all ``n_envs`` envs together), per run, their mean per reward, and
  the ratio of the means (binary / ssl; > 1 means SSL needed fewer steps). A run that never gets there is
  listed as "not reached" and counts as its budget, a lower bound, in the mean (marked ">=").

Why single-maze runs: training one policy on several mazes at once was tried and is dominated by
interference between mazes that share a start square (the policy learns one maze's first move and bumps into
a wall in the other), for both rewards alike; that says nothing about the reward.

Run: ``python benchmarks/ssl_sample_efficiency.py --quick`` (3 mazes x 3 seeds, runs stop at the threshold;
a few minutes on 2 cores) or without ``--quick`` (5 mazes x 5 seeds, 100k-step budgets run to the end; under
an hour). Prints a table and writes ``benchmarks/out/ssl_sample_efficiency.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REWARDS = ("binary", "ssl")


@dataclass(frozen=True)
class Config:
    """One audit: every reward x maze x seed is one PPO run."""

    size: int = 3
    """Maze cells per side (grid side ``2 * size + 1``)."""
    mazes: tuple[int, ...] = (3, 4, 5, 12, 15)
    """``layout_seed`` of each maze; every maze is run with every seed. The default five are the size-3 layouts
    among seeds 0-15 that a uniform random walk solves least often within the step limit (3-12 %), where a
    sparse reward has the least to go on; chosen before any PPO run."""
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    """PPO seeds (policy initialisation, action sampling)."""
    steps: int = 100_000
    """Budget per run, in environment steps (all ``n_envs`` together)."""
    eval_every: int = 1024
    """Environment steps between two evaluations of the greedy policy."""
    eval_episodes: int = 1
    """Greedy episodes per evaluation (on a fixed maze they are all the same)."""
    threshold: float = 0.8
    """Success rate that counts as reached."""
    stop_at_threshold: bool = False
    """End a run at its first evaluation >= ``threshold`` (saves time; its curve then stops there)."""
    n_envs: int = 8
    """Parallel copies of the maze (``DummyVecEnv``)."""
    n_steps: int = 128
    """PPO rollout length per env; one update uses ``n_envs * n_steps`` steps."""
    learning_rate: float = 1e-3
    """PPO (Adam) learning rate."""
    ent_coef: float = 0.01
    """PPO entropy bonus."""
    alpha: float = 0.2
    """SSL weight of ``S_hat`` (section 4.1)."""
    zones: int = 4
    """SSL zones ``K``."""
    extra: dict[str, Any] = field(default_factory=dict)
    """More keyword arguments for :class:`~gui_envs.wrappers.SweetSpotReward` (zone_value, trajectory)."""

    def __post_init__(self) -> None:
        if self.steps < self.eval_every or self.eval_every < 1:
            raise ValueError(f"need 1 <= eval_every ({self.eval_every}) <= steps ({self.steps})")
        if not (0 < self.threshold <= 1):
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        if not self.mazes or not self.seeds:
            raise ValueError("give at least one maze and one seed")


#: ``--quick``: the first three default mazes, three seeds, runs end once they reach the threshold.
QUICK = Config(mazes=(3, 4, 5), seeds=(0, 1, 2), steps=60_000, stop_at_threshold=True)


@dataclass
class RunResult:
    """One PPO run: its eval curve ``(steps, success rate)`` and the steps at which it reached threshold."""

    reward: str
    maze: int
    seed: int
    curve: list[tuple[int, float]]
    reached: int | None
    seconds: float


def make_env(cfg: Config, maze: int, reward: str | None) -> Any:
    """``Maze-v0`` navigate on one fixed maze, with the reward wrapper (``None``: the raw env, for eval)."""
    import gymnasium as gym

    import gui_envs  # noqa: F401  (registers Maze-v0)
    from gui_envs.wrappers import with_reward

    env = gym.make("Maze-v0", mode="navigate", size=cfg.size, layout_seed=maze)
    if reward is None:
        return env
    kwargs = {"alpha": cfg.alpha, "zones": cfg.zones, **cfg.extra} if reward == "ssl" else {}
    return with_reward(env, reward, **kwargs)


def greedy_success(model: Any, env: Any, episodes: int) -> float:
    """Fraction of ``episodes`` in which the deterministic policy reaches the goal."""
    wins = 0
    for episode in range(episodes):
        obs, _ = env.reset(seed=episode)
        terminated = truncated = False
        while not (terminated or truncated):
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, _ = env.step(int(action))
        wins += int(terminated)
    return wins / episodes


def train_one(cfg: Config, reward: str, maze: int, seed: int, advance: Any) -> RunResult:
    """One PPO run; ``advance(n)`` reports ``n`` more environment steps to the progress bar."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    venv = DummyVecEnv([lambda: make_env(cfg, maze, reward) for _ in range(cfg.n_envs)])
    eval_env = make_env(cfg, maze, None)
    model = PPO(
        "MlpPolicy",
        venv,
        n_steps=cfg.n_steps,
        batch_size=min(256, cfg.n_steps * cfg.n_envs),
        n_epochs=4,
        learning_rate=cfg.learning_rate,
        ent_coef=cfg.ent_coef,
        policy_kwargs={"net_arch": [64, 64]},
        seed=seed,
        device="cpu",
    )
    curve: list[tuple[int, float]] = []

    class Evaluate(BaseCallback):
        """Greedy evaluation every ``eval_every`` steps; stops the run early when asked to."""

        def __init__(self) -> None:
            super().__init__()
            self.next_eval, self.reached, self.counted = cfg.eval_every, None, 0

        def _evaluate(self) -> None:
            rate = greedy_success(self.model, eval_env, cfg.eval_episodes)
            curve.append((self.num_timesteps, rate))
            if rate >= cfg.threshold and self.reached is None:
                self.reached = self.num_timesteps

        def _on_training_start(self) -> None:
            self._evaluate()  # step 0: the untrained policy

        def _on_step(self) -> bool:
            advance(self.num_timesteps - self.counted)
            self.counted = self.num_timesteps
            if self.num_timesteps >= self.next_eval:
                self.next_eval += cfg.eval_every
                self._evaluate()
                if cfg.stop_at_threshold and self.reached is not None:
                    return False
            return True

    callback = Evaluate()
    t0 = time.perf_counter()
    model.learn(total_timesteps=cfg.steps, callback=callback)
    advance(max(0, cfg.steps - callback.counted))  # a run stopped early skips the rest of its budget
    venv.close()
    return RunResult(reward, maze, seed, curve, callback.reached, time.perf_counter() - t0)


def run(cfg: Config) -> list[RunResult]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    jobs = [(m, s, r) for m in cfg.mazes for s in cfg.seeds for r in REWARDS]
    results = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns) as progress:
        task = progress.add_task("env steps", total=len(jobs) * cfg.steps)
        for maze, seed, reward in jobs:
            progress.update(task, description=f"{reward:>6} maze {maze} seed {seed}")
            results.append(train_one(cfg, reward, maze, seed, lambda n: progress.advance(task, n)))
    return results


def summarise(results: list[RunResult], cfg: Config) -> dict[str, dict[str, Any]]:
    """Per reward: steps to threshold (a budget stands in for "not reached"), how many reached, the mean."""
    out = {}
    for reward in REWARDS:
        runs = [r for r in results if r.reward == reward]
        steps = [r.reached if r.reached is not None else cfg.steps for r in runs]
        censored = any(r.reached is None for r in runs)
        out[reward] = {
            "mean": float(np.mean(steps)),
            "censored": censored,
            "reached": sum(r.reached is not None for r in runs),
            "n": len(runs),
        }
    return out


def ratio_text(summary: dict[str, dict[str, Any]]) -> str:
    """``mean(binary) / mean(ssl)``, marked as a bound where a mean is a lower bound."""
    b, s = summary["binary"], summary["ssl"]
    value = b["mean"] / s["mean"]
    if b["censored"] and s["censored"]:
        return f"~{value:.2f}x (both means are lower bounds: undetermined)"
    if b["censored"]:
        return f">= {value:.2f}x"
    if s["censored"]:
        return f"<= {value:.2f}x"
    return f"{value:.2f}x"


def steps_text(r: RunResult, cfg: Config) -> str:
    return f"{r.reached:,}" if r.reached is not None else f"not reached ({cfg.steps:,}+)"


def pair_text(b: RunResult, s: RunResult, cfg: Config) -> str:
    """Steps ratio binary / ssl of one paired run; a budget stands in (as a bound) for "not reached"."""
    if b.reached is not None and s.reached is not None:
        return f"{b.reached / s.reached:.2f}"
    if s.reached is not None:
        return f">= {cfg.steps / s.reached:.2f}"
    if b.reached is not None:
        return f"<= {b.reached / cfg.steps:.2f}"
    return "-"


def report(results: list[RunResult], cfg: Config, seconds: float, png: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=120)
    pct = f"{cfg.threshold:.0%}"
    runs = Table(
        title=f"Steps to {pct} greedy success, Maze-v0 navigate size {cfg.size}, PPO budget {cfg.steps:,}"
    )
    for col in ("maze", "seed", "binary", "ssl", "binary / ssl"):
        runs.add_column(col, justify="right")
    by_key = {(r.maze, r.seed, r.reward): r for r in results}
    for maze in cfg.mazes:
        for seed in cfg.seeds:
            b, s = by_key[maze, seed, "binary"], by_key[maze, seed, "ssl"]
            runs.add_row(str(maze), str(seed), steps_text(b, cfg), steps_text(s, cfg), pair_text(b, s, cfg))
    console.print(runs)
    summary = summarise(results, cfg)
    table = Table(
        title=f"Mean steps to {pct} success per reward ({len(cfg.mazes)} maze(s) x {len(cfg.seeds)} seeds)"
    )
    for col in ("reward", "reached", "mean steps", "run time (s)"):
        table.add_column(col, justify="right")
    for reward in REWARDS:
        s = summary[reward]
        mean = f"{'>= ' if s['censored'] else ''}{s['mean']:,.0f}"
        wall = sum(r.seconds for r in results if r.reward == reward)
        table.add_row(reward, f"{s['reached']}/{s['n']}", mean, f"{wall:.0f}")
    console.print(table)
    console.print(f"sample-efficiency ratio (binary / ssl): {ratio_text(summary)}  [paper: up to 2.5x]")
    plot(results, cfg, png)
    console.print(f"wall time {seconds:.0f} s; plot: {png}")


def plot(results: list[RunResult], cfg: Config, png: Path) -> None:
    """Greedy success vs environment steps: each run thin, the mean over runs thick (held after a stop)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.arange(0, cfg.steps + 1, cfg.eval_every)
    colors = {"binary": "0.45", "ssl": "tab:orange"}
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for reward in REWARDS:
        held = []
        for r in (r for r in results if r.reward == reward):
            x, y = np.array(r.curve).T
            offset = 0.01 if reward == "ssl" else -0.01  # keep overlapping 0/1 curves apart
            ax.step(x, y + offset, where="post", color=colors[reward], lw=0.6, alpha=0.4)
            # Value of the latest evaluation at each grid point; held after a run stopped at the threshold.
            held.append(y[np.searchsorted(x, grid, side="right") - 1])
        label = f"{reward} (mean of runs)"
        ax.step(grid, np.mean(held, axis=0), where="post", color=colors[reward], lw=2.2, label=label)
    ax.axhline(cfg.threshold, color="k", ls=":", lw=0.8)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("greedy success rate")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"PPO on Maze-v0 navigate (size {cfg.size}, mazes {list(cfg.mazes)}): binary vs SSL")
    ax.legend(loc="lower right")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=120)
    plt.close(fig)


def parse_config(argv: list[str] | None) -> tuple[Config, Path]:
    base = Config()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"a few minutes: {QUICK.mazes=} {QUICK.seeds=} {QUICK.steps=}"
    )
    parser.add_argument("--size", type=int, help=f"maze cells per side (default {base.size})")
    parser.add_argument("--mazes", type=int, nargs="+", help=f"layout seeds (default {base.mazes})")
    parser.add_argument("--seeds", type=int, nargs="+", help=f"PPO seeds (default {base.seeds})")
    parser.add_argument("--steps", type=int, help=f"budget per run in env steps (default {base.steps:,})")
    parser.add_argument(
        "--eval-every", type=int, help=f"env steps between evaluations (default {base.eval_every})"
    )
    parser.add_argument(
        "--stop-at-threshold", action="store_true", default=None, help="end runs once reached"
    )
    parser.add_argument("--zone-value", choices=("lower", "upper"), help="SSL zone value (default lower)")
    parser.add_argument(
        "--trajectory", choices=("final", "mean"), help="SSL trajectory proximity (default final)"
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "out" / "ssl_sample_efficiency.png"
    )
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else base
    changes = {
        k: v
        for k in ("size", "steps", "eval_every", "stop_at_threshold")
        if (v := getattr(args, k)) is not None
    }
    changes.update({k: tuple(v) for k in ("mazes", "seeds") if (v := getattr(args, k)) is not None})
    extra = {k: v for k in ("zone_value", "trajectory") if (v := getattr(args, k)) is not None}
    return Config(**{**cfg.__dict__, **changes, "extra": {**cfg.extra, **extra}}), args.out


def main(argv: list[str] | None = None) -> None:
    cfg, png = parse_config(argv)
    t0 = time.perf_counter()
    results = run(cfg)
    report(results, cfg, time.perf_counter() - t0, png)


if __name__ == "__main__":
    main()


__all__ = ["QUICK", "Config", "RunResult", "greedy_success", "run", "summarise", "train_one"]
