"""CPU seconds per env step, summed over every process of the env, with screenshots on and off.

Wall time per step says how long an agent waits; CPU time says how many envs a machine can run. A text-only agent
reads ``elements`` and needs no screenshot (``screenshots=False``), so both are measured. Per step, the CPU
(user + system) of:

* **Python**: this process, every thread (the env's code, the browser's worker thread, the JPEG decode);
* **driver**: Playwright's node driver of the env (the parent of its browser process);
* **Chromium**: the env's browser process and all its children (GPU, utility and renderer processes).

Envs (each with ``max_steps`` lifted, so no timed step ends an episode):

* ``GuiWeb-MiniWoB-click-test-v0`` (500 x 400): a click on the instruction box, which never ends the episode
  (the task ``web_speed.py`` compares with BrowserGym);
* ``GuiWeb-v0``, shop site, task ``shop.open_product`` (1280 x 720): a click on the page margin, which neither
  navigates nor ends the task.

All four envs (two ids, screenshots on and off) are open at once and stepped in blocks of ``--steps``, one block
each in turn, ``--rounds`` times, so a change in the machine's load falls on all; a row is the median over its
blocks. Each env's CPU is read from its own processes (:func:`env_pids`), so the idle envs' do not count. Before
timing, each env is reset, given 1 s to finish what it prepares in the background (``GuiWeb-v0`` prepares its next
start) and stepped 3 times untimed.

BrowserGym's CPU is not measured here: its probe (``browsergym_probe.py``, run by ``web_speed.py
--browsergym-python``) times wall clock only.

Usage: ``python benchmarks/step_cpu.py [--steps 40] [--rounds 5] [--quick]`` (``--quick``: 5 steps, 2 rounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import psutil
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.schema.actions import Action

#: id -> (constructor arguments, reset options, the timed action).
ENVS: dict[str, tuple[dict[str, Any], dict[str, Any], Action]] = {
    # (80, 25): the centre of MiniWoB's instruction box.
    "GuiWeb-MiniWoB-click-test-v0": ({"max_steps": 10_000}, {"seed": 0}, Action.click(80, 25)),
    # (1200, 700): the shop page's margin.
    "GuiWeb-v0": ({"sites": ("shop",), "max_steps": 10_000}, {"task": "shop.open_product", "seed": 0}, Action.click(1200, 700)),
}  # fmt: skip
PARTS = ("python", "driver", "chromium")


@dataclass
class Block:
    """One timed block of steps: wall and CPU milliseconds per step, CPU per part."""

    wall_ms: float
    cpu_ms: dict[str, float]

    @property
    def total_ms(self) -> float:
        return sum(self.cpu_ms.values())


def env_pids(env: gym.Env[Any, Any]) -> dict[str, list[psutil.Process]]:
    """The env's processes by part: its driver (the browser's parent) and its browser tree (read now, so renderers
    started since are included)."""
    browser = psutil.Process(env.unwrapped.browser_pid)
    return {"driver": [browser.parent()], "chromium": [browser, *browser.children(recursive=True)]}


def cpu_s(procs: list[psutil.Process]) -> dict[int, float]:
    """User + system CPU seconds of each live process, by PID."""
    out = {}
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue  # exited: its last CPU is lost, which no step of these envs does
        out[proc.pid] = times.user + times.system
    return out


def timed_block(env: gym.Env[Any, Any], action: Action, steps: int) -> Block:
    """``steps`` steps of ``env``, and the CPU its processes and this one spent on them."""
    me = psutil.Process()
    before = {part: cpu_s(procs) for part, procs in {"python": [me], **env_pids(env)}.items()}
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step(action)
    wall = time.perf_counter() - t0
    after = {part: cpu_s(procs) for part, procs in {"python": [me], **env_pids(env)}.items()}
    # A process that started during the block (none should) counts from zero.
    cpu = {part: sum(t - before[part].get(pid, 0.0) for pid, t in after[part].items()) for part in PARTS}
    return Block(1000 * wall / steps, {part: 1000 * c / steps for part, c in cpu.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # CPU times tick in 10 ms steps per process: 40 steps a block keep that under 0.25 ms per step and process.
    parser.add_argument("--steps", type=int, default=40, help="steps per timed block")
    parser.add_argument("--rounds", type=int, default=5, help="blocks per env, taken in turn")
    parser.add_argument("--quick", action="store_true", help="--steps 5 --rounds 2 (overrides them)")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.rounds = 5, 2
    load = os.getloadavg()[0]
    envs: dict[tuple[str, bool], gym.Env[Any, Any]] = {}
    blocks: dict[tuple[str, bool], list[Block]] = {}
    try:
        for env_id, (kwargs, options, _) in ENVS.items():
            for shots in (True, False):
                env = envs[(env_id, shots)] = gym.make(env_id, screenshots=shots, **kwargs)
                env.reset(options=options)
        time.sleep(1.0)  # background preparation of the next start finishes
        for (env_id, _), env in envs.items():
            for _ in range(3):
                env.step(ENVS[env_id][2])
        for _ in tqdm(range(args.rounds), desc="rounds", leave=False):
            for key, env in envs.items():
                blocks.setdefault(key, []).append(timed_block(env, ENVS[key[0]][2], args.steps))
    finally:
        for env in envs.values():
            env.close()

    table = Table(title=f"CPU per env step, summed over every process ({args.rounds} blocks of {args.steps} steps, median)")
    cols = ("env", "screenshots", "CPU ms / step", "steps / CPU-s", *(f"{p} ms" for p in PARTS), "wall ms / step")
    for col in (*cols, "CPU / screenshots off"):
        table.add_column(col, justify="left" if col == "env" else "right")
    for (env_id, shots), got in blocks.items():
        total = statistics.median(b.total_ms for b in got)
        off = statistics.median(b.total_ms for b in blocks[(env_id, False)])
        table.add_row(
            env_id, "on" if shots else "off", f"{total:.1f}", f"{1000 / total:.0f}",
            *(f"{statistics.median(b.cpu_ms[p] for b in got):.1f}" for p in PARTS),
            f"{statistics.median(b.wall_ms for b in got):.1f}", f"{total / off:.2f}x",
        )  # fmt: skip
    table.add_row("BrowserGym (browsergym/miniwob.click-test)", "-", "not measured", "-", "-", "-", "-", "-", "-")
    console = Console(width=None if sys.stdout.isatty() else 180)  # no wrapping when piped to a file
    console.print(table)
    console.print(
        f"Load {load:.1f} -> {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        soft_wrap=True,
    )


if __name__ == "__main__":
    main()
