"""``GuiAndroid-v0``: phone tasks on the simulated phone (or a real device), judged from app databases."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from gui_envs.android import executor
from gui_envs.android.backend import DeviceActionError, DeviceBackend, DeviceTimeoutError
from gui_envs.android.hierarchy import UIElement, parse_hierarchy, public_elements
from gui_envs.android.tasks import TASKS, PhoneState
from gui_envs.android.tasks.base import PhoneView, Target
from gui_envs.browser.observation import fit_frame, screen_observation, screen_spaces
from gui_envs.schema.action_space import ActionSpace
from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import ResetOption, guarded_reset, guarded_step
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
from gui_envs.verifiers.facts import phone_record

logger = logging.getLogger(__name__)

__all__ = ["APP_NAMES", "GuiAndroidEnv", "PhoneEnvBase", "UnknownTaskError", "make_backend"]

#: Task pools by app name (``GuiAndroid-<App>-v0``).
APP_NAMES: tuple[str, ...] = ("launcher", "clock", "expenses", "recipes", "contacts", "settings", "notes")


def make_backend(backend: str | DeviceBackend, serial: str | None, **kwargs: Any) -> DeviceBackend:
    """Build the device backend an env runs on.

    Args:
        backend: ``"simulated"`` (default), ``"uiautomator2"``, or a ready :class:`DeviceBackend`.
        serial: the device serial for ``"uiautomator2"`` (``emulator-5554``, ``192.168.1.7:5555``).
        **kwargs: passed to the backend's constructor.
    """
    if isinstance(backend, DeviceBackend):
        return backend
    if backend == "simulated":
        from gui_envs.android.simulated import SimulatedPhone

        return SimulatedPhone(**kwargs)
    if backend == "uiautomator2":
        from gui_envs.android.uiautomator2_backend import UiAutomator2Backend

        if not serial:
            raise ValueError("backend='uiautomator2' needs serial=..., for example serial='emulator-5554'")
        return UiAutomator2Backend(serial, **kwargs)
    raise ValueError(f"backend must be 'simulated', 'uiautomator2' or a DeviceBackend, got {backend!r}")


class PhoneEnvBase(ScreenEnv):
    """Device plumbing shared by the phone envs: the backend, observation, and action execution.

    Pixels: the backend works in **device pixels** (1080 x 2400 by default); the observation's screenshot is
    the screen scaled by ``screenshot_scale`` (**screenshot pixels**; 360 x 800 by default), and every
    coordinate an agent sends or reads (action points, element bboxes, ``target_bbox``) is in screenshot
    pixels. Device = screenshot / ``screenshot_scale``.

    Args:
        backend: ``"simulated"``, ``"uiautomator2"`` or a :class:`DeviceBackend` (see :func:`make_backend`).
        serial: device serial for ``"uiautomator2"``.
        screenshot_scale: screenshot pixels per device pixel, in (0, 1].
        **screen: ``headless``, ``timeout_s`` (per device operation), ``render_mode``, ``screenshots``,
            ``shared_browser``: see :class:`~gui_envs.tasks.env.ScreenEnv`; the Chromium options reach the
            simulated phone only.
    """

    def __init__(
        self,
        backend: str | DeviceBackend = "simulated",
        serial: str | None = None,
        screenshot_scale: float = 1 / 3,
        **screen: Any,
    ) -> None:
        super().__init__(**screen)
        if not 0 < screenshot_scale <= 1:
            raise ValueError(f"screenshot_scale must be in (0, 1], got {screenshot_scale!r}")
        kwargs: dict[str, Any] = {}
        if backend == "simulated":
            # "human": the simulated phone's window itself, where a display exists.
            kwargs = {"headless": self.headless, "timeout_s": self.timeout_s, "shared_browser": self.shared_browser}
        elif backend == "uiautomator2":
            kwargs = {"timeout_s": self.timeout_s}
        self.backend = make_backend(backend, serial, **kwargs)
        self.simulated = hasattr(self.backend, "restore")
        self.scale = float(screenshot_scale)
        dw, dh = self.backend.window_size()
        self.screen = (round(dw * self.scale), round(dh * self.scale))
        self._elements: list[UIElement] = []
        self._frame = np.zeros((self.screen[1], self.screen[0], 3), np.uint8)
        self._app = ("", "")

    def _base_spaces(self) -> dict[str, spaces.Space[Any]]:
        return screen_spaces(self.screen, ("instruction", "app", "activity"))

    def _observe(self) -> None:
        """Read the screen: hierarchy (elements), screenshot, foreground app."""
        self._elements = parse_hierarchy(self.backend.hierarchy())
        self._app = self.backend.app_current()
        if self.screenshots:
            self._frame = fit_frame(self.backend.screenshot(self.scale), self.screen)

    def public_elements(self) -> list[dict[str, Any]]:
        """The observation's element list (bboxes in screenshot pixels)."""
        return public_elements(self._elements, self.scale)

    def _base_obs(self, instruction: str) -> dict[str, Any]:
        texts = {"instruction": instruction, "app": self._app[0], "activity": self._app[1]}
        return screen_observation(self._frame, self.public_elements(), texts)

    def take_server_errors(self) -> list[str]:
        """The app handler failures (500 pages) since the last call; a real device has none to report."""
        take = getattr(self.backend, "take_server_errors", None)
        return list(take()) if take is not None else []

    def element(self, element_id: str) -> UIElement | None:
        """The element with id ``element_id`` on the current screen, or ``None``."""
        return executor.find(self._elements, element_id)

    def act(self, action: Action) -> str | None:
        """Perform ``action`` and observe the result; returns why the action was a no-op, or ``None``.

        A device call that times out or that the device refuses (``DeviceActionError``) becomes the action's
        error (the screen is observed again); any other :class:`~gui_envs.android.backend.DeviceError` (a
        disconnect, a crash) propagates.
        """
        try:
            error = executor.execute(self.backend, action, self._elements, self.scale, self.screen)
        except DeviceTimeoutError as exc:
            error = f"the action timed out: {exc}"
        except DeviceActionError as exc:
            error = f"the device refused the action: {exc}"
        self._observe()
        return error

    def _release(self) -> None:
        backend = getattr(self, "backend", None)
        if backend is not None:
            backend.close()


class GuiAndroidEnv(PhoneEnvBase):
    """Phone tasks on bundled Android-style apps: the simulated phone by default, or a real device.

    The simulated phone (:class:`~gui_envs.android.simulated.SimulatedPhone`) renders seven bundled apps
    (Launcher, Clock, Expenses, Recipes, Contacts, Settings, Notes) in Chromium at 1080 x 2400 device pixels and
    answers the same :class:`~gui_envs.android.backend.DeviceBackend` interface as a device, so it works inside a
    running asyncio loop and from any thread. With ``backend="uiautomator2", serial=...`` the env drives a
    device or emulator; the bundled tasks read the simulated apps' databases, so on a device the env runs the
    free-form ``instruction`` you give and cannot judge it (reward 0, ``success`` False).

    **Observation, action, reward, episode end, info, privileged, reset**: as :mod:`gui_envs.tasks.env` says,
    and:

    * ``screenshot``: the screen at ``screenshot_scale`` (default 1/3: ``W, H = 360, 800`` screenshot pixels for a
      1080 x 2400 device); ``elements`` are parsed from the uiautomator hierarchy
      (:func:`~gui_envs.android.hierarchy.parse_hierarchy`), each record adding ``"resource_id"``,
      ``"content_desc"``, ``"class"`` and ``"package"`` (``tag`` = ``class``);
    * ``app`` (foreground package) and ``activity``: ``Text``;
    * the AITZ / AndroidControl / AndroidWorld action set maps onto the shared schema: ``click`` (point or
      ``element_id``), ``long_press``, ``scroll`` (direction; view moves that way), ``swipe`` (start and end point,
      or a direction the finger moves), ``type`` (with a target: tap it and replace its text; without: type into
      the focused field), ``press`` ``enter``, ``navigate`` ``back`` / ``home``, ``open_app`` (label, alias or
      package), ``wait``, and ``stop`` (status ``success`` or ``infeasible``, optional ``answer``);
    * success is read from the apps' SQLite databases (and the foreground app), as AndroidWorld's validators do;
      on the seeds where a template's named thing is missing from the app (about half of five templates'
      seeds), only a search for its name (the app's search log) and then ``stop(status="infeasible")`` pass;
    * a device failure raises :class:`~gui_envs.android.backend.DeviceError` (the simulated phone's next
      ``reset`` relaunches Chromium); ``info`` adds ``app`` and ``activity`` (``server_errors`` is always empty
      on a device); a reset goes to the home screen.

    **Structure**: one class, composed rather than stacked: the device (:class:`PhoneEnvBase`'s backend), the task
    pool (:class:`~gui_envs.tasks.env.TaskPool`) and the episode's task and oracle are objects it holds and calls;
    ``reset`` and ``step`` read top to bottom here.

    Version history: v0, initial release.

    Args:
        apps: app names whose tasks form the pool (see :data:`APP_NAMES`); ``tasks``, ``max_steps``,
            ``invalid_action_penalty``: see :mod:`gui_envs.tasks.env`.
        instruction: the free-form instruction for a real device (ignored on the simulated phone).
        **kwargs: the device options of :class:`PhoneEnvBase` (``backend``, ``serial``, ``screenshot_scale``) and
            :class:`~gui_envs.tasks.env.ScreenEnv` (``headless``, ``timeout_s``, ``render_mode``, ``screenshots``,
            ``shared_browser``: the simulated phone runs as a context of it).
    """

    family, registry, rng_salt = "phone", TASKS, 11
    group_kind, group_names, group_attr, group_prefix = "apps", APP_NAMES, "app", "com.guigym."

    reset_options: ClassVar[Mapping[str, ResetOption]] = TASK_RESET_OPTIONS

    def __init__(
        self,
        apps: Sequence[str] = APP_NAMES,
        instruction: str = "",
        tasks: Sequence[str] | None = None,
        max_steps: int = 30,
        invalid_action_penalty: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.pool = TaskPool(type(self), apps, tasks)
        self.task_names = self.pool.names
        self.max_steps, self.invalid_action_penalty = int(max_steps), float(invalid_action_penalty)
        self.observation_space = spaces.Dict({**self._base_spaces(), "step": spaces.Discrete(self.max_steps + 1)})
        self.action_space = ActionSpace(self.screen_size)
        self.task: Task | None = None
        self.task_seed = 0
        self.free_instruction = instruction
        self.oracle: Oracle | None = None
        self._steps = 0
        self._was_reset = False

    # ----- gymnasium API -------------------------------------------------------------------------------------
    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        cls, self.task_seed = self.pool.draw(self.np_random, dict(options or {}))
        self._steps = 0
        self.take_server_errors()  # what the last episode's handlers reported and nobody read
        self.task = self._begin(cls, self.task_seed)
        self.oracle = Oracle(self.task.oracle_plan(), self._target_bbox, cls.name) if self.task else None
        self._observe()
        if self.task is not None:
            self.task.visited.append(self._location())
        self._was_reset = True
        info = task_info(self.task, self.task_seed, self._instruction(), None, 0.0)
        return self._obs(), {**info, **self._screen_info()}

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        task = self.task
        self._steps += 1
        parsed, error = coerce_action(action)
        if parsed is not None and parsed.type != "stop":
            error = self.act(parsed)
            if task is not None:
                task.visited.append(self._location())  # infeasible judges check where the agent looked
        reward, terminated, truncated, info = judge_step(
            task, self.oracle, parsed, error, self._steps, self.max_steps, self.invalid_action_penalty,
            self.task_seed, self._instruction(),
        )
        return self._obs(), reward, terminated, truncated, {**info, **self._screen_info()}

    def oracle_action(self) -> Action:
        """The next action of the task's oracle plan, resolved on the current screen (``stop`` on a real device,
        which has no task).

        Calling it does not advance the plan; taking the returned action in ``step`` does.
        """
        if not self._was_reset:
            raise ResetNeededError("call reset() before oracle_action()")
        return next_oracle_action(self.oracle, self._plan_view(), self.screen_size)

    def privileged(self) -> dict[str, Any]:
        """The task's reference answer, the oracle's next target and the verifiers' record of this state (app
        facts, the visible elements and the foreground app; see :mod:`gui_envs.schema.privileged`).

        Resolves the oracle plan on the current screen, once per state: only readers of this channel pay for it.
        """
        if not self._was_reset:
            raise ResetNeededError("call reset() before privileged()")
        facts = privileged_facts(self.task, self.oracle, self._plan_view(), self.screen_size)
        states = getattr(self.backend, "states", {})
        return {**facts, "verifier_record": phone_record(states, self.public_elements(), self._app)}

    def example_task(self, cls: type[Task], seed: int) -> Task | None:
        """Template ``cls`` built at task seed ``seed`` (``None``: a real device cannot judge it), for ``guigym
        tasks``; it restores the app state to ``seed``, so call it outside an episode."""
        return self._begin(cls, seed)

    # ----- internals -----------------------------------------------------------------------------------------
    def _begin(self, cls: type[Task], seed: int) -> Task | None:
        """Restore the apps to ``seed`` and build the task on them (``None`` on a real device: the bundled tasks read
        the simulated apps' databases, so the env goes home and runs the free-form instruction)."""
        if not self.simulated:
            self.backend.press("home")
            return None
        self.backend.restore(seed)  # type: ignore[attr-defined]
        state = PhoneState(apps=self.backend.states, package=self._app[0], activity=self._app[1])  # type: ignore[attr-defined]
        return cls(state, task_rng(seed, self.rng_salt))

    def _observe(self) -> None:
        super()._observe()
        if self.task is not None:  # what the judges read as the foreground app
            self.task.state.package, self.task.state.activity = self._app

    def _location(self) -> str:
        """The foreground ``package/activity``, appended to the task's ``visited``."""
        return "/".join(self._app)

    def _instruction(self) -> str:
        return self.task.instruction if self.task is not None else self.free_instruction

    def _plan_view(self) -> PhoneView:
        """What the oracle plan's steps read."""
        return PhoneView(self._elements, self.scale)

    def _target_bbox(self, step: PlanStep, action: Action, view: PhoneView) -> list[int] | None:
        target = step.target(view) if isinstance(step, Target) and action.type != "scroll" else None
        return [round(v * self.scale) for v in target.bbox] if target is not None else None

    def _screen_info(self) -> dict[str, Any]:
        """``server_errors`` since the last step, and the foreground ``app`` and ``activity``."""
        return {"server_errors": self.take_server_errors(), "app": self._app[0], "activity": self._app[1]}

    def _obs(self) -> dict[str, Any]:
        obs = self._base_obs(self._instruction())
        obs["step"] = min(self._steps, self.max_steps)
        return obs
