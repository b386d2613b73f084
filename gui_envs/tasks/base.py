"""The task template every web site and phone app task is written in (BrowserGym's split).

A task is a template plus seeded parameters. :meth:`Task.setup` draws the parameters and returns the
instruction; :meth:`Task.evaluate` judges the episode from the app state (not from the agent's words alone);
:meth:`Task.oracle_plan` lists the :class:`PlanStep` that solve it. A template is a small subclass of one of three
judges, each with one rule:

* :class:`StateTask`: success is :meth:`StateTask.done`, a predicate over the app state (databases, the current
  location). The episode ends as soon as it holds, or when the agent stops (then it is judged as is).
* :class:`AnswerTask`: information retrieval; ``stop(answer=...)`` must match :attr:`Task.reference_answer`
  under :func:`~gui_envs.tasks.judging.answers_match`.
* :class:`InfeasibleTask`: the request cannot be done. Only looking first (:meth:`InfeasibleTask.looked`) and then
  ``stop(status="infeasible")`` passes, so an agent that gives up at once fails.

A state or answer template that names a thing of the app's data mixes in :class:`CanBeInfeasible`: on about half
its seeds (:data:`INFEASIBLE_SHARE`, drawn from the task's generator) the thing is not in the data and the
infeasible judge applies; on the others a ``stop(status="infeasible")`` fails. Task name, instruction and first
screen are the same either way, so only looking tells (DESIGN.md, "Feasibility"); what counts as a look is
:mod:`gui_envs.tasks.looking`, one rule for both families.

A family (web sites, phone apps) subclasses :class:`Task` once with its state type and helpers, then mixes its
base with the three judges (``class StateTask(WebTask, core.StateTask)``); the judging rules are written here
only.
"""

from __future__ import annotations

import difflib
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from gui_envs.schema.actions import Action
from gui_envs.schema.errors import (
    ResetNeededError as ResetNeededError,  # re-exported: the task errors in one place
)
from gui_envs.schema.errors import UnknownTaskError as UnknownTaskError
from gui_envs.tasks.judging import answers_match

T = TypeVar("T")


class OracleError(LookupError):
    """The oracle plan could not find its target on the screen: a bug in a task template or its app."""


def check_task(name: str, pool: Mapping[str, T], family: str) -> T:
    """The template called ``name`` in ``pool``; raises :class:`UnknownTaskError` with close matches otherwise."""
    if name in pool:
        return pool[name]
    close = difflib.get_close_matches(name, list(pool), n=3, cutoff=0.4)
    hint = f" Did you mean {', '.join(close)}?" if close else f" Known tasks: {', '.join(sorted(pool))}."
    raise UnknownTaskError(f"unknown {family} task {name!r}.{hint}")


class PlanStep:
    """One oracle step: ``step(view, screen) -> (action, advance)``.

    ``view`` is what the family's screen looks like to a plan (a web :class:`~gui_envs.browser.observation.PageView`,
    a phone :class:`~gui_envs.android.tasks.base.PhoneView`); ``screen`` is the screenshot's ``(width, height)``
    in pixels. ``advance`` is False when the step had to scroll first; the same step is then asked again.
    """

    def __call__(self, view: Any, screen: tuple[int, int]) -> tuple[Action, bool]:
        raise NotImplementedError


class Do(PlanStep):
    """A fixed action (press a key, navigate, open an app, stop)."""

    def __init__(self, action: Action) -> None:
        self.action = action

    def __call__(self, view: Any, screen: tuple[int, int]) -> tuple[Action, bool]:
        return self.action, True


class Task:
    """Base class of every task template.

    Class attributes:
        name: unique template name within its family (``shop.add_to_wishlist``, ``clock.add_alarm``).
        requires_stop: the episode only ends on ``stop`` (answers, infeasible tasks).
        registry: the family's template table; a subclass with a ``name`` registers itself in it.

    Instance attributes: ``state`` (the family's app state), ``rng`` (the task's seeded generator),
    ``instruction`` (from :meth:`setup`), ``reference_answer`` (answer tasks), and ``visited``: the location the
    screen showed after the reset and after each step (URL on the web, ``package/activity`` on the phone; the env
    appends them), for judges that need to know where the agent looked.
    """

    name: ClassVar[str] = ""
    requires_stop: ClassVar[bool] = False
    registry: ClassVar[dict[str, type[Task]] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name and cls.registry is not None:
            if cls.name in cls.registry and cls.registry[cls.name] is not cls:
                raise ValueError(f"two task templates are named {cls.name!r}")
            cls.registry[cls.name] = cls

    def __init__(self, state: Any, rng: np.random.Generator) -> None:
        self.state = state
        self.rng = rng
        self.reference_answer: str | None = None
        self.visited: list[str] = []
        self.instruction = self.setup()

    # ----- what templates write ------------------------------------------------------------------------------
    def setup(self) -> str:
        """Draw the parameters (``self.rng``), change the seeded state if needed, return the instruction."""
        raise NotImplementedError

    def oracle_plan(self) -> list[PlanStep]:
        """The steps that solve the task from its start screen."""
        raise NotImplementedError

    # ----- the judge -----------------------------------------------------------------------------------------
    def evaluate(self, stop: Action | None) -> float:
        """Score in [0, 1] from the app state, :attr:`visited` and the ``stop`` action (``None`` if no stop)."""
        raise NotImplementedError

    def finished(self, score: float) -> bool:
        """Whether the episode ends without a ``stop``, given this step's :meth:`evaluate` score (state tasks
        whose goal holds); lets the env judge a step with one read of the state."""
        return False

    def judge(self, stop: Action | None) -> tuple[float, bool]:
        """One step's verdict, in one call from the env: ``(score, ends)``, the :meth:`evaluate` score and
        whether the episode ends (on a ``stop``, or when :meth:`finished` says so for a task that needs none)."""
        score = self.evaluate(stop)
        return score, stop is not None or (not self.requires_stop and self.finished(score))

    def is_done(self) -> bool:
        """Whether the episode should end without a ``stop`` (state tasks that succeeded)."""
        return False

    # ----- helpers -------------------------------------------------------------------------------------------
    def pick(self, items: Sequence[T]) -> T:
        """A seeded choice from ``items``."""
        if not items:
            raise LookupError(f"{self.name}: nothing to choose from in the seeded state")
        return items[int(self.rng.integers(len(items)))]


class StateTask(Task):
    """Success is :meth:`done`; a ``stop`` that says infeasible or failure scores 0."""

    def done(self) -> bool:
        """Whether the goal holds in the current app state."""
        raise NotImplementedError

    def evaluate(self, stop: Action | None) -> float:
        if stop is not None and stop.status != "success":
            return 0.0
        return 1.0 if self.done() else 0.0

    def finished(self, score: float) -> bool:
        # Without a stop, evaluate() is exactly done(): no second query of the state.
        return score >= 1.0

    def is_done(self) -> bool:
        return self.done()


class AnswerTask(Task):
    """Information retrieval: ``stop(answer=...)`` matching :attr:`reference_answer` scores 1."""

    requires_stop = True

    def evaluate(self, stop: Action | None) -> float:
        if stop is None or stop.status != "success" or self.reference_answer is None:
            return 0.0
        return 1.0 if answers_match(stop.answer or "", self.reference_answer) else 0.0

    def candidates(self) -> list[str]:
        """Every answer this template could have on this seed's data, the reference among them.

        What a blind guesser picks from (all conditions, all names, every count from 0 up to the most the app
        could show): the judge audit (:mod:`benchmarks.judge_attacks.blind_policies`) checks that exactly one of
        them passes and that listing them all at once does not. Privileged: it contains the reference.
        """
        raise NotImplementedError


#: The share of seeds on which a :class:`CanBeInfeasible` template's named thing is not in the app's data.
INFEASIBLE_SHARE = 0.5


def infeasible_score(stop: Action | None, looked: bool) -> float:
    """The infeasible verdict: 1 for ``stop(status="infeasible")`` after a look, else 0."""
    return 1.0 if stop is not None and stop.status == "infeasible" and looked else 0.0


class CanBeInfeasible(Task):
    """Mixin of a state or answer template whose named thing is missing from the app's data on some seeds.

    The template's ``setup`` draws everything it names first, then :meth:`draw_feasible`, then changes the data
    so that the thing exists (feasible) or not; nothing it returns or shows before the agent looks may depend on
    the draw. On a feasible seed the template's own judge applies (an infeasible stop scores 0); on an infeasible
    one only :meth:`looked` and ``stop(status="infeasible")`` pass, and the episode never ends without a stop.
    Put it before the judge in the bases: ``class AddToCart(ShopTask, CanBeInfeasible, StateTask)``.
    """

    feasible: bool = True

    def draw_feasible(self) -> bool:
        """Draw from the task's generator whether this seed's named thing exists (probability
        ``1 - INFEASIBLE_SHARE``); sets and returns :attr:`feasible`."""
        # The template's name is mixed in: drawn from the task generator alone, templates that make the same
        # number of draws before this one would be feasible on the same seeds.
        own = np.random.default_rng([int(self.rng.integers(2**32)), zlib.crc32(self.name.encode())])
        self.feasible = bool(own.random() >= INFEASIBLE_SHARE)
        return self.feasible

    def looked(self) -> bool:
        """Whether the agent looked where the named thing would be (:mod:`gui_envs.tasks.looking`)."""
        raise NotImplementedError

    def evaluate(self, stop: Action | None) -> float:
        if not self.feasible:
            return infeasible_score(stop, self.looked())
        return super().evaluate(stop)

    def finished(self, score: float) -> bool:
        return self.feasible and super().finished(score)

    def is_done(self) -> bool:
        return self.feasible and super().is_done()


class InfeasibleTask(Task):
    """The request cannot be fulfilled. Passing needs both :meth:`looked` and ``stop(status="infeasible")``.

    A judge that paid for giving up at once would teach an agent to give up on everything (CORE, Fig. 7), so the
    agent must first have seen that the request cannot be done: the page that shows it (web, from
    :attr:`visited`), or a search with no results (phone, from the app's ``searches`` table).
    """

    requires_stop = True

    def looked(self) -> bool:
        """Whether the agent saw that the request cannot be done."""
        raise NotImplementedError

    def evaluate(self, stop: Action | None) -> float:
        return infeasible_score(stop, stop is not None and stop.status == "infeasible" and self.looked())
