"""``GuiWeb-v0``: the bundled sites in a real Chromium, with seeded tasks judged from app state."""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from gui_envs.browser import observation
from gui_envs.browser.observation import PageView
from gui_envs.browser.page import HermeticBrowser, Session
from gui_envs.browser.prefetch import Build, ResetPreparer
from gui_envs.browser.routing import RouteTable
from gui_envs.browser.site import SiteState
from gui_envs.schema.action_space import ActionSpace
from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import ResetOption, guarded_reset, guarded_step
from gui_envs.schema.upcoming import Upcoming
from gui_envs.tasks.base import PlanStep, Task, UnknownTaskError
from gui_envs.tasks.env import (
    TASK_RESET_OPTIONS,
    ScreenEnv,
    TaskPool,
    judge_step,
    next_oracle_action,
    privileged_facts,
    task_info,
    task_rng,
)
from gui_envs.tasks.oracle import Oracle
from gui_envs.verifiers.facts import web_record
from gui_envs.web.tasks import SITE_NAMES, SITES, TASKS, WebTask

logger = logging.getLogger(__name__)

__all__ = ["GuiWebEnv", "PreparedWebEnv", "UnknownTaskError", "WebEnvBase"]


class WebEnvBase(ScreenEnv):
    """Browser plumbing shared by the web envs: a :class:`~gui_envs.browser.page.HermeticBrowser` and the page's
    observation. Subclasses provide ``_route_table()`` (origin -> request handler); :class:`GuiWebEnv` adds the
    task logic of :mod:`gui_envs.tasks.env`, MiniWoB and the grounding env their own.

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

    #: CSS selector of page parts whose elements the observation leaves out (``None``: keep every element).
    skip_elements: str | None = None

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
        return functools.partial(
            observation.observe, timeout_ms=self.timeout_s * 1000, image_format=image_format, skip=self.skip_elements
        )

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


class PreparedWebEnv(WebEnvBase):
    """A web env whose resets a :class:`~gui_envs.browser.prefetch.ResetPreparer` prepares ahead: the task env
    (:class:`GuiWebEnv`) and the grounding env (:class:`~gui_envs.web.ground.GuiWebGroundEnv`). A subclass builds
    ``_resets`` in its ``__init__``; this class gives the preparer's controls their public names and serves the
    page's routes and session from it.
    """

    _resets: ResetPreparer

    def announce(self, resets: Iterable[int | Upcoming | None]) -> None:
        """Tell the env its next resets, in order (replacing any earlier announcement; see
        :mod:`gui_envs.schema.upcoming`).

        The first is prepared from now on while the agent acts (after each reset, the next one announced), so a
        reset with those arguments only swaps it in. The episode a reset plays never depends on what was
        announced. Raises what the reset itself would raise for options it does not take or an unknown task name.
        """
        self._resets.announce(resets)

    def share_starts(self, source: Any) -> None:
        """Offer this env's next reset the starts ``source`` (another copy made by ``gym.make`` with the same
        arguments) swapped in at its last reset (:meth:`~gui_envs.browser.prefetch.ResetPreparer.share_starts`)."""
        self._resets.share_starts(source)

    @property
    def prepare_ahead(self) -> bool:
        """Prepare the next episode while the agent acts (default); a group member that takes its starts from
        another copy (:meth:`share_starts`) turns it off, as that copy prepares them."""
        return self._resets.prepare_ahead

    @prepare_ahead.setter
    def prepare_ahead(self, value: bool) -> None:
        self._resets.prepare_ahead = value

    @property
    def states(self) -> dict[str, SiteState]:
        """This episode's sites' live state, by host."""
        return self._resets.states  # type: ignore[no-any-return]

    def _route_table(self) -> RouteTable:
        return self._resets.route_table()

    def _ensure_session(self) -> Session:
        return self._resets.ensure_session()


class GuiWebEnv(PreparedWebEnv):
    """Live web tasks on the bundled Shop, Forum and Classifieds sites, in a real Chromium.

    Each env owns one Chromium (launched on the first ``reset``, reused afterwards; with ``shared_browser``, two
    contexts on that browser instead) driven from a worker thread, so the env works inside a running asyncio loop
    and from any thread. The sites run in-process: Playwright request routing answers
    ``http://{shop,forum,classifieds}.guigym.test`` from Python with per-env SQLite state; every other origin is
    aborted and listed in ``info["blocked_requests"]``.

    **Observation, action, reward, episode end, info, privileged, reset**: as :mod:`gui_envs.tasks.env` says,
    and:

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
      will draw is prepared while the agent acts (:class:`~gui_envs.browser.prefetch.ResetPreparer`: a second
      context and copy of the sites), so that reset only swaps it in. A caller that names its seeds tells the env
      which come next (:meth:`announce`, :mod:`gui_envs.schema.upcoming`), and
      those are prepared instead; the episode a reset plays is the one its arguments give either way.

    **Structure**: one class, composed rather than stacked: the browser (:class:`WebEnvBase`'s
    :class:`~gui_envs.browser.page.HermeticBrowser`), the prepared resets (:class:`~gui_envs.browser.prefetch.ResetPreparer`),
    the task pool (:class:`~gui_envs.tasks.env.TaskPool`) and the episode's task and oracle are objects it holds and
    calls; ``reset`` and ``step`` read top to bottom here (``python benchmarks/click_trace.py`` traces a click).

    Version history: v0, initial release.

    Args:
        sites: which sites' tasks form the pool; ``tasks``, ``max_steps``, ``invalid_action_penalty``: see
            :mod:`gui_envs.tasks.env`.
        **kwargs: the browser options of :class:`WebEnvBase` (``viewport`` in pixels, ``screenshot_format``,
            ``som``, ``axtree``) and :class:`~gui_envs.tasks.env.ScreenEnv` (``headless``, ``timeout_s``,
            ``render_mode``, ``screenshots``, ``shared_browser``: the env's two contexts open on it).
    """

    family, registry, rng_salt = "web", TASKS, 7
    group_kind, group_names, group_attr, group_prefix = "sites", SITE_NAMES, "site", ""
    reset_options: ClassVar[Mapping[str, ResetOption]] = TASK_RESET_OPTIONS

    def __init__(
        self,
        sites: Sequence[str] = SITE_NAMES,
        tasks: Sequence[str] | None = None,
        max_steps: int = 30,
        invalid_action_penalty: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.pool = TaskPool(type(self), sites, tasks)
        self.task_names = self.pool.names
        self.max_steps, self.invalid_action_penalty = int(max_steps), float(invalid_action_penalty)
        self.observation_space = spaces.Dict({**self._base_spaces(), "step": spaces.Discrete(self.max_steps + 1)})
        self.action_space = ActionSpace(self.screen_size)
        self.task: WebTask | None = None
        self.task_seed = 0
        self.oracle: Oracle | None = None
        self._steps = 0
        self._was_reset = False
        self._home_url = ""
        self._observe = self._page_observer()
        # Two copies of the sites: the episode's, and the next one's, prepared while the agent acts; a start is
        # handed over decoded (observation.observe_decoded).
        observe = functools.partial(observation.observe_decoded, observe=self._observe, size=self.viewport)
        owners = tuple({host: SiteState(site) for host, site in SITES.items()} for _ in range(2))
        self._resets = ResetPreparer(self, self._browser, owners, site_routes, observe)  # type: ignore[arg-type]

    # ----- gymnasium API -------------------------------------------------------------------------------------
    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self._resets.use(seed, options)
        super().reset(seed=seed)
        cls, self.task_seed = self.pool.draw(self.np_random, dict(options or {}))
        self._steps = 0
        self._browser.net.take()  # what the last episode's handlers reported and nobody read
        self.task, opened = self._resets.swap_in((cls.name, self.task_seed), self._episode(cls, self.task_seed))
        self.oracle = Oracle(self.task.oracle_plan(), self._target_bbox, cls.name)
        self._home_url = self.states[self.task.site].site.origin + self.task.start_path
        self._absorb(*opened)
        # The next reset() without a seed draws this episode from a copy of the env's generator: prepare it meanwhile.
        upcoming, upcoming_seed = self._next_episode()
        self._resets.prepare_next((upcoming.name, upcoming_seed), self._episode(upcoming, upcoming_seed))
        self.task.visited.append(self._view.url)
        self._was_reset = True
        info = task_info(self.task, self.task_seed, self.task.instruction, None, 0.0)
        return self._obs(), {**info, **self._screen_info()}

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        task = self.task
        assert task is not None  # guarded_step: a step runs in an episode
        self._steps += 1
        parsed, error = coerce_action(action)
        seen = self._view  # the screen the agent acted on: an element id names one of its elements
        if parsed is not None and parsed.type != "stop":
            error, view, image = self._browser.act(parsed, seen, self._home_url, self._observe)
            task.visited.append(view.url)  # infeasible judges check where the agent looked
            screen = self._screen_info(view)
            self._absorb(view, image)
        else:
            screen = self._screen_info(seen)
        bbox = seen.bbox_of(parsed.element_id if parsed is not None else None, self.viewport)
        obs = self._obs()
        reward, terminated, truncated, info = judge_step(
            task, self.oracle, parsed, error, self._steps, self.max_steps, self.invalid_action_penalty,
            self.task_seed, task.instruction,
        )
        return obs, reward, terminated, truncated, {**info, **screen, "action_bbox": bbox}

    def oracle_action(self) -> Action:
        """The next action of the task's oracle plan, resolved on the current screen.

        Calling it does not advance the plan; taking the returned action in ``step`` does.
        """
        if not self._was_reset:
            raise ResetNeededError("call reset() before oracle_action()")
        return next_oracle_action(self.oracle, self._view, self.screen_size)

    def privileged(self) -> dict[str, Any]:
        """The task's reference answer, the oracle's next target and the verifiers' record of this state (site
        facts, the visible elements and the URL; see :mod:`gui_envs.schema.privileged`).

        Resolves the oracle plan on the current screen, once per state: only readers of this channel pay for it.
        """
        if not self._was_reset:
            raise ResetNeededError("call reset() before privileged()")
        elements = observation.public_elements(self._view, self.viewport)
        record = web_record(self.states, elements, self._view.url)
        return {**privileged_facts(self.task, self.oracle, self._view, self.screen_size), "verifier_record": record}

    def example_task(self, cls: type[Task], seed: int) -> Task:
        """Template ``cls`` built at task seed ``seed`` on a fresh copy of the sites, without a browser (``guigym
        tasks`` shows its instruction); the env's own sites are left as they are."""
        return _build_episode(cls, seed, self.rng_salt, {host: SiteState(site) for host, site in SITES.items()})[0]

    @property
    def home_url(self) -> str:
        """The task's start page (its site's origin + ``start_path``)."""
        if self.task is None:
            raise ResetNeededError("call reset() first: there is no task yet")
        return self._home_url

    # ----- internals -----------------------------------------------------------------------------------------
    def _announced(self, upcoming: Upcoming) -> tuple[Hashable, Build]:
        """The key and build of the episode ``reset(seed=upcoming.seed, options=upcoming.options)`` will play:
        gymnasium reseeds the env's generator with the seed, then the template and task seed are drawn from it
        where the options do not name them."""
        rng = seeding.np_random(upcoming.seed)[0] if upcoming.seed is not None else copy.deepcopy(self.np_random)
        cls, seed = self.pool.draw(rng, dict(upcoming.options or {}))
        return (cls.name, seed), self._episode(cls, seed)

    def _episode(self, cls: type[Task], seed: int) -> Build:
        return functools.partial(_build_episode, cls, seed, self.rng_salt)

    def _next_episode(self) -> tuple[type[Task], int]:
        """The episode the next ``reset()`` without seed or options will play (the env's generator stays as it is)."""
        return self.pool.draw(copy.deepcopy(self.np_random), {})

    def _target_bbox(self, step: PlanStep, action: Action, view: PageView) -> list[int] | None:
        return view.bbox_of(action.element_id, self.viewport)

    def _screen_info(self, view: PageView | None = None) -> dict[str, Any]:
        """``blocked_requests`` and ``server_errors`` since the last step, and the URL of ``view`` (default: now)."""
        blocked, errors = self._browser.net.take()
        return {"blocked_requests": blocked, "server_errors": errors, "url": (view or self._view).url}

    def _obs(self) -> dict[str, Any]:
        obs = self._base_obs(self.task.instruction if self.task is not None else "")
        obs["step"] = min(self._steps, self.max_steps)
        return obs


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
