"""SB3 PPO on Maze-v0 navigate, trained with the binary reward and with SSL's reward; both curves on one figure.

    python examples/sb3_ppo_maze.py            # 2 x 60k steps on a 4 x 4 maze (a few minutes on CPU)
    python examples/sb3_ppo_maze.py --quick    # 2 x 256 steps, the CI check

No wrapper is written here: ``Maze-v0`` with ``mode="navigate"`` is an image ``Box`` observation with a
``Discrete(4)`` action, and :func:`gui_envs.wrappers.with_reward` swaps the reward (``ssl``: SSL's
``C + alpha * S_hat`` with the progress towards the goal as the graded score, seed 000 section 3.2). Each
reset draws a new maze from the seed sequence, so the policy must generalise, not memorise one maze.
Writes ``runs/sb3_maze/curves.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.wrappers import with_reward

try:  # run as a script (python examples/...) or imported as examples.sb3_ppo_maze
    from sb3_common import RUNS, final_rate, plot_curves, train_one
except ImportError:
    from examples.sb3_common import RUNS, final_rate, plot_curves, train_one


def make_env(reward: str, size: int = 4) -> gym.Env:
    return with_reward(gym.make("Maze-v0", mode="navigate", size=size), reward)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000, help="env steps per reward")
    parser.add_argument("--size", type=int, default=4, help="maze size in cells")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RUNS / "sb3_maze", help="output folder")
    parser.add_argument("--quick", action="store_true", help="256 steps per reward (CI)")
    args = parser.parse_args(argv)
    steps = 256 if args.quick else args.steps
    ppo = {"n_steps": 128 if args.quick else 1024, "batch_size": 64, "ent_coef": 0.01}
    curves = {
        reward: train_one(lambda r: make_env(r, args.size), reward, steps, "MlpPolicy", args.seed, ppo)
        for reward in ("binary", "ssl")
    }
    path = plot_curves(curves, f"PPO on Maze-v0 navigate, size {args.size}", args.out / "curves.png")
    rates = {reward: final_rate(points) for reward, points in curves.items()}
    for reward, rate in rates.items():
        print(f"{reward}: {len(curves[reward])} episodes, success over the last 50: {rate:.0%}")
    print(f"curves written to {path}")
    return rates


if __name__ == "__main__":
    main()
