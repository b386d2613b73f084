"""How fast is GuiWeb? One process, one page, p50/p90 over repeated calls, printed as a table.

Rows:

* raw Playwright floor: ``page.mouse.click`` + ``page.screenshot`` on a reused page (the least any
  screenshot-observing env can do per step), PNG and JPEG;
* GuiWeb ``step``: a click that does not navigate, with the settle check, element extraction (one
  ``page.evaluate``), screenshot, decode to numpy and the task judge;
* GuiWeb ``step`` that navigates (clicking a link to another page);
* GuiWeb warm ``reset``: restore SQLite state from the cached template and load the start page;
* screenshot capture + decode per format, which is why JPEG is the default.

Usage: ``python benchmarks/web_speed.py [--n 40]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from rich.console import Console
from rich.table import Table

from gui_envs.actions import Action
from gui_envs.web import observation
from gui_envs.web.chromium import find_chromium, launch_args
from gui_envs.web.env import GuiWebEnv
from gui_envs.web.session import SESSION_FLAGS
from gui_envs.web.sites.base import Request, SiteState
from gui_envs.web.sites.shop import ShopSite


def timed(fn: Callable[[], object], n: int, warmup: int = 3) -> list[float]:
    """Milliseconds per call of ``fn`` over ``n`` calls, after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def raw_playwright(n: int) -> dict[str, list[float]]:
    """The floor: Playwright sync API in this thread, the same shop page served by the same router."""
    from playwright.sync_api import sync_playwright

    state = SiteState(ShopSite())
    state.restore(0)
    out: dict[str, list[float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), args=launch_args(SESSION_FLAGS))
        page = browser.new_page(viewport={"width": 1280, "height": 720})

        def route(r: object) -> None:
            req = r.request  # type: ignore[attr-defined]
            resp = state.handle(Request.from_url(req.method, req.url, req.post_data_buffer))
            r.fulfill(status=resp.status, headers=resp.headers, body=resp.body)  # type: ignore[attr-defined]

        page.route("**/*", route)
        page.goto("http://shop.guigym.test/")
        out["raw: click + screenshot (png)"] = timed(
            lambda: (page.mouse.click(1200, 700), page.screenshot(type="png")), n
        )
        out["raw: click + screenshot (jpeg)"] = timed(
            lambda: (page.mouse.click(1200, 700), page.screenshot(type="jpeg", quality=90)), n
        )
        size = (1280, 720)
        out["capture + decode png"] = timed(lambda: observation.decode(page.screenshot(type="png"), size), n)
        out["capture + decode jpeg"] = timed(
            lambda: observation.decode(page.screenshot(type="jpeg", quality=90), size), n
        )
        out["element extraction (evaluate)"] = timed(lambda: observation.extract(page), n)
        browser.close()
    return out


def guiweb(n: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    with GuiWebEnv(sites=("shop",), max_steps=10_000) as env:
        env.reset(options={"task": "shop.open_product", "seed": 0})
        out["GuiWeb step (click, no navigation)"] = timed(lambda: env.step(Action.click(1200, 700)), n)
        toggle = iter(range(10**9))

        def navigating_step() -> None:
            # alternate between two pages so each step is a real navigation
            env.step(Action.navigate("url", url="/cart" if next(toggle) % 2 else "/wishlist"))

        out["GuiWeb step (navigate to a page)"] = timed(navigating_step, n)
        seeds = iter(range(10**9))
        out["GuiWeb warm reset (same seed)"] = timed(
            lambda: env.reset(options={"task": "shop.open_product", "seed": 0}), n
        )
        out["GuiWeb warm reset (new task+seed)"] = timed(lambda: env.reset(seed=next(seeds) % 16), n)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="timed calls per row")
    args = parser.parse_args()
    rows = {**raw_playwright(args.n), **guiweb(args.n)}
    floor = statistics.median(rows["raw: click + screenshot (png)"])
    table = Table(title=f"GuiWeb speed, one process, one page, n={args.n} (ms)")
    for col in ("measurement", "p50", "p90", "p50 / raw png floor"):
        table.add_column(col, justify="left" if col == "measurement" else "right")
    for name, values in rows.items():
        table.add_row(
            name, f"{pct(values, 50):.1f}", f"{pct(values, 90):.1f}", f"{pct(values, 50) / floor:.2f}x"
        )
    Console().print(table)


if __name__ == "__main__":
    main()
