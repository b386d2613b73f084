"""Each offline dataset's own scoring conventions, taken from the evaluation code its authors publish.

A :class:`Convention` says, for one dataset, what counts as the same action **type** (Type), when a click
**hits** (GR), and when a typed **text** matches (part of SR). ``docs/offline_datasets.md`` tabulates them.

| dataset | Type | click hit | text match | source |
| --- | --- | --- | --- | --- |
| ScreenSpot v1/v2, Pro | click only | inside the box, edges included | - | SeeClick ``pretrain/screenspot_test.py``; ScreenSpot-Pro ``eval_screenspot_pro.py`` (``eval_sample_positive_gt``) |
| AndroidControl | ``action_type`` | normalised distance < 0.14 | GUI-R1 token F1 >= 0.5 | GUI-R1 ``guir1/eval/eval_omni.py`` (AndroidControl ships no scorer) |
| AITZ | CoAT's five types (click, scroll, type, press, stop) | same element box (x2.4) or normalised distance <= 0.14 | substring, or Levenshtein ratio > 0.8 | CoAT ``coat/evaluate.py``, ``coat/action_utils.py`` |
| GUI-Odyssey | the ``action`` names | inside ``sam2_bbox`` or normalised distance <= 0.14 | substring, or ANLS >= 0.5 | GUI-Odyssey ``src/eval_mm/GUIOdyssey_action_matching.py`` |
| GUI-R1 | ``gt_action`` names | point: normalised distance < 0.14; box: strictly inside | GUI-R1 token F1 >= 0.5 | GUI-R1 ``guir1/eval/eval_omni.py``, ``verl/utils/reward_score/r1gui.py`` |

Scroll directions are compared word for word: each reader keeps the dataset's own word (AITZ and GUI-Odyssey
name the finger's motion, "scroll up" = finger moves up), so a prediction scores as the dataset scores it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gui_envs.schema.actions import POINTER_TYPES, Action
from rewards.text import token_set_f1

Box = tuple[float, float, float, float]
Point = tuple[float, float]

#: The click tolerance most GUI benchmarks share: 0.14 of the screen, as a normalised distance
#: ``hypot(dx / W, dy / H)`` (AITW ``action_matching.py``; seed 001 App. A.3).
DISTANCE_THRESHOLD = 0.14


def normalised_distance(a: Point, b: Point, size: tuple[int, int]) -> float:
    """``hypot(dx / W, dy / H)`` between two pixel points on a ``(W, H)`` screen."""
    w, h = size
    return math.hypot((a[0] - b[0]) / w, (a[1] - b[1]) / h)


# ----- text-match rules ------------------------------------------------------------------------------------


def guigym_text_match(pred: str, gold: str) -> bool:
    """guigym's default: token-set F1 >= 0.5 (seed 001 App. F.2)."""
    return token_set_f1(pred, gold) >= 0.5


def gui_r1_f1(pred: str, gold: str) -> float:
    """GUI-R1's ``calculate_f1_score`` rule (``eval_omni.py``): lower-cased whitespace token sets, brackets
    dropped; two single tokens where one contains the other score 1.

    >>> gui_r1_f1("New York", "new york city")
    0.8
    >>> gui_r1_f1("milk", "milkshake")
    1.0
    """
    p = set(pred.replace("[", "").replace("]", "").lower().split())
    g = set(gold.replace("[", "").replace("]", "").lower().split())
    if len(p) == 1 and len(g) == 1:
        (a,), (b,) = p, g
        if a in b or b in a:
            return 1.0
    common = len(p & g)
    precision = common / len(p) if p else 0.0
    recall = common / len(g) if g else 0.0
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def gui_r1_text_match(pred: str, gold: str) -> bool:
    """GUI-R1: :func:`gui_r1_f1` >= 0.5."""
    return gui_r1_f1(pred, gold) >= 0.5


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def odyssey_text_match(pred: str, gold: str) -> bool:
    """GUI-Odyssey's ``text_matching``: after stripping, one contains the other, or ANLS
    ``1 - levenshtein / max(len)`` >= 0.5.

    >>> odyssey_text_match("helo world", "hello world")
    True
    """
    p, g = pred.strip(), gold.strip()
    if g in p or p in g:
        return True
    longest = max(len(g), len(p))
    return (1.0 - _levenshtein(g, p) / longest if longest else 1.0) >= 0.5


def _lcs(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for ca in a:
        prev = 0
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if ca == cb else max(row[j], row[j - 1])
    return row[-1]


def levenshtein_ratio(a: str, b: str) -> float:
    """python-Levenshtein's ``ratio``: ``1 - indel / (len(a) + len(b))`` = ``2 LCS / (len(a) + len(b))``.

    >>> round(levenshtein_ratio("kitten", "sitting"), 4)
    0.6154
    """
    total = len(a) + len(b)
    return 1.0 if total == 0 else 2.0 * _lcs(a, b) / total


def aitz_text_match(pred: str, gold: str) -> bool:
    """CoAT's ``ActionEvaluator``: one contains the other, or Levenshtein ratio > 0.8."""
    return pred in gold or gold in pred or levenshtein_ratio(pred, gold) > 0.8


# ----- click rules -----------------------------------------------------------------------------------------


def _inside(p: Point, box: Box, strict: bool = False) -> bool:
    x1, y1, x2, y2 = box
    if strict:
        return x1 < p[0] < x2 and y1 < p[1] < y2
    return x1 <= p[0] <= x2 and y1 <= p[1] <= y2


def guigym_hit(
    p: Point, gold: Point | None, bbox: Box | None, boxes: Sequence[Box], size: tuple[int, int]
) -> bool:
    """guigym's default: inside the box when there is one, else normalised distance <= 0.14."""
    if bbox is not None:
        return _inside(p, bbox)
    return gold is not None and normalised_distance(p, gold, size) <= DISTANCE_THRESHOLD


def screenspot_hit(
    p: Point, gold: Point | None, bbox: Box | None, boxes: Sequence[Box], size: tuple[int, int]
) -> bool:
    """ScreenSpot v1/v2 and Pro: ``x1 <= x <= x2 and y1 <= y <= y2`` (edges count)."""
    return bbox is not None and _inside(p, bbox)


def gui_r1_hit(
    p: Point, gold: Point | None, bbox: Box | None, boxes: Sequence[Box], size: tuple[int, int]
) -> bool:
    """GUI-R1: a recorded box must hold the point strictly (``r1gui_accuracy_reward``); a recorded point must be
    nearer than 0.14 (``eval_omni.py``: ``dx**2 + dy**2 < 0.14**2`` in screen fractions)."""
    if bbox is not None:
        return _inside(p, bbox, strict=True)
    return gold is not None and normalised_distance(p, gold, size) < DISTANCE_THRESHOLD


def odyssey_hit(
    p: Point, gold: Point | None, bbox: Box | None, boxes: Sequence[Box], size: tuple[int, int]
) -> bool:
    """GUI-Odyssey's ``click_matching``: inside ``sam2_bbox`` (edges count), or within 0.14 of the point."""
    if bbox is not None and _inside(p, bbox):
        return True
    return gold is not None and normalised_distance(p, gold, size) <= DISTANCE_THRESHOLD


#: AITW's box growth: each element box grows by 1.4 of its size, 0.7 on each side (``action_utils.py``).
AITW_BOX_GROWTH = 1.4


def aitz_hit(
    p: Point, gold: Point | None, bbox: Box | None, boxes: Sequence[Box], size: tuple[int, int]
) -> bool:
    """AITW's ``_check_tap_actions_match`` (shipped as CoAT ``coat/action_utils.py``): both taps in one grown
    element box, or within 0.14 of each other (normalised ``(y, x)``).

    The grown box is computed in screen fractions and its size capped at 1, as ``action_utils`` does.
    """
    if gold is None:
        return False
    if normalised_distance(p, gold, size) <= DISTANCE_THRESHOLD:
        return True
    w, h = size
    for x1, y1, x2, y2 in boxes:
        top, left, bh, bw = y1 / h, x1 / w, (y2 - y1) / h, (x2 - x1) / w
        top, left = max(0.0, top - AITW_BOX_GROWTH * bh / 2), max(0.0, left - AITW_BOX_GROWTH * bw / 2)
        bh, bw = min(1.0, bh * (1 + AITW_BOX_GROWTH)), min(1.0, bw * (1 + AITW_BOX_GROWTH))
        grown = (left * w, top * h, (left + bw) * w, (top + bh) * h)
        if _inside(p, grown) and _inside(gold, grown):
            return True
    return False


# ----- Type rules ------------------------------------------------------------------------------------------


def guigym_kind(a: Action) -> str:
    """guigym's default Type: the action type, with ``navigate`` refined by its target."""
    return f"navigate_{a.target}" if a.type == "navigate" else a.type


def _button(a: Action) -> str | None:
    return a.target if a.type == "navigate" else (a.key or "").lower() if a.type == "press" else None


def aitz_kind(a: Action) -> str:
    """CoAT's five types: click, scroll, type, press (back, home, enter), stop (complete or impossible)."""
    if a.type == "click":
        return "click"
    if a.type in ("scroll", "type", "stop"):
        return a.type
    if _button(a) in ("back", "home", "enter"):
        return "press"
    return f"other:{a.type}"


_ODYSSEY_KINDS = {"click": "CLICK", "long_press": "LONG_PRESS", "scroll": "SCROLL", "type": "TYPE"}


def odyssey_kind(a: Action) -> str:
    """GUI-Odyssey's action names after ``format_converter.decode_action`` (KEY_* clicks become PRESS_*)."""
    if a.type in _ODYSSEY_KINDS:
        return _ODYSSEY_KINDS[a.type]
    button = _button(a)
    if button in ("home", "back"):
        return f"PRESS_{button.upper()}"
    if button in ("recent", "app_switch"):
        return "PRESS_RECENT"
    if a.type == "stop":
        return "IMPOSSIBLE" if a.status == "infeasible" else "COMPLETE"
    return f"other:{a.type}"


_R1_POINTER = {
    "click": "click",
    "long_press": "long_press",
    "double_click": "doubleclick",
    "right_click": "rightclick",
    "hover": "moveto",
}


def gui_r1_kind(a: Action) -> str:
    """GUI-R1's ``gt_action`` name of an action (see ``gui_envs.offline.gui_r1`` for the reverse map)."""
    if a.type in _R1_POINTER:
        return _R1_POINTER[a.type]
    if a.type in ("type", "scroll", "open_app", "wait"):
        return a.type
    if a.type == "swipe":
        return "drag" if a.end_point is not None else "swipe"
    if a.type == "navigate":
        return f"press_{a.target}"
    if a.type == "press":
        key = (a.key or "").lower()
        if key == "enter":
            return "enter"
        if key == "delete":
            return "close/delete"
        if "+" in key:
            return "hotkey"
        return f"press_{key}"
    if a.type == "stop":
        if a.status == "infeasible":
            return "impossible"
        if a.status == "failure":
            return "call_user"
        return "back_information" if a.answer else "complete"
    return f"other:{a.type}"


# ----- conventions -----------------------------------------------------------------------------------------

HitRule = Callable[[Point, "Point | None", "Box | None", Sequence[Box], tuple[int, int]], bool]


@dataclass(frozen=True)
class Convention:
    """How one dataset scores a step.

    Attributes:
        name: the dataset (reader name), or ``"guigym"`` for the default.
        kind: the Type label of an action; Type holds when the prediction's label equals the target's.
        hit: whether a predicted point hits: ``hit(point, gold_point, bbox, element_boxes, (W, H))``.
        text_match: whether a predicted text matches the recorded one (typed text, app names).
        answer_scored: whether a ``stop`` answer is compared (otherwise stop is scored on Type alone).
        swipe_scored: whether a swipe's direction is compared (GUI-R1 scores swipe on Type alone).
        source: the upstream file the rules come from.
    """

    name: str
    kind: Callable[[Action], str]
    hit: HitRule
    text_match: Callable[[str, str], bool]
    answer_scored: bool = False
    swipe_scored: bool = True
    source: str = ""

    def args_match(self, pred: Action, target: Action, grounding: bool | None) -> bool:
        """SR's argument check, once Type holds."""
        t = target.type
        if t in POINTER_TYPES:
            return bool(grounding)
        if t == "type":
            return self.text_match(pred.text or "", target.text or "")
        if t == "open_app":
            return self.text_match(pred.app or "", target.app or "")
        if t == "scroll":
            return target.direction is None or pred.direction == target.direction
        if t == "swipe":
            return not self.swipe_scored or target.direction is None or pred.direction == target.direction
        if t == "navigate" and target.target == "url":
            return (pred.url or "").rstrip("/") == (target.url or "").rstrip("/")
        if t in ("press", "navigate"):
            return _button(pred) == _button(target)
        if t == "stop" and target.answer and self.answer_scored:
            return self.text_match(pred.answer or "", target.answer)
        return True


GUIGYM = Convention(
    "guigym", guigym_kind, guigym_hit, guigym_text_match, answer_scored=True, source="seed 001 App. A.3, F.2"
)
_SCREENSPOT = "SeeClick pretrain/screenspot_test.py; ScreenSpot-Pro eval_screenspot_pro.py"
_R1_EVAL = "GUI-R1 guir1/eval/eval_omni.py, verl/utils/reward_score/r1gui.py"

CONVENTIONS: dict[str, Convention] = {
    "screenspot": Convention(
        "screenspot", guigym_kind, screenspot_hit, guigym_text_match, source=_SCREENSPOT
    ),
    "screenspot_pro": Convention(
        "screenspot_pro", guigym_kind, screenspot_hit, guigym_text_match, source=_SCREENSPOT
    ),
    "androidcontrol": Convention(
        "androidcontrol", guigym_kind, gui_r1_hit, gui_r1_text_match, source=_R1_EVAL
    ),
    "aitz": Convention(
        "aitz", aitz_kind, aitz_hit, aitz_text_match, source="CoAT coat/evaluate.py, coat/action_utils.py"
    ),
    "gui_odyssey": Convention(
        "gui_odyssey",
        odyssey_kind,
        odyssey_hit,
        odyssey_text_match,
        source="GUI-Odyssey src/eval_mm/GUIOdyssey_action_matching.py",
    ),
    "gui_r1": Convention(
        "gui_r1", gui_r1_kind, gui_r1_hit, gui_r1_text_match, swipe_scored=False, source=_R1_EVAL
    ),
}


def convention_for(name: str | Convention | None) -> Convention:
    """The convention of dataset ``name`` (``None``: guigym's default)."""
    if name is None:
        return GUIGYM
    if isinstance(name, Convention):
        return name
    if name not in CONVENTIONS:
        raise KeyError(f"no scoring convention for {name!r}; known: {', '.join(sorted(CONVENTIONS))}")
    return CONVENTIONS[name]
