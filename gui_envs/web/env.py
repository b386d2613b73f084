"""``GuiWeb-v0``: the bundled sites in a real Chromium, with seeded tasks judged from app state."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from gui_envs.browser import observation
from gui_envs.browser.observation import PageView
from gui_envs.browser.page import HermeticBrowser, Session
from gui_envs.browser.prefetch import PreparedResets
from gui_envs.browser.routing import RouteTable
from gui_envs.browser.site import SiteState
from gui_envs.schema.actions import Action
from gui_envs.schema.errors import ResetNeededError
from gui_envs.tasks.base import PlanStep, Task, UnknownTaskError
from gui_envs.tasks.env import ScreenEnv, TaskEnv, task_rng
from gui_envs.verifiers.facts import web_record
from gui_envs.web.tasks import SITE_NAMES, SITES, TASKS, WebTask

logger = logging.getLogger(__name__)

__all__ = ["GuiWebEnv", "UnknownTaskError", "WebEnvBase"]


class WebEnvBase(ScreenEnv):
    """Browser plumbing shared by the web envs: a :class:`~gui_envs.browser.page.HermeticBrowser` and the page's
    observation. Subclasses provide ``_route_table()`` (origin -> request handler); :class:`GuiWebEnv` adds the
    task logic of :class:`~gui_envs.tasks.env.TaskEnv`, MiniWoB and the grounding env their own.

    Args:
        viewport: ``(width, height)`` in pixels.
        screenshot_format: ``jpeg`` (default; faster) or ``png`` (lossless).
        som, axtree: add the ``som`` / ``axtree`` observation.
        **screen: ``headless``, ``timeout_s``, ``render_mode``, ``screenshots``, ``shared_browser``: see
            :class:`~gui_envs.tasks.env.ScreenEnv`.
    """

    def __init__(
        self,
        viewport: tuple[int, int] = (1280, 720),
        screenshot_format: str = "jpeg",
        som: bool = False,
        axtree: bool = False,
        **screen: Any,
    ) -> None:
        super().__init__(**screen)
        if screenshot_format not in ("jpeg", "png"):
            raise ValueError(f"screenshot_format must be 'jpeg' or 'png', got {screenshot_format!r}")
        self.viewport = (int(viewport[0]), int(viewport[1]))
        self.screenshot_format, self.som, self.axtree = screenshot_format, som, axtree
        self._browser = HermeticBrowser(self.viewport, self.headless, self.timeout_s, shared=self.shared_browser)
        self._view = PageView(url="about:blank", title="", elements=[])
        self._frame = np.zeros((self.viewport[1], self.viewport[0], 3), np.uint8)

    def _route_table(self) -> RouteTable:
        raise NotImplementedError

    @property
    def _session(self) -> Session | None:
        return self._browser.session

    def _ensure_session(self) -> Session:
        """The live session; opens one (first reset, or after a crash)."""
        return self._browser.ensure(self._route_table)

    def _page_observer(self) -> Callable[[Any], tuple[PageView, bytes]]:
        """``observe(page)`` with this env's settings, holding no reference to the env."""
        image_format = self.screenshot_format if self.screenshots else None
        return functools.partial(observation.observe, timeout_ms=self.timeout_s * 1000, image_format=image_format)

    def _act(self, action: Action, home_url: str) -> str | None:
        """Execute ``action`` and observe; returns the action error, if any."""
        error, view, image = self._browser.act(action, self._view, home_url, self._page_observer())
        self._absorb(view, image)
        return error

    def _absorb(self, view: PageView, image: bytes, frame: np.ndarray | None = None) -> None:
        """Take ``view`` and the screenshot: ``frame`` when it was decoded already (a prepared start), else ``image``."""
        self._view = view
        if frame is not None:
            self._frame = frame
        elif image:
            self._frame = observation.decode(image, self.viewport)

    def _release(self) -> None:
        browser = getattr(self, "_browser", None)
        if browser is not None:
            browser.close()

    @property
    def browser_pid(self) -> int | None:
        """PID of the Chromium browser process (``None`` before the first reset)."""
        return self._browser.browser_pid

    def _base_spaces(self) -> dict[str, spaces.Space[Any]]:
        return observation.screen_spaces(self.viewport, ("url", "instruction"), self.som, self.axtree)

    def _base_obs(self, instruction: str) -> dict[str, Any]:
        elements = observation.public_elements(self._view, self.viewport)
        texts = {"url": self._view.url, "instruction": instruction}
        return observation.screen_observation(self._frame, elements, texts, self.som, self.axtree, self._view.title)


class GuiWebEnv(PreparedResets, TaskEnv, WebEnvBase):
    """Live web tasks on the bundled Shop, Forum and Classifieds sites, in a real Chromium.

    Each env owns one Chromium (launched on the first ``reset``, reused afterwards; with ``shared_browser``, two
    contexts on that browser instead) driven from a worker thread, so the env works inside a running asyncio loop
    and from any thread. The sites run in-process: Playwright request routing answers
    ``http://{shop,forum,classifieds}.guigym.test`` from Python with per-env SQLite state; every other origin is
    aborted and listed in ``info["blocked_requests"]``.

    **Observation, action, reward, episode end, info, privileged, reset**: as
    :class:`~gui_envs.tasks.env.TaskEnv` says, and:

    * ``elements`` records add ``"type"`` (input type or "") and ``"options"`` (a select's option texts, else []);
      ``tag`` is the HTML tag. Ids are stable within a page;
    * ``url``: ``Text``; ``som`` (``som=True``): the screenshot with Set-of-Marks boxes and ids drawn; ``axtree``
      (``axtree=True``): a compact accessibility-tree text, one line per element;
    * every web action of the shared schema is supported (see :mod:`gui_envs.browser.executor`); ``stop`` ends the
      episode, optionally with an ``answer``;
    * a crashed or killed browser raises :class:`~gui_envs.browser.session.BrowserCrashedError` from ``step`` (the
      next ``reset`` relaunches it); ``info`` adds ``blocked_requests``, ``action_bbox`` (pixels; the bbox of the
      element this step's action targeted by id, if any) and ``url``;
    * a reset shows the start page on a page without history. The episode the next ``reset()`` without a seed
      will draw is prepared while the agent acts (:class:`~gui_envs.browser.prefetch.PreparedResets`: a second
      context and copy of the sites), so that reset only swaps it in. A caller that names its seeds tells the env
      which come next (:meth:`~gui_envs.browser.prefetch.PreparedResets.announce`, :mod:`gui_envs.schema.upcoming`), and
      those are prepared instead; the episode a reset plays is the one its arguments give either way.

    Version history: v0, initial release.

    Args:
        sites: which sites' tasks form the pool; ``tasks``, ``max_steps``, ``invalid_action_penalty``: see
            :class:`~gui_envs.tasks.env.TaskEnv`.
        **kwargs: the browser options of :class:`WebEnvBase` (``viewport`` in pixels, ``screenshot_format``,
            ``som``, ``axtree``) and :class:`~gui_envs.tasks.env.ScreenEnv` (``headless``, ``timeout_s``,
            ``render_mode``, ``screenshots``, ``shared_browser``: the env's two contexts open on it).
    """

    family, registry, rng_salt = "web", TASKS, 7
    group_kind, group_names, group_attr = "sites", SITE_NAMES, "site"

    def __init__(self, sites: Sequence[str] = SITE_NAMES, **kwargs: Any) -> None:
        super().__init__(sites, **kwargs)
        # Two copies of the sites: the episode's, and the next one's, prepared while the agent acts; a start is
        # handed over decoded (observation.observe_decoded).
        observe = functools.partial(observation.observe_decoded, observe=self._page_observer(), size=self.viewport)
        self._init_pair(
            tuple({host: SiteState(site) for host, site in SITES.items()} for _ in range(2)), site_routes, observe
        )

    def _episode(self, cls: type[Task], seed: int) -> Callable[[dict[str, SiteState]], tuple[Task, str]]:
        return functools.partial(_build_episode, cls, seed, self.rng_salt)

    @property
    def home_url(self) -> str:
        """The task's start page (its site's origin + ``start_path``)."""
        task = self.task
        if not isinstance(task, WebTask):
            raise ResetNeededError("call reset() first: there is no task yet")
        return self.states[task.site].site.origin + task.start_path

    def _perform(self, action: Action) -> str | None:
        return self._act(action, self.home_url)

    def _location(self) -> str:
        return self._view.url

    def _plan_view(self) -> PageView:
        return self._view

    def _target_bbox(self, step: PlanStep, action: Action, view: PageView) -> list[int] | None:
        return view.bbox_of(action.element_id, self.viewport)

    def _action_info(self, parsed: Action | None) -> dict[str, Any]:
        return {"action_bbox": self._view.bbox_of(parsed.element_id if parsed is not None else None, self.viewport)}

    def _screen_info(self) -> dict[str, Any]:
        blocked, errors = self._browser.take_blocked(), self._browser.take_server_errors()
        return {"blocked_requests": blocked, "server_errors": errors, "url": self._view.url}

    def _privileged_extras(self) -> dict[str, Any]:
        """The verifiers' record of this state: site facts, the visible elements and the URL."""
        elements = observation.public_elements(self._view, self.viewport)
        return {"verifier_record": web_record(self.states, elements, self._view.url)}


def site_routes(states: dict[str, SiteState]) -> RouteTable:
    """Each site's origin, answered from its state in ``states`` (one side's copy of the sites)."""
    return {state.site.origin: state.handle for state in states.values()}


def _build_episode(cls: type[Task], seed: int, salt: int, states: dict[str, SiteState]) -> tuple[Task, str]:
    """Restore every site to ``seed`` and build the task on its site; returns the task and its start URL."""
    for state in states.values():
        state.restore(seed)
    site = states[cls.site]  # type: ignore[attr-defined]
    task = cls(site, task_rng(seed, salt))
    return task, site.site.origin + task.start_path  # type: ignore[attr-defined]
