"""Type / GR / SR step scoring for offline GUI benchmarks (seed 000 sec. 4.1; seed 001 App. A.3 and F.2).

* **Type**: the predicted action type equals the recorded one (``navigate`` counts its target, so
  ``navigate back`` and ``navigate home`` differ).
* **GR** (grounding), for steps whose recorded action targets a point: the predicted point lies inside the
  recorded element box, or -- when only a point was recorded -- within ``0.14`` of it in normalised screen
  coordinates (``hypot(dx / W, dy / H)``; seed 001 App. A.3).
* **SR** (step success): Type, plus the arguments: GR for pointer actions, token-set F1 >= 0.5 for text
  (typed text, app names, stop answers), exact match for scroll directions and keys.

A malformed prediction (``None``) scores 0 on all three.

These are guigym's defaults. Pass ``convention`` (a dataset name or a
:class:`~gui_envs.offline.conventions.Convention`) to score as that dataset's own evaluation code does: its Type
labels, click tolerance and text-match rule (:mod:`gui_envs.offline.conventions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gui_envs.offline.conventions import Convention, convention_for
from gui_envs.schema.actions import POINTER_TYPES, Action
from rewards.geometry import normalised_distance

#: Accept a click without a box this close to the recorded point (normalised distance; seed 001 App. A.3).
POINT_THRESHOLD = 0.14
#: Text arguments match at token-set F1 of at least this (seed 001 App. F.2).
TEXT_F1_THRESHOLD = 0.5

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class StepScore:
    """How one prediction fares against the recorded step.

    Attributes:
        type_match: Type.
        grounding: GR; ``None`` when the recorded action is not a pointer action (GR does not apply).
        success: SR.
        offset: predicted point minus the target centre ``(dx, dy)`` in pixels, for pointer steps where the
            prediction has a point; else ``None``.
    """

    type_match: bool
    grounding: bool | None
    success: bool
    offset: tuple[float, float] | None = None


def action_kind(action: Action) -> str:
    """The type compared by Type: the action type, with ``navigate`` refined by its target."""
    return f"navigate_{action.target}" if action.type == "navigate" else action.type


def point_hit(
    point: tuple[float, float], target: Action, bbox: Box | None, screen_size: tuple[int, int]
) -> bool:
    """GR's acceptance rule: inside ``bbox`` when there is one, else within :data:`POINT_THRESHOLD`."""
    x, y = point
    if bbox is not None:
        x1, y1, x2, y2 = bbox
        return x1 <= x <= x2 and y1 <= y <= y2
    if target.point is None:
        return False
    return float(normalised_distance(point, target.point, screen_size)) <= POINT_THRESHOLD


def target_centre(target: Action, bbox: Box | None) -> tuple[float, float] | None:
    """The box centre when a box was recorded, else the recorded point (pixels)."""
    if bbox is not None:
        return ((bbox[0] + bbox[2]) / 2.0, (bbox[1] + bbox[3]) / 2.0)
    return target.point


def score_step(
    pred: Action | None,
    target: Action,
    bbox: Box | None,
    screen_size: tuple[int, int],
    convention: str | Convention | None = None,
    boxes: Sequence[Box] = (),
) -> StepScore:
    """Score ``pred`` against the recorded ``target`` (pixels; ``bbox`` is the target element, if known).

    ``convention`` picks the dataset's rules (default: guigym's); ``boxes`` are the screen's element boxes, for
    datasets that accept a click anywhere in the target's element (AITZ).

    >>> gt = Action.click(50, 50)
    >>> score_step(Action.click(55, 52), gt, (40, 40, 60, 60), (100, 100))
    StepScore(type_match=True, grounding=True, success=True, offset=(5.0, 2.0))
    >>> score_step(Action.type_text("buy milk now"), Action.type_text("buy milk"), None, (100, 100)).success
    True
    """
    rules = convention_for(convention)
    pointer_gt = target.type in POINTER_TYPES
    if pred is None:
        return StepScore(False, False if pointer_gt else None, False)
    type_match = rules.kind(pred) == rules.kind(target)
    grounding: bool | None = None
    offset = None
    if pointer_gt:
        hit = (
            pred.type in POINTER_TYPES
            and pred.point is not None
            and rules.hit(pred.point, target.point, bbox, boxes, screen_size)
        )
        grounding = bool(hit)
        centre = target_centre(target, bbox)
        if pred.point is not None and centre is not None:
            offset = (pred.point[0] - centre[0], pred.point[1] - centre[1])
    success = type_match and rules.args_match(pred, target, grounding)
    return StepScore(type_match, grounding, success, offset)
