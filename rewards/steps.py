"""Plain step records that the step-level rewards read (SSL, MobileIPL, GUI-R1 baseline).

``rewards`` sits below ``gui_envs`` and cannot import its ``Action``; callers convert an action and its
annotation into these two small frozen records. All coordinates are in **screenshot pixels**.

A ``None`` prediction means the model output could not be parsed (malformed); each reward documents what
that scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rewards.text import normalise_text

Point = tuple[float, float]
Box = tuple[float, float, float, float]

#: Action types graded by position. SSL's Table 5 names click and drag; the click variants of the shared
#: action schema target a point the same way, so they are graded the same way.
GROUNDING_TYPES: frozenset[str] = frozenset({"click", "double_click", "long_press", "right_click", "drag"})
#: Point actions without an end point (MobileIPL's CLICK leaf rule, GUI-R1's point rule).
CLICK_TYPES: frozenset[str] = frozenset({"click", "double_click", "long_press", "right_click"})
#: The action type whose argument is free text (MobileIPL's INPUT).
TEXT_TYPES: frozenset[str] = frozenset({"type"})


@dataclass(frozen=True)
class StepTarget:
    """The annotated (ground-truth) action of one step.

    Attributes:
        action_type: e.g. ``"click"``, ``"type"``, ``"scroll"``.
        box: target element box ``(x1, y1, x2, y2)`` in pixels, for grounding actions.
        point: ground-truth point ``(x, y)`` in pixels; when ``None`` the box centre stands in.
        end_box: drag end box in pixels (``drag`` only).
        end_point: drag end point in pixels (``drag`` only).
        text: reference text for ``type``.
        args: every other argument that must match exactly (``direction``, ``key``, ``app``, ...).
    """

    action_type: str
    box: Box | None = None
    point: Point | None = None
    end_box: Box | None = None
    end_point: Point | None = None
    text: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)

    def reference_point(self) -> Point | None:
        """The ground-truth point, or the box centre when only a box is annotated."""
        if self.point is not None:
            return self.point
        if self.box is not None:
            x1, y1, x2, y2 = self.box
            return ((x1 + x2) / 2.0, (y1 + y2) / 2.0)
        return None


@dataclass(frozen=True)
class StepPrediction:
    """The parsed action a policy produced for one step.

    Attributes:
        action_type: predicted action type.
        point: predicted point ``(x, y)`` in pixels (pointer actions; drag start).
        end_point: predicted drag end in pixels.
        text: predicted text for ``type``.
        args: every other predicted argument (``direction``, ``key``, ``app``, ...).
    """

    action_type: str
    point: Point | None = None
    end_point: Point | None = None
    text: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)


def _finite_point(p: Point | None) -> bool:
    return p is not None and len(p) == 2 and all(math.isfinite(float(v)) for v in p)


def is_well_formed(pred: StepPrediction | None) -> bool:
    """Whether the arguments its type needs could be extracted (the "format" signal of GUI-R1 / MobileIPL).

    Pointer actions need a finite point (drag also an end point); ``type`` needs text.

    >>> is_well_formed(StepPrediction("click", point=(3.0, 4.0)))
    True
    >>> is_well_formed(StepPrediction("click"))
    False
    """
    if pred is None or not pred.action_type:
        return False
    if pred.action_type in GROUNDING_TYPES and not _finite_point(pred.point):
        return False
    if pred.action_type == "drag" and not _finite_point(pred.end_point):
        return False
    return not (pred.action_type in TEXT_TYPES and pred.text is None)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return normalise_text(a).lower() == normalise_text(b).lower()
    return a == b


def args_match(pred: StepPrediction, target: StepTarget) -> bool:
    """Every argument in ``target.args`` equals the prediction's (strings: case and spacing ignored).

    >>> args_match(StepPrediction("scroll", args={"direction": "Down"}), StepTarget("scroll", args={"direction": "down"}))
    True
    """
    return all(_same(pred.args.get(key), value) for key, value in target.args.items())


def text_exact(pred: StepPrediction, target: StepTarget) -> bool:
    """Exact text match after whitespace normalisation (SSL's planning verifier, seed 000 App. B.4)."""
    if target.text is None:
        return True
    return pred.text is not None and normalise_text(pred.text) == normalise_text(target.text)
