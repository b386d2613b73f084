"""Parse model output into :class:`~gui_envs.schema.actions.Action` records, and write actions back as text.

Two output formats are understood:

* **GUI-R1** (seeds 000 and 001): ``<think>...</think><answer>[{"action": ..., "point": [x, y],
  "input_text": ...}]</answer>``. :func:`parse_action_text` reads it, and the plain action JSON, from
  whatever the model wrote around it; :func:`parse_gui_r1` adds the coordinate-frame conversion and
  :func:`format_gui_r1` writes it.
* **CoaT** (MobileIPL, seed 003 sec. 3.1 and App. "CoaT Multi-turn Dialogue Prompts"): an *action
  decision* turn in words (``click Search``, ``scroll down``, ``type "milk"``, ``press Back``, ``stop``)
  and, for clicks, a *grounding* turn ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>`` on a 0-1000 scale.

Coordinates. Models write points in their own frame: Qwen2-VL / OS-Atlas / MobileIPL use integers in
``[0, 1000]`` on both axes, some models use ``[0, 1]`` and GUI-R1 / Qwen2.5-VL use screenshot pixels. A
:class:`CoordinateFrame` names the frame and converts explicitly; every :class:`Action` this module returns
is in **screenshot pixels** ``(x right, y down, origin top-left)``, as the env expects.

Nothing here raises on model output: failures come back as a :class:`ParseError` with a stable ``code``
(``empty``, ``too_long``, ``no_json``, ``invalid_json``, ``not_an_action``, ``invalid_action``,
``unknown_action``, ``missing_argument``, ``no_box``, ``no_screen_size``). Every parser runs in time linear
in its input and refuses text longer than :data:`~gui_envs.schema.actions.MAX_OUTPUT_CHARS` characters
(``too_long``). The env's own reader (:func:`gui_envs.schema.actions.coerce_action`) takes only JSON; this module is
where model text becomes an action.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gui_envs.schema.actions import (
    DIRECTIONS,
    MAX_OUTPUT_CHARS,
    POINTER_TYPES,
    Action,
    InvalidActionError,
    NotAnActionError,
    actions_from_json,
)
from gui_envs.schema.json_scan import answer_body, between, first_json

Point = tuple[float, float]
Box = tuple[float, float, float, float]
ScreenSize = tuple[int, int]


class CoordinateFrameError(ValueError):
    """A frame conversion needs the screen size (width, height) in pixels and did not get one."""


@dataclass(frozen=True)
class CoordinateFrame:
    """The frame a model writes coordinates in.

    Attributes:
        scale: ``None`` for screenshot pixels; otherwise the value that stands for the full width (and
            height) of the screen, e.g. ``1000`` for Qwen2-VL's ``[0, 1000]`` frame or ``1`` for ``[0, 1]``.
        integer: the model is asked to write integers (rounding is applied when *writing* in this frame).
    """

    scale: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        if self.scale is not None and not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"scale must be a positive number or None (pixels), got {self.scale!r}")

    @property
    def is_pixels(self) -> bool:
        return self.scale is None

    def to_pixels(self, point: Sequence[float], screen_size: ScreenSize | None) -> Point:
        """Convert ``(x, y)`` from this frame to screenshot pixels.

        Args:
            point: ``(x, y)`` in this frame.
            screen_size: ``(width, height)`` of the screenshot in pixels; required unless the frame is pixels.

        Raises:
            CoordinateFrameError: for a normalised frame without a screen size.
        """
        x, y = float(point[0]), float(point[1])
        if self.scale is None:
            return (x, y)
        w, h = _screen(screen_size)
        return (x / self.scale * w, y / self.scale * h)

    def from_pixels(self, point: Sequence[float], screen_size: ScreenSize | None) -> Point:
        """Convert ``(x, y)`` from screenshot pixels to this frame (rounded when ``integer``)."""
        x, y = float(point[0]), float(point[1])
        if self.scale is not None:
            w, h = _screen(screen_size)
            x, y = x / w * self.scale, y / h * self.scale
        if self.integer:
            x, y = float(round(x)), float(round(y))
        return (x, y)

    def box_to_pixels(self, box: Sequence[float], screen_size: ScreenSize | None) -> Box:
        """Convert ``(x1, y1, x2, y2)`` to pixels, with corners ordered so that ``x1 <= x2``, ``y1 <= y2``."""
        x1, y1 = self.to_pixels(box[:2], screen_size)
        x2, y2 = self.to_pixels(box[2:4], screen_size)
        return (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))

    def box_from_pixels(self, box: Sequence[float], screen_size: ScreenSize | None) -> Box:
        """Convert a pixel box to this frame."""
        x1, y1 = self.from_pixels(box[:2], screen_size)
        x2, y2 = self.from_pixels(box[2:4], screen_size)
        return (x1, y1, x2, y2)


#: Screenshot pixels (GUI-R1, Qwen2.5-VL).
PIXELS = CoordinateFrame(None)
#: Integers in [0, 1000] on both axes (Qwen2-VL, OS-Atlas, MobileIPL's grounding turn).
NORM_1000 = CoordinateFrame(1000.0, integer=True)
#: Fractions in [0, 1].
NORM_1 = CoordinateFrame(1.0)


def _screen(screen_size: ScreenSize | None) -> tuple[float, float]:
    if screen_size is None:
        raise CoordinateFrameError(
            "a normalised coordinate frame needs screen_size=(width, height) in pixels; pass the "
            "screenshot's size or use the PIXELS frame"
        )
    w, h = float(screen_size[0]), float(screen_size[1])
    if not (w > 0 and h > 0):
        raise CoordinateFrameError(f"screen_size must be two positive numbers, got {screen_size!r}")
    return w, h


def screen_size_of(observation: Any) -> ScreenSize | None:
    """``(width, height)`` of ``observation["screenshot"]`` (an (H, W, 3) array), or ``None``."""
    shot = observation.get("screenshot") if isinstance(observation, dict) else None
    shape = getattr(shot, "shape", None)
    if shape is None or len(shape) < 2:
        return None
    return (int(shape[1]), int(shape[0]))


# ----- GUI-R1 ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParseError:
    """Why a piece of model output is not an action.

    Attributes:
        code: a stable machine-readable reason (see the module docstring), e.g. ``empty``, ``too_long`` (over
            :data:`~gui_envs.schema.actions.MAX_OUTPUT_CHARS`), ``no_json``, ``invalid_json``, ``not_an_action``,
            ``invalid_action``.
        message: a human-readable explanation.
        snippet: the part of the text that failed (at most 200 characters).
    """

    code: str
    message: str
    snippet: str = ""


@dataclass(frozen=True)
class ParseResult:
    """The outcome of a parser here: either ``actions`` (at least one) or an ``error``."""

    actions: tuple[Action, ...] = ()
    error: ParseError | None = None
    think: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.actions)

    @property
    def action(self) -> Action | None:
        """The first action, or ``None`` when parsing failed."""
        return self.actions[0] if self.actions else None


def parse_action_text(text: Any) -> ParseResult:
    """Parse model output into actions (points as the model wrote them). Never raises.

    Accepts, in order of preference, the content of an ``<answer>`` tag, a fenced code block, or the first
    JSON object or list in the text (:func:`gui_envs.schema.json_scan.first_json`). The JSON may be a GUI-R1 entry
    (``{"action": ...}``), a list of them, or a plain action (``{"type": ...}``), read by
    :func:`gui_envs.schema.actions.actions_from_json`. Python-style single quotes are tolerated.

    Runs in time linear in ``len(text)``; text longer than :data:`~gui_envs.schema.actions.MAX_OUTPUT_CHARS`
    characters is refused with the error code ``too_long`` without being read.
    """
    try:
        return _parse(text)
    except Exception as exc:  # the contract is "never raises"; anything unforeseen becomes a parse error
        return ParseResult(error=ParseError("invalid_action", f"{type(exc).__name__}: {exc}", _snip(text)))


def _parse(text: Any) -> ParseResult:
    if not isinstance(text, str):
        return ParseResult(error=ParseError("empty", f"expected text, got {type(text).__name__}"))
    if (too_long := _too_long(text)) is not None:
        return ParseResult(error=too_long)
    think = between(text, "<think>", "</think>", need_close=True)
    think = think.strip() if think is not None else None
    body = answer_body(text)
    if not body.strip():
        return ParseResult(error=ParseError("empty", "no answer in the output"), think=think)
    payload, failure = first_json(body)
    if failure is not None:
        return ParseResult(error=ParseError(*failure), think=think)
    try:
        return ParseResult(actions=actions_from_json(payload), think=think)
    except NotAnActionError as exc:
        return ParseResult(error=ParseError("not_an_action", str(exc), _snip(body)), think=think)
    except (InvalidActionError, TypeError) as exc:
        return ParseResult(error=ParseError("invalid_action", str(exc), _snip(body)), think=think)


def format_gui_r1(actions: Action | Sequence[Action], think: str | None = None) -> str:
    """Write actions in the GUI-R1 answer format (``<think>`` is omitted when ``think`` is ``None``)."""
    seq = [actions] if isinstance(actions, Action) else list(actions)
    answer = json.dumps([a.to_gui_r1() for a in seq], ensure_ascii=False)
    prefix = f"<think>{think}</think>" if think is not None else ""
    return f"{prefix}<answer>{answer}</answer>"


def parse_gui_r1(
    text: Any, frame: CoordinateFrame = PIXELS, screen_size: ScreenSize | None = None
) -> ParseResult:
    """Parse GUI-R1 output and convert its points from ``frame`` to screenshot pixels. Never raises.

    Args:
        text: the model output.
        frame: the frame the model writes points in.
        screen_size: ``(width, height)`` in pixels; needed for normalised frames.
    """
    result = parse_action_text(text)
    if not result.ok or frame.is_pixels:
        return result
    if screen_size is None:
        return ParseResult(
            error=ParseError("no_screen_size", "a normalised frame needs the screenshot size", _snip(text)),
            think=result.think,
        )
    try:
        actions = tuple(_action_to_pixels(a, frame, screen_size) for a in result.actions)
    except (InvalidActionError, CoordinateFrameError, ValueError) as exc:
        return ParseResult(error=ParseError("invalid_action", str(exc), _snip(text)), think=result.think)
    return ParseResult(actions=actions, think=result.think)


def format_gui_r1_in_frame(
    action: Action, frame: CoordinateFrame = PIXELS, screen_size: ScreenSize | None = None
) -> dict[str, Any]:
    """The GUI-R1 answer entry of ``action`` with its points written in ``frame`` (inverse of parsing)."""
    if frame.is_pixels:
        return action.to_gui_r1()
    return _action_from_pixels(action, frame, screen_size).to_gui_r1()


def _action_to_pixels(action: Action, frame: CoordinateFrame, size: ScreenSize) -> Action:
    changes: dict[str, Any] = {}
    if action.point is not None:
        changes["point"] = frame.to_pixels(action.point, size)
    if action.end_point is not None:
        changes["end_point"] = frame.to_pixels(action.end_point, size)
    return _replace(action, changes)


def _action_from_pixels(action: Action, frame: CoordinateFrame, size: ScreenSize | None) -> Action:
    changes: dict[str, Any] = {}
    if action.point is not None:
        changes["point"] = frame.from_pixels(action.point, size)
    if action.end_point is not None:
        changes["end_point"] = frame.from_pixels(action.end_point, size)
    return _replace(action, changes)


def _replace(action: Action, changes: dict[str, Any]) -> Action:
    if not changes:
        return action
    data = action.to_dict()
    data.update(changes)
    return Action.from_dict(data)


# ----- grounding boxes ---------------------------------------------------------------------------------

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_PAIR_RE = re.compile(rf"\(\s*({_NUM})\s*,\s*({_NUM})\s*\)")
_FOUR_RE = re.compile(rf"\[\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*\]")


@dataclass(frozen=True)
class BoxParse:
    """The outcome of :func:`parse_box`.

    Attributes:
        box: ``(x1, y1, x2, y2)`` in **screenshot pixels**, corners ordered; ``None`` on failure.
        raw: the numbers as the model wrote them (in its frame).
        error: why no box was found.
    """

    box: Box | None = None
    raw: tuple[float, ...] = ()
    error: ParseError | None = None

    @property
    def ok(self) -> bool:
        return self.box is not None

    @property
    def center(self) -> Point | None:
        """Box centre in pixels."""
        if self.box is None:
            return None
        x1, y1, x2, y2 = self.box
        return ((x1 + x2) / 2.0, (y1 + y2) / 2.0)


def parse_box(
    text: Any, frame: CoordinateFrame = NORM_1000, screen_size: ScreenSize | None = None
) -> BoxParse:
    """Read a grounding box and convert it to pixels. Never raises.

    Accepted, in this order: ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>``; two ``(x, y)`` pairs anywhere;
    ``[x1, y1, x2, y2]``; a single ``(x, y)`` point (a zero-size box). Numbers outside the frame (for
    example 1200 on the 0-1000 scale) are kept: the env judges where the click lands.

    Args:
        text: the grounding turn's output.
        frame: the frame of the numbers (default: integers on 0-1000, as MobileIPL's prompt asks).
        screen_size: ``(width, height)`` in pixels; needed for normalised frames.
    """
    try:
        return _parse_box(text, frame, screen_size)
    except Exception as exc:  # never raises: anything unforeseen is a parse error
        return BoxParse(error=ParseError("no_box", f"{type(exc).__name__}: {exc}", _snip(text)))


def _parse_box(text: Any, frame: CoordinateFrame, screen_size: ScreenSize | None) -> BoxParse:
    if not isinstance(text, str) or not text.strip():
        return BoxParse(error=ParseError("empty", "no grounding output"))
    if (too_long := _too_long(text)) is not None:
        return BoxParse(error=too_long)
    # Literal tag searches, not a lazy regex: "<|box_start|>" repeated without a closer made it quadratic.
    tag = between(text, "<|box_start|>", "<|box_end|>", need_close=True)
    body = text if tag is None else tag
    pairs = _PAIR_RE.findall(body)
    raw: tuple[float, ...]
    if len(pairs) >= 2:
        raw = tuple(float(v) for v in (*pairs[0], *pairs[1]))
    elif (four := _FOUR_RE.search(body)) is not None:
        raw = tuple(float(v) for v in four.groups())
    elif len(pairs) == 1:
        raw = tuple(float(v) for v in (*pairs[0], *pairs[0]))
    else:
        return BoxParse(error=ParseError("no_box", "no (x1,y1),(x2,y2) box or (x, y) point", _snip(text)))
    if not all(math.isfinite(v) for v in raw):
        return BoxParse(error=ParseError("no_box", "box coordinates are not finite", _snip(text)))
    if not frame.is_pixels and screen_size is None:
        return BoxParse(
            raw=raw, error=ParseError("no_screen_size", "a normalised frame needs the screenshot size")
        )
    return BoxParse(box=frame.box_to_pixels(raw, screen_size), raw=raw)


def format_box(
    box: Sequence[float], frame: CoordinateFrame = NORM_1000, screen_size: ScreenSize | None = None
) -> str:
    """Write a pixel box as ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>`` in ``frame``."""
    x1, y1, x2, y2 = frame.box_from_pixels(box, screen_size)
    return f"<|box_start|>({_num(x1)},{_num(y1)}),({_num(x2)},{_num(y2)})<|box_end|>"


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


# ----- CoaT action decisions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CoatDecision:
    """The parsed CoaT action-decision turn (turn 3).

    Attributes:
        action_type: ``click``, ``long_press``, ``scroll``, ``type``, ``press``, ``navigate``, ``open_app``,
            ``wait`` or ``stop``; ``None`` on failure.
        target: what to click, as the model named it (``click xxx``); grounding turns it into a point.
        action: the finished action when no grounding is needed (everything but pointer actions).
        error: why the text is not a decision.
    """

    action_type: str | None = None
    target: str | None = None
    action: Action | None = None
    error: ParseError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.action_type is not None

    @property
    def needs_grounding(self) -> bool:
        """Pointer actions need the grounding turn (turn 4) to get a point."""
        return self.ok and self.action_type in POINTER_TYPES


_VERBS: dict[str, str] = {
    "click": "click",
    "tap": "click",
    "double click": "double_click",
    "double_click": "double_click",
    "long press": "long_press",
    "long_press": "long_press",
    "scroll": "scroll",
    "type": "type",
    "input": "type",
    "press": "press",
    "open app": "open_app",
    "open_app": "open_app",
    "open": "open_app",
    "wait": "wait",
    "stop": "stop",
    "complete": "stop",
    "finish": "stop",
    "navigate back": "navigate_back",
    "navigate home": "navigate_home",
}
# Longest verbs first, so that "double click" wins over "click"; a verb must start and end a word.
_VERB_ALT = "(" + "|".join(re.escape(v) for v in sorted(_VERBS, key=len, reverse=True)) + r")(?![\w])"
_VERB_RE = re.compile(r"(?<![\w])" + _VERB_ALT, re.IGNORECASE)
# A line that starts with the verb, optionally after a bullet, bold markers or "Action:". No two adjacent
# quantifiers can match the same character (a line of '*' once took seconds: "[ *]*" then "\**").
_LINE_VERB_RE = re.compile(
    r"^[ \t>*#-]*(?:action(?:\s+decision)?\s*(?:\*+\s*)?[:：][\s*]*)?" + _VERB_ALT,
    re.IGNORECASE | re.MULTILINE,
)
_QUOTES = "\"'“”‘’`"
_NAV_KEYS = {"back": "back", "home": "home", "go back": "back", "go home": "home"}


def parse_coat_decision(text: Any) -> CoatDecision:
    """Parse a CoaT action decision such as ``click Search``, ``scroll down``, ``type "milk"``,
    ``press Back`` or ``stop``. Never raises.

    The first action verb in the text starts the decision (so ``Action: click the cart icon.`` works). A
    ``type`` takes the text between the first and the last quote after the verb (the whole rest of the line
    when unquoted). ``press Back`` / ``press Home`` become ``navigate`` actions; other keys ``press``.
    """
    try:
        return _parse_coat(text)
    except Exception as exc:  # never raises
        return CoatDecision(error=ParseError("invalid_action", f"{type(exc).__name__}: {exc}", _snip(text)))


def _parse_coat(text: Any) -> CoatDecision:
    if not isinstance(text, str) or not text.strip():
        return CoatDecision(error=ParseError("empty", "no action decision in the output"))
    if (too_long := _too_long(text)) is not None:
        return CoatDecision(error=too_long)
    # Prefer a line that starts with the verb (optionally after "Action:"), else the first verb anywhere.
    match = _LINE_VERB_RE.search(text) or _VERB_RE.search(text)
    if match is None:
        return CoatDecision(
            error=ParseError("unknown_action", "no action verb (click/scroll/type/press/stop)", _snip(text))
        )
    kind = _VERBS[match.group(1).lower()]
    rest = text[match.end() :]
    line = rest.split("\n", 1)[0].strip()
    arg = line.strip(" :.").strip()

    def missing(what: str) -> CoatDecision:
        return CoatDecision(error=ParseError("missing_argument", f"{kind} needs {what}", _snip(text)))

    if kind in POINTER_TYPES:
        return CoatDecision(action_type=kind, target=_unquote(arg) or None)
    if kind == "type":
        typed = _quoted(rest)
        if typed is None:
            typed = arg
            if not typed:
                return missing('the text to type, e.g. type "milk"')
        return CoatDecision("type", action=Action("type", text=typed))
    if kind == "scroll":
        word = re.search(r"\b(up|down|left|right)\b", line, re.IGNORECASE)
        if word is None:
            return missing(f"a direction in {DIRECTIONS}")
        return CoatDecision("scroll", action=Action("scroll", direction=word.group(1).lower()))
    if kind == "press":
        key = _unquote(arg)
        if not key:
            return missing("a key, e.g. press Back")
        if key.lower() in _NAV_KEYS:
            return CoatDecision("navigate", action=Action("navigate", target=_NAV_KEYS[key.lower()]))
        return CoatDecision("press", action=Action("press", key=key))
    if kind in ("navigate_back", "navigate_home"):
        return CoatDecision("navigate", action=Action("navigate", target=kind.split("_")[1]))
    if kind == "open_app":
        app = _unquote(arg)
        if not app:
            return missing("an app name")
        return CoatDecision("open_app", action=Action("open_app", app=app))
    if kind == "wait":
        return CoatDecision("wait", action=Action("wait"))
    answer = _quoted(rest)
    return CoatDecision("stop", action=Action("stop", answer=answer or None))


def _quoted(rest: str) -> str | None:
    """Text between the first and the last quote character of ``rest``; ``None`` without two quotes."""
    first = next((i for i, c in enumerate(rest) if c in _QUOTES), None)
    if first is None:
        return None
    last = next((i for i in range(len(rest) - 1, first, -1) if rest[i] in _QUOTES), None)
    if last is None:
        return None
    return rest[first + 1 : last]


def _unquote(arg: str) -> str:
    return arg.strip().strip(_QUOTES).strip()


def coat_action(
    decision_text: Any,
    grounding_text: Any = None,
    frame: CoordinateFrame = NORM_1000,
    screen_size: ScreenSize | None = None,
) -> ParseResult:
    """Combine CoaT turns 3 (decision) and 4 (grounding) into one pixel-space action. Never raises.

    Pointer actions click the centre of the grounding box; other actions ignore ``grounding_text``.
    """
    decision = parse_coat_decision(decision_text)
    if decision.error is not None:
        return ParseResult(error=decision.error)
    if not decision.needs_grounding:
        assert decision.action is not None  # every non-pointer decision carries its action
        return ParseResult(actions=(decision.action,))
    box = parse_box(grounding_text, frame, screen_size)
    if box.error is not None or box.center is None:
        return ParseResult(error=box.error or ParseError("no_box", "no grounding box"))
    try:
        return ParseResult(actions=(Action(str(decision.action_type), point=box.center),))
    except InvalidActionError as exc:
        return ParseResult(error=ParseError("invalid_action", str(exc), _snip(grounding_text)))


def format_coat(
    action: Action,
    frame: CoordinateFrame = NORM_1000,
    screen_size: ScreenSize | None = None,
    target: str = "the target",
) -> tuple[str, str | None]:
    """Write ``action`` as CoaT turns 3 and 4: ``(decision, grounding or None)``.

    Raises:
        InvalidActionError: for actions CoaT has no words for (swipe with an end point, hover, url
            navigation, element-id clicks).
    """
    t = action.type
    if t in ("click", "long_press", "double_click"):
        if action.point is None:
            raise InvalidActionError("CoaT grounds clicks by point; this action has only an element id")
        x, y = action.point
        verb = {"click": "click", "long_press": "long press", "double_click": "double click"}[t]
        return f"{verb} {target}", format_box((x, y, x, y), frame, screen_size)
    if t == "scroll":
        return f"scroll {action.direction}", None
    if t == "type":
        return f'type "{action.text}"', None
    if t == "press":
        return f"press {action.key}", None
    if t == "navigate" and action.target in ("back", "home"):
        return f"press {action.target.capitalize()}", None
    if t == "open_app":
        return f"open app {action.app}", None
    if t == "wait":
        return "wait", None
    if t == "stop":
        return (f'stop "{action.answer}"' if action.answer else "stop"), None
    raise InvalidActionError(f"CoaT has no wording for {action.to_dict()}")


def _snip(text: Any) -> str:
    return str(text)[:200]


def _too_long(text: str) -> ParseError | None:
    if len(text) <= MAX_OUTPUT_CHARS:
        return None
    return ParseError(
        "too_long", f"the output is {len(text)} characters; at most {MAX_OUTPUT_CHARS} are read", _snip(text)
    )
