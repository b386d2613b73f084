"""``GuiWeb-v0``: the bundled sites in a real Chromium, with seeded tasks judged from app state."""

from __future__ import annotations

import functools
import logging
import urllib.parse
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_envs.actions import Action
from gui_envs.browser import executor, observation
from gui_envs.browser.chromium import headless_for
from gui_envs.browser.observation import CHARSET, MAX_ELEMENTS_CHARS, MAX_TEXT, PageView
from gui_envs.browser.routing import NetLog, RouteTable, install_routing
from gui_envs.browser.session import BrowserSession, BrowserTimeoutError, SessionHandles
from gui_envs.browser.shared import ContextSession, SharedBrowser
from gui_envs.browser.site import SiteState
from gui_envs.errors import ResetNeededError
from gui_envs.tasks.base import PlanStep, Task, UnknownTaskError
from gui_envs.tasks.env import TaskEnv, task_rng
from gui_envs.verifiers.facts import web_record
from gui_envs.web.tasks import SITE_NAMES, SITES, TASKS, WebTask

logger = logging.getLogger(__name__)

__all__ = ["GuiWebEnv", "UnknownTaskError", "WebEnvBase"]


class WebEnvBase(gym.Env[dict[str, Any], Any]):
    """Browser plumbing shared by the web envs: session, hermetic routing, observation, executor.

    Subclasses provide ``_route_table()`` (origin -> request handler); :class:`GuiWebEnv` adds the task logic
    of :class:`~gui_envs.tasks.env.TaskEnv`, MiniWoB and the grounding env their own.
    """

    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 2}

    def __init__(
        self,
        viewport: tuple[int, int] = (1280, 720),
        headless: bool = True,
        timeout_s: float = 10.0,
        screenshot_format: str = "jpeg",
        som: bool = False,
        axtree: bool = False,
        render_mode: str | None = None,
        screenshots: bool = True,
        shared_browser: SharedBrowser | None = None,
    ) -> None:
        if render_mode not in (None, "rgb_array", "human"):
            raise ValueError(f"render_mode must be None, 'rgb_array' or 'human', got {render_mode!r}")
        if screenshot_format not in ("jpeg", "png"):
            raise ValueError(f"screenshot_format must be 'jpeg' or 'png', got {screenshot_format!r}")
        self.viewport = (int(viewport[0]), int(viewport[1]))
        # "human" is the browser window itself: the page the agent acts on, shown live.
        self.headless, self.timeout_s = headless_for(render_mode, headless), float(timeout_s)
        self.shared_browser = shared_browser
        self.screenshot_format, self.som, self.axtree = screenshot_format, som, axtree
        self.render_mode = render_mode
        # Text-only agents read ``elements`` alone; skipping the capture saves about 50 ms a step.
        self.screenshots = bool(screenshots)
        self._session: BrowserSession | ContextSession | None = None
        self._routes: RouteTable | None = None
        self._origins: frozenset[str] = frozenset()
        self._net = NetLog()
        self._view = PageView(url="about:blank", title="", elements=[])
        self._frame = np.zeros((self.viewport[1], self.viewport[0], 3), np.uint8)

    # ----- the session -----------------------------------------------------------------------------------
    def _route_table(self) -> RouteTable:
        raise NotImplementedError

    @property
    def origins(self) -> list[str]:
        """The origins the env serves (read once per browser session)."""
        return list(self._routes if self._routes is not None else self._route_table())

    def _ensure_session(self) -> BrowserSession | ContextSession:
        """The live session; launches one (first reset, or after a crash)."""
        if self._session is not None and not self._session.alive:
            self._session.close()
            self._session = None
        if self._session is None:
            # Built once per session, not per step: the executor checks every navigation against it.
            self._routes = self._route_table()
            self._origins = frozenset(self._routes)
            if self.shared_browser is not None:
                self._session = self.shared_browser.context(
                    setup=functools.partial(install_routing, table=self._routes, net=self._net),
                    viewport=self.viewport,
                    call_timeout_s=self.timeout_s,
                )
                return self._session
            self._session = BrowserSession(
                setup=functools.partial(install_routing, table=self._routes, net=self._net),
                viewport=self.viewport,
                headless=self.headless,
                call_timeout_s=self.timeout_s,
            )
        return self._session

    def _observe_in_thread(self, page: Any) -> tuple[PageView, bytes]:
        from playwright.sync_api import Error as PlaywrightError

        for attempt in range(3):
            try:
                view = observation.extract(page)
                break
            except PlaywrightError as exc:
                # A navigation that started late (a script's timer, a slow form) replaced the document
                # under us: wait for the new one and extract again.
                if attempt == 2 or "context was destroyed" not in str(exc):
                    raise
                page.wait_for_load_state("load", timeout=self.timeout_s * 1000)
        if not self.screenshots:
            return view, b""
        return view, observation.screenshot(page, self.screenshot_format)

    def _load(self, url: str) -> None:
        """Open ``url`` (reset), then observe."""

        def work(h: SessionHandles) -> tuple[PageView, bytes]:
            h.context.clear_cookies()
            # A new page per episode, whose first history entry is replaced by the start page: "back" can
            # reach neither an earlier episode's pages nor about:blank.
            page = h.fresh_page()
            with page.expect_navigation(wait_until="load"):
                page.evaluate("u => location.replace(u)", url)
            return self._observe_in_thread(h.page)

        session = self._ensure_session()
        self._absorb(*session.call(work))
        # While the agent acts, open the next episode's page on this origin (its renderer started, this
        # episode's old page closed), so that the next reset only navigates. A path no site routes: a 404 page,
        # served without touching the site's state; location.replace then drops it from the history.
        parts = urllib.parse.urlsplit(url)
        session.submit(functools.partial(SessionHandles.prepare_page, url=f"{parts.scheme}://{parts.netloc}/__next__"))

    def _act(self, action: Action, home_url: str) -> str | None:
        """Execute ``action`` and observe; returns the action error, if any."""
        view, origins = self._view, self._origins

        def work(h: SessionHandles) -> tuple[str | None, PageView, bytes]:
            blocked_before = self._net.blocked_documents
            error = executor.execute(h.page, action, view, self.viewport, origins, home_url)
            executor.settle(
                h.page, self.timeout_s * 1000, lambda: self._net.blocked_documents, blocked_before
            )
            return (error, *self._observe_in_thread(h.page))

        from playwright.sync_api import Error as PlaywrightError

        assert self._session is not None
        try:
            error, new_view, image = self._session.call(work)
        except BrowserTimeoutError as exc:
            error = f"the action timed out: {exc}"
            new_view, image = self._session.call(self._observe_in_thread_handles)
        except PlaywrightError as exc:
            # The session raises BrowserCrashedError (not a PlaywrightError) when the browser is gone; any
            # Playwright error left is this action's fault (arguments Playwright refused), so a no-op.
            error = f"the browser refused the action: {str(exc).splitlines()[0] if str(exc) else exc!r}"
            new_view, image = self._session.call(self._observe_in_thread_handles)
        self._absorb(new_view, image)
        return error

    def _observe_in_thread_handles(self, h: SessionHandles) -> tuple[PageView, bytes]:
        from playwright.sync_api import Error as PlaywrightError

        try:
            h.page.wait_for_load_state("load", timeout=self.timeout_s * 1000)
        except PlaywrightError:
            pass
        return self._observe_in_thread(h.page)

    def _absorb(self, view: PageView, image: bytes) -> None:
        self._view = view
        if image:
            self._frame = observation.decode(image, self.viewport)

    def _take_blocked(self) -> list[str]:
        blocked, self._net.blocked = self._net.blocked, []
        return blocked

    def _take_server_errors(self) -> list[str]:
        errors, self._net.server_errors = self._net.server_errors, []
        return errors

    # ----- shared observation pieces ------------------------------------------------------------------------
    def _base_spaces(self) -> dict[str, spaces.Space[Any]]:
        width, height = self.viewport
        out: dict[str, spaces.Space[Any]] = {
            "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
            "elements": spaces.Text(MAX_ELEMENTS_CHARS, min_length=0, charset=CHARSET),
            "url": spaces.Text(MAX_TEXT, min_length=0, charset=CHARSET),
            "instruction": spaces.Text(MAX_TEXT, min_length=0, charset=CHARSET),
        }
        if self.som:
            out["som"] = spaces.Box(0, 255, (height, width, 3), np.uint8)
        if self.axtree:
            out["axtree"] = spaces.Text(MAX_ELEMENTS_CHARS, min_length=0, charset=CHARSET)
        return out

    def _base_obs(self, instruction: str) -> dict[str, Any]:
        elements, text = observation.fit_elements(observation.public_elements(self._view, self.viewport))
        obs: dict[str, Any] = {
            "screenshot": self._frame.copy(),
            "elements": text,
            "url": observation.clean_text(self._view.url)[:MAX_TEXT],
            "instruction": observation.clean_text(instruction)[:MAX_TEXT],
        }
        if self.som:
            obs["som"] = observation.draw_marks(self._frame, elements)
        if self.axtree:
            obs["axtree"] = observation.axtree_text(elements, self._view.title)[:MAX_ELEMENTS_CHARS]
        return obs

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """The last screenshot, (H, W, 3) uint8, when ``render_mode="rgb_array"``."""
        return self._frame.copy() if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        super().close()

    def __del__(self) -> None:
        # The session's own finalizer also runs at garbage collection; this makes the order explicit.
        session = getattr(self, "_session", None)
        if session is not None:
            session.close()

    @property
    def browser_pid(self) -> int | None:
        """PID of the Chromium browser process (``None`` before the first reset)."""
        return self._session.browser_pid if self._session is not None else None


class GuiWebEnv(TaskEnv, WebEnvBase):
    """Live web tasks on the bundled Shop, Forum and Classifieds sites, in a real Chromium.

    Each env owns one Chromium (launched on the first ``reset``, reused afterwards) driven from a worker thread,
    so the env works inside a running asyncio loop and from any thread. The sites run in-process: Playwright
    request routing answers ``http://{shop,forum,classifieds}.guigym.test`` from Python with per-env SQLite
    state; every other origin is aborted and listed in ``info["blocked_requests"]``.

    **Observation** (``spaces.Dict``):

    * ``screenshot``: ``Box(0, 255, (H, W, 3), uint8)``, the viewport (default ``W, H = 1280, 720`` pixels);
    * ``elements``: ``Text``, a JSON list of the visible elements, each ``{"id", "role", "text", "value",
      "bbox": [x0, y0, x1, y1] (screenshot pixels), "clickable", "tag", "type" (input type or ""),
      "options" (a select's option texts, else [])}``; decode with
      :func:`gui_envs.browser.observation.parse_elements`. Ids are stable within a page;
    * ``url`` and ``instruction``: ``Text``; ``step``: ``Discrete(max_steps + 1)``, steps taken;
    * ``som`` (``som=True``): the screenshot with Set-of-Marks boxes and ids drawn;
    * ``axtree`` (``axtree=True``): a compact accessibility-tree text, one line per element.

    **Action**: :class:`~gui_envs.actions.ActionSpace` (viewport-sized); Action JSON or GUI-R1 text, and
    :class:`~gui_envs.actions.Action` objects and dicts directly. Every web action of the shared schema is
    supported (see :mod:`gui_envs.browser.executor`); ``stop`` ends the episode, optionally with an ``answer``.
    Arguments are checked before they reach the browser (:class:`~gui_envs.actions.Action`: field types,
    coordinates, ``type`` text at most :data:`~gui_envs.actions.MAX_TYPED_TEXT` characters); whatever
    ``step`` is given, it returns, at worst with an ``action_error`` no-op. A site handler that fails
    answers a 500 page, listed in ``info["server_errors"]``.

    **Reward**: the task's score in [0, 1] when the episode ends (``stop``, or a state task's goal reached),
    else 0; an action that is malformed, out of the viewport, or fails costs ``invalid_action_penalty``
    and is a no-op (``info["action_error"]`` says why). Success is judged from app state, the final URL or the
    stop answer, never from the agent's words alone.

    **Episode end**: ``terminated`` on ``stop`` or when a state task's goal holds; ``truncated`` after
    ``max_steps`` steps. A crashed or killed browser raises
    :class:`~gui_envs.browser.session.BrowserCrashedError` from ``step``; the next ``reset`` relaunches it.
    ``step`` before the first ``reset`` raises :class:`~gui_envs.errors.ResetNeededError`.

    **Info** (every step): ``task``, ``task_seed``, ``instruction``, ``success``, ``score``, ``action_error``,
    ``blocked_requests``, ``server_errors`` (one line per site handler that failed with a 500 page since the
    last step), ``action_bbox`` (pixels; the bbox of the element this step's action targeted by id, if any),
    ``url``.

    **Privileged** (:meth:`privileged`, for rewards, wrappers and trainers; never in ``info``):
    ``reference_answer``, ``target_bbox`` (bbox in pixels of the element the oracle would act on next;
    ``None`` when its next action has no target), ``oracle_error``.

    **Reset**: ``reset(seed=s, options={"task": name, "seed": task_seed})``. Without ``"task"`` a template is
    drawn from the env's pool with the env's generator; a ``"task"`` may name any web template, and an unknown
    one raises :class:`~gui_envs.tasks.base.UnknownTaskError`. The task seed fixes both the site content and the task
    parameters. Warm resets restore the SQLite state from a cached seeded template and reload the start page.

    Version history: v0, initial release.

    Args:
        sites: which sites' tasks form the pool.
        tasks: explicit template names (overrides ``sites``).
        max_steps: truncation limit in steps.
        invalid_action_penalty: subtracted from the reward for an action that was a no-op because of a mistake.
        viewport: ``(width, height)`` in pixels.
        headless: run Chromium headless.
        timeout_s: per-action browser timeout in seconds (a timeout becomes an action error).
        screenshot_format: ``jpeg`` (default; faster) or ``png`` (lossless).
        som: add the ``som`` observation.
        axtree: add the ``axtree`` observation.
        render_mode: ``None``, ``"rgb_array"``, or ``"human"`` (a headed browser window where a display
            exists; headless otherwise).
        screenshots: capture the viewport after every action (default). ``False`` leaves ``screenshot``
            black, for text-only agents that read ``elements``; it saves the capture (about 50 ms a step).
        shared_browser: open a context on this :class:`~gui_envs.browser.shared.SharedBrowser` instead of
            launching a browser (N envs, one Chromium; :mod:`gui_envs.multi` does so).
    """

    family = "web"
    registry = TASKS
    rng_salt = 7

    def __init__(
        self,
        sites: Sequence[str] = SITE_NAMES,
        tasks: Sequence[str] | None = None,
        max_steps: int = 30,
        invalid_action_penalty: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        unknown = [s for s in sites if s not in SITES]
        if unknown:
            raise ValueError(f"unknown sites {unknown}; choose from {list(SITES)}")
        names = list(tasks) if tasks is not None else sorted(n for n, t in TASKS.items() if t.site in sites)
        self.states = {host: SiteState(site) for host, site in SITES.items()}
        self._init_tasks(names, max_steps, invalid_action_penalty)

    def _route_table(self) -> RouteTable:
        return {state.site.origin: state.handle for state in self.states.values()}

    @property
    def home_url(self) -> str:
        """The task's start page (its site's origin + ``start_path``)."""
        task = self.task
        if not isinstance(task, WebTask):
            raise ResetNeededError("call reset() first: there is no task yet")
        return self.states[task.site].site.origin + task.start_path

    # ----- the task env's hooks ---------------------------------------------------------------------------
    def _begin(self, cls: type[Task], seed: int) -> Task:
        for state in self.states.values():
            state.restore(seed)
        return cls(self.states[cls.site], task_rng(seed, self.rng_salt))  # type: ignore[attr-defined]

    def _open(self) -> None:
        self._load(self.home_url)

    def _perform(self, action: Action) -> str | None:
        return self._act(action, self.home_url)

    def _location(self) -> str:
        return self._view.url

    def _plan_view(self) -> PageView:
        return self._view

    @property
    def screen_size(self) -> tuple[int, int]:
        return self.viewport

    def _target_bbox(self, step: PlanStep, action: Action, view: PageView) -> list[int] | None:
        el = view.by_id(action.element_id) if action.element_id is not None else None
        return observation.clip_bbox(el["bbox"], self.viewport) if el is not None else None

    def _action_info(self, parsed: Action | None) -> dict[str, Any]:
        target = self._view.by_id(parsed.element_id) if parsed is not None and parsed.element_id else None
        return {"action_bbox": observation.clip_bbox(target["bbox"], self.viewport) if target is not None else None}

    def _screen_info(self) -> dict[str, Any]:
        return {
            "blocked_requests": self._take_blocked(),
            "server_errors": self._take_server_errors(),
            "url": self._view.url,
        }

    def _drop_reports(self) -> None:
        self._take_blocked()
        self._take_server_errors()

    def _privileged_extras(self) -> dict[str, Any]:
        """The verifiers' record of this state: site facts, the visible elements and the URL."""
        elements = observation.public_elements(self._view, self.viewport)
        return {"verifier_record": web_record(self.states, elements, self._view.url)}
