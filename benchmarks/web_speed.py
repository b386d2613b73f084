"""How fast is GuiWeb? One process, one page, p50/p90 over repeated calls, printed as tables.

First table (the bundled shop site, 1280x720):

* raw Playwright floor: ``page.mouse.click`` + ``page.screenshot`` on a reused page (the least any
  screenshot-observing env can do per step), PNG and JPEG;
* raw Playwright doing a step's work: click, the same element extraction script, a JPEG screenshot and its
  decode to numpy, timed **alternately** with GuiWeb's click step (one call each in turn, so both see the same
  machine load); the click step's target is at most :data:`STEP_TARGET` times this floor (p50);
* GuiWeb ``step``: a click that does not navigate, with the settle check, element extraction (one
  ``page.evaluate``), screenshot, decode to numpy and the task judge;
* GuiWeb ``step`` that navigates (clicking a link to another page);
* GuiWeb warm ``reset``: restore SQLite state from the cached template and load the start page, back to back
  (each reset also finishes the next episode the previous one began preparing), and as in an episode: after a
  step and :data:`AGENT_THINK_S` of agent time, ``reset()`` (target: p50 at most :data:`RESET_TARGET_MS`; the env
  prepared that episode in the background, :mod:`gui_envs.browser.prefetch`) and ``reset(seed=s)`` (not
  guessable), each with the first step after it;
* screenshot capture + decode per format, which is why JPEG is the default.

Second table, the same MiniWoB task (``click-test``, miniwob 1.1's HTML) in GuiWeb and in BrowserGym, on the
same machine in the same run, each env with its defaults:

* raw Playwright doing a step's work on the task page, timed **alternately** with GuiWeb's step: the env's
  viewport (500x400), a click on the instruction box, the same element extraction, the page's reward read, a JPEG
  screenshot and its decode to numpy (the same-work floor; ratio near 1 is the goal);
* GuiWeb ``step`` of ``GuiWeb-MiniWoB-click-test-v0``: a click on the instruction box (it never ends the
  episode), with element extraction, screenshot and the page's reward read;
* GuiWeb warm ``reset`` (new seed) at the default ``reload_page=True`` (the task page loaded afresh, so one seed
  gives one screenshot) and, timed alternately with it, ``reload_page=False`` (the next episode in the loaded page,
  as MiniWoB's own env does); cold start (``gym.make`` + first ``reset``, which launches Playwright and Chromium);
* BrowserGym ``step`` and ``reset`` of ``browsergym/miniwob.click-test`` (see ``browsergym_probe.py``): its
  default configuration, and a ``tuned`` one with its two fixed waits (``slow_mo``, ``pre_observation_delay``)
  set to 0. Ratios are BrowserGym's time over GuiWeb's (step over step, reset over the default warm reset).

CPU per step (summed over every process, screenshots on and off) is ``benchmarks/step_cpu.py``.

Third table, ``GuiWebGround-Box-v0`` (one-step grounding, 640x400; an SB3 PPO episode is a reset and one step, so
the reset is nearly all of its cost): ``reset()``, whose page the env prepares in the background
(:mod:`gui_envs.browser.prefetch`), against ``reset(seed=s)``, which it cannot guess and builds in the foreground (the
work every reset did before the preparation existed), each after a step and :data:`GROUND_THINK_S` of agent time and
back to back after a step (SB3's loop: the preparation has had only the step's time).

Fourth table, announced named resets (issue 28): ``reset(seed=s)`` after a step and :data:`AGENT_THINK_S` of agent
time on ``GuiWeb-v0`` and ``GuiWebGround-v0`` (1280x720), on an env told its seeds ahead
(:func:`gui_envs.schema.upcoming.announce`) and on one not told, one reset of each in turn (target: the announced p50 at
most :data:`ANNOUNCED_TARGET_MS`).

BrowserGym pins ``playwright==1.44`` (guigym needs a newer one), so it is measured in its own interpreter, run
as a subprocess after the in-process rows; both launch the same Chromium binary. Set it up once::

    python -m venv .venv-browsergym
    .venv-browsergym/bin/pip install browsergym-core==0.14.3 browsergym-miniwob==0.14.3

No ``playwright install`` is needed: the probe points that Playwright at guigym's Chromium. Without
``--browsergym-python`` (or when the probe fails) the table says BrowserGym was not measured, and why.

Usage: ``python benchmarks/web_speed.py [--n 40] [--resets 20] [--steps 50] [--no-miniwob] [--env all|shop|ground|announce]
[--browsergym-python .venv-browsergym/bin/python]``; ``--env announce`` prints the fourth table alone (``--resets``
calls per row); ``--quick`` (what ``guigym bench`` runs) times 8 calls
per shop and grounding row and 10 steps / 4 resets of MiniWoB, a check that every row runs rather than a
measurement. ``--env ground`` prints the grounding table alone (``--resets`` calls per row).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gui_envs.browser import observation
from gui_envs.browser.chromium import find_chromium, launch_args
from gui_envs.browser.session import SESSION_FLAGS
from gui_envs.browser.site import Request, SiteState
from gui_envs.schema.actions import Action
from gui_envs.web.env import GuiWebEnv
from gui_envs.web.sites.shop import ShopSite

MINIWOB_TASK = "click-test"
MINIWOB_ID = f"GuiWeb-MiniWoB-{MINIWOB_TASK}-v0"
#: Centre of MiniWoB's instruction box (``#query``, the top 50 px of the 160x210 task area): a click there
#: never ends a click-test episode, so every timed step is a step of a live episode.
QUERY_POINT = (80, 25)
PROBE = Path(__file__).with_name("browsergym_probe.py")
#: Click step p50 over the same-work raw floor p50, at most (issue 11).
STEP_TARGET = 1.15
#: Warm reset p50 in milliseconds, at most (issue 11).
RESET_TARGET_MS = 100.0
#: Seconds an agent thinks between its last step and the next reset, in the episode-shaped reset row.
AGENT_THINK_S = 0.3
#: The same for the grounding table: a grounding page takes about 300 ms of browser work to prepare on two busy
#: cores (restore, load, observe, layout facts), and a VLM's one decision takes seconds.
GROUND_THINK_S = 1.0
SAME_WORK = "raw: same work as a step (click, extraction, jpeg, decode)"
CLICK_STEP = "GuiWeb step (click, no navigation)"

_progress: Progress | None = None


@contextmanager
def progress_bars() -> Iterator[Progress]:
    """Progress bars (on stderr, cleared when done) for the timing loops."""
    global _progress
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with bars:
        _progress = bars
        try:
            yield bars
        finally:
            _progress = None


def timed(fn: Callable[[], object], n: int, warmup: int = 3, label: str = "") -> list[float]:
    """Milliseconds per call of ``fn`` over ``n`` calls, after ``warmup`` untimed ones."""
    bar = _progress.add_task(label or "timing", total=warmup + n) if _progress else None
    for _ in range(warmup):
        fn()
        if _progress and bar is not None:
            _progress.advance(bar)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
        if _progress and bar is not None:
            _progress.advance(bar)
    if _progress and bar is not None:
        _progress.remove_task(bar)
    return out


def alternating(fns: dict[str, Callable[[], object]], n: int, label: str, warmup: int = 3) -> dict[str, list[float]]:
    """Milliseconds per call of each of ``fns``, called in turn ``warmup + n`` times (the first ``warmup`` rounds
    dropped): alternating keeps a ratio fair on a machine whose speed drifts."""
    out: dict[str, list[float]] = {name: [] for name in fns}
    bar = _progress.add_task(label, total=n) if _progress else None
    for i in range(n + warmup):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            if i >= warmup:
                out[name].append((time.perf_counter() - t0) * 1000)
        if _progress and bar is not None and i >= warmup:
            _progress.advance(bar)
    if _progress and bar is not None:
        _progress.remove_task(bar)
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
        browser, page = open_raw_shop(pw, state)
        rows: dict[str, Callable[[], object]] = {
            "raw: click + screenshot (png)": lambda: (
                page.mouse.click(1200, 700),
                page.screenshot(type="png"),
            ),
            "raw: click + screenshot (jpeg)": lambda: (
                page.mouse.click(1200, 700),
                page.screenshot(type="jpeg", quality=90),
            ),
            "capture + decode png": lambda: observation.decode(page.screenshot(type="png"), (1280, 720)),
            "capture + decode jpeg": lambda: observation.decode(
                page.screenshot(type="jpeg", quality=90), (1280, 720)
            ),
            "element extraction (evaluate)": lambda: observation.extract(page),
        }
        for name, fn in rows.items():
            out[name] = timed(fn, n, label=name)
        browser.close()
    return out


def open_raw_shop(pw: Any, state: SiteState) -> tuple[Any, Any]:
    """Raw Playwright on the shop's home page, answered from ``state`` the way the env's routing does."""
    browser = pw.chromium.launch(executable_path=find_chromium(), args=launch_args(SESSION_FLAGS))
    page = browser.new_page(viewport={"width": 1280, "height": 720})

    def route(r: Any) -> None:
        req = r.request
        resp = state.handle(Request.from_url(req.method, req.url, req.post_data_buffer))
        r.fulfill(status=resp.status, headers=resp.headers, body=resp.body)

    page.route("**/*", route)
    page.goto("http://shop.guigym.test/")
    return browser, page


def side_by_side(n: int) -> dict[str, list[float]]:
    """GuiWeb's click step and raw Playwright doing the same work, one call of each in turn."""
    from playwright.sync_api import sync_playwright

    state = SiteState(ShopSite())
    state.restore(0)
    with sync_playwright() as pw, GuiWebEnv(sites=("shop",), max_steps=10_000) as env:
        browser, page = open_raw_shop(pw, state)
        env.reset(options={"task": "shop.open_product", "seed": 0})

        def raw() -> None:
            page.mouse.click(1200, 700)
            observation.extract(page)
            observation.decode(page.screenshot(type="jpeg", quality=90), (1280, 720))

        def step() -> None:
            env.step(Action.click(1200, 700))

        out = alternating({SAME_WORK: raw, CLICK_STEP: step}, n, "side by side")
        browser.close()
    return out


def guiweb(n: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    with GuiWebEnv(sites=("shop",), max_steps=10_000) as env:
        env.reset(options={"task": "shop.open_product", "seed": 0})
        toggle = iter(range(10**9))

        def navigating_step() -> None:
            # alternate between two pages so each step is a real navigation
            env.step(Action.navigate("url", url="/cart" if next(toggle) % 2 else "/wishlist"))

        name = "GuiWeb step (navigate to a page)"
        out[name] = timed(navigating_step, n, label=name)
        seeds = iter(range(10**9))
        name = "GuiWeb warm reset (same seed)"
        out[name] = timed(lambda: env.reset(options={"task": "shop.open_product", "seed": 0}), n, label=name)
        name = "GuiWeb warm reset (new task+seed)"
        out[name] = timed(lambda: env.reset(seed=next(seeds) % 16), n, label=name)
        # An episode as an agent plays it: a step, then AGENT_THINK_S of thinking, then the next reset. reset()
        # without a seed plays the episode the env's generator draws, which the env prepares in the background
        # meanwhile; reset(seed=s) names one it could not guess (only the page is reused). The first step after a
        # reset is timed too: it waits for the preparation step running when it arrives.
        think, first = AGENT_THINK_S, "GuiWeb first step after a reset (click)"
        for label, seeded in (("", False), (", reset(seed=s): not prepared", True)):
            name = f"GuiWeb warm reset (after a step and {think:g} s of agent time{label})"
            out[name], out[first + label] = [], []
            for i in range(n + 3):
                env.step(Action.click(1200, 700))
                time.sleep(think)
                t0 = time.perf_counter()
                env.reset(seed=next(seeds) % 16) if seeded else env.reset()
                t1 = time.perf_counter()
                env.step(Action.click(1200, 700))
                t2 = time.perf_counter()
                if i >= 3:
                    out[name].append((t1 - t0) * 1000)
                    out[first + label].append((t2 - t1) * 1000)
    return out


def ground(n: int) -> dict[str, list[float]]:
    """Milliseconds per reset of ``GuiWebGround-Box-v0``: prepared (``reset()``) against not (``reset(seed=s)``)."""
    import gymnasium as gym

    import gui_envs  # noqa: F401  (registers the ids)

    env = gym.make("GuiWebGround-Box-v0")
    click = np.zeros(2, np.float32)  # the page's centre; the click is judged, not performed
    seeds = iter(range(10**9))
    out: dict[str, list[float]] = {}
    rows = (
        (f"reset(seed=s) after a step and {GROUND_THINK_S:g} s of agent time: not prepared", True, GROUND_THINK_S),
        (f"reset() after a step and {GROUND_THINK_S:g} s of agent time: prepared", False, GROUND_THINK_S),
        ("reset(seed=s) right after a step (SB3's loop): not prepared", True, 0.0),
        ("reset() right after a step (SB3's loop): prepared meanwhile", False, 0.0),
    )
    try:
        env.reset(seed=0)
        for name, seeded, think in rows:
            bar = _progress.add_task(name, total=n + 3) if _progress else None
            out[name] = []
            for i in range(n + 3):
                env.step(click)
                time.sleep(think)
                t0 = time.perf_counter()
                env.reset(seed=next(seeds)) if seeded else env.reset()
                if i >= 3:  # warm-up
                    out[name].append((time.perf_counter() - t0) * 1000)
                if _progress and bar is not None:
                    _progress.advance(bar)
            if _progress and bar is not None:
                _progress.remove_task(bar)
    finally:
        env.close()
    return out


#: The named reset that follows an announcement, p50 in milliseconds, at most (issue 28).
ANNOUNCED_TARGET_MS = 20.0
#: The ids whose announced named resets are measured, and a step's action on each (a click that ends nothing).
ANNOUNCED_IDS = {"GuiWeb-v0": Action.click(1200, 700), "GuiWebGround-v0": Action.click(640, 360)}


def announced(n: int, think: float = AGENT_THINK_S) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per ``reset(seed=s)`` after a step and ``think`` seconds of agent time, on two envs of each id:
    one told its seeds ahead (:func:`gui_envs.schema.upcoming.announce`, as GRPO's rollouts and ``GroupEnv`` do), one not;
    one reset of each in turn, so that both see the same machine load."""
    import gymnasium as gym

    import gui_envs  # noqa: F401  (registers the ids)
    from gui_envs.schema.upcoming import announce

    out: dict[str, dict[str, list[float]]] = {}
    for env_id, action in ANNOUNCED_IDS.items():
        told, untold = gym.make(env_id), gym.make(env_id)
        rows: dict[str, list[float]] = {"announced": [], "not announced": []}
        seeds = list(range(1000, 1000 + n + 3))
        bar = _progress.add_task(f"{env_id} named resets", total=len(seeds)) if _progress else None
        try:
            announce(told, seeds)
            told.reset(seed=0)
            untold.reset(seed=0)
            for i, seed in enumerate(seeds):
                for name, env in (("announced", told), ("not announced", untold)):
                    env.step(action)
                    time.sleep(think)
                    t0 = time.perf_counter()
                    env.reset(seed=seed)
                    if i >= 3:  # warm-up
                        rows[name].append((time.perf_counter() - t0) * 1000)
                if _progress and bar is not None:
                    _progress.advance(bar)
        finally:
            told.close()
            untold.close()
            if _progress and bar is not None:
                _progress.remove_task(bar)
        out[env_id] = rows
    return out


def announced_table(rows: dict[str, dict[str, list[float]]], think: float = AGENT_THINK_S) -> Table:
    n = len(next(iter(next(iter(rows.values())).values())))
    table = Table(title=f"reset(seed=s) after a step and {think:g} s of agent time, n={n} (ms)")
    for col in ("env", "reset(seed=s)", "p50", "p90", "p50 / not announced", f"target p50 <= {ANNOUNCED_TARGET_MS:g}"):
        table.add_column(col, justify="left" if col in ("env", "reset(seed=s)") else "right")
    for env_id, pair in rows.items():
        base = pct(pair["not announced"], 50)
        for name, values in pair.items():
            p50 = pct(values, 50)
            verdict = ("met" if p50 <= ANNOUNCED_TARGET_MS else "NOT met") if name == "announced" else ""
            table.add_row(env_id, name, f"{p50:.1f}", f"{pct(values, 90):.1f}", f"{p50 / base:.2f}x", verdict)
    return table


def ground_table(rows: dict[str, list[float]]) -> Table:
    """p50 / p90 per row, and each p50 over the not-prepared p50 of the same agent timing."""
    n = len(next(iter(rows.values())))
    table = Table(title=f"GuiWebGround-Box-v0 warm reset, 640x400, n={n} (ms)")
    for col in ("measurement", "p50", "p90", "p50 / not prepared"):
        table.add_column(col, justify="left" if col == "measurement" else "right")
    names = list(rows)
    for i, name in enumerate(names):
        base = pct(rows[names[i - i % 2]], 50)  # the not-prepared row of the same pair
        table.add_row(name, f"{pct(rows[name], 50):.1f}", f"{pct(rows[name], 90):.1f}", f"{pct(rows[name], 50) / base:.2f}x")
    return table


# ----- the MiniWoB comparison ---------------------------------------------------------------------------
@dataclass
class Row:
    name: str
    values: list[float]
    #: key of the GuiWeb row this one is compared with ("" for none)
    versus: str = ""


@dataclass
class Comparison:
    rows: dict[str, Row] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    browsergym_error: str | None = None

    def add(self, key: str, name: str, values: list[float], versus: str = "") -> None:
        self.rows[key] = Row(name, values, versus)


def miniwob_task_dir() -> Path:
    from gui_envs.web.miniwob import miniwob_html_dir

    return miniwob_html_dir() / "miniwob"


def miniwob_side_by_side(steps: int, out: Comparison) -> None:
    """GuiWeb's MiniWoB click step and raw Playwright doing the same work on the same task page, one call of each in
    turn: the env's viewport (:data:`~gui_envs.web.miniwob.DEFAULT_VIEWPORT`), a click on the instruction box, the
    element extraction (leaving out what the env leaves out), the page's reward read, a JPEG screenshot and its
    decode to numpy."""
    import gymnasium as gym
    from playwright.sync_api import sync_playwright

    import gui_envs  # noqa: F401  (registers the ids)
    from gui_envs.web.miniwob import (
        DEFAULT_VIEWPORT,
        MINIWOB_NOT_TASK,
        MINIWOB_ORIGIN,
        NO_TIMEOUT_MS,
        START_JS,
        STATE_JS,
        static_handler,
    )

    handler = static_handler(miniwob_task_dir().parent)
    width, height = DEFAULT_VIEWPORT
    env = gym.make(MINIWOB_ID, max_steps=10_000)  # no truncation during the timed steps
    errors, ended = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), args=launch_args(SESSION_FLAGS))
        page = browser.new_page(viewport={"width": width, "height": height})

        def route(r: object) -> None:
            req = r.request  # type: ignore[attr-defined]
            resp = handler(Request.from_url(req.method, req.url, req.post_data_buffer))
            r.fulfill(status=resp.status, headers=resp.headers, body=resp.body)  # type: ignore[attr-defined]

        page.route("**/*", route)
        page.goto(f"{MINIWOB_ORIGIN}/miniwob/{MINIWOB_TASK}.html")
        # The episode started as the env starts it, so that the raw page shows the same task area.
        page.evaluate(START_JS, [0, "train", NO_TIMEOUT_MS])

        def raw() -> None:
            page.mouse.click(*QUERY_POINT)
            observation.extract(page, skip=MINIWOB_NOT_TASK)
            page.evaluate(STATE_JS)
            observation.decode(page.screenshot(type="jpeg", quality=90), DEFAULT_VIEWPORT)

        def step() -> None:
            _obs, _reward, terminated, truncated, info = env.step(Action.click(*QUERY_POINT))
            errors.append(info["action_error"])
            ended.append(terminated or truncated)

        try:
            obs, _ = env.reset(options={"seed": 0})
            raw_name = f"raw: same work as a step ({width}x{height}: click, extraction, reward read, jpeg, decode)"
            rows = alternating({"raw": raw, "gw_step": step}, steps, "MiniWoB side by side")
        finally:
            env.close()
            browser.close()
    out.add("raw", raw_name, rows["raw"])
    out.add("gw_step", f"GuiWeb step ({MINIWOB_ID}, click)", rows["gw_step"])
    if any(errors) or any(ended):
        out.notes.append(f"warning: GuiWeb steps had {sum(map(bool, errors))} action errors, ended={any(ended)}")
    shape = obs["screenshot"].shape
    out.notes.append(f"GuiWeb observation: {shape[1]}x{shape[0]} JPEG screenshot decoded + element list.")


def guiweb_miniwob_resets(resets: int, out: Comparison) -> None:
    """Warm resets at the default (``reload_page=True``: each episode on a freshly loaded page) and with
    ``reload_page=False`` (the next episode started in the loaded page, as MiniWoB's own env does), one reset of
    each in turn; then cold starts."""
    import gymnasium as gym

    import gui_envs  # noqa: F401  (registers the ids)

    default, reuse = gym.make(MINIWOB_ID), gym.make(MINIWOB_ID, reload_page=False)
    rows: dict[str, list[float]] = {"gw_reset": [], "gw_reset_reuse": []}
    try:
        default.reset(options={"seed": 0})
        reuse.reset(options={"seed": 0})
        bar = _progress.add_task("MiniWoB warm resets", total=resets) if _progress else None
        for i in range(resets + 3):
            for key, env in (("gw_reset", default), ("gw_reset_reuse", reuse)):
                t0 = time.perf_counter()
                env.reset(options={"seed": i + 1})
                if i >= 3:  # warm-up
                    rows[key].append((time.perf_counter() - t0) * 1000)
            if _progress and bar is not None and i >= 3:
                _progress.advance(bar)
        if _progress and bar is not None:
            _progress.remove_task(bar)
    finally:
        default.close()
        reuse.close()
    out.add("gw_reset", "GuiWeb warm reset (new seed; default reload_page=True: the page is loaded afresh)", rows["gw_reset"])
    out.add("gw_reset_reuse", "GuiWeb warm reset (new seed; reload_page=False: the page is reused)", rows["gw_reset_reuse"])

    # gym.make builds no browser; the first reset launches Playwright's driver and Chromium. close() is not timed.
    cold: list[float] = []

    def cold_start() -> None:
        fresh = gym.make(MINIWOB_ID)
        try:
            t0 = time.perf_counter()
            fresh.reset(options={"seed": 0})
            cold.append((time.perf_counter() - t0) * 1000)
        finally:
            fresh.close()

    name = "GuiWeb cold start (first reset: launch + load)"
    timed(cold_start, resets, warmup=1, label=name)
    out.add("gw_cold", name, cold[1:])  # cold[0] is the warmup


def browsergym(python: str | None, resets: int, steps: int, out: Comparison) -> None:
    """Run ``browsergym_probe.py`` in BrowserGym's interpreter and add its rows (or say why not)."""
    if not python:
        out.browsergym_error = "not measured: no --browsergym-python given"
        return
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        out.browsergym_error = f"not measured: interpreter {python!r} not found"
        return
    cmd = [
        python,
        str(PROBE),
        "--chromium",
        find_chromium(),
        "--miniwob-url",
        miniwob_task_dir().as_uri() + "/",
        "--task",
        MINIWOB_TASK,
        "--resets",
        str(resets),
        "--steps",
        str(steps),
    ]
    result = None
    bars: dict[str, object] = {}
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        assert proc.stdout is not None
        # a hung browser must not hang the benchmark: a generous limit (a healthy call takes seconds at most)
        watchdog = threading.Timer(300 + 20 * (resets + steps), proc.kill)
        watchdog.start()
        for line in proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("event") == "result":
                result = event
            elif event.get("event") == "progress" and _progress is not None:
                label = event["label"]
                if label not in bars:
                    for old in bars.values():
                        _progress.remove_task(old)  # type: ignore[arg-type]
                    bars.clear()
                    bars[label] = _progress.add_task(label, total=event["total"])
                _progress.update(bars[label], completed=event["done"])  # type: ignore[arg-type]
        rc = proc.wait()
        killed = watchdog.finished.is_set()  # set once the timer fired (before cancel() sets it too)
        watchdog.cancel()
        if _progress is not None:
            for bar in bars.values():
                _progress.remove_task(bar)  # type: ignore[arg-type]
        err.seek(0)
        # the end of the traceback, without the ^^^ marker lines
        stderr_tail = [ln.strip() for ln in err.read().splitlines() if ln.strip(" ^~")][-2:]
    if rc != 0 or result is None:
        why = "was killed after hanging" if killed else f"exited with status {rc}"
        out.browsergym_error = f"not measured: the probe {why}: " + " | ".join(stderr_tail)
        return
    versions = ", ".join(f"{k} {v}" for k, v in result["versions"].items())
    for config, data in result["configs"].items():
        label = "defaults" if config == "default" else "slow_mo=0, pre_observation_delay=0"
        out.add(
            f"bg_step_{config}", f"BrowserGym step ({label}, {data['action']})", data["step_ms"], "gw_step"
        )
        out.add(f"bg_reset_{config}", f"BrowserGym reset ({label})", data["reset_ms"], "gw_reset")
        if data["action_errors"] or data["episode_ended_during_steps"]:
            out.notes.append(
                f"warning: BrowserGym {config} steps had {data['action_errors']} action errors "
                f"({data['first_action_error']}), ended={data['episode_ended_during_steps']}"
            )
    shape = result["configs"].get("default", next(iter(result["configs"].values())))["screenshot_shape"]
    out.notes.append(
        f"BrowserGym ({versions}, Python {result['python']}): MiniWoB HTML from the same miniwob package via "
        f"file://, Chromium {result['chromium']} behind Playwright's chromium-{result['playwright_chromium_revision']} "
        f"path; observation: {shape[1]}x{shape[0]} screenshot + DOM snapshot + accessibility tree. Every "
        "reset relaunches its task and chat browsers."
    )


def comparison_table(cmp: Comparison, resets: int, steps: int) -> Table:
    table = Table(
        title=f"MiniWoB {MINIWOB_TASK}: GuiWeb vs BrowserGym, same task, machine and run "
        f"(steps n={steps}, resets n={resets}; ms)"
    )
    for col in ("measurement", "n", "p50", "p90", "p50 ÷ GuiWeb p50", "p90 ÷ GuiWeb p90"):
        table.add_column(col, justify="left" if col == "measurement" else "right")
    for row in cmp.rows.values():
        base = cmp.rows.get(row.versus)
        r50 = f"{pct(row.values, 50) / pct(base.values, 50):.1f}x" if base else ""
        r90 = f"{pct(row.values, 90) / pct(base.values, 90):.1f}x" if base else ""
        table.add_row(
            row.name,
            str(len(row.values)),
            f"{pct(row.values, 50):.1f}",
            f"{pct(row.values, 90):.1f}",
            r50,
            r90,
        )
    if cmp.browsergym_error:
        table.add_row(f"BrowserGym step / reset: {cmp.browsergym_error}", "", "-", "-", "-", "-")
    return table


def summary(cmp: Comparison) -> list[str]:
    """The ratios in words, and the issue's target."""
    p50 = {key: pct(row.values, 50) for key, row in cmp.rows.items()}
    lines = ["Ratios: BrowserGym steps over GuiWeb's step, BrowserGym resets over GuiWeb's default warm reset."]
    if "raw" in p50 and "gw_step" in p50:
        lines.append(
            "GuiWeb MiniWoB step p50 / same-work raw floor on the task page p50 (measured alternately): "
            f"{p50['gw_step'] / p50['raw']:.2f}x."
        )
    if "gw_reset_reuse" in p50 and "gw_reset" in p50:
        lines.append(
            f"GuiWeb MiniWoB warm reset p50: {p50['gw_reset']:.0f} ms at the default reload_page=True, "
            f"{p50['gw_reset_reuse']:.0f} ms with reload_page=False."
        )
    if "gw_reset_reuse" in p50 and "bg_reset_default" in p50:
        lines.append(
            "BrowserGym reset (defaults) / GuiWeb warm reset p50: "
            f"{p50['bg_reset_default'] / p50['gw_reset']:.1f}x at GuiWeb's default, "
            f"{p50['bg_reset_default'] / p50['gw_reset_reuse']:.1f}x against reload_page=False."
        )
    if "gw_cold" in p50 and "bg_reset_default" in p50:
        lines.append(
            "BrowserGym reset (defaults, relaunches its browsers) / GuiWeb cold start (also launches) p50: "
            f"{p50['bg_reset_default'] / p50['gw_cold']:.2f}x."
        )
    target = "Target (GuiWeb step >= 5x faster than BrowserGym's defaults, p50):"
    if "gw_step" not in p50 or "bg_step_default" not in p50:
        return [*lines, f"{target} not checked, BrowserGym not measured."]
    ratio = p50["bg_step_default"] / p50["gw_step"]
    return [*lines, f"{target} {'met' if ratio >= 5 else 'NOT met'}, {ratio:.1f}x."]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="timed calls per row of the shop table")
    parser.add_argument("--steps", type=int, default=50, help="timed steps per env in the MiniWoB comparison")
    parser.add_argument(
        "--resets", type=int, default=20, help="timed resets per env in the MiniWoB comparison"
    )
    parser.add_argument("--no-miniwob", action="store_true", help="skip the MiniWoB / BrowserGym comparison")
    parser.add_argument(
        "--browsergym-python",
        help="Python of a venv with browsergym-core and browsergym-miniwob (e.g. .venv-browsergym/bin/python)",
    )
    parser.add_argument(
        "--env", choices=("all", "shop", "ground", "announce"), default="all",
        help="shop: the shop and MiniWoB tables; ground: the GuiWebGround-Box-v0 reset table (--resets per row); "
        "announce: the announced named resets of GuiWeb-v0 and GuiWebGround-v0 (--resets per row)",
    )
    parser.add_argument("--quick", action="store_true", help="--n 8 --steps 10 --resets 4 (overrides them)")
    args = parser.parse_args()
    if args.quick:
        args.n, args.steps, args.resets = 8, 10, 4
    console = Console(width=None if sys.stdout.isatty() else 150)  # no wrapping when piped to a file
    if args.env in ("all", "announce"):
        with progress_bars():
            told = announced(args.resets if args.env == "announce" else args.n)
        console.print(announced_table(told))
        if args.env == "announce":
            console.print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs", soft_wrap=True)
            return
    if args.env != "shop":
        with progress_bars():
            grounding = ground(args.resets if args.env == "ground" else args.n)
        console.print(ground_table(grounding))
        if args.env == "ground":
            console.print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs", soft_wrap=True)
            return
    cmp = Comparison()
    with progress_bars():
        rows = {**raw_playwright(args.n), **side_by_side(args.n), **guiweb(args.n)}
        try:
            if args.no_miniwob:
                raise ImportError("--no-miniwob")
            miniwob_side_by_side(args.steps, cmp)
            guiweb_miniwob_resets(args.resets, cmp)
        except ImportError as exc:  # the miniwob extra is missing
            cmp.notes.append(f"MiniWoB comparison skipped: {exc}")
        if args.no_miniwob:
            cmp.browsergym_error = "not measured: --no-miniwob"
        elif "gw_step" in cmp.rows:  # BrowserGym runs last, alone, after every in-process row
            browsergym(args.browsergym_python, args.resets, args.steps, cmp)
        elif cmp.browsergym_error is None:
            cmp.browsergym_error = "not measured: GuiWeb's MiniWoB env did not run"
    floor = statistics.median(rows["raw: click + screenshot (png)"])
    table = Table(title=f"GuiWeb speed, one process, one page, n={args.n} (ms)")
    same = pct(rows[SAME_WORK], 50)
    for col in ("measurement", "p50", "p90", "p50 / raw png floor", "p50 / same-work floor"):
        table.add_column(col, justify="left" if col == "measurement" else "right")
    for name, values in rows.items():
        table.add_row(
            name,
            f"{pct(values, 50):.1f}",
            f"{pct(values, 90):.1f}",
            f"{pct(values, 50) / floor:.2f}x",
            f"{pct(values, 50) / same:.2f}x",
        )
    console.print(table)
    step_ratio = pct(rows[CLICK_STEP], 50) / same
    reset = pct(next(v for k, v in rows.items() if k.startswith("GuiWeb warm reset (after")), 50)
    console.print(
        f"Click step / same-work floor (p50, measured alternately): {step_ratio:.2f}x, target <= {STEP_TARGET}x: "
        f"{'met' if step_ratio <= STEP_TARGET else 'NOT met'}. Warm reset p50 {reset:.0f} ms (after the agent acted), target "
        f"<= {RESET_TARGET_MS:.0f} ms: {'met' if reset <= RESET_TARGET_MS else 'NOT met'}.",
        soft_wrap=True,
    )
    console.print(comparison_table(cmp, args.resets, args.steps))
    for note in [*cmp.notes, *summary(cmp)]:
        console.print(note, soft_wrap=True)
    console.print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs", soft_wrap=True)


if __name__ == "__main__":
    main()
