"""The executors' own check of an action's arguments, so no agent input can crash a ``step``.

:func:`~gui_envs.actions.coerce_action` validates what it builds, but an :class:`~gui_envs.actions.Action`
can also be handed to ``step`` directly, with fields of any type (``Action`` does not check that ``text`` is a
string). The executors (web, simulated phone, device) call :func:`argument_error` before they touch a
browser or a device, and the envs call :func:`checked_action` instead of ``coerce_action``: whatever the
agent sends, the worst outcome is a no-op with ``info["action_error"]``.

Caps (documented here once, used by every executor):

* coordinates: a point farther than :data:`MAX_COORD` pixels from the origin is an error (the executors
  reject points outside the screen anyway; this bounds the arithmetic before that check);
* text: ``type`` takes at most :data:`MAX_TYPE_CHARS` characters;
* scrolling: a wheel or swipe moves at most :data:`MAX_SCROLL_PX` pixels per action.
"""

from __future__ import annotations

import math
from typing import Any

from gui_envs.actions import Action, coerce_action

#: Largest coordinate magnitude an executor accepts, in pixels (screenshot or device).
MAX_COORD = 1e6
#: Longest text a ``type`` action may enter, in characters (8 KB of text must type within the time-out).
MAX_TYPE_CHARS = 16_384
#: Largest scroll per action, in pixels: far beyond any page here, small enough for Chromium's wheel code.
MAX_SCROLL_PX = 100_000.0

_STRING_FIELDS = ("element_id", "text", "direction", "key", "app", "target", "url", "answer", "status")


def argument_error(action: Action) -> str | None:
    """Why ``action``'s arguments cannot be executed (wrong types, non-finite or huge numbers, text too
    long), or ``None`` when they can."""
    for name in _STRING_FIELDS:
        value = getattr(action, name)
        if value is not None and not isinstance(value, str):
            return f"{name} must be a string, got {type(value).__name__}"
    for name in ("point", "end_point"):
        value = getattr(action, name)
        if value is None:
            continue
        try:
            x, y = (float(v) for v in value)
        except (TypeError, ValueError, OverflowError):
            return f"{name} must be two numbers (x, y) in pixels"
        if not (math.isfinite(x) and math.isfinite(y)) or max(abs(x), abs(y)) > MAX_COORD:
            return f"{name} ({x:.3g}, {y:.3g}) is not a point on the screen"
    for name in ("amount", "duration"):
        value = getattr(action, name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{name} must be a number, got {type(value).__name__}"
        try:
            if not math.isfinite(float(value)):
                raise OverflowError
        except OverflowError:
            return f"{name} must be a finite number"
    if action.text is not None and len(action.text) > MAX_TYPE_CHARS:
        return f"text is {len(action.text)} characters; type takes at most {MAX_TYPE_CHARS}"
    return None


def checked_action(action: Any, allow_point: bool = False) -> tuple[Action | None, str | None]:
    """:func:`~gui_envs.actions.coerce_action`, then :func:`argument_error`; never raises.

    The ``except`` is deliberately narrow: it covers the arithmetic errors a hostile number can raise while
    an action is built (``float(10**400)`` is an ``OverflowError``, a deeply nested JSON list a
    ``RecursionError``), which ``coerce_action`` does not catch in every version.
    """
    try:
        parsed, error = coerce_action(action, allow_point=allow_point)
    except (OverflowError, RecursionError) as exc:
        return None, f"malformed action: {type(exc).__name__}: {exc}"
    if parsed is not None:
        problem = argument_error(parsed)
        if problem is not None:
            return None, f"malformed action: {problem}"
    return parsed, error
