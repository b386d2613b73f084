"""Group of N web envs: one shared Chromium (contexts) against N separate browsers.

A ``GroupEnv`` over a web id runs its N copies as browser contexts of one Chromium
(:mod:`gui_envs.browser.shared`). This measures, for ``GuiWebGround-v0`` in box mode, the start-up (make +
first reset, seconds), a group step (one click per agent, milliseconds), a group reset (milliseconds) and the
resident memory of the browser process trees (MiB, summed RSS) for both set-ups, and one env alone: the group
reset is compared with its reset (each reset names its seed, as a group's does). The group shares one prepared
start (:class:`~gui_envs.multi.GroupEnv`, ``share_starts``): its first member builds and observes it.

Usage: ``python benchmarks/group_speed.py [--agents 8] [--rounds 5] [--quick]`` (``--quick``: 4 agents,
2 rounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np
import psutil
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

import gui_envs  # noqa: F401
from gui_envs.multi import GroupEnv

KWARGS: dict[str, Any] = {"action_type": "box", "viewport": (640, 400)}
#: A group on one browser uses at least this many times less memory than N browsers (issue 28).
MEMORY_TARGET = 3.0
#: A group reset takes at most this many times one env's reset (issue 28).
RESET_TARGET = 2.0


def tree_rss_mib(pids: set[int]) -> float:
    """Summed resident memory of every live process in ``pids`` and their children, MiB."""
    seen: dict[int, psutil.Process] = {}
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            seen[pid] = proc
            for child in proc.children(recursive=True):
                seen[child.pid] = child
        except psutil.Error:
            continue
    total = 0
    for proc in seen.values():
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            continue
    return total / 2**20


def measure(envs: list[gym.Env[Any, Any]], rounds: int, made_s: float, group: GroupEnv | None = None) -> dict[str, float]:
    """Start-up, reset and step times and memory of N envs driven as one group (same seed, one click each); through
    ``group`` (its reset shares one start) when given, else env after env."""
    click = np.array([320.0, 200.0], np.float32)

    def reset(seed: int) -> None:
        if group is not None:
            group.reset(seed=seed)
        else:
            for env in envs:
                env.reset(seed=seed)

    t0 = time.perf_counter()
    reset(0)
    startup = made_s + time.perf_counter() - t0
    resets, steps = [], []
    for r in tqdm(range(rounds), desc=f"{len(envs)} envs", leave=False):
        t0 = time.perf_counter()
        reset(100 + r)  # named seeds, none of them the start-up's
        resets.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        if group is not None:
            group.step(dict.fromkeys(group.agents, click))
        else:
            for env in envs:
                env.step(click)
        steps.append(time.perf_counter() - t0)
    pids = {pid for env in envs if (pid := env.unwrapped.browser_pid) is not None}
    return {
        "startup_s": startup,
        "reset_ms": 1000 * statistics.median(resets),
        "step_ms": 1000 * statistics.median(steps),
        "browsers": float(len(pids)),
        "rss_mib": tree_rss_mib(pids),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=8, help="group size N")
    parser.add_argument("--rounds", type=int, default=5, help="timed group resets and steps")
    parser.add_argument("--quick", action="store_true", help="4 agents, 2 rounds")
    args = parser.parse_args()
    n, rounds = (4, 2) if args.quick else (args.agents, args.rounds)

    t0 = time.perf_counter()
    group = GroupEnv("GuiWebGround-v0", n_agents=n, env_kwargs=KWARGS)
    shared = measure(list(group.envs.values()), rounds, time.perf_counter() - t0, group)
    group.close()

    t0 = time.perf_counter()
    separate_envs = [gym.make("GuiWebGround-v0", **KWARGS) for _ in range(n)]
    separate = measure(separate_envs, rounds, time.perf_counter() - t0)
    for env in separate_envs:
        env.close()

    # One env alone, reset and stepped the same way: the reset a group reset is compared with.
    t0 = time.perf_counter()
    lone_env = gym.make("GuiWebGround-v0", **KWARGS)
    lone = measure([lone_env], rounds, time.perf_counter() - t0)
    lone_env.close()

    load = os.getloadavg()[0]
    table = Table(
        title=f"GuiWebGround-v0, group of {n}: one shared Chromium vs {n} browsers ({rounds} rounds, load {load:.1f})"
    )
    for col in ("set-up", "browsers", "start-up (s)", "group reset (ms)", "group step (ms)", "browser RSS (MiB)"):
        table.add_column(col, justify="right")
    for name, m in (("shared (contexts)", shared), (f"{n} separate", separate), ("one env", lone)):
        table.add_row(
            name,
            f"{m['browsers']:.0f}",
            f"{m['startup_s']:.2f}",
            f"{m['reset_ms']:.0f}",
            f"{m['step_ms']:.0f}",
            f"{m['rss_mib']:.0f}",
        )
    console = Console()
    console.print(table)
    memory = separate["rss_mib"] / shared["rss_mib"]
    reset = shared["reset_ms"] / lone["reset_ms"]
    console.print(
        f"Memory, {n} browsers / shared: {memory:.2f}x (target >= {MEMORY_TARGET:g}x: "
        f"{'met' if memory >= MEMORY_TARGET else 'NOT met'}). Group reset / one env's reset: {reset:.2f}x (target "
        f"<= {RESET_TARGET:g}x: {'met' if reset <= RESET_TARGET else 'NOT met'}).",
        soft_wrap=True,
    )


if __name__ == "__main__":
    main()
