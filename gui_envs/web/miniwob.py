"""``GuiWeb-MiniWoB-<task>-v0``: the MiniWoB++ tasks of the ``miniwob`` package, in the GuiWeb session.

The package's ``html/`` folder is served through the same hermetic request routing as the bundled sites, at
``http://miniwob.guigym.test/``; nothing else is reachable. Episodes start through MiniWoB's own page hooks,
exactly as its Python environment (``miniwob.selenium_instance.SeleniumInstance.begin_task``) does:
``Math.seedrandom(<seed as a JS number>)``, ``core.setDataMode("train")``, then ``core.startEpisodeReal()``,
so ``reset(seed=s)`` is MiniWoB's own episode for the number ``s`` (seedrandom reads the number ``0`` and the
string ``"0"`` as different seeds). The episode timer (``core.EPISODE_MAX_TIME``, 10 s by default) is lifted
so that slow agents are not cut off by the page. The reward is the page's raw reward (``WOB_RAW_REWARD_GLOBAL``,
what ``miniwob``'s ``get_raw_reward`` processor returns) once ``WOB_DONE_GLOBAL`` is set: with the clock lifted,
the page's time-discounted ``WOB_REWARD_GLOBAL`` differs from it only by wall-clock noise (about 1e-6).
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gymnasium import spaces

from gui_envs.browser.observation import RESTART_ELEMENT_IDS_JS, PageView
from gui_envs.browser.session import SessionHandles
from gui_envs.browser.site import Request, Response, origin
from gui_envs.schema.action_space import ActionSpace
from gui_envs.schema.actions import coerce_action
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import SEED, guarded_reset, guarded_step
from gui_envs.web.env import WebEnvBase
from gui_envs.web.miniwob_tasks import MINIWOB_TASKS

MINIWOB_ORIGIN = origin("miniwob")
#: The lifted episode timer: setTimeout's largest delay (about 24.8 days), in ms.
NO_TIMEOUT_MS = 2**31 - 1
#: Default viewport (width, height) in pixels. MiniWoB's task area is 160 x 210 at the top left, but jQuery UI
#: dialogs and menus are placed against the window: at 160 x 210 ``click-dialog`` opens its dialog off-screen
#: and scrolls the page sideways. MiniWoB's own Chrome window is 500 x 320; 500 x 400 also holds the tallest
#: pop-ups (checked on click-dialog, click-dialog-2, click-menu, use-autocomplete, choose-date, social-media).
DEFAULT_VIEWPORT = (500, 400)
#: The page parts that are not the task, left out of ``elements`` exactly as MiniWoB's own DOM reader
#: (``core.getDOMInfo`` in ``core/core.js``) leaves them out: the stats panel ("Last reward:", "Time left:",
#: "Episodes done:"), the cover shown between episodes, the click-tracking canvas, and the query (the
#: observation's ``instruction`` already holds it).
MINIWOB_NOT_TASK = "#reward-display, #sync-task-cover, #click-canvas, #query"


class MiniWoBNotInstalledError(ImportError):
    """The ``miniwob`` package is missing; ``pip install 'guigym[miniwob]'`` installs it."""


def miniwob_html_dir() -> Path:
    """The ``html`` folder of the installed ``miniwob`` package (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("miniwob")
    if spec is None or spec.origin is None:
        raise MiniWoBNotInstalledError(
            "GuiWeb-MiniWoB-* needs the MiniWoB++ pages from the 'miniwob' package: pip install 'guigym[miniwob]'"
        )
    return Path(spec.origin).parent / "html"


def static_handler(root: Path) -> Callable[[Request], Response]:
    """Serve files under ``root`` (GET only; no directory listing; paths cannot escape ``root``)."""
    base = root.resolve()

    def handle(request: Request) -> Response:
        target = (base / request.path.lstrip("/")).resolve()
        if request.method != "GET" or base not in target.parents or not target.is_file():
            return Response.not_found("file")
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        return Response(body=target.read_bytes(), headers={"content-type": kind})

    return handle


# The seed travels as a JSON number, so seedrandom sees what ``Math.seedrandom(0)`` (miniwob's
# ``f"Math.seedrandom({repr(seed)});"``) sees.
#: Starts MiniWoB's episode in a loaded task page; called with ``[seed, data mode, episode time limit in ms]``.
START_JS = """([seed, mode, maxTime]) => {
  Math.seedrandom(seed);
  core.setDataMode(mode);
  core.EPISODE_MAX_TIME = maxTime;
  if (core.EP_TIMER !== null) { clearTimeout(core.EP_TIMER); core.EP_TIMER = null; }
  core.startEpisodeReal();
  // The clock is lifted, so its countdown says nothing, and a ticking number would make two resets with one seed
  // look different: show MiniWoB's idle '-' instead.
  core.clearTimer();
  return WOB_TASK_READY;
}"""
# An agent may navigate away from the task page (back to about:blank, say): that page has no MiniWoB globals,
# and reads as "not done" rather than as a script error escaping ``step``. The natural-language tasks (``*-nl``)
# return their utterance as ``{utterance, fields}``; the instruction is the sentence only (the fields are the
# task's parse of it, which MiniWoB's own checker reads).
#: Reads the page's episode state: ``{done, reward, raw, reason, utterance, ready}``.
STATE_JS = """() => typeof WOB_DONE_GLOBAL === 'undefined'
  ? {done: false, reward: 0, raw: 0, reason: null, utterance: '', ready: true}
  : ({done: WOB_DONE_GLOBAL, reward: WOB_REWARD_GLOBAL, raw: WOB_RAW_REWARD_GLOBAL,
  reason: WOB_REWARD_REASON == null ? null : String(WOB_REWARD_REASON), utterance: (u => typeof u === 'string' ? u : String((u && u.utterance) || ''))(core.getUtterance()),
  ready: typeof WOB_TASK_READY === 'undefined' ? true : WOB_TASK_READY})"""


#: Registered tasks whose page changes by itself while the agent does nothing (prices that tick, a caret that
#: blinks). ``clock="auto"`` runs these on a virtual clock.
TIME_DRIVEN_TASKS = frozenset({"stock-market", "terminal"})
#: The virtual clock's start, in seconds since the Unix epoch (2024-01-01T00:00:00Z): a fixed date, so that a
#: page that prints today's date prints the same one in every episode.
VIRTUAL_EPOCH_S = 1_704_067_200
#: Virtual seconds between installing the clock and starting the episode: room for the page load (real time
#: flows until the clock is paused), then a jump to a fixed instant, so every episode starts at the same time.
VIRTUAL_LOAD_S = 30


class MiniWoBEnv(WebEnvBase):
    """One MiniWoB++ task in Chromium, with GuiWeb's observation and action interface.

    **Observation**: ``Dict`` with ``screenshot`` ``Box(0, 255, (H, W, 3), uint8)`` (default viewport
    ``500 x 400`` pixels, :data:`DEFAULT_VIEWPORT`: MiniWoB's 160 x 210 task area at the top left plus room for
    the pop-ups its tasks place against the window), ``elements`` (JSON ``Text``: the task area's elements; the
    stats panel and the query are left out as MiniWoB's own DOM reader leaves them out, :data:`MINIWOB_NOT_TASK`),
    ``url``, ``instruction`` (the task's utterance) and ``step`` (``Discrete(max_steps + 1)``).

    **Reset**: ``reset(seed=s)`` starts MiniWoB's own episode for the number ``s`` (the page is seeded as the
    ``miniwob`` package seeds it); ``options={"seed": t}`` overrides it; without either a seed is drawn from the
    env's generator. ``info["seed"]`` is the seed used. The page scroll is reset in both axes.

    **Action**: :class:`~gui_envs.schema.action_space.ActionSpace`: Action JSON / GUI-R1 JSON or ``Action`` objects.

    **Reward**: the page's raw reward ``WOB_RAW_REWARD_GLOBAL`` (in [-1, 1]; MiniWoB gives -1 for a wrong final
    answer) when the page reports ``WOB_DONE_GLOBAL``; 0 before. Not the time-discounted ``WOB_REWARD_GLOBAL``:
    the episode clock is lifted, so its discount is ``1 - elapsed / (2**31 - 1) ms``, about 1e-6 of wall-clock
    noise that made equal outcomes unequal, and GRPO's group normalisation (``std + 1e-6``) turned that noise
    into advantages of +-1 in groups where every episode succeeded. A malformed or out-of-viewport action costs
    ``invalid_action_penalty``. ``info["success"]`` is ``raw reward > 0``.

    **Episode end**: ``terminated`` when the page says done or on ``stop``; ``truncated`` after ``max_steps``.

    **Info**: ``task``, ``instruction``, ``seed``, ``success``, ``score``, ``raw_reward``, ``reason`` (the
    page's reward reason, ``None`` when it gives none), ``action_error``, ``blocked_requests``, ``url``.

    Version history: v0, initial release; default viewport 500 x 400 (was 160 x 210), episodes seeded with
    the number as ``miniwob`` does (was a string drawn from another generator); ``elements`` without the stats
    panel and the query (as ``core.getDOMInfo``); the reward is the raw reward (was the time-discounted one).

    Args:
        task: the MiniWoB task name (``click-test``, ``enter-text``, ...; see :data:`MINIWOB_TASKS`).
        max_steps: truncation limit in steps.
        invalid_action_penalty: subtracted for an action that was a no-op because of a mistake.
        viewport: ``(width, height)`` in pixels.
        data_mode: MiniWoB's data mode (``core.setDataMode``); ``"train"`` as in ``miniwob``'s own env.
        reload_page: load the task page afresh at every reset (default), so that ``reset(seed=s)`` always gives the
            same observation (gymnasium's ``check_env``); ``False`` starts the next episode in the loaded page,
            as MiniWoB's own env does: resets about 4x faster (54 against 218 ms on click-tab, 2 cores), but on
            some pages the screenshot of one seed drifts by a level in a few antialiased pixels. A virtual clock
            always reloads.
        clock: ``"real"``: the page's timers run in wall time, as in MiniWoB's own env, so what a step shows on
            a time-driven page depends on how long the agent took. ``"virtual"``: the page's clock (``Date``,
            timers, animation frames; Playwright's ``page.clock``) stands still while the agent thinks and
            advances by ``step_time_ms`` after each action, before the observation, so one seed and one action
            sequence give one episode (gymnasium's ``check_env``) and a slow model is not penalised; the page's
            date is :data:`VIRTUAL_EPOCH_S`. ``"auto"`` (default): virtual for :data:`TIME_DRIVEN_TASKS`, real
            for the rest (whose pages do not change between actions). A ``wait`` action advances the same
            ``step_time_ms``, whatever its ``duration``.
        step_time_ms: page time that passes per step under the virtual clock, in milliseconds (default 1000:
            stock-market's price ticks 10 times per step).
        **kwargs: :class:`~gui_envs.web.env.WebEnvBase` options (viewport, headless, ...).
    """

    skip_elements = MINIWOB_NOT_TASK

    def __init__(
        self,
        task: str = "click-test",
        max_steps: int = 20,
        invalid_action_penalty: float = 0.01,
        viewport: tuple[int, int] = DEFAULT_VIEWPORT,
        data_mode: str = "train",
        reload_page: bool = True,
        clock: str = "auto",
        step_time_ms: int = 1000,
        **kwargs: Any,
    ) -> None:
        if task not in MINIWOB_TASKS:
            import difflib

            close = difflib.get_close_matches(task, MINIWOB_TASKS, n=3)
            raise ValueError(
                f"unknown MiniWoB task {task!r}." + (f" Did you mean {', '.join(close)}?" if close else "")
            )
        if clock not in ("auto", "real", "virtual"):
            raise ValueError(f"clock={clock!r}: use 'auto', 'real' or 'virtual'")
        if not (isinstance(step_time_ms, int) and step_time_ms > 0):
            raise ValueError(f"step_time_ms must be an int > 0 (milliseconds), got {step_time_ms!r}")
        super().__init__(viewport=viewport, **kwargs)
        self.virtual_clock = clock == "virtual" or (clock == "auto" and task in TIME_DRIVEN_TASKS)
        self.step_time_ms = step_time_ms
        self.html_dir = miniwob_html_dir()
        self.task_name, self.max_steps = task, int(max_steps)
        self.data_mode = str(data_mode)
        self.reload_page = bool(reload_page)
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.observation_space = spaces.Dict(
            {**self._base_spaces(), "step": spaces.Discrete(self.max_steps + 1)}
        )
        self.action_space = ActionSpace(self.viewport)
        self._steps = 0
        self._utterance = ""
        self._seed: int | None = None
        self._handler = static_handler(self.html_dir)

    @property
    def task_url(self) -> str:
        return f"{MINIWOB_ORIGIN}/miniwob/{self.task_name}.html"

    def _route_table(self) -> dict[str, Callable[[Request], Response]]:
        return {MINIWOB_ORIGIN: self._handler}

    reset_options = MappingProxyType({"seed": SEED})

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        episode_seed = (options or {}).get("seed", seed)
        if episode_seed is None:
            episode_seed = int(self.np_random.integers(2**31 - 1))
        episode_seed = int(episode_seed)
        self._seed = episode_seed
        self._steps = 0
        self._browser.take_blocked()
        url = self.task_url
        observe = super()._page_observer()  # the episode's start, before any step's time has passed

        def work(h: SessionHandles) -> tuple[Any, ...]:
            # Reuse the loaded task page (MiniWoB regenerates the problem on each start); load it otherwise.
            # By default each episode starts on a freshly loaded page: on a reused one Chromium's raster of some pages
            # (jQuery UI tabs, accordions) drifts by a level at antialiased corners after a few episodes, so one
            # seed would not give one screenshot. reload_page=False reuses the page (about 4x faster resets).
            if self.virtual_clock:
                # Installed afresh before each load: the new document starts from the same instant.
                h.page.clock.install(time=VIRTUAL_EPOCH_S)
            if (self.reload_page or self.virtual_clock or h.page.url != url
                    or not h.page.evaluate("() => typeof core !== 'undefined'")):  # fmt: skip
                h.page.goto(url, wait_until="load")
            if self.virtual_clock:
                h.page.clock.pause_at(VIRTUAL_EPOCH_S + VIRTUAL_LOAD_S)
            h.page.evaluate(START_JS, [episode_seed, self.data_mode, NO_TIMEOUT_MS])
            # Polled by interval, not by animation frame: a paused virtual clock draws no frames.
            h.page.wait_for_function(
                "() => WOB_TASK_READY !== false", timeout=self.timeout_s * 1000, polling=20
            )
            # startEpisodeReal resets only the vertical scroll; a dialog of the last episode may have moved
            # the page sideways.
            h.page.evaluate("() => window.scrollTo(0, 0)")
            h.page.evaluate(RESTART_ELEMENT_IDS_JS)  # a reused page numbers its elements as a fresh load does
            state = h.page.evaluate(STATE_JS)
            return state, *observe(h.page)

        state, view, image = self._ensure_session().call(work)
        self._absorb(view, image)
        self._utterance = state["utterance"]
        return self._obs(), self._info(None, state)

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        self._steps += 1
        parsed, error = coerce_action(action)
        stop = parsed is not None and parsed.type == "stop"
        if parsed is not None and not stop:
            error = self._act(parsed, self.task_url)
        if self._session is None:
            raise ResetNeededError("call reset() before step()")
        state = self._session.call(lambda h: h.page.evaluate(STATE_JS))
        reward = float(state["raw"]) if state["done"] else 0.0
        if error:
            reward -= self.invalid_action_penalty
        terminated = bool(state["done"]) or stop
        truncated = not terminated and self._steps >= self.max_steps
        return self._obs(), reward, terminated, truncated, self._info(error, state)

    def _obs(self) -> dict[str, Any]:
        obs = self._base_obs(self._utterance)
        obs["step"] = min(self._steps, self.max_steps)
        return obs

    def _info(self, error: str | None, state: dict[str, Any]) -> dict[str, Any]:
        return {
            "task": self.task_name,
            "instruction": self._utterance,
            "seed": self._seed,
            "success": bool(state["done"]) and float(state["raw"]) > 0,
            "score": max(0.0, float(state["raw"])) if state["done"] else 0.0,
            "raw_reward": float(state["raw"]),
            "reason": state["reason"],
            "action_error": error,
            "blocked_requests": self._browser.take_blocked(),
            "url": self._view.url,
        }

    def privileged(self) -> dict[str, Any]:
        """MiniWoB's page judges itself and names no target: ``target_bbox`` is ``None`` (reward wrappers
        pass the page's reward through); see :mod:`gui_envs.schema.privileged`."""
        return {"target_bbox": None}

    def _page_observer(self) -> Callable[[Any], tuple[PageView, bytes]]:
        """The base observer; under the virtual clock a step's ``step_time_ms`` passes first (timers fire in
        order), so the observation shows the page that much later, whatever the wall time."""
        observe = super()._page_observer()
        if not self.virtual_clock:
            return observe
        step_ms = self.step_time_ms

        def advance_then_observe(page: Any) -> tuple[PageView, bytes]:
            page.clock.run_for(step_ms)
            return observe(page)

        return advance_then_observe


__all__ = ["MINIWOB_TASKS", "MiniWoBEnv", "MiniWoBNotInstalledError"]
