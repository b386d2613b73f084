"""Speed of the simulated phone (GuiAndroid-v0's default backend), as p50 / p90 tables.

Measures, in one Python thread against one Chromium:

- hierarchy dump: ``SimulatedPhone.hierarchy()`` (one ``page.evaluate`` that writes uiautomator XML) on each
  app's main screen (target: p50 <= 20 ms; a real device takes hundreds of milliseconds);
- hierarchy parse: :func:`gui_envs.android.hierarchy.parse_hierarchy` of those dumps;
- screenshot: at observation size (360 x 800) and at device resolution (1080 x 2400);
- env reset: a warm ``GuiAndroidEnv.reset`` (restore every app database, go home, observe);
- env step: oracle steps of every task template (act, wait for any navigation, dump, screenshot).

Usage::

    python benchmarks/android_speed.py [--repeats 20] [--episodes 50]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from rich.console import Console
from rich.table import Table

from gui_envs.android.env import GuiAndroidEnv
from gui_envs.android.hierarchy import parse_hierarchy
from gui_envs.android.simulated import LAUNCHER_PACKAGE, SimulatedPhone
from gui_envs.android.tasks import TASKS

HIERARCHY_P50_TARGET_MS = 20.0


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
    args = parser.parse_args()

    rows: dict[str, list[float]] = {
        k: []
        for k in (
            "hierarchy dump",
            "hierarchy parse",
            "screenshot 360x800",
            "screenshot 1080x2400",
            "env reset (warm)",
            "env step (oracle)",
        )
    }
    env = GuiAndroidEnv()
    env.reset(seed=0)  # launches Chromium; not timed
    phone: SimulatedPhone = env.backend  # type: ignore[assignment]
    for package in phone.apps:
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
    for i in range(args.episodes):
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
    env.close()

    table = Table(title="Simulated phone speed (ms)")
    for col in ("operation", "n", "p50", "p90", "target"):
        table.add_column(col, justify="left" if col == "operation" else "right")
    for name, values in rows.items():
        arr = np.asarray(values)
        target = f"p50 <= {HIERARCHY_P50_TARGET_MS:.0f}" if name == "hierarchy dump" else ""
        table.add_row(
            name, str(arr.size), f"{np.percentile(arr, 50):.1f}", f"{np.percentile(arr, 90):.1f}", target
        )
    Console().print(table)
    p50 = float(np.percentile(rows["hierarchy dump"], 50))
    verdict = "meets" if p50 <= HIERARCHY_P50_TARGET_MS else "MISSES"
    Console().print(f"hierarchy dump p50 {p50:.1f} ms {verdict} the {HIERARCHY_P50_TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
