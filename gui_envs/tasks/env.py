"""One env over a page or a device: the episode logic every task env shares, as objects and functions it calls.

The pieces every task env shares are here once: the task pool (:class:`TaskPool`), the end of a step
(:func:`judge_step`: oracle, judgement, reward, the shared ``info``), and the oracle's channel
(:func:`next_oracle_action`, :func:`privileged_facts`). :class:`~gui_envs.web.env.GuiWebEnv` and
:class:`~gui_envs.android.env.GuiAndroidEnv` hold and call them, each env's step reading top to bottom in its own
module. Their plumbing base, a :class:`ScreenEnv`, provides ``screen_size``, ``render`` and ``close``.

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

**Privileged** (the env's ``privileged()``, for rewards, wrappers and trainers; never in ``info``):
``reference_answer``, ``target_bbox`` (screenshot-pixel bbox of the element the oracle acts on next; ``None``
when its next action has no target), ``oracle_error``, ``verifier_record``.

**Reset**: ``reset(seed=s, options={"task": name, "seed": task_seed})``. Without ``"task"`` the template is
drawn from the pool, and without ``"seed"`` the task seed, with the env's generator; an unknown name raises
:class:`~gui_envs.tasks.base.UnknownTaskError`, any other key ``ValueError``. The task seed fixes the app content and the task's parameters;
a warm reset restores every site or app SQLite database from a cached seeded template.

Args (shared): ``tasks``, explicit template names (overrides the sites or apps); ``max_steps``, the
truncation limit in steps; ``invalid_action_penalty``, subtracted from the reward for a no-op by mistake.

The env class's attributes ``family`` (the family's name in messages: ``web``, ``phone``), ``registry`` (its
templates by name), ``rng_salt`` (the second word of each task's seed sequence, ``[task_seed, rng_salt]``, so the
parameters a template draws stay those of earlier releases) and ``group_kind`` / ``group_names`` / ``group_attr`` /
``group_prefix`` (the pool is chosen by ``group_kind``, ``sites`` or ``apps``, among ``group_names``; a template's
group is its attribute ``group_attr`` less ``group_prefix``) configure its :class:`TaskPool`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from gui_envs.browser.chromium import headless_for
from gui_envs.schema.actions import Action
from gui_envs.schema.lifecycle import SEED, TASK, ResetOption, guarded_close
from gui_envs.tasks.base import Task, check_task
from gui_envs.tasks.oracle import Oracle

if TYPE_CHECKING:
    from gui_envs.browser.shared import SharedBrowser

#: The reset options of a task env: ``task`` (a template name) and ``seed`` (the task seed).
TASK_RESET_OPTIONS: Mapping[str, ResetOption] = MappingProxyType({"task": TASK, "seed": SEED})


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


def task_rng(seed: int, salt: int) -> np.random.Generator:
    """A task's generator: ``default_rng([seed, salt])`` (the site or app content uses the seed alone)."""
    return np.random.default_rng([int(seed), int(salt)])


class TaskPool:
    """A family's task pool: the templates an env draws its episodes from, checked once.

    Args:
        env_cls: the env class; its class attributes ``family``, ``registry``, ``group_kind``, ``group_names``,
            ``group_attr`` and ``group_prefix`` (see the module docstring) say how templates are grouped.
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
    score, terminated = task.judge(stop) if task is not None else (0.0, stop is not None)
    if terminated:
        reward += score
    truncated = not terminated and steps >= max_steps
    return float(reward), terminated, truncated, task_info(task, task_seed, instruction, error, score)


def task_info(task: Task | None, task_seed: int, instruction: str, error: str | None, score: float) -> dict[str, Any]:
    """The ``info`` entries every task env shares (see the module docstring), before the family's own."""
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
