"""One env over a page or a device: the reset / step / observation / info / privileged logic of a task env.

The pieces every task env shares are here once: the task pool (:class:`TaskPool`), the end of a step
(:func:`judge_step`: oracle, judgement, reward, the shared ``info``), and the oracle's channel
(:func:`next_oracle_action`, :func:`privileged_facts`). :class:`~gui_envs.web.env.GuiWebEnv` holds and calls them,
its step reading top to bottom in its own module. :class:`TaskEnv` assembles them for an env that combines it
with a plumbing base (:class:`~gui_envs.android.env.PhoneEnvBase`: a device), which provides the few hooks below:
restore the app state, open the start screen, perform an action, and say where the screen is. The plumbing base, a
:class:`ScreenEnv`, also provides ``screen_size`` and the observation pieces (``_base_spaces`` / ``_base_obs``).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_envs.browser.chromium import headless_for
from gui_envs.schema.action_space import ActionSpace
from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import SEED, TASK, ResetOption, guarded_close, guarded_reset, guarded_step
from gui_envs.tasks.base import PlanStep, Task, check_task
from gui_envs.tasks.oracle import Oracle

if TYPE_CHECKING:
    from gui_envs.browser.shared import SharedBrowser


class ScreenEnv(gym.Env[dict[str, Any], Any]):
    """What every GUI env shares, whatever runs its screen: the options below, ``render`` and ``close``. The plumbing
    bases (browser page, device) release what they hold in :meth:`_release`, and keep the last screenshot in
    ``_frame`` ((H, W, 3) uint8, screenshot pixels); :mod:`gui_envs.browser.observation` assembles the observation.

    Args (shared; each is used where the env runs a Chromium: the web envs and the simulated phone):
        headless: run Chromium headless.
        timeout_s: time limit of one browser or device operation in seconds (a time-out is an action error).
        render_mode: ``None``, ``"rgb_array"``, or ``"human"`` (the browser window itself, headed where a display
            exists; headless otherwise).
        screenshots: capture the screen after every action (default). ``False`` leaves ``screenshot`` all zeros,
            for text-only agents that read ``elements``; it saves the capture (40-50 ms a step).
        shared_browser: open the env's contexts on this :class:`~gui_envs.browser.shared.SharedBrowser` instead
            of launching a browser (N envs, one Chromium; :mod:`gui_envs.multi` does so); ``close`` closes only
            those contexts.
    """

    # "human" is the browser window itself (headed where a display exists; see chromium.headless_for), so render()
    # has nothing to draw in that mode.
    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 2}

    def __init__(
        self,
        headless: bool = True,
        timeout_s: float = 10.0,
        render_mode: str | None = None,
        screenshots: bool = True,
        shared_browser: SharedBrowser | None = None,
    ) -> None:
        if render_mode not in (None, "rgb_array", "human"):
            raise ValueError(f"render_mode must be None, 'rgb_array' or 'human', got {render_mode!r}")
        self.render_mode = render_mode
        self.headless, self.timeout_s = headless_for(render_mode, headless), float(timeout_s)
        self.screenshots, self.shared_browser = bool(screenshots), shared_browser

    def _release(self) -> None:
        """Close the browser or the device (idempotent; may run on a half-built env)."""

    @property
    def screen_size(self) -> tuple[int, int]:
        """The screenshot's ``(width, height)`` in pixels."""
        return self._frame.shape[1], self._frame.shape[0]  # type: ignore[attr-defined]

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """The last screenshot, (H, W, 3) uint8 screenshot pixels, when ``render_mode="rgb_array"``."""
        return self._frame.copy() if self.render_mode == "rgb_array" else None  # type: ignore[attr-defined]

    @guarded_close
    def close(self) -> None:
        self._release()
        super().close()

    def __del__(self) -> None:
        # The browser session's own finalizer also runs at garbage collection; this makes the order explicit.
        try:
            self._release()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class TaskEnv(gym.Env[dict[str, Any], Any]):
    """Episode logic over a family's tasks; subclasses mix it with a page or device plumbing base.

    The spec every task env shares (each env's docstring adds its observation, action, info and reset details):

    **Observation** (``spaces.Dict``):

    * ``screenshot``: ``Box(0, 255, (H, W, 3), uint8)``, the screen in screenshot pixels (all zeros with
      ``screenshots=False``);
    * ``elements``: ``Text``, a JSON list of the visible elements, each with at least ``{"id", "role", "text",
      "value", "bbox": [x0, y0, x1, y1] (screenshot pixels), "clickable", "tag"}``; decode with
      :func:`gui_envs.browser.observation.parse_elements`;
    * ``instruction``: ``Text``; ``step``: ``Discrete(max_steps + 1)``, the steps taken.

    **Action**: :class:`~gui_envs.schema.action_space.ActionSpace`, sized to the screen: Action JSON or GUI-R1 JSON, and
    :class:`~gui_envs.schema.actions.Action` objects and dicts. Points are screenshot pixels. Arguments are checked before
    they reach the browser or device (:class:`~gui_envs.schema.actions.Action`: field types, coordinates, ``type`` text at
    most :data:`~gui_envs.schema.actions.MAX_TYPED_TEXT` characters); whatever ``step`` is given, it returns, at worst
    with an ``action_error`` no-op.

    **Reward**: the task's score in [0, 1] when the episode ends (``stop``, or a state task's goal reached), else
    0; an action that is malformed, off screen or fails costs ``invalid_action_penalty`` and is a no-op
    (``info["action_error"]`` says why). Success is judged from app state (the final URL or foreground app) or the
    stop answer, never from the agent's words alone.

    **Episode end**: ``terminated`` on ``stop`` or when a state task's goal holds; ``truncated`` after
    ``max_steps`` steps. ``step`` outside an episode (before the first ``reset``, after the episode ended) raises
    :class:`~gui_envs.schema.errors.ResetNeededError`, and after ``close`` :class:`~gui_envs.schema.errors.EnvClosedError` (the
    rules of :mod:`gui_envs.schema.lifecycle`).

    **Info** (every step): ``task``, ``task_seed``, ``instruction``, ``success``, ``score``, ``action_error``,
    ``server_errors`` (one line per site or app handler that failed with a 500 page since the last step), then the
    family's own entries.

    **Privileged** (:meth:`privileged`, for rewards, wrappers and trainers; never in ``info``):
    ``reference_answer``, ``target_bbox`` (screenshot-pixel bbox of the element the oracle acts on next; ``None``
    when its next action has no target), ``oracle_error``, ``verifier_record``.

    **Reset**: ``reset(seed=s, options={"task": name, "seed": task_seed})``. Without ``"task"`` the template is
    drawn from the pool, and without ``"seed"`` the task seed, with the env's generator; an unknown name raises
    :class:`~gui_envs.tasks.base.UnknownTaskError`, any other key ``ValueError``. The task seed fixes the app content and the task's parameters;
    a warm reset restores every site or app SQLite database from a cached seeded template.

    Args (shared): ``tasks``, explicit template names (overrides the sites or apps); ``max_steps``, the
    truncation limit in steps; ``invalid_action_penalty``, subtracted from the reward for a no-op by mistake.

    Class attributes:
        family: the family's name in messages (``web``, ``phone``).
        registry: the family's templates by name.
        rng_salt: the second word of each task's seed sequence (``[task_seed, rng_salt]``), so the parameters
            a template draws stay those of earlier releases.
    """

    family: ClassVar[str] = ""
    registry: ClassVar[Mapping[str, type[Task]]] = MappingProxyType({})  # each family sets its own
    rng_salt: ClassVar[int] = 0
    reset_options: ClassVar[Mapping[str, ResetOption]] = MappingProxyType({"task": TASK, "seed": SEED})
    #: The pool is chosen by ``group_kind`` (``sites``, ``apps``) among ``group_names``; a template's group is
    #: its attribute ``group_attr`` less ``group_prefix``.
    group_kind: ClassVar[str] = ""
    group_names: ClassVar[tuple[str, ...]] = ()
    group_attr: ClassVar[str] = ""
    group_prefix: ClassVar[str] = ""

    def __init__(
        self,
        groups: Sequence[str],
        tasks: Sequence[str] | None = None,
        max_steps: int = 30,
        invalid_action_penalty: float = 0.01,
        **plumbing: Any,
    ) -> None:
        """The plumbing base is built from ``plumbing``, then the pool is checked (see :meth:`_init_tasks`)."""
        super().__init__(**plumbing)
        self._init_tasks(groups, tasks, max_steps, invalid_action_penalty)

    def _init_tasks(
        self, groups: Sequence[str], tasks: Sequence[str] | None, max_steps: int, invalid_action_penalty: float
    ) -> None:
        """Check the task pool (``tasks``, else every template of ``groups``) and set the spaces; the plumbing
        base must be initialised first."""
        self.pool = TaskPool(type(self), groups, tasks, self._group_of)
        self.task_names = self.pool.names
        self.max_steps, self.invalid_action_penalty = int(max_steps), float(invalid_action_penalty)
        self.observation_space = spaces.Dict({**self._base_spaces(), "step": spaces.Discrete(self.max_steps + 1)})
        self.action_space = ActionSpace(self.screen_size)
        self.task: Task | None = None
        self.task_seed = 0
        self.free_instruction = ""
        self.oracle: Oracle | None = None
        self._steps = 0
        self._was_reset = False

    # ----- hooks of the plumbing base ------------------------------------------------------------------------
    def _begin(self, cls: type[Task], seed: int) -> Task | None:
        """Restore the app state to ``seed`` and build the task on it (``None``: this backend cannot judge)."""
        raise NotImplementedError

    def _open(self) -> None:
        """Show the task's start screen and observe it."""
        raise NotImplementedError

    def _perform(self, action: Action) -> str | None:
        """Perform ``action`` (not a ``stop``) and observe; returns why it was a no-op, or ``None``."""
        raise NotImplementedError

    def _location(self) -> str:
        """Where the screen is (URL, or ``package/activity``), appended to the task's ``visited``."""
        raise NotImplementedError

    def _plan_view(self) -> Any:
        """What the oracle plan's steps read (see :class:`~gui_envs.tasks.base.PlanStep`)."""
        raise NotImplementedError

    def _target_bbox(self, step: PlanStep, action: Action, view: Any) -> list[int] | None:
        """Screenshot pixels of the element a planned ``action`` acts on, or ``None``."""
        raise NotImplementedError

    def _action_info(self, parsed: Action | None) -> dict[str, Any]:
        """``info`` entries about this step's action, read before it runs (an element id names an element of
        the screen the agent saw)."""
        return {}

    def _screen_info(self) -> dict[str, Any]:
        """The family's ``info`` entries about the screen now (URL or app, what the handlers reported)."""
        return {}

    def _drop_reports(self) -> None:
        """Forget what the last episode's handlers reported and nobody read (it ended without a step)."""
        self._screen_info()

    # ----- gymnasium API -------------------------------------------------------------------------------------
    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        cls, self.task_seed = self._draw(self.np_random, dict(options or {}))
        self._steps = 0
        self._drop_reports()
        self.task = self._begin(cls, self.task_seed)
        self.oracle = Oracle(self.task.oracle_plan(), self._target_bbox, cls.name) if self.task else None
        self._open()
        if self.task is not None:
            self.task.visited.append(self._location())
        self._was_reset = True
        return self._obs(), self._info(None, 0.0)

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        task = self.task
        self._steps += 1
        parsed, error = coerce_action(action)
        stop = parsed if parsed is not None and parsed.type == "stop" else None
        extra = self._action_info(parsed)
        if parsed is not None and stop is None:
            error = self._perform(parsed)
            if task is not None:
                task.visited.append(self._location())  # infeasible judges check where the agent looked
        instruction = task.instruction if task is not None else self.free_instruction
        reward, terminated, truncated, info = judge_step(
            task, self.oracle, parsed, error, self._steps, self.max_steps, self.invalid_action_penalty,
            self.task_seed, instruction,
        )
        return self._obs(), reward, terminated, truncated, {**info, **self._screen_info(), **extra}

    def oracle_action(self) -> Action:
        """The next action of the task's oracle plan, resolved on the current screen.

        Calling it does not advance the plan; taking the returned action in ``step`` does.
        """
        if not self._was_reset:
            raise ResetNeededError("call reset() before oracle_action()")
        return next_oracle_action(self.oracle, self._plan_view(), self.screen_size)

    def example_task(self, cls: type[Task], seed: int) -> Task | None:
        """Template ``cls`` built at task seed ``seed`` (``None``: this backend cannot judge it), for ``guigym tasks``;
        it restores the app state to ``seed``, so call it outside an episode."""
        return self._begin(cls, seed)

    def privileged(self) -> dict[str, Any]:
        """The task's reference answer and the oracle's next target (see :mod:`gui_envs.schema.privileged`).

        Resolves the oracle plan on the current screen, once per state: only readers of this channel pay for it.
        """
        if not self._was_reset:
            raise ResetNeededError("call reset() before privileged()")
        facts = privileged_facts(self.task, self.oracle, self._plan_view(), self.screen_size)
        return {**facts, **self._privileged_extras()}

    def _privileged_extras(self) -> dict[str, Any]:
        """Further privileged facts a plumbing base records (the verifiers' ``verifier_record``)."""
        return {}

    # ----- internals -----------------------------------------------------------------------------------------
    def _group_of(self, task: type[Task]) -> str:
        return template_group(type(self), task)

    def _draw(self, rng: np.random.Generator, options: dict[str, Any]) -> tuple[type[Task], int]:
        """The episode's template and task seed: from ``options`` where given, else drawn from ``rng``."""
        return self.pool.draw(rng, options)

    def _next_episode(self) -> tuple[type[Task], int]:
        """The episode the next ``reset()`` without seed or options will play (drawn from a copy of the env's
        generator, which stays untouched), for a backend that prepares it ahead of time."""
        return self._draw(copy.deepcopy(self.np_random), {})

    def _obs(self) -> dict[str, Any]:
        instruction = self.task.instruction if self.task is not None else self.free_instruction
        obs = self._base_obs(instruction)  # type: ignore[attr-defined]  (the plumbing base's)
        obs["step"] = min(self._steps, self.max_steps)
        return obs

    def _info(self, error: str | None, score: float) -> dict[str, Any]:
        task = self.task
        instruction = task.instruction if task is not None else self.free_instruction
        return {**task_info(task, self.task_seed, instruction, error, score), **self._screen_info()}


def task_rng(seed: int, salt: int) -> np.random.Generator:
    """A task's generator: ``default_rng([seed, salt])`` (the site or app content uses the seed alone)."""
    return np.random.default_rng([int(seed), int(salt)])


class TaskPool:
    """A family's task pool: the templates an env draws its episodes from, checked once.

    Args:
        env_cls: the env class; its class attributes ``family``, ``registry``, ``group_kind``, ``group_names``,
            ``group_attr`` and ``group_prefix`` (see :class:`TaskEnv`) say how templates are grouped.
        groups: the sites or apps whose templates form the pool.
        tasks: explicit template names (overrides ``groups``).
        group_of: a template's group (default :func:`template_group`).
    """

    def __init__(
        self,
        env_cls: Any,
        groups: Sequence[str],
        tasks: Sequence[str] | None = None,
        group_of: Callable[[type[Task]], str] | None = None,
    ) -> None:
        self.family, self.registry = env_cls.family, env_cls.registry
        unknown = [g for g in groups if g not in env_cls.group_names]
        if unknown:
            raise ValueError(f"unknown {env_cls.group_kind} {unknown}; choose from {list(env_cls.group_names)}")
        group_of = group_of or functools.partial(template_group, env_cls)
        names = list(tasks) if tasks is not None else sorted(n for n, t in self.registry.items() if group_of(t) in groups)
        for n in names:
            check_task(n, self.registry, self.family)
        if not names:
            raise ValueError("the task pool is empty")
        self.names: list[str] = names

    def draw(self, rng: np.random.Generator, options: Mapping[str, Any]) -> tuple[type[Task], int]:
        """The episode's template and task seed: from ``options`` (``task``, ``seed``) where given, else drawn from
        ``rng`` (the template first, then the seed)."""
        name = options.get("task")
        if name is not None:
            cls = check_task(str(name), self.registry, self.family)
        else:
            cls = self.registry[self.names[int(rng.integers(len(self.names)))]]
        task_seed = options.get("seed")
        return cls, int(task_seed) if task_seed is not None else int(rng.integers(2**31 - 1))


def template_group(env_cls: Any, task: type[Task]) -> str:
    """``task``'s group: its attribute ``env_cls.group_attr`` less ``env_cls.group_prefix``."""
    return str(getattr(task, env_cls.group_attr)).removeprefix(env_cls.group_prefix)


def judge_step(
    task: Task | None,
    oracle: Oracle | None,
    parsed: Action | None,
    error: str | None,
    steps: int,
    max_steps: int,
    penalty: float,
    task_seed: int,
    instruction: str,
) -> tuple[float, bool, bool, dict[str, Any]]:
    """The end of a task env's step, once ``parsed`` was performed (or not, with ``error``): advance the oracle,
    judge the task, and return ``(reward, terminated, truncated, info)`` with the shared ``info`` entries
    (:func:`task_info`). ``steps``: the steps taken, this one included."""
    stop = parsed if parsed is not None and parsed.type == "stop" else None
    if oracle is not None:
        oracle.after_step(parsed, error)
    reward = -penalty if error else 0.0
    # One judgement per step: a state task's evaluate() is its done() when there is no stop.
    score = task.evaluate(stop) if task is not None else 0.0
    terminated = stop is not None or (task is not None and not task.requires_stop and task.finished(score))
    if terminated:
        reward += score
    truncated = not terminated and steps >= max_steps
    return float(reward), terminated, truncated, task_info(task, task_seed, instruction, error, score)


def task_info(task: Task | None, task_seed: int, instruction: str, error: str | None, score: float) -> dict[str, Any]:
    """The ``info`` entries every task env shares (see :class:`TaskEnv`), before the family's own."""
    return {
        "task": task.name if task is not None else None,
        "task_seed": task_seed,
        "instruction": instruction,
        "success": score >= 1.0,
        "score": float(score),
        "action_error": error,
    }


def next_oracle_action(oracle: Oracle | None, view: Any, screen: tuple[int, int]) -> Action:
    """The oracle plan's next action resolved on ``view`` (``stop`` without a plan); the plan does not advance."""
    return oracle.peek(view, screen).action if oracle is not None else Action.stop()


def privileged_facts(task: Task | None, oracle: Oracle | None, view: Any, screen: tuple[int, int]) -> dict[str, Any]:
    """``reference_answer``, ``target_bbox`` (screenshot pixels) and ``oracle_error`` of the privileged channel
    (:mod:`gui_envs.schema.privileged`), the oracle plan resolved on ``view``."""
    move = oracle.peek(view, screen) if oracle is not None else None
    return {
        "reference_answer": task.reference_answer if task is not None else None,
        "target_bbox": move.target_bbox if move is not None else None,
        "oracle_error": oracle.error if oracle is not None else None,
    }
