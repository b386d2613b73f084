"""The oracle: a task's plan run on the current screen, resolved only when someone asks.

``step`` never runs the plan. :meth:`Oracle.peek` resolves the next action (and the box of its target) on the
current view the first time the oracle agent (``oracle_action``), a shaping wrapper or a trainer (``privileged``)
asks in a state, and caches it until the next step; taking that action in ``step`` advances the plan.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gui_envs.schema.actions import Action
from gui_envs.tasks.base import OracleError, PlanStep

logger = logging.getLogger(__name__)

#: ``(step, action, view) -> [x0, y0, x1, y1]`` screenshot pixels of the element ``action`` acts on, or ``None``.
TargetFinder = Callable[[PlanStep, Action, Any], "list[int] | None"]


@dataclass(frozen=True)
class OracleMove:
    """The oracle's next move on the current screen.

    Attributes:
        action: what to do (``stop(status="failure")`` when the plan could not be resolved).
        next_index: the plan index once ``action`` is taken (unchanged when the step scrolled first).
        target_bbox: screenshot pixels of the element ``action`` acts on, or ``None``.
    """

    action: Action
    next_index: int
    target_bbox: list[int] | None


class Oracle:
    """A task's oracle plan with its position: the plan index, the pending move, the last error.

    Args:
        plan: the task's :meth:`~gui_envs.tasks.base.Task.oracle_plan`.
        target: how the family finds the box of the element a planned action acts on.
        name: the task's name, for the log.
    """

    def __init__(self, plan: list[PlanStep], target: TargetFinder, name: str = "") -> None:
        self.plan, self.target, self.name = plan, target, name
        self.index = 0
        self.error: str | None = None
        self._pending: OracleMove | None = None

    def peek(self, view: Any, screen: tuple[int, int]) -> OracleMove:
        """The next move on ``view`` (``screen``: the screenshot's ``(width, height)``); cached until :meth:`after_step`."""
        if self._pending is not None:
            return self._pending
        index, bbox = self.index, None
        if index >= len(self.plan):
            action = Action.stop()
        else:
            step = self.plan[index]
            try:
                action, advance = step(view, screen)
                bbox = self.target(step, action, view)
                index += int(advance)
            except OracleError as exc:
                self.error = str(exc)
                logger.debug("%s: %s", self.name, exc)
                action = Action.stop(status="failure")
        self._pending = OracleMove(action, index, bbox)
        return self._pending

    def after_step(self, taken: Action | None, error: str | None) -> None:
        """The env took ``taken`` (``None``: unparseable) with ``error``: advance when it was the pending move."""
        pending, self._pending = self._pending, None
        if pending is not None and taken == pending.action and error is None:
            self.index = pending.next_index
