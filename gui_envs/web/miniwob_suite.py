"""``GuiWeb-MiniWoB-Suite-v0``: several MiniWoB++ tasks behind one env, the task drawn from the seed.

One policy learns a suite of tasks (WGE's and CC-Net's setting) through trainers that take one env id: the
suite env is that id. Seed ``s`` runs task ``tasks[s % len(tasks)]`` at MiniWoB's own seed ``s``, so a run's
training seeds and its held-out seeds cover every task in turn, and two disjoint seed ranges are disjoint for
every task. ``reset(options={"task": name, "seed": s})`` picks both explicitly.

Each task keeps its own page (a :class:`~gui_envs.web.miniwob.MiniWoBEnv` whose context lives on a
:class:`~gui_envs.browser.shared.SharedBrowser`), opened on first use: going back to a task does not load its page
again, so a GRPO step that visits every task costs no page loads after the first. The suites of one process share
one Chromium (``process_browser=True``, the default): a trainer's 8 rollout slots then hold 80 pages in one
browser rather than 8 browsers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import gymnasium as gym

from gui_envs.browser.shared import SharedBrowser
from gui_envs.schema.lifecycle import SEED, TASK, guarded_close, guarded_reset, guarded_step
from gui_envs.web.miniwob import MINIWOB_TASKS, MiniWoBEnv

#: The instruction-following suite of issue 37: single-step clicks and focus, then typing and multi-step tasks.
INSTRUCTION_SUITE: tuple[str, ...] = (
    "click-test-2",
    "click-button",
    "click-link",
    "click-tab",
    "click-dialog-2",
    "focus-text-2",
    "enter-text",
    "login-user",
    "click-checkboxes",
    "click-button-sequence",
)
#: The suite's tasks that one action solves (the rest take 2-4 steps).
SINGLE_STEP_TASKS: tuple[str, ...] = INSTRUCTION_SUITE[:6]


def suite_task(tasks: Sequence[str], seed: int) -> str:
    """The task that suite seed ``seed`` runs.

    >>> suite_task(("click-test-2", "enter-text"), 7)
    'enter-text'
    """
    return tasks[int(seed) % len(tasks)]


class MiniWoBSuiteEnv(gym.Env[dict[str, Any], Any]):
    """Several MiniWoB++ tasks, one per episode, the task drawn from the seed.

    **Observation, action, reward, episode end, info**: those of :class:`~gui_envs.web.miniwob.MiniWoBEnv` (every
    member has the same viewport and ``max_steps``, hence the same spaces); ``info["task"]`` names the episode's task.

    **Reset**: ``reset(seed=s)`` runs ``tasks[s % len(tasks)]`` at MiniWoB seed ``s``; ``options={"task": name,
    "seed": t}`` overrides either. Without a seed one is drawn from the env's generator.

    Version history: v0, initial release.

    Args:
        tasks: the MiniWoB task names (default :data:`INSTRUCTION_SUITE`).
        process_browser: open the task pages on the one Chromium every suite of this process shares (launched on
            first use, closed with the last suite); ``False``: on a Chromium of this env's own.
        **kwargs: :class:`~gui_envs.web.miniwob.MiniWoBEnv` options (``max_steps``, ``screenshots``, ``viewport``,
            ``reload_page``...), the same for every task.
    """

    metadata = {"render_modes": ["rgb_array"]}
    reset_options = MappingProxyType({"seed": SEED, "task": TASK})

    def __init__(
        self, tasks: Sequence[str] = INSTRUCTION_SUITE, process_browser: bool = True, **kwargs: Any
    ) -> None:
        self.tasks = tuple(tasks)
        unknown = [t for t in self.tasks if t not in MINIWOB_TASKS]
        if not self.tasks or unknown:
            raise ValueError(f"tasks must be MiniWoB task names; unknown: {unknown or 'none given'}")
        if "shared_browser" in kwargs:
            raise ValueError(
                "the suite opens its tasks on its own shared browser; shared_browser is not an option"
            )
        self._kwargs = dict(kwargs)
        self._process_browser = bool(process_browser)
        self._browser = (
            _acquire(kwargs.get("headless", True))
            if process_browser
            else SharedBrowser(kwargs.get("headless", True))
        )
        self._members: dict[str, MiniWoBEnv] = {}
        self._current: MiniWoBEnv | None = None
        first = self._member(self.tasks[0])
        self.observation_space = first.observation_space
        self.action_space = first.action_space
        self.render_mode = first.render_mode

    def _member(self, task: str) -> MiniWoBEnv:
        if task not in self._members:
            self._members[task] = MiniWoBEnv(task=task, shared_browser=self._browser, **self._kwargs)
        return self._members[task]

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        episode_seed = options.get("seed", seed)
        if episode_seed is None:
            episode_seed = int(self.np_random.integers(2**31 - 1))
        task = options.get("task", suite_task(self.tasks, episode_seed))
        if task not in self.tasks:
            raise ValueError(f"task {task!r} is not in this suite: {', '.join(self.tasks)}")
        self._current = self._member(task)
        return self._current.reset(seed=int(episode_seed))

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        assert self._current is not None  # guarded_step refuses a step before reset
        return self._current.step(action)

    def render(self) -> Any:
        return self._current.render() if self._current is not None else None

    def privileged(self) -> dict[str, Any]:
        """MiniWoB's pages judge themselves and name no target (see :meth:`MiniWoBEnv.privileged`)."""
        return {"target_bbox": None}

    @property
    def task_name(self) -> str | None:
        """The current episode's task (``None`` before the first reset)."""
        return self._current.task_name if self._current is not None else None

    @guarded_close
    def close(self) -> None:
        for env in self._members.values():
            env.close()
        self._members.clear()
        if self._process_browser:
            _release(self._browser)
        else:
            self._browser.close()


# One Chromium per process and headless setting, with a count of the suites using it.
_PROCESS_BROWSERS: dict[bool, tuple[SharedBrowser, int]] = {}
_LOCK = threading.Lock()


def _acquire(headless: bool) -> SharedBrowser:
    with _LOCK:
        browser, users = _PROCESS_BROWSERS.get(bool(headless), (None, 0))
        if browser is None:
            browser = SharedBrowser(headless=bool(headless))
        _PROCESS_BROWSERS[bool(headless)] = (browser, users + 1)
        return browser


def _release(browser: SharedBrowser) -> None:
    with _LOCK:
        for key, (shared, users) in list(_PROCESS_BROWSERS.items()):
            if shared is browser:
                if users <= 1:
                    del _PROCESS_BROWSERS[key]
                    browser.close()
                else:
                    _PROCESS_BROWSERS[key] = (shared, users - 1)


__all__ = ["INSTRUCTION_SUITE", "SINGLE_STEP_TASKS", "MiniWoBSuiteEnv", "suite_task"]
