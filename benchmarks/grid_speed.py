"""Speed of the grid-puzzle environments, against their acceptance targets.

Measures, in one Python thread:

- Sudoku generation: time to generate a 9x9 puzzle with a unique solution and 50 blanks, over many seeds
  (target: median <= 20 ms).
- Maze-v0 navigate mode: random-action steps per second through ``gym.make`` (so with the default
  wrappers), resetting on termination or truncation, each reset carving a new maze (target: >= 20,000).
- For context: reset times of Maze-v0 (answer mode) and Arc-v0 (procedural).

Usage::

    python benchmarks/grid_speed.py [--sudoku-seeds 200] [--maze-steps 100000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.grid.sudoku_gen import generate_sudoku

SUDOKU_MEDIAN_TARGET_MS = 20.0
MAZE_STEPS_TARGET = 20_000


def time_each(fn: Callable[[int], object], seeds: range) -> np.ndarray:
    """Wall time of ``fn(seed)`` for each seed, in milliseconds."""
    out = []
    for seed in seeds:
        begin = time.perf_counter()
        fn(seed)
        out.append((time.perf_counter() - begin) * 1000.0)
    return np.asarray(out)


def maze_steps_per_second(size: int, n_steps: int) -> float:
    """Random navigate-mode steps per second on a ``size`` x ``size``-cell maze, resets included."""
    env = gym.make("Maze-v0", mode="navigate", size=size)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 4, n_steps).tolist()
    begin = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return n_steps / (time.perf_counter() - begin)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sudoku-seeds", type=int, default=200, help="seeds to time Sudoku generation over")
    parser.add_argument("--maze-steps", type=int, default=100_000, help="random steps per maze size")
    parser.add_argument("--quick", action="store_true", help="20 Sudoku seeds, 5,000 maze steps (guigym bench)")
    args = parser.parse_args()
    if args.quick:
        args.sudoku_seeds, args.maze_steps = 20, 5_000

    table = Table(title="guigym grid environments: speed (one Python thread)")
    for column in ("measurement", "median", "p90", "target", "ok"):
        table.add_column(column, justify="right" if column != "measurement" else "left")

    sudoku_ms = time_each(lambda s: generate_sudoku(np.random.default_rng(s), 50), range(args.sudoku_seeds))
    median = float(np.median(sudoku_ms))
    table.add_row(
        f"Sudoku 9x9, 50 blanks, unique (ms, {args.sudoku_seeds} seeds)",
        f"{median:.2f}",
        f"{np.percentile(sudoku_ms, 90):.2f}",
        f"<= {SUDOKU_MEDIAN_TARGET_MS:.0f}",
        "yes" if median <= SUDOKU_MEDIAN_TARGET_MS else "NO",
    )
    for size in (5, 15, 30):
        rate = maze_steps_per_second(size, args.maze_steps)
        side = 2 * size + 1
        table.add_row(
            f"Maze navigate, {size}x{size} cells ({side}x{side} grid), steps/s",
            f"{rate:,.0f}",
            "",
            f">= {MAZE_STEPS_TARGET:,}",
            "yes" if rate >= MAZE_STEPS_TARGET else "NO",
        )
    for env_id, kwargs, label in (
        ("Maze-v0", {"size": 15}, "Maze answer reset, 15x15 cells (ms)"),
        ("Maze-v0", {"size": 30}, "Maze answer reset, 30x30 cells (ms)"),
        ("Arc-v0", {}, "Arc procedural reset (ms)"),
    ):
        env = gym.make(env_id, **kwargs)
        reset_ms = time_each(lambda s, env=env: env.reset(seed=s), range(100))
        table.add_row(label, f"{np.median(reset_ms):.2f}", f"{np.percentile(reset_ms, 90):.2f}", "", "")
    Console(width=max(Console().width, 100)).print(table)


if __name__ == "__main__":
    main()
