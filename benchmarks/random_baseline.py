"""The random-agent floor: RandomAgent's success rate on each GUI family (the score every agent must beat).

For each family it runs :class:`agents.random_agent.RandomAgent` (valid random actions from the env's
:class:`~gui_envs.schema.action_space.ActionSpace`: clicks at random pixels, words of the page typed, scrolls, back, stop)
for ``--episodes`` seeded episodes through :func:`agents.episode.run_episode`, and prints per family the
success rate, the mean score, the mean episode length (steps) and the share of steps whose ``action_error``
says the action was malformed (0 by construction; anything else is a bug in the space or the env).

Usage::

    python benchmarks/random_baseline.py [--episodes 20] [--max-steps 30]
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import gui_envs  # noqa: F401  (registers the ids)
from agents import RandomAgent
from agents.episode import run_episode

#: One env id per family; MiniWoB needs the ``miniwob`` extra and is skipped without it.
FAMILIES = {
    "web (GuiWeb-v0)": "GuiWeb-v0",
    "phone (GuiAndroid-v0)": "GuiAndroid-v0",
    "MiniWoB (click-button)": "GuiWeb-MiniWoB-click-button-v0",
}
_MALFORMED = ("malformed action", "no action")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20, help="seeded episodes per family")
    parser.add_argument("--max-steps", type=int, default=30, help="step cap per episode (steps)")
    parser.add_argument("--quick", action="store_true", help="2 episodes per family, <= 10 steps (guigym bench)")
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.max_steps = 2, 10
    table = Table(title=f"RandomAgent floor ({args.episodes} episodes per family, <= {args.max_steps} steps)")
    for column in ("family", "success rate", "mean score", "mean steps", "malformed steps"):
        table.add_column(column, justify="left" if column == "family" else "right")
    for family, env_id in FAMILIES.items():
        try:
            env = gym.make(env_id)
        except (gym.error.Error, ImportError) as exc:  # MiniWoB without its extra
            table.add_row(family, "skipped", "", "", str(exc).splitlines()[0][:40])
            continue
        agent = RandomAgent(env.action_space, seed=0)
        try:
            trajs = [run_episode(env, agent, seed=s, max_steps=args.max_steps) for s in range(args.episodes)]
        finally:
            env.close()
        steps = [s for t in trajs for s in t.steps]
        malformed = sum(bool(s.action_error and str(s.action_error).startswith(_MALFORMED)) for s in steps)
        table.add_row(
            family,
            f"{np.mean([t.success for t in trajs]):.2f}",
            f"{np.mean([t.score for t in trajs]):.2f}",
            f"{np.mean([len(t.steps) for t in trajs]):.1f}",
            f"{malformed}/{len(steps)}",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
