"""The demo that ``./run demo`` shows: each environment with a random agent and with its oracle."""

from __future__ import annotations

import statistics
from typing import Any

import gymnasium as gym
from rich.console import Console
from rich.table import Table

import gui_envs  # noqa: F401  (registers the ids)
from agents import OracleAgent, RandomAgent
from agents.episode import run_episode

#: (label, env id, constructor kwargs). Later issues append their environments here.
DEMO_ENVS: list[tuple[str, str, dict[str, Any]]] = [
    ("Maze 9x9, answer mode", "Maze-v0", {"size": 9}),
    ("Maze 9x9, navigate mode", "Maze-v0", {"size": 9, "mode": "navigate"}),
    ("Sudoku, 50 blanks", "Sudoku-v0", {}),
    ("ARC, procedural", "Arc-v0", {}),
    ("Web: shop/forum/classifieds tasks in Chromium", "GuiWeb-v0", {"max_steps": 15}),
    ("Android: simulated phone, 7 bundled apps", "GuiAndroid-v0", {"max_steps": 15}),
]


def run_demo(episodes: int = 3, console: Console | None = None) -> Table:
    """Play ``episodes`` episodes per environment and agent; print and return the summary table."""
    console = console or Console()
    table = Table(title=f"guigym demo ({episodes} episodes each)")
    for col in ("environment", "agent", "mean return", "success", "mean steps"):
        table.add_column(col, justify="left" if col in ("environment", "agent") else "right")
    for label, env_id, kwargs in DEMO_ENVS:
        with gym.make(env_id, **kwargs) as env:
            for agent in (RandomAgent(env.action_space, seed=0), OracleAgent(env)):
                trajs = [run_episode(env, agent, seed=s) for s in range(episodes)]
                table.add_row(
                    label,
                    agent.name,
                    f"{statistics.fmean(t.total_reward for t in trajs):.3f}",
                    f"{sum(bool(t.success) for t in trajs) / len(trajs):.0%}",
                    f"{statistics.fmean(len(t.steps) for t in trajs):.1f}",
                )
        table.add_section()
    console.print(table)
    return table
