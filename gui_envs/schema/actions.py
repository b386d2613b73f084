"""The one action schema shared by every GUI environment, agent, reward and trainer.

An :class:`Action` is a small frozen record. Coordinates are in **screenshot pixels** of the observation the
action answers (x to the right, y down, origin top-left); converting from a model's normalised frame is the
parser's job in ``agents/``, never the env's.

Actions round-trip through two JSON forms:

* plain JSON (``Action.to_json`` / ``Action.from_json``), the on-disk form in trajectories;
* the GUI-R1 answer entry (seed 001, App. F.1) ``{"action": "click", "point": [x, y], "input_text": ""}``
  (``Action.to_gui_r1`` / ``Action.from_gui_r1``), where non-pointer actions carry the sentinel point
  ``[-100, -100]``.

:func:`actions_from_json` reads either form (or a list of them) from decoded JSON, and :func:`coerce_action`
is what every env's ``step`` runs on its input. Reading *model output* (``<think>``/``<answer>`` tags, prose,
code fences, Python quotes) is the agent's job: :func:`agents.parsing.parse_action_text`. (The offline envs,
scorers of predictions made elsewhere, read output text as their datasets do:
:func:`gui_envs.offline.env.read_prediction`.)

Validation errors raised by the constructor are :class:`InvalidActionError`, a ``ValueError``. Environments
never let them escape ``step``: a malformed action is a no-op with a penalty and ``info["action_error"]``.
The constructor bounds every argument, so that nothing an agent writes can stall or crash the browser or
device behind the env: coordinates are finite with ``|x|, |y| <= MAX_COORDINATE`` pixels (off-screen points
are allowed; the env decides what a click there does), text fields have the character caps below, scroll
amounts and durations have upper bounds, and every field has its documented type.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

ActionType = Literal[
    "click",
    "double_click",
    "long_press",
    "right_click",
    "hover",
    "type",
    "scroll",
    "swipe",
    "press",
    "open_app",
    "navigate",
    "wait",
    "stop",
]

ACTION_TYPES: tuple[str, ...] = ActionType.__args__  # type: ignore[attr-defined]
#: Actions that target a point or an element; SSL's step proximity uses the Gaussian field for these.
POINTER_TYPES: frozenset[str] = frozenset({"click", "double_click", "long_press", "right_click", "hover"})
DIRECTIONS: tuple[str, ...] = ("up", "down", "left", "right")
NAVIGATE_TARGETS: tuple[str, ...] = ("back", "forward", "home", "url")
STOP_STATUSES: tuple[str, ...] = ("success", "infeasible", "failure")
#: The point GUI-R1 writes for actions without coordinates (seed 001, App. F.1). A real point equal to it
#: is written with ``"has_point": true`` beside it, so that round trips stay unambiguous.
SENTINEL_POINT: tuple[float, float] = (-100.0, -100.0)

#: Largest ``|x|`` or ``|y|`` of a point, in screenshot pixels (a thousand 4K screens wide). Off-screen points
#: within it are valid actions; beyond it no screen can mean them, and the browser's input pipeline
#: overflows on values such as 1e308.
MAX_COORDINATE = 1_000_000.0
#: Largest scroll ``amount``, in pixels.
MAX_SCROLL_AMOUNT = 100_000.0
#: Largest ``duration`` (``wait``, ``long_press``, ``swipe``), in seconds.
MAX_DURATION_S = 60.0
#: Most characters a ``type`` action may type (16 KB: a long post or a pasted document). The executors insert
#: long text as one input event, so even the cap types in milliseconds, well inside the call time-out.
MAX_TYPED_TEXT = 16_384
#: Most characters of a ``stop`` answer.
MAX_ANSWER_CHARS = 4096
#: Most characters of a ``navigate`` url.
MAX_URL_CHARS = 8192
#: Most characters of a name-like field: ``element_id``, ``key``, ``app``, ``direction``, ``target``, ``status``.
MAX_NAME_CHARS = 256
#: Most characters of action text :func:`coerce_action` (and the model-output parser in ``agents.parsing``)
#: reads; longer text is an error result (``too_long``). 100k characters is about 25k tokens, far over any
#: generation budget an agent here uses.
MAX_OUTPUT_CHARS = 100_000

_MAX_CHARS = {
    "text": MAX_TYPED_TEXT,
    "answer": MAX_ANSWER_CHARS,
    "url": MAX_URL_CHARS,
    **dict.fromkeys(("element_id", "key", "app", "direction", "target", "status"), MAX_NAME_CHARS),
}
# Short, bounded reprs of agent-supplied values for error messages (a 1e6-element list stays short).
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4
_REPR.maxlevel = 2
_short = _REPR.repr

Point = tuple[float, float]


class InvalidActionError(ValueError):
    """An action's fields do not fit its type (for example a ``click`` with neither point nor element)."""


@dataclass(frozen=True)
class Action:
    """One GUI action.

    Attributes:
        type: one of :data:`ACTION_TYPES`.
        point: target in screenshot pixels ``(x, y)``; pointer actions need ``point`` or ``element_id``.
            For ``swipe`` it is the start point; for ``scroll`` and ``type`` it optionally says where.
        element_id: target element id from ``observation["elements"]`` (alternative to ``point``).
        text: text to type (``type``).
        direction: ``up``/``down``/``left``/``right`` for ``scroll`` (content moves so that the view goes
            this way) and for ``swipe`` without an end point (finger moves this way).
        amount: scroll distance in pixels; ``None`` means one page-sized step chosen by the env.
        end_point: swipe end in screenshot pixels.
        key: key name for ``press`` (``enter``, ``tab``, ``ctrl+a``, ...). Back and home are
            ``navigate`` targets, not keys, so that each action has one spelling.
        app: app name or package for ``open_app``.
        target: ``back``/``forward``/``home``/``url`` for ``navigate``.
        url: destination for ``navigate`` with ``target="url"``.
        duration: seconds, for ``wait`` and optionally ``long_press``.
        answer: the answer carried by ``stop`` (information-retrieval tasks).
        status: ``success`` (done), ``infeasible`` (the task cannot be done) or ``failure`` (give up).
    """

    type: str
    point: Point | None = None
    element_id: str | None = None
    text: str | None = None
    direction: str | None = None
    amount: float | None = None
    end_point: Point | None = None
    key: str | None = None
    app: str | None = None
    target: str | None = None
    url: str | None = None
    duration: float | None = None
    answer: str | None = None
    status: str | None = field(default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.type, str):
            raise InvalidActionError(f"type must be a string, one of {', '.join(ACTION_TYPES)}")
        # Normalise coordinates to float tuples so that equality after a JSON round trip holds.
        for name in ("point", "end_point"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _as_point(value, name))
        for name, bound, unit in (("amount", MAX_SCROLL_AMOUNT, "pixels"), ("duration", MAX_DURATION_S, "s")):
            value = getattr(self, name)
            if value is not None:
                number = _as_number(value, name)
                if not 0 <= number <= bound:
                    raise InvalidActionError(f"{name} must be in [0, {bound:g}] {unit}, got {_short(value)}")
                object.__setattr__(self, name, number)
        if isinstance(self.element_id, numbers.Integral) and not isinstance(self.element_id, bool):
            # Element ids are strings, but models often write them as JSON numbers.
            object.__setattr__(self, "element_id", str(int(self.element_id)))
        for name, cap in _MAX_CHARS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise InvalidActionError(f"{name} must be a string, got {type(value).__name__} {_short(value)}")
            if len(value) > cap:
                raise InvalidActionError(
                    f"{name} is {len(value)} characters; at most {cap} are allowed (split long text over "
                    "several type actions)"
                )
        if self.type == "stop" and self.status is None:
            # A plain stop means "done"; defaulting here keeps one spelling for the same action.
            object.__setattr__(self, "status", "success")
        if self.answer == "":
            # An empty answer and no answer are the same thing; one spelling keeps round trips exact.
            object.__setattr__(self, "answer", None)
        self._validate()

    def _validate(self) -> None:
        t = self.type
        if t not in ACTION_TYPES:
            raise InvalidActionError(f"unknown action type {t!r}; expected one of {', '.join(ACTION_TYPES)}")
        allowed = _ALLOWED_FIELDS[t]
        extra = [
            f.name
            for f in fields(self)
            if f.name != "type" and f.name not in allowed and getattr(self, f.name) is not None
        ]
        if extra:
            raise InvalidActionError(f"{t} does not take {extra}; it takes {sorted(allowed)}")
        if t in POINTER_TYPES and self.point is None and self.element_id is None:
            raise InvalidActionError(f"{t} needs a point (screenshot pixels) or an element_id")
        if t == "type" and self.text is None:
            raise InvalidActionError("type needs text")
        if t == "scroll" and self.direction not in DIRECTIONS:
            raise InvalidActionError(f"scroll needs direction in {DIRECTIONS}, got {self.direction!r}")
        if t == "swipe":
            if self.point is None:
                raise InvalidActionError("swipe needs a start point")
            if self.end_point is None and self.direction not in DIRECTIONS:
                raise InvalidActionError("swipe needs an end_point or a direction")
        if self.direction is not None and self.direction not in DIRECTIONS:
            raise InvalidActionError(f"direction must be one of {DIRECTIONS}, got {self.direction!r}")
        if t == "press":
            if not self.key or not isinstance(self.key, str):
                raise InvalidActionError("press needs a key name such as 'enter'")
            if self.key.lower() in ("back", "home"):
                raise InvalidActionError(
                    f"use navigate(target={self.key.lower()!r}) instead of press({self.key!r})"
                )
        if t == "open_app" and not self.app:
            raise InvalidActionError("open_app needs an app name")
        if t == "navigate":
            if self.target not in NAVIGATE_TARGETS:
                raise InvalidActionError(f"navigate needs target in {NAVIGATE_TARGETS}, got {self.target!r}")
            if self.target == "url" and not self.url:
                raise InvalidActionError("navigate(target='url') needs a url")
        if self.status is not None and self.status not in STOP_STATUSES:
            raise InvalidActionError(f"status must be one of {STOP_STATUSES}, got {self.status!r}")

    # ----- constructors -------------------------------------------------------------------------------
    @classmethod
    def click(cls, x: float, y: float) -> Action:
        """Click at ``(x, y)`` in screenshot pixels."""
        return cls("click", point=(x, y))

    @classmethod
    def click_element(cls, element_id: str) -> Action:
        """Click the centre of the element with this id."""
        return cls("click", element_id=element_id)

    @classmethod
    def type_text(cls, text: str, element_id: str | None = None) -> Action:
        """Type ``text`` into ``element_id`` (or into the focused field when ``None``)."""
        return cls("type", text=text, element_id=element_id)

    @classmethod
    def scroll(cls, direction: str, amount: float | None = None) -> Action:
        """Scroll the view ``direction`` by ``amount`` pixels (``None``: one page-sized step)."""
        return cls("scroll", direction=direction, amount=amount)

    @classmethod
    def press(cls, key: str) -> Action:
        """Press a key such as ``enter``."""
        return cls("press", key=key)

    @classmethod
    def navigate(cls, target: str, url: str | None = None) -> Action:
        """Go ``back``/``forward``/``home``, or to ``url``."""
        return cls("navigate", target=target, url=url)

    @classmethod
    def stop(cls, answer: str | None = None, status: str = "success") -> Action:
        """End the episode, optionally with an answer."""
        return cls("stop", answer=answer, status=status)

    # ----- plain JSON ---------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The plain-JSON form: ``type`` plus every field that is set."""
        out: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "type" and value is not None:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Action:
        """Inverse of :meth:`to_dict`. Raises :class:`InvalidActionError` on unknown keys or bad values."""
        if not isinstance(data, Mapping):
            raise InvalidActionError(f"an action must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = [k for k in data if k not in known]
        if unknown:
            raise InvalidActionError(
                f"unknown action fields {_short(unknown)}; known fields are {sorted(known)}"
            )
        if "type" not in data:
            raise InvalidActionError("an action needs a 'type'")
        # The constructor checks every field's type and range.
        return cls(**{str(k): v for k, v in data.items()})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Action:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidActionError(f"not JSON: {exc}") from exc
        return cls.from_dict(data)

    # ----- GUI-R1 -------------------------------------------------------------------------------------
    def to_gui_r1(self) -> dict[str, Any]:
        """The GUI-R1 answer entry (seed 001, App. F.1); non-pointer actions carry ``[-100, -100]``.

        Fields that GUI-R1 has no slot for (element ids, swipe end points, scroll amounts, stop status)
        go in extra keys, so that the entry parses back to the same action. A real point that equals the
        sentinel gets ``"has_point": true``: without it ``click(-100, -100)`` would read back as a click
        without a point.
        """
        point = self.point if self.point is not None else SENTINEL_POINT
        entry: dict[str, Any] = {
            "action": self.type,
            "point": [_num(point[0]), _num(point[1])],
            "input_text": "",
        }
        slot = {
            "type": self.text,
            "scroll": self.direction,
            "press": self.key,
            "open_app": self.app,
            "navigate": self.url if self.target == "url" else self.target,
            "stop": self.answer,
            "swipe": self.direction,
        }.get(self.type)
        if slot is not None:
            entry["input_text"] = slot
        extras = {
            "target": "url" if self.target == "url" else None,
            "element_id": self.element_id,
            "amount": self.amount,
            "end_point": list(self.end_point) if self.end_point is not None else None,
            "duration": self.duration,
            "status": self.status,
        }
        entry.update({k: v for k, v in extras.items() if v is not None})
        if self.point == SENTINEL_POINT:
            entry["has_point"] = True
        return entry

    @classmethod
    def from_gui_r1(cls, entry: Mapping[str, Any]) -> Action:
        """Build an action from one GUI-R1 answer entry, accepting the benchmarks' aliases.

        Recognised aliases include ``doubleclick``, ``rightclick``, ``moveto``, ``press_enter`` (any
        ``press_<key>``), ``press_back`` / ``press_home`` / ``navigate_back`` (navigation), ``hotkey``,
        ``complete`` / ``finish`` / ``terminate`` / ``answer`` (stop) and ``input`` / ``text`` (type).
        """
        if not isinstance(entry, Mapping):
            raise InvalidActionError(f"a GUI-R1 entry must be an object, got {type(entry).__name__}")
        raw = entry.get("action", entry.get("action_type"))
        if not isinstance(raw, str) or not raw.strip():
            raise InvalidActionError("a GUI-R1 entry needs an 'action' string")
        name = raw.strip().lower().replace(" ", "_").replace("-", "_")
        text = entry.get("input_text", entry.get("text", ""))
        if text is not None and (isinstance(text, bool) or not isinstance(text, str | int | float)):
            raise InvalidActionError(f"input_text must be a string, got {type(text).__name__} {_short(text)}")
        # Models write numeric answers as JSON numbers ({"action": "answer", "input_text": 42}).
        text = "" if text is None else str(text)
        has_point = entry.get("has_point", False)
        if not isinstance(has_point, bool):
            raise InvalidActionError(f"has_point must be true or false, got {_short(has_point)}")
        point = _gui_r1_point(entry.get("point", entry.get("coordinate")), has_point)
        kwargs: dict[str, Any] = {
            k: entry[k] for k in ("element_id", "amount", "end_point", "duration", "status") if k in entry
        }
        explicit_target = entry.get("target")
        name = _GUI_R1_ALIASES.get(name, name)
        if name.startswith("press_") and name not in ("press_back", "press_home"):
            return cls("press", key=name[len("press_") :], **kwargs)
        if name in ("press_back", "press_home", "navigate_back", "navigate_home", "navigate_forward"):
            return cls("navigate", target=name.rsplit("_", 1)[1], **kwargs)
        if name == "hotkey":
            return cls("press", key=text, **kwargs)
        if name in POINTER_TYPES:
            return cls(name, point=point, **kwargs)
        if name == "type":
            return cls("type", text=text, point=point, **kwargs)
        if name in ("scroll", "swipe"):
            direction = text.strip().lower() or None
            return cls(name, point=point, direction=direction, **kwargs)
        if name == "press":
            return cls("press", key=text, **kwargs)
        if name == "open_app":
            return cls("open_app", app=text, **kwargs)
        if name == "navigate":
            target = text.strip().lower()
            if explicit_target != "url" and target in ("back", "forward", "home"):
                return cls("navigate", target=target, **kwargs)
            return cls("navigate", target="url", url=text, **kwargs)
        if name == "wait":
            return cls("wait", **kwargs)
        if name == "stop":
            return cls("stop", answer=text or None, **kwargs)
        raise InvalidActionError(f"unknown GUI-R1 action {raw!r}")


_ALLOWED_FIELDS: dict[str, frozenset[str]] = {
    **{t: frozenset({"point", "element_id", "duration"}) for t in POINTER_TYPES},
    "type": frozenset({"text", "point", "element_id"}),
    "scroll": frozenset({"direction", "amount", "point", "element_id"}),
    "swipe": frozenset({"point", "end_point", "direction", "duration"}),
    "press": frozenset({"key"}),
    "open_app": frozenset({"app"}),
    "navigate": frozenset({"target", "url"}),
    "wait": frozenset({"duration"}),
    "stop": frozenset({"answer", "status"}),
}

_GUI_R1_ALIASES = {
    "doubleclick": "double_click",
    "dblclick": "double_click",
    "rightclick": "right_click",
    "longpress": "long_press",
    "long_click": "long_press",
    "moveto": "hover",
    "move_to": "hover",
    "tap": "click",
    "input": "type",
    "text": "type",
    "type_text": "type",
    "openapp": "open_app",
    "launch_app": "open_app",
    "complete": "stop",
    "finish": "stop",
    "finished": "stop",
    "done": "stop",
    "terminate": "stop",
    "answer": "stop",
    "status": "stop",
    "back": "navigate_back",
    "home": "navigate_home",
    "goto": "navigate",
    "go_to": "navigate",
}


def _num(v: float) -> float | int:
    """Write integral floats as ints, so the GUI-R1 text looks like a model's (``[12, 40]``)."""
    return int(v) if float(v).is_integer() else float(v)


def _as_number(value: Any, name: str) -> float:
    """``value`` as a finite float; Python and numpy numbers pass, bools, text and bytes do not."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidActionError(f"{name} must be a number, got {type(value).__name__} {_short(value)}")
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):  # 10**400 does not fit a float
        number = math.inf
    if not math.isfinite(number):
        raise InvalidActionError(f"{name} must be a finite number, got {_short(value)}")
    return number


def _as_point(value: Any, name: str) -> Point:
    """``(x, y)`` as floats from a list, tuple or 1-D array of two numbers within ``MAX_COORDINATE``."""
    if getattr(value, "ndim", None) == 1 and hasattr(value, "tolist"):
        value = value.tolist()  # numpy / torch vectors
    if not isinstance(value, list | tuple) or len(value) != 2:
        # Bytes, strings, sets and dicts are rejected on purpose: b"ab" is not the point (97, 98).
        raise InvalidActionError(
            f"{name} must be two numbers (x, y) in screenshot pixels, got {type(value).__name__} {_short(value)}"
        )
    x, y = (_as_number(v, name) for v in value)
    if abs(x) > MAX_COORDINATE or abs(y) > MAX_COORDINATE:
        raise InvalidActionError(
            f"{name} ({x:g}, {y:g}) is out of range: |x| and |y| must be at most {MAX_COORDINATE:g} pixels"
        )
    return (x, y)


def _gui_r1_point(value: Any, has_point: bool = False) -> Point | None:
    """A GUI-R1 point, or ``None`` for a missing point or the ``[-100, -100]`` sentinel.

    ``has_point`` says the entry marked a real point at the sentinel's place (see :meth:`Action.to_gui_r1`).
    """
    if value is None:
        return None
    if isinstance(value, str):
        # Linear: the pattern cannot backtrack, and the text is at most MAX_OUTPUT_CHARS long.
        nums = re.findall(r"-?\d+(?:\.\d+)?", value)
        value = [float(n) for n in nums]
    point = _as_point(value, "point")
    return None if point == SENTINEL_POINT and not has_point else point


# ----- reading decoded JSON ------------------------------------------------------------------------------


class NotAnActionError(InvalidActionError):
    """Decoded JSON that is no action at all: an empty list, a list item that is not an object, or an object
    with neither ``action`` (GUI-R1) nor ``type`` (plain form)."""


def actions_from_json(payload: Any) -> tuple[Action, ...]:
    """The actions in decoded JSON: one object or a non-empty list of them, each a GUI-R1 entry (it has
    ``action`` or ``action_type``) or the plain form (it has ``type``).

    >>> actions_from_json([{"action": "click", "point": [3, 4], "input_text": ""}]) == (Action.click(3, 4),)
    True

    Raises:
        NotAnActionError: when ``payload`` holds no action object.
        InvalidActionError: when an object's fields do not make a valid action.
    """
    entries = payload if isinstance(payload, list) else [payload]
    if not entries:
        raise NotAnActionError("the answer is an empty list")
    actions = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise NotAnActionError("each action must be a JSON object")
        if "action" in entry or "action_type" in entry:
            actions.append(Action.from_gui_r1(entry))
        elif "type" in entry:
            actions.append(Action.from_dict(entry))
        else:
            raise NotAnActionError("object has neither 'action' nor 'type'")
    return tuple(actions)


def coerce_action(action: Any, allow_point: bool = False) -> tuple[Action | None, str | None]:
    """The :class:`Action` that whatever an env's ``step`` received stands for, or why there is none.

    Accepts an ``Action``, a dict (plain JSON form), JSON text or UTF-8 bytes (an action in the plain or the
    GUI-R1 form, or a list of them, read by :func:`actions_from_json`; the first action counts) and, with
    ``allow_point``, a length-2 list, tuple or array ``(x, y)`` in screenshot pixels, read as a click (the
    ``Box`` action of the grounding envs). Numbers may be Python or numpy scalars; every field is checked as
    :class:`Action` checks it (types, ``MAX_COORDINATE``, text caps). Text must be JSON: model output with
    prose or ``<answer>`` tags goes through :func:`agents.parsing.parse_action_text` first. Never raises,
    whatever it is given: envs turn the message into ``info["action_error"]``.

    >>> coerce_action('{"type": "click", "point": [3, 4]}')[0] == Action.click(3, 4)
    True
    >>> coerce_action("not an action")[1].startswith("malformed action (invalid_json)")
    True
    >>> coerce_action({"type": "click", "point": [10**400, 0]})[1]
    'malformed action: point must be a finite number, got 100000000000000000...0000000000000000000'
    """
    try:
        return _coerce(action, allow_point)
    except Exception as exc:  # an object whose __len__, __iter__ or __eq__ misbehaves is still an error result
        return None, f"malformed action: {type(exc).__name__}: {_short(exc)}"


def _coerce(action: Any, allow_point: bool) -> tuple[Action | None, str | None]:
    if isinstance(action, Action):
        return action, None
    if action is None:
        return None, "no action (the model output did not parse)"
    try:
        if isinstance(action, Mapping):
            return Action.from_dict(action), None
        if isinstance(action, str | bytes | bytearray):
            if isinstance(action, str):
                text = action
            else:
                try:
                    text = bytes(action).decode("utf-8")
                except UnicodeDecodeError as exc:
                    return None, f"malformed action: bytes are read as UTF-8 text and these are not ({exc})"
            return _from_text(text)
        if allow_point:
            return Action("click", point=action), None
    except InvalidActionError as exc:
        return None, f"malformed action: {exc}"
    return None, f"unsupported action type {type(action).__name__}; pass an Action, a dict or text"


def _from_text(text: str) -> tuple[Action | None, str | None]:
    if len(text) > MAX_OUTPUT_CHARS:
        return None, (
            f"malformed action (too_long): the text is {len(text)} characters; at most {MAX_OUTPUT_CHARS} are read"
        )
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError) as exc:  # ValueError: not JSON, or an int over Python's digit limit
        return None, (
            f"malformed action (invalid_json): {str(exc)[:120]}; env.step reads an action as JSON "
            '({"type": "click", "point": [x, y]} or GUI-R1\'s [{"action": ...}]): read model output with '
            "agents.parsing.parse_action_text first"
        )
    try:
        return actions_from_json(payload)[0], None
    except NotAnActionError as exc:
        return None, f"malformed action (not_an_action): {exc}"
