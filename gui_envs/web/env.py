"""``GuiWeb-v0``: the bundled sites in a real Chromium, with seeded tasks judged from app state."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from gui_envs.actions import Action
from gui_envs.browser import observation
from gui_envs.browser.chromium import headless_for
from gui_envs.browser.observation import CHARSET, MAX_ELEMENTS_CHARS, MAX_TEXT, PageView
from gui_envs.browser.page import HermeticBrowser, Session
from gui_envs.browser.prefetch import PagePair
from gui_envs.browser.routing import RouteTable
from gui_envs.browser.session import SessionHandles
from gui_envs.browser.shared import SharedBrowser
from gui_envs.browser.site import SiteState
from gui_envs.errors import ResetNeededError
from gui_envs.tasks.base import PlanStep, Task, UnknownTaskError
from gui_envs.tasks.env import ScreenEnv, TaskEnv, task_rng
from gui_envs.verifiers.facts import web_record
from gui_envs.web.tasks import SITE_NAMES, SITES, TASKS, WebTask

logger = logging.getLogger(__name__)

__all__ = ["GuiWebEnv", "UnknownTaskError", "WebEnvBase"]


class WebEnvBase(ScreenEnv):
    """Browser plumbing shared by the web envs: a :class:`~gui_envs.browser.page.HermeticBrowser` and the
    observation pieces.

    Subclasses provide ``_route_table()`` (origin -> request handler); :class:`GuiWebEnv` adds the task logic
    of :class:`~gui_envs.tasks.env.TaskEnv`, MiniWoB and the grounding env their own.
    """

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
        self._init_screen(render_mode, screenshots)
        if screenshot_format not in ("jpeg", "png"):
            raise ValueError(f"screenshot_format must be 'jpeg' or 'png', got {screenshot_format!r}")
        self.viewport = (int(viewport[0]), int(viewport[1]))
        # "human" is the browser window itself: the page the agent acts on, shown live.
        self.headless, self.timeout_s = headless_for(render_mode, headless), float(timeout_s)
        self.screenshot_format, self.som, self.axtree = screenshot_format, som, axtree
        self._browser = HermeticBrowser(self.viewport, self.headless, self.timeout_s, shared=shared_browser)
        self._view = PageView(url="about:blank", title="", elements=[])
        self._frame = np.zeros((self.viewport[1], self.viewport[0], 3), np.uint8)

    # ----- the browser -------------------------------------------------------------------------------------
    def _route_table(self) -> RouteTable:
        raise NotImplementedError

    def _session_setup(self) -> Callable[[SessionHandles], None] | None:
        """What runs in the browser thread after a launch instead of routing :meth:`_route_table` (``None``); it
        must not hold the env (the browser thread would keep it alive)."""
        return None

    @property
    def origins(self) -> list[str]:
        """The origins the env serves."""
        return list(self._route_table())

    @property
    def _session(self) -> Session | None:
        return self._browser.session

    def _ensure_session(self) -> Session:
        """The live session; opens one (first reset, or after a crash)."""
        return self._browser.ensure(self._route_table, self._session_setup())

    def _page_observer(self) -> Callable[[Any], tuple[PageView, bytes]]:
        """``observe(page)`` with this env's settings, holding no reference to the env."""
        image_format = self.screenshot_format if self.screenshots else None
        return functools.partial(observation.observe, timeout_ms=self.timeout_s * 1000, image_format=image_format)

    def _observe_in_thread(self, page: Any) -> tuple[PageView, bytes]:
        return self._page_observer()(page)

    def _load(self, url: str) -> None:
        """Open ``url`` on a fresh page (reset), then observe."""
        self._absorb(*self._browser.open(self._ensure_session(), url, self._page_observer()))

    def _act(self, action: Action, home_url: str) -> str | None:
        """Execute ``action`` and observe; returns the action error, if any."""
        error, view, image = self._browser.act(action, self._view, home_url, self._page_observer())
        self._absorb(view, image)
        return error

    def _absorb(self, view: PageView, image: bytes) -> None:
        self._view = view
        if image:
            self._frame = observation.decode(image, self.viewport)

    def _take_blocked(self) -> list[str]:
        return self._browser.take_blocked()

    def _take_server_errors(self) -> list[str]:
        return self._browser.take_server_errors()

    def _release(self) -> None:
        browser = getattr(self, "_browser", None)
        if browser is not None:
            browser.close()

    @property
    def browser_pid(self) -> int | None:
        """PID of the Chromium browser process (``None`` before the first reset)."""
        return self._browser.browser_pid

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


class GuiWebEnv(TaskEnv, WebEnvBase):
    """Live web tasks on the bundled Shop, Forum and Classifieds sites, in a real Chromium.

    Each env owns one Chromium (launched on the first ``reset``, reused afterwards; with ``shared_browser``, two
    contexts on that browser instead) driven from a worker thread, so the env works inside a running asyncio loop and from any thread. The sites run in-process: Playwright
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

    **Reward, episode end, info, privileged, reset**: as :class:`~gui_envs.tasks.env.TaskEnv` says, and: a crashed
    or killed browser raises :class:`~gui_envs.browser.session.BrowserCrashedError` from ``step`` (the next
    ``reset`` relaunches it); ``info`` adds ``blocked_requests``, ``server_errors`` (one line per site handler
    that failed with a 500 page since the last step), ``action_bbox`` (pixels; the bbox of the element this
    step's action targeted by id, if any) and ``url``. A warm reset restores the SQLite state from a cached
    seeded template and shows the start page on a page without history. The episode the next ``reset()``
    without a seed will draw is prepared while the agent acts (:mod:`gui_envs.browser.prefetch`: a second
    context and copy of the sites), so that reset only swaps it in.

    Version history: v0, initial release.

    Args:
        sites: which sites' tasks form the pool; ``tasks``, ``max_steps``, ``invalid_action_penalty``: see
            :class:`~gui_envs.tasks.env.TaskEnv`.
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
        shared_browser: open the env's contexts (the episode's and the prepared one's) on this
            :class:`~gui_envs.browser.shared.SharedBrowser` instead of launching a browser (N envs, one Chromium;
            :mod:`gui_envs.multi` does so); ``close`` closes only those contexts.
    """

    family, registry, rng_salt = "web", TASKS, 7
    group_kind, group_names, group_attr = "sites", SITE_NAMES, "site"

    def __init__(self, sites: Sequence[str] = SITE_NAMES, **kwargs: Any) -> None:
        super().__init__(sites, **kwargs)
        # Two copies of the sites: the episode's, and the next one's, prepared while the agent acts.
        owners = tuple({host: SiteState(site) for host, site in SITES.items()} for _ in range(2))
        self._pair = PagePair(owners, _site_routes, self._page_observer())  # type: ignore[arg-type]

    @property
    def states(self) -> dict[str, SiteState]:
        """The sites' live state of this episode, by host."""
        return self._pair.active.owner

    def _route_table(self) -> RouteTable:
        return _site_routes(self.states)

    def _session_setup(self) -> Callable[[SessionHandles], None]:
        # Both sides serve what a subclass adds to the table; the sites' origins each from its own databases.
        return functools.partial(self._pair.install, shared=self._route_table())

    @property
    def home_url(self) -> str:
        """The task's start page (its site's origin + ``start_path``)."""
        task = self.task
        if not isinstance(task, WebTask):
            raise ResetNeededError("call reset() first: there is no task yet")
        return self.states[task.site].site.origin + task.start_path

    # ----- the task env's hooks ---------------------------------------------------------------------------
    def _begin(self, cls: type[Task], seed: int) -> Task:
        build = functools.partial(_build_episode, cls, seed, self.rng_salt)
        swap = functools.partial(self._pair.swap, key=(cls.name, seed), build=build)
        task, self._opened = self._ensure_session().call(swap)
        self._browser.net = self._pair.active.net
        return task

    def _open(self) -> None:
        self._absorb(*self._opened)
        # The next reset() without a seed draws this episode from the env's generator: prepare it meanwhile.
        cls, seed = self._next_episode()
        build = functools.partial(_build_episode, cls, seed, self.rng_salt)
        self._pair.prepare(self._ensure_session(), (cls.name, seed), build)

    def _perform(self, action: Action) -> str | None:
        return self._act(action, self.home_url)

    def _location(self) -> str:
        return self._view.url

    def _plan_view(self) -> PageView:
        return self._view

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

    def _privileged_extras(self) -> dict[str, Any]:
        """The verifiers' record of this state: site facts, the visible elements and the URL."""
        elements = observation.public_elements(self._view, self.viewport)
        return {"verifier_record": web_record(self.states, elements, self._view.url)}


def _site_routes(states: dict[str, SiteState]) -> RouteTable:
    return {state.site.origin: state.handle for state in states.values()}


def _build_episode(cls: type[Task], seed: int, salt: int, states: dict[str, SiteState]) -> tuple[Task, str]:
    """Restore every site to ``seed`` and build the task on its site; returns the task and its start URL."""
    for state in states.values():
        state.restore(seed)
    site = states[cls.site]  # type: ignore[attr-defined]
    task = cls(site, task_rng(seed, salt))
    return task, site.site.origin + task.start_path  # type: ignore[attr-defined]
