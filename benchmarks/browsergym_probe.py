"""Time BrowserGym's ``reset`` and ``step`` on one MiniWoB task; run by ``web_speed.py`` in BrowserGym's own venv.

BrowserGym pins an older Playwright than guigym, so it lives in a separate interpreter (see
``benchmarks/web_speed.py``). This script imports only the standard library and BrowserGym's own dependencies.

What it measures, per configuration:

* ``reset``: ``env.reset(seed=i)`` of ``gym.make("browsergym/miniwob.<task>")``. BrowserGym closes and relaunches
  its browsers on every reset (the task browser and the chat browser), then loads the task page and extracts
  the first observation (DOM snapshot, accessibility tree, screenshot).
* ``step``: ``env.step('click("<bid>")')`` from BrowserGym's default action set, clicking the task's
  instruction box (``#query``), which never ends the episode, so every timed step is a full step of a live
  episode: action, ``pre_observation_delay``, load-state waits, task validation, observation extraction.

Configurations: ``default`` is ``gym.make`` with no arguments (MiniWoB tasks set ``slow_mo=100`` ms, the env
sleeps ``pre_observation_delay=0.5`` s before observing); ``tuned`` sets both to 0, to show how much of the
default cost is those two waits.

Chromium: ``playwright install`` is not needed. The script points ``PLAYWRIGHT_BROWSERS_PATH`` at a temporary
folder holding ``chromium-<rev>/chrome-linux/chrome``, a shell wrapper that execs ``--chromium`` (the browser
guigym uses, so both envs run the same binary) with ``--no-sandbox`` when running as root and the same
background-traffic flags guigym passes; ``<rev>`` is read from the installed Playwright's ``browsers.json``.

Output: JSON lines on stdout, ``{"event": "progress", ...}`` while running and one ``{"event": "result", ...}``
at the end, with per-call times in milliseconds.

Usage::

    python browsergym_probe.py --chromium /usr/bin/chromium \\
        --miniwob-url file:///.../miniwob/html/miniwob/ [--task click-test] [--resets 20] [--steps 50]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

#: Flags the wrapper adds: the same background-traffic switches guigym's Chromium starts with.
QUIET_FLAGS = ("--disable-background-networking", "--disable-component-update", "--no-first-run")

CONFIGS: dict[str, dict[str, float]] = {
    "default": {},
    "tuned": {"slow_mo": 0, "pre_observation_delay": 0.0},
}


def emit(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def playwright_chromium_revision() -> str:
    """The Chromium revision the installed Playwright looks for in its browser cache."""
    import playwright

    browsers = Path(playwright.__file__).parent / "driver" / "package" / "browsers.json"
    entries = json.loads(browsers.read_text())["browsers"]
    return next(b["revision"] for b in entries if b["name"] == "chromium")


def fake_browser_cache(chromium: str, root: Path) -> Path:
    """A Playwright browser cache under ``root`` whose Chromium is a wrapper around ``chromium``."""
    exe = root / f"chromium-{playwright_chromium_revision()}" / "chrome-linux" / "chrome"
    exe.parent.mkdir(parents=True)
    flags = list(QUIET_FLAGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.insert(0, "--no-sandbox")  # the sandbox cannot start as root
    exe.write_text(f'#!/bin/sh\nexec {shlex.quote(chromium)} {" ".join(flags)} "$@"\n')
    exe.chmod(0o755)
    return root


def timed(label: str, fn: Callable[[int], object], n: int, warmup: int) -> list[float]:
    """Milliseconds per call of ``fn(i)`` over ``n`` calls after ``warmup`` untimed ones; reports progress."""
    total = warmup + n
    out = []
    for i in range(total):
        t0 = time.perf_counter()
        fn(i)
        if i >= warmup:
            out.append((time.perf_counter() - t0) * 1000)
        emit("progress", label=label, done=i + 1, total=total)
    return out


def measure(task: str, config: str, resets: int, steps: int, warmup: int) -> dict[str, object]:
    import browsergym.miniwob  # noqa: F401  (registers browsergym/miniwob.*)
    import gymnasium as gym

    env = gym.make(f"browsergym/miniwob.{task}", **CONFIGS[config])
    try:
        reset_ms = timed(f"BrowserGym reset ({config})", lambda i: env.reset(seed=i), resets, warmup=1)
        obs, _ = env.reset(seed=10_000)
        page = env.unwrapped.page
        bid = page.get_attribute("#query", "bid")
        if bid is None:
            raise RuntimeError("BrowserGym gave #query no bid; cannot build a click action")
        action = f'click("{bid}")'
        errors: list[str] = []
        done: list[bool] = []

        def step(_i: int) -> None:
            obs, _reward, terminated, truncated, _info = env.step(action)
            if obs["last_action_error"]:
                errors.append(obs["last_action_error"])
            done.append(terminated or truncated)

        step_ms = timed(f"BrowserGym step ({config})", step, steps, warmup=warmup)
        return {
            "reset_ms": reset_ms,
            "step_ms": step_ms,
            "action": action,
            "action_errors": len(errors),
            "first_action_error": errors[0] if errors else None,
            "episode_ended_during_steps": any(done),
            "screenshot_shape": list(obs["screenshot"].shape),
            "settings": CONFIGS[config],
        }
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--chromium", required=True, help="Chromium binary to launch (guigym's find_chromium())"
    )
    parser.add_argument("--miniwob-url", required=True, help="MINIWOB_URL: folder URL of MiniWoB's task HTML")
    parser.add_argument("--task", default="click-test")
    parser.add_argument("--resets", type=int, default=20)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps before the timed ones")
    parser.add_argument(
        "--configs", default="default,tuned", help=f"comma-separated subset of {list(CONFIGS)}"
    )
    args = parser.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        parser.error(f"unknown configs {sorted(unknown)}; choose from {list(CONFIGS)}")

    root = Path(tempfile.mkdtemp(prefix="browsergym-probe-"))
    try:
        os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(fake_browser_cache(args.chromium, root))
        os.environ["MINIWOB_URL"] = args.miniwob_url
        results = {c: measure(args.task, c, args.resets, args.steps, args.warmup) for c in configs}
        emit(
            "result",
            task=args.task,
            chromium=args.chromium,
            playwright_chromium_revision=playwright_chromium_revision(),
            python=sys.version.split()[0],
            versions={
                p: metadata.version(p) for p in ("browsergym-core", "browsergym-miniwob", "playwright")
            },
            configs=results,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
