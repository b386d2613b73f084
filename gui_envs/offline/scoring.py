"""Type / GR / SR step scoring for offline GUI benchmarks (seed 000 sec. 4.1; seed 001 App. A.3 and F.2).

* **Type**: the predicted action type equals the recorded one (``navigate`` counts its target, so
  ``navigate back`` and ``navigate home`` differ).
* **GR** (grounding), for steps whose recorded action targets a point: the predicted point lies inside the
  recorded element box, or -- when only a point was recorded -- within ``0.14`` of it in normalised screen
  coordinates (``hypot(dx / W, dy / H)``; seed 001 App. A.3).
* **SR** (step success): Type, plus the arguments: GR for pointer actions, token-set F1 >= 0.5 for text
  (typed text, app names, stop answers), exact match for scroll directions and keys.

A malformed prediction (``None``) scores 0 on all three.
"""

from __future__ import annotations

from dataclasses import dataclass

from gui_envs.actions import POINTER_TYPES, Action
from rewards.geometry import normalised_distance
from rewards.text import token_set_f1

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
    pred: Action | None, target: Action, bbox: Box | None, screen_size: tuple[int, int]
) -> StepScore:
    """Score ``pred`` against the recorded ``target`` (pixels; ``bbox`` is the target element, if known).

    >>> gt = Action.click(50, 50)
    >>> score_step(Action.click(55, 52), gt, (40, 40, 60, 60), (100, 100))
    StepScore(type_match=True, grounding=True, success=True, offset=(5.0, 2.0))
    >>> score_step(Action.type_text("buy milk now"), Action.type_text("buy milk"), None, (100, 100)).success
    True
    """
    pointer_gt = target.type in POINTER_TYPES
    if pred is None:
        return StepScore(False, False if pointer_gt else None, False)
    type_match = action_kind(pred) == action_kind(target)
    grounding: bool | None = None
    offset = None
    if pointer_gt:
        hit = (
            pred.type in POINTER_TYPES
            and pred.point is not None
            and point_hit(pred.point, target, bbox, screen_size)
        )
        grounding = bool(hit)
        centre = target_centre(target, bbox)
        if pred.point is not None and centre is not None:
            offset = (pred.point[0] - centre[0], pred.point[1] - centre[1])
    success = type_match and _args_match(pred, target, grounding)
    return StepScore(type_match, grounding, success, offset)


def _args_match(pred: Action, target: Action, grounding: bool | None) -> bool:
    t = target.type
    if t in POINTER_TYPES:
        return bool(grounding)
    if t == "type":
        return token_set_f1(pred.text or "", target.text or "") >= TEXT_F1_THRESHOLD
    if t == "open_app":
        return token_set_f1(pred.app or "", target.app or "") >= TEXT_F1_THRESHOLD
    if t in ("scroll", "swipe"):
        return target.direction is None or pred.direction == target.direction
    if t == "press":
        return (pred.key or "").lower() == (target.key or "").lower()
    if t == "navigate" and target.target == "url":
        return (pred.url or "").rstrip("/") == (target.url or "").rstrip("/")
    if t == "stop" and target.answer:
        return token_set_f1(pred.answer or "", target.answer) >= TEXT_F1_THRESHOLD
    return True
