"""``GuiWeb-v0``: the bundled sites in a real Chromium, with seeded tasks judged from app state."""

from __future__ import annotations

import functools
import logging
import re
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_envs.actions import Action, ActionSpace, coerce_action
from gui_envs.verifiers.facts import web_record
from gui_envs.web import executor, observation
from gui_envs.web.observation import CHARSET, PageView
from gui_envs.web.session import BrowserSession, BrowserTimeoutError, SessionHandles
from gui_envs.web.sites.base import Request, Response, SiteState
from gui_envs.web.tasks import SITE_NAMES, SITES, TASKS, WebTask
from gui_envs.web.tasks.base import OracleError

logger = logging.getLogger(__name__)

#: Longest ``elements`` JSON in characters; longer lists are cut at the last element that fits.
MAX_ELEMENTS_CHARS = 100_000
MAX_TEXT = 4096


class UnknownTaskError(KeyError):
    """``options["task"]`` names no task of this env; the message lists close matches."""


class WebEnvBase(gym.Env[dict[str, Any], Any]):
    """Browser plumbing shared by the web envs: session, hermetic routing, observation, executor.

    Subclasses provide ``_route_table()`` (origin -> request handler) and the task logic.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

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
    ) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if screenshot_format not in ("jpeg", "png"):
            raise ValueError(f"screenshot_format must be 'jpeg' or 'png', got {screenshot_format!r}")
        self.viewport = (int(viewport[0]), int(viewport[1]))
        self.headless, self.timeout_s = headless, float(timeout_s)
        self.screenshot_format, self.som, self.axtree = screenshot_format, som, axtree
        self.render_mode = render_mode
        # Text-only agents read ``elements`` alone; skipping the capture saves about 50 ms a step.
        self.screenshots = bool(screenshots)
        self._session: BrowserSession | None = None
        self._net = NetLog()
        self._view = PageView(url="about:blank", title="", elements=[])
        self._frame = np.zeros((self.viewport[1], self.viewport[0], 3), np.uint8)

    # ----- the session -----------------------------------------------------------------------------------
    def _route_table(self) -> dict[str, Callable[[Request], Response]]:
        raise NotImplementedError

    @property
    def origins(self) -> list[str]:
        return list(self._route_table())

    def _ensure_session(self) -> BrowserSession:
        """The live session; launches one (first reset, or after a crash)."""
        if self._session is not None and not self._session.alive:
            self._session.close()
            self._session = None
        if self._session is None:
            self._session = BrowserSession(
                setup=functools.partial(install_routing, table=self._route_table(), net=self._net),
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

        self._absorb(*self._ensure_session().call(work))

    def _act(self, action: Action, home_url: str) -> str | None:
        """Execute ``action`` and observe; returns the action error, if any."""
        view, origins = self._view, set(self.origins)

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
        elements = observation.public_elements(self._view, self.viewport)
        text = observation.elements_json(elements)
        while len(text) > MAX_ELEMENTS_CHARS and elements:
            elements = elements[: len(elements) * 9 // 10]
            text = observation.elements_json(elements)
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


@dataclass
class NetLog:
    """What the router saw since the last step: blocked URLs, a count of blocked navigations, and the
    server errors (one line per 500 page a site handler produced)."""

    blocked: list[str] = field(default_factory=list)
    blocked_documents: int = 0
    server_errors: list[str] = field(default_factory=list)


def install_routing(
    handles: SessionHandles, table: dict[str, Callable[[Request], Response]], net: NetLog
) -> None:
    """Runs in the browser thread after launch: hermetic routing and the navigation flag.

    Requests to an origin in ``table`` are answered by its handler; any other request (HTTP or WebSocket) is
    aborted and logged in ``net``. A module-level function, so the session holds no reference to the env.
    """

    def route(r: Any) -> None:
        req = r.request
        parts = urllib.parse.urlsplit(req.url)
        handler = table.get(f"{parts.scheme}://{parts.netloc}")
        if handler is None:
            net.blocked.append(req.url)
            if req.is_navigation_request():
                net.blocked_documents += 1
            r.abort("blockedbyclient")
            return
        resp = guarded_response(handler, req, net.server_errors)
        fulfil(r, resp.status, resp.headers, resp.body)

    def websocket(ws: Any) -> None:
        net.blocked.append(ws.url)
        ws.close()

    handles.context.route("**/*", route)
    handles.context.route_web_socket(re.compile(".*"), websocket)
    handles.context.add_init_script(executor.NAV_FLAG_SCRIPT)


def guarded_response(handler: Callable[[Request], Response], req: Any, errors: list[str]) -> Response:
    """``handler``'s answer to the Playwright request ``req``; any exception is a 500 page, never a hang.

    An exception left in a route callback leaves the request unanswered: the page waits for it until the
    call time-out and the session declares the browser dead. Every 500 (from here or from a site's own
    guard, :meth:`~gui_envs.web.sites.base.Site.handle`) is appended to ``errors`` for ``info``.
    """
    try:
        resp = handler(Request.from_url(req.method, req.url, req.post_data_buffer))
    except Exception as exc:  # noqa: BLE001 - see above: anything but an answer kills the episode
        logger.exception("request handler failed on %s %s", req.method, req.url)
        resp = Response.server_error(f"{req.method} {req.url}", exc)
    if resp.error is not None:
        errors.append(resp.error)
    return resp


def fulfil(route: Any, status: int, headers: dict[str, str], body: str | bytes) -> None:
    """``route.fulfill``, tolerating a request that went away meanwhile (its page navigated or closed)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        route.fulfill(status=status, headers=headers, body=body)
    except PlaywrightError as exc:
        logger.debug("could not fulfil %s: %s", route.request.url, exc)


class GuiWebEnv(WebEnvBase):
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
      :func:`gui_envs.web.observation.parse_elements`. Ids are stable within a page;
    * ``url`` and ``instruction``: ``Text``; ``step``: ``Discrete(max_steps + 1)``, steps taken;
    * ``som`` (``som=True``): the screenshot with Set-of-Marks boxes and ids drawn;
    * ``axtree`` (``axtree=True``): a compact accessibility-tree text, one line per element.

    **Action**: :class:`~gui_envs.actions.ActionSpace` (viewport-sized); Action JSON or GUI-R1 text, and
    :class:`~gui_envs.actions.Action` objects and dicts directly. Every web action of the shared schema is
    supported (see :mod:`gui_envs.web.executor`); ``stop`` ends the episode, optionally with an ``answer``.
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
    :class:`~gui_envs.web.session.BrowserCrashedError` from ``step``; the next ``reset`` relaunches it.

    **Info** (every step): ``task``, ``task_seed``, ``instruction``, ``success``, ``score``, ``action_error``,
    ``blocked_requests``, ``server_errors`` (one line per site handler that failed with a 500 page since the
    last step), ``action_bbox`` (pixels; the bbox of the element this step's action targeted by id, if any),
    ``url``.

    **Privileged** (:meth:`privileged`, for rewards, wrappers and trainers; never in ``info``):
    ``reference_answer``, ``target_bbox`` (bbox in pixels of the element the oracle would act on next;
    ``None`` when its next action has no target), ``oracle_error``.

    **Reset**: ``reset(seed=s, options={"task": name, "seed": task_seed})``. Without ``"task"`` a template is
    drawn from the env's pool with the env's generator. The task seed fixes both the site content and the task
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
        render_mode: ``None`` or ``"rgb_array"``.
        screenshots: capture the viewport after every action (default). ``False`` leaves ``screenshot``
            black, for text-only agents that read ``elements``; it saves the capture (about 50 ms a step).
    """

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
        for n in names:
            _check_task(n, TASKS)
        if not names:
            raise ValueError("the task pool is empty")
        self.task_names = names
        self.max_steps, self.invalid_action_penalty = int(max_steps), float(invalid_action_penalty)
        self.states = {host: SiteState(site) for host, site in SITES.items()}
        self.observation_space = spaces.Dict(
            {**self._base_spaces(), "step": spaces.Discrete(self.max_steps + 1)}
        )
        self.action_space = ActionSpace(self.viewport)
        self.task: WebTask | None = None
        self._steps = 0
        self._plan: list[Any] = []
        self._plan_index = 0
        self._pending: tuple[Action, int] | None = None
        self._oracle_error: str | None = None

    def _route_table(self) -> dict[str, Callable[[Request], Response]]:
        return {state.site.origin: state.handle for state in self.states.values()}

    # ----- gymnasium API ----------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        name = options.get("task") or self.task_names[int(self.np_random.integers(len(self.task_names)))]
        cls = _check_task(str(name), {n: TASKS[n] for n in self.task_names})
        task_seed = options.get("seed")
        if task_seed is None:
            task_seed = int(self.np_random.integers(2**31 - 1))
        self.task_seed = int(task_seed)
        for state in self.states.values():
            state.restore(self.task_seed)
        state = self.states[cls.site]
        self.task = cls(state, np.random.default_rng([self.task_seed, 7]))
        self._plan, self._plan_index, self._pending, self._oracle_error = (
            self.task.oracle_plan(),
            0,
            None,
            None,
        )
        self._steps = 0
        self._take_blocked()
        self._take_server_errors()
        self._load(self.home_url)
        self.task.visited.append(self._view.url)
        return self._obs(), self._info(None, score=0.0)

    @property
    def home_url(self) -> str:
        assert self.task is not None, "call reset() first"
        return self.states[self.task.site].site.origin + self.task.start_path

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        self._steps += 1
        parsed, error = coerce_action(action)
        stop = parsed if parsed is not None and parsed.type == "stop" else None
        pending, self._pending = self._pending, None
        target = self._view.by_id(parsed.element_id) if parsed is not None and parsed.element_id else None
        action_bbox = observation.clip_bbox(target["bbox"], self.viewport) if target is not None else None
        if parsed is not None and stop is None:
            error = self._act(parsed, self.home_url)
            self.task.visited.append(self._view.url)  # infeasible judges check the agent looked
        if pending is not None and parsed == pending[0] and error is None:
            self._plan_index = pending[1]
        reward = -self.invalid_action_penalty if error else 0.0
        url = self._view.url
        score = self.task.evaluate(url, stop)
        terminated = stop is not None or (not self.task.requires_stop and self.task.is_done(url))
        if terminated:
            reward += score
        truncated = not terminated and self._steps >= self.max_steps
        info = self._info(error, score)
        info["action_bbox"] = action_bbox
        return self._obs(), float(reward), terminated, truncated, info

    def oracle_action(self) -> Action:
        """The next action of the task's oracle plan, resolved on the current page.

        Calling it does not advance the plan; taking the returned action in ``step`` does.
        """
        return self._peek()[0]

    # ----- internals ----------------------------------------------------------------------------------------
    def _peek(self) -> tuple[Action, int]:
        if self._pending is not None:
            return self._pending
        assert self.task is not None, "call reset() first"
        index = self._plan_index
        if index >= len(self._plan):
            action = Action.stop()
        else:
            try:
                action, advance = self._plan[index](self._view, self.viewport)
                index += int(advance)
            except OracleError as exc:
                self._oracle_error = str(exc)
                logger.debug("%s: %s", self.task.name, exc)
                action = Action.stop(status="failure")
        self._pending = (action, index)
        return self._pending

    def _target_bbox(self) -> list[int] | None:
        action = self._peek()[0]
        if action.element_id is None:
            return None
        el = self._view.by_id(action.element_id)
        return observation.clip_bbox(el["bbox"], self.viewport) if el is not None else None

    def _obs(self) -> dict[str, Any]:
        assert self.task is not None
        obs = self._base_obs(self.task.instruction)
        obs["step"] = min(self._steps, self.max_steps)
        return obs

    def _info(self, error: str | None, score: float) -> dict[str, Any]:
        assert self.task is not None
        return {
            "task": self.task.name,
            "task_seed": self.task_seed,
            "instruction": self.task.instruction,
            "success": score >= 1.0,
            "score": float(score),
            "action_error": error,
            "blocked_requests": self._take_blocked(),
            "server_errors": self._take_server_errors(),
            "url": self._view.url,
        }

    def privileged(self) -> dict[str, Any]:
        """The task's reference answer and the oracle's next target (see :mod:`gui_envs.privileged`).

        Resolves the oracle plan on the current page, once per state: only readers of this channel pay for it.
        """
        if self.task is None:
            raise RuntimeError("call reset() before privileged()")
        return {
            "reference_answer": self.task.reference_answer,
            "target_bbox": self._target_bbox(),
            "oracle_error": self._oracle_error,
            "verifier_record": web_record(self.states, observation.public_elements(self._view, self.viewport), self._view.url),
        }


def _check_task(name: str, pool: dict[str, type[WebTask]]) -> type[WebTask]:
    if name in pool:
        return pool[name]
    import difflib

    close = difflib.get_close_matches(name, list(pool), n=3, cutoff=0.4)
    hint = f" Did you mean {', '.join(close)}?" if close else f" Known tasks: {', '.join(sorted(pool))}."
    raise UnknownTaskError(f"unknown web task {name!r}.{hint}")
