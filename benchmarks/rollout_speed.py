"""The env side of one GRPO step at the 3B configs' shape (16 groups x 8 rollouts), today's path against the group path.

A GRPO step resets ``groups x group_size`` rollouts, each group from one task and seed, and steps them; here the
policy is replaced by scripted clicks, so what is timed is the envs' work alone. Two shapes:

* **grounding**: ``GuiWebGround-v0`` as the 3B configs make it (1280x720, text actions), one step per rollout;
* **multi-step**: ``GuiWeb-v0`` with ``max_steps=5``, five clicks per rollout (the episode is truncated after five
  steps unless a click ends it first).

Each shape runs two ways in the same process, one after the other, on the same seeds:

* **today**: ``group_size`` separate envs, each with its own Chromium, every group one wave: each env is reset
  with the group's seed (a named reset: built in the foreground) and stepped. This is what ``trainers.grpo``
  ran before announcements (``collect_groups`` over separate envs);
* **group**: one :class:`~gui_envs.multi.GroupEnv` of ``group_size`` members on one shared Chromium, told the
  step's seeds ahead (:func:`gui_envs.schema.upcoming.announce`): the first member builds and observes each start
  (prepared in the background while the previous group steps), the others copy it, and the members step together
  (``GroupEnv(step_together=True)``: their browser calls overlap).

Columns: start-up (make + first reset, s), the step's env time (all groups: resets and steps, s), the peak
resident memory of this process and every process it started (the browsers; MiB, sampled every 0.1 s, shared pages
counted once per process), and the CPU seconds the step used in all those processes (over all cores). Below each
table, the group path's CPU spread over every core: the least time its step can take on this machine, and so the
most its speed-up can be. Machine load is printed with the tables: quote it with the figures.

Usage: ``python benchmarks/rollout_speed.py [--groups 16] [--group-size 8] [--shape both|ground|multi] [--quick]
[--one-by-one]`` (``--quick``: 2 groups of 2, a check that every row runs rather than a measurement;
``--one-by-one``: a third row, the group path with its members stepping one after another).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import psutil
from rich.console import Console
from rich.table import Table

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.multi import GroupEnv
from gui_envs.schema.actions import Action
from gui_envs.schema.upcoming import announce

#: Scripted clicks (screenshot pixels of a 1280x720 page), one per step: header links, list items, buttons.
CLICKS = ((640, 360), (120, 30), (400, 250), (900, 420), (300, 600))


@dataclass(frozen=True)
class Shape:
    """One env shape of the step: the id, its constructor arguments and the steps per rollout."""

    name: str
    env_id: str
    kwargs: dict[str, Any]
    steps: int


SHAPES = {
    "ground": Shape("grounding, 1 step", "GuiWebGround-v0", {}, 1),
    "multi": Shape("multi-step, 5 steps", "GuiWeb-v0", {"max_steps": 5}, 5),
}


@dataclass
class Result:
    """One path's figures: start-up and step seconds, peak MiB, and the browsers it ran."""

    startup_s: float
    step_s: float
    peak_mib: float
    browsers: int
    rollouts: int
    #: CPU seconds of the step (this process, the drivers and every browser process), over all cores.
    cpu_s: float = 0.0


class PeakMemory:
    """The peak summed RSS (MiB) of this process and all its descendants, sampled in a thread while in use, and the
    CPU seconds they used (:meth:`cpu_s`; a process that ended counts what it had used at its last sample)."""

    def __init__(self, every_s: float = 0.1) -> None:
        self.every_s, self.peak_mib = every_s, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._cpu: dict[tuple[int, float], float] = {}  # (pid, start time) -> user + system seconds
        self._lock = threading.Lock()

    def sample(self) -> float:
        me = psutil.Process()
        total = 0
        for proc in [me, *me.children(recursive=True)]:
            try:
                with proc.oneshot():
                    total += proc.memory_info().rss
                    times = proc.cpu_times()
                    key = (proc.pid, proc.create_time())
            except psutil.Error:
                continue
            with self._lock:
                self._cpu[key] = times.user + times.system
        return total / 2**20

    def cpu_s(self) -> float:
        """CPU seconds (user + system) used so far by this process and every process it started."""
        self.sample()
        with self._lock:
            return sum(self._cpu.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_mib = max(self.peak_mib, self.sample())
            self._stop.wait(self.every_s)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_mib = max(self.peak_mib, self.sample())


def click(step: int) -> Action:
    return Action.click(*CLICKS[step % len(CLICKS)])


def today(shape: Shape, seeds: Sequence[int], group_size: int) -> Result:
    """``group_size`` separate envs; each group one wave of named resets, then its steps, env after env."""
    with PeakMemory() as memory:
        t0 = time.perf_counter()
        envs = [gym.make(shape.env_id, **shape.kwargs) for _ in range(group_size)]
        try:
            for env in envs:
                env.reset(seed=0)  # launches each env's browser (seed 0 is no step's seed)
            startup = time.perf_counter() - t0
            cpu0, t0 = memory.cpu_s(), time.perf_counter()
            for seed in seeds:
                for env in envs:
                    env.reset(seed=seed)
                live = list(envs)
                for t in range(shape.steps):
                    live = [env for env in live if not any(env.step(click(t))[2:4])]
            step_s, cpu_s = time.perf_counter() - t0, memory.cpu_s() - cpu0
            browsers = len({env.unwrapped.browser_pid for env in envs} - {None})
        finally:
            for env in envs:
                env.close()
    return Result(startup, step_s, memory.peak_mib, browsers, len(seeds) * group_size, cpu_s)


def grouped(shape: Shape, seeds: Sequence[int], group_size: int, together: bool = True) -> Result:
    """One ``GroupEnv`` on one shared browser, told the step's seeds ahead; one group after the other, its members
    stepping together (``together=False``: one after another)."""
    with PeakMemory() as memory:
        t0 = time.perf_counter()
        group = GroupEnv(shape.env_id, n_agents=group_size, env_kwargs=shape.kwargs, step_together=together)
        try:
            group.reset(seed=0)
            startup = time.perf_counter() - t0
            announce(
                group, seeds
            )  # a trainer knows its step's seeds (trainers.grpo announces the next step's)
            cpu0, t0 = memory.cpu_s(), time.perf_counter()
            for seed in seeds:
                group.reset(seed=seed)
                for t in range(shape.steps):
                    if not group.agents:
                        break
                    group.step(dict.fromkeys(group.agents, click(t)))
            step_s, cpu_s = time.perf_counter() - t0, memory.cpu_s() - cpu0
            # Grounding copies that only take the group's start open no browser context (None).
            browsers = len({env.unwrapped.browser_pid for env in group.envs.values()} - {None})
        finally:
            group.close()
    return Result(startup, step_s, memory.peak_mib, browsers, len(seeds) * group_size, cpu_s)


@contextmanager
def load_noted(out: list[str]) -> Iterator[None]:
    """Record the machine's load average before and after the block (1-minute, over all cores)."""
    before = os.getloadavg()[0]
    yield
    out.append(f"load {before:.1f} -> {os.getloadavg()[0]:.1f}")


def table(shape: Shape, results: dict[str, Result], groups: int, group_size: int, load: str) -> Table:
    out = Table(
        title=f"{shape.env_id}, {shape.name}: env side of one GRPO step, {groups} x {group_size} ({load})"
    )
    for col in (
        "path",
        "browsers",
        "start-up (s)",
        "step env time (s)",
        "ms / rollout",
        "peak RSS (MiB)",
        "step CPU (s)",
        "speed-up",
    ):
        out.add_column(col, justify="left" if col == "path" else "right")
    base = results["today"]
    for name, r in results.items():
        out.add_row(
            name,
            str(r.browsers),
            f"{r.startup_s:.1f}",
            f"{r.step_s:.1f}",
            f"{1000 * r.step_s / r.rollouts:.0f}",
            f"{r.peak_mib:.0f}",
            f"{r.cpu_s:.1f}",
            f"{base.step_s / r.step_s:.2f}x",
        )
    return out


def cpu_bound(results: dict[str, Result], cores: int) -> str:
    """What the CPU allows: the group path's step CPU spread over every core is the least time it can take here, so
    today's time over it is the most its speed-up could be on this machine (other jobs' load aside)."""
    base, group = results["today"], results["group"]
    floor = group.cpu_s / cores
    return (
        f"CPU-bound floor of the group step on {cores} cores: {group.cpu_s:.1f} CPU-s / {cores} = {floor:.1f} s, so at "
        f"most {base.step_s / floor:.2f}x over today's {base.step_s:.1f} s (today used {base.cpu_s:.1f} CPU-s in "
        f"{base.step_s:.1f} s: {base.cpu_s / base.step_s:.2f} cores; group {group.cpu_s / group.step_s:.2f} cores)"
    )


def run(
    shape: Shape, groups: int, group_size: int, first_seed: int = 100, one_by_one: bool = False
) -> tuple[dict[str, Result], str]:
    """Both paths on the same seeds, today's first (each launches its own browsers); with ``one_by_one``, a third
    row: the group path with its members stepping one after another (what the group path did before they stepped
    together)."""
    seeds = list(range(first_seed, first_seed + groups))
    paths: dict[str, Callable[[Shape, Sequence[int], int], Result]] = {"today": today, "group": grouped}
    if one_by_one:
        paths["group, one by one"] = functools.partial(grouped, together=False)
    loads: list[str] = []
    results = {}
    for name, path in paths.items():
        with load_noted(loads):
            results[name] = path(shape, seeds, group_size)
    return results, "; ".join(f"{n}: {ld}" for n, ld in zip(paths, loads, strict=True))


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, Result]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--groups", type=int, default=16, help="groups per step (the 3B configs' groups_per_step)"
    )
    parser.add_argument(
        "--group-size", type=int, default=8, help="rollouts per group (the 3B configs' group_size)"
    )
    parser.add_argument("--shape", choices=("both", "ground", "multi"), default="both")
    parser.add_argument("--quick", action="store_true", help="2 groups of 2: a check that every row runs")
    parser.add_argument(
        "--one-by-one", action="store_true", help="add the group path with its members stepping one after another"
    )
    args = parser.parse_args(argv)
    groups, size = (2, 2) if args.quick else (args.groups, args.group_size)
    console = Console(width=None if sys.stdout.isatty() else 160)
    out = {}
    for key in ("ground", "multi") if args.shape == "both" else (args.shape,):
        results, load = run(SHAPES[key], groups, size, one_by_one=args.one_by_one)
        out[key] = results
        console.print(table(SHAPES[key], results, groups, size, load))
        console.print(cpu_bound(results, os.cpu_count() or 1), soft_wrap=True)
    console.print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs", soft_wrap=True)
    return out


if __name__ == "__main__":
    main()
