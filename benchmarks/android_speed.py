"""Speed of the simulated phone (GuiAndroid-v0's default backend), as p50 / p90 tables.

Measures, in one Python thread against one Chromium:

- hierarchy dump: ``SimulatedPhone.hierarchy()`` (one ``page.evaluate`` that writes uiautomator XML) on each
  app's main screen (target: p50 <= 20 ms; a real device takes hundreds of milliseconds);
- hierarchy parse: :func:`gui_envs.android.hierarchy.parse_hierarchy` of those dumps;
- screenshot: at observation size (360 x 800) and at device resolution (1080 x 2400);
- env reset: a warm ``GuiAndroidEnv.reset`` (restore every app database, go home, observe);
- env step: oracle steps of every task template (act, wait for any navigation, dump, screenshot);
- floor vs env step, timed alternately on the launcher (one call of each in turn, so both see the same load):
  raw Playwright on the phone's page doing a step's work (a tap that changes nothing, the hierarchy script, a
  JPEG screenshot at the env's scale and its decode) against ``env.step`` of the same tap. Target: the step's p50
  at most :data:`STEP_TARGET` times the floor's (issue 11).

Usage::

    python benchmarks/android_speed.py [--repeats 20] [--episodes 50]
    python benchmarks/android_speed.py --quick   # --repeats 4 --episodes 6: every row runs, few samples
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image
from rich.console import Console
from rich.table import Table

from gui_envs.android.env import GuiAndroidEnv
from gui_envs.android.hierarchy import parse_hierarchy
from gui_envs.android.simulated import HIERARCHY_JS, LAUNCHER_PACKAGE, SimulatedPhone
from gui_envs.android.tasks import TASKS
from gui_envs.schema.actions import Action

HIERARCHY_P50_TARGET_MS = 20.0
#: Env step p50 over the same-work floor p50, at most.
STEP_TARGET = 1.3
#: A tap on the status bar (screenshot pixels): it hits no control, so every timed step stays on the launcher.
IDLE_TAP = (180.0, 4.0)


def time_ms(fn: Callable[[], object], repeats: int) -> list[float]:
    """Wall time of each of ``repeats`` calls of ``fn``, in milliseconds."""
    out = []
    for _ in range(repeats):
        begin = time.perf_counter()
        fn()
        out.append((time.perf_counter() - begin) * 1000.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per app screen")
    parser.add_argument("--episodes", type=int, default=len(TASKS), help="oracle episodes for step timing")
    parser.add_argument("--floor-only", action="store_true", help="only the floor vs env step rows")
    parser.add_argument("--quick", action="store_true", help="--repeats 4 --episodes 6 (overrides them)")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.episodes = 4, 6

    rows: dict[str, list[float]] = {
        k: []
        for k in (
            "hierarchy dump",
            "hierarchy parse",
            "screenshot 360x800",
            "screenshot 1080x2400",
            "env reset (warm)",
            "env step (oracle)",
            "floor: tap + hierarchy + screenshot",
            "env step (same tap)",
        )
    }
    # Room for the timed same-tap steps of one episode: a step after the episode is truncated raises.
    env = GuiAndroidEnv(max_steps=10_000)
    env.reset(seed=0)  # launches Chromium; not timed
    phone: SimulatedPhone = env.backend  # type: ignore[assignment]
    for package in () if args.floor_only else phone.apps:
        if package == LAUNCHER_PACKAGE:
            phone.press("home")
        else:
            phone.app_start(package)
        xml = phone.hierarchy()
        rows["hierarchy dump"] += time_ms(phone.hierarchy, args.repeats)
        rows["hierarchy parse"] += time_ms(lambda xml=xml: parse_hierarchy(xml), args.repeats)
        rows["screenshot 360x800"] += time_ms(lambda: phone.screenshot(1 / 3), max(3, args.repeats // 4))
        rows["screenshot 1080x2400"] += time_ms(lambda: phone.screenshot(1.0), max(3, args.repeats // 4))
    names = sorted(TASKS)
    for i in range(0 if args.floor_only else args.episodes):
        name = names[i % len(names)]
        begin = time.perf_counter()
        env.reset(options={"task": name, "seed": i})
        rows["env reset (warm)"].append((time.perf_counter() - begin) * 1000.0)
        for _ in range(30):
            action = env.oracle_action()
            begin = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            rows["env step (oracle)"].append((time.perf_counter() - begin) * 1000.0)
            if terminated or truncated:
                break
    env.reset(options={"task": names[0], "seed": 0})
    env.backend.press("home")  # type: ignore[attr-defined]
    x, y = IDLE_TAP[0] * 3, IDLE_TAP[1] * 3  # device pixels (density 3)

    def floor(h: Any) -> None:
        h.page.mouse.click(x / 3, y / 3)
        h.page.evaluate(HIERARCHY_JS, 2000)
        with Image.open(io.BytesIO(h.page.screenshot(type="jpeg", quality=90, scale="css"))) as img:
            np.asarray(img.convert("RGB"))

    for i in range(args.repeats * 3 + 3):
        for name, fn in (
            ("floor: tap + hierarchy + screenshot", lambda: phone._session.call(floor)),  # type: ignore[union-attr]
            ("env step (same tap)", lambda: env.step(Action.click(*IDLE_TAP))),
        ):
            begin = time.perf_counter()
            fn()
            if i >= 3:
                rows[name].append((time.perf_counter() - begin) * 1000.0)
    env.close()

    table = Table(title="Simulated phone speed (ms)")
    for col in ("operation", "n", "p50", "p90", "target"):
        table.add_column(col, justify="left" if col == "operation" else "right")
    for name, values in rows.items():
        if not values:
            continue
        arr = np.asarray(values)
        target = f"p50 <= {HIERARCHY_P50_TARGET_MS:.0f}" if name == "hierarchy dump" else ""
        table.add_row(
            name, str(arr.size), f"{np.percentile(arr, 50):.1f}", f"{np.percentile(arr, 90):.1f}", target
        )
    Console().print(table)
    ratio = np.percentile(rows["env step (same tap)"], 50) / np.percentile(rows["floor: tap + hierarchy + screenshot"], 50)
    verdict = "met" if ratio <= STEP_TARGET else "NOT met"
    Console().print(f"env step / same-work floor (p50, measured alternately): {ratio:.2f}x, target <= {STEP_TARGET}x: {verdict}")
    if args.floor_only:
        return
    p50 = float(np.percentile(rows["hierarchy dump"], 50))
    verdict = "meets" if p50 <= HIERARCHY_P50_TARGET_MS else "MISSES"
    Console().print(f"hierarchy dump p50 {p50:.1f} ms {verdict} the {HIERARCHY_P50_TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
