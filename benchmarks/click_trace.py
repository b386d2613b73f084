"""How many times one GuiWeb click bounces between modules: the ``gui_envs`` modules an oracle click ``step`` enters.

After a reset of ``GuiWeb-v0`` to an episode whose oracle's next action is a click, one ``env.step(click)`` runs
under :func:`sys.setprofile`, which reports every Python function call. Each call of a function defined in a file
under ``gui_envs/`` *from a different file* (the caller's frame is in another module, or outside ``gui_envs``) is
an **entry**, recorded by the callee's path (``web/env.py``); a module calling its own functions enters nothing,
returns enter nothing, and calls of anything else (the standard library, numpy, Playwright) are not recorded.
Definitions:

* a **stop** is a maximal run of consecutive entries into the same module (``step`` in ``web/env.py`` calling
  ``observation.decode`` and then ``observation.screen_observation`` is one stop in ``browser/observation.py``;
  a base class's ``step`` calling back a hook that ``web/env.py`` implements would be a new stop in ``web/env.py``);
* a module's **re-entries** are its stops after its first one (it was entered again after another module's);
* **stops** = the length of the run sequence; **modules** = how many distinct modules it holds.

Only the calling thread is traced: ``sys.setprofile`` covers the thread that sets it, and the browser's own work
runs in the session's worker thread (:mod:`gui_envs.browser.session`), which the env thread waits on. That
worker's calls are the browser's plumbing, not the env's structure, so they are left out on purpose.

The last line also gives the re-entries outside the task's own judge (:data:`TASK_MODULES`).

Usage (from the repository root, so that this checkout's ``gui_envs`` is the one traced; ``guigym bench`` sets
``PYTHONPATH`` so): ``PYTHONPATH=. python benchmarks/click_trace.py [--seed 0] [--sequence]``; ``--quick`` (what ``guigym bench`` runs) is
the same single traced click (it takes a few seconds either way). ``--sequence`` prints the stops in order.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

import gui_envs

#: The task object's own code, which the env calls once to judge the step (``judge_step`` -> ``task.judge``): the
#: template (``tasks/base.py``, ``web/tasks/``) reading its site's state (``browser/site.py``). How often the judge
#: moves between those is the task's business, not the env's structure, so it is reported apart.
TASK_MODULES = ("tasks/base.py", "web/tasks/", "browser/site.py")

#: The package root: a function whose file lies under it is recorded, by its path relative to it.
ROOT = Path(gui_envs.__file__).resolve().parent


@dataclass
class Trace:
    """The stops of one traced call, in order (module paths relative to ``gui_envs/``)."""

    stops: list[str]

    @property
    def modules(self) -> list[str]:
        """The distinct modules, in order of first entry."""
        return list(dict.fromkeys(self.stops))

    @property
    def reentries(self) -> dict[str, int]:
        """Each module's stops after its first (only modules entered more than once)."""
        return {m: n - 1 for m, n in Counter(self.stops).items() if n > 1}

    @property
    def env_reentries(self) -> dict[str, int]:
        """:attr:`reentries` of the modules outside :data:`TASK_MODULES` (the env's own, and its plumbing)."""
        return {m: n for m, n in self.reentries.items() if not m.startswith(TASK_MODULES)}


def trace_calls(fn: Callable[[], Any]) -> tuple[Trace, Any]:
    """Run ``fn()`` on this thread under :func:`sys.setprofile`; returns the trace of its calls into ``gui_envs``
    modules and ``fn``'s result."""
    stops: list[str] = []
    known: dict[str, str | None] = {}

    def module_of(filename: str) -> str | None:
        if filename not in known:
            path = Path(filename).resolve()
            known[filename] = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else None
        return known[filename]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = module_of(frame.f_code.co_filename)
        caller = frame.f_back
        if module is None or (caller is not None and module_of(caller.f_code.co_filename) == module):
            return
        if not stops or stops[-1] != module:
            stops.append(module)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(previous)
    return Trace(stops), result


def click_step_trace(env: gym.Env[Any, Any], seed: int = 0, tries: int = 50) -> Trace:
    """Reset ``env`` (a ``GuiWeb-v0``) until its oracle's next action is a click, then trace one ``step`` of it.

    Raises ``RuntimeError`` when ``tries`` task seeds from ``seed`` on give no click first.
    """
    base: Any = env.unwrapped
    for task_seed in range(seed, seed + tries):
        env.reset(seed=task_seed)
        action = base.oracle_action()
        if action.type == "click":
            trace, _ = trace_calls(functools.partial(base.step, action))
            return trace
    raise RuntimeError(f"no oracle click first in seeds {seed}..{seed + tries - 1}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="first reset seed tried")
    parser.add_argument("--sequence", action="store_true", help="print the stops in order")
    parser.add_argument("--quick", action="store_true", help="the same single click (for guigym bench)")
    args = parser.parse_args()

    env = gym.make("GuiWeb-v0")
    try:
        trace = click_step_trace(env, args.seed)
    finally:
        env.close()
    if args.sequence:
        for i, module in enumerate(trace.stops, 1):
            print(f"{i:3d} {module}")
    for module, n in sorted(trace.reentries.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"re-entered {n}x: {module}")
    reentries, env_reentries = sum(trace.reentries.values()), sum(trace.env_reentries.values())
    print(
        f"GuiWeb-v0 click step: {len(trace.stops)} stops in {len(trace.modules)} modules, {reentries} re-entries "
        f"({env_reentries} outside the task's judge)"
    )


if __name__ == "__main__":
    main()
