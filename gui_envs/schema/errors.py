"""The errors every guigym env raises the same way, and the one cap on the messages it hands back.

``step`` raises only two exceptions, whatever it is given (:mod:`gui_envs.schema.lifecycle` enforces both on every env):
:class:`ResetNeededError` (no episode is running) and :class:`EnvClosedError` (the env was closed). A malformed
action is never an exception: it is a no-op with ``info["action_error"]``, a message of at most
:data:`MAX_ERROR_CHARS` characters (:func:`cap_message`) in which agent input is quoted by :func:`safe_repr`.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable
from typing import Any

import gymnasium as gym

#: Most characters of an error message an env returns in ``info`` (``action_error``, ``parse_error``, ``reason``);
#: a longer one is cut to this length, its last character an ellipsis. Agents read these messages back in their
#: prompts, so a 1 MB action must not come back as a 1 MB message.
MAX_ERROR_CHARS = 500
#: Most characters :func:`safe_repr` writes for one agent-supplied value.
MAX_REPR_CHARS = 80

# Bounded reprs: reprlib stops at ``maxlevel`` (a 5,000-deep list is not recursed into) and falls back to
# ``<Type instance at ...>`` when an object's own __repr__ raises.
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = _REPR.maxarray = 4
_REPR.maxlevel = 2


class ResetNeededError(gym.error.ResetNeeded, RuntimeError):
    """No episode is running: ``step`` (or ``render``, ``oracle_action``, ``privileged``) was called before the first
    ``reset``, after a ``reset`` or ``step`` that raised, or after a step that ended the episode (``terminated`` or
    ``truncated``: an ended episode is never judged again).

    Fix: call ``env.reset()``. It is gymnasium's ``ResetNeeded`` and a ``RuntimeError``, so handlers of either
    catch it.
    """


class EnvCrashedError(RuntimeError):
    """What runs the env (a browser) crashed, was killed or stopped answering in the middle of an episode. The
    episode is lost; the env is not: ``reset()`` relaunches it.

    Rollout collection (:func:`trainers.rollout.collect_groups`) runs the lost episodes again after the relaunch,
    so a crash costs a training or evaluation run time, not its result.
    """


class EnvClosedError(gym.error.ClosedEnvironmentError, RuntimeError):
    """``step`` or ``reset`` was called after ``close()``. A closed env has released its browser or device and does
    not open it again.

    Fix: make a new env (``gym.make(...)``). It is gymnasium's ``ClosedEnvironmentError`` (what its vector envs
    raise for the same mistake) and a ``RuntimeError``; it is not a :class:`ResetNeededError`, since ``reset``
    cannot help.
    """


class ResetOptionsError(ValueError, TypeError):
    """``reset(options=...)`` is not ``None`` or a dict, names a key the env does not take, or gives a value of the
    wrong type; the message lists the keys the env takes. It is a ``ValueError`` and a ``TypeError``, so handlers
    of either catch it."""


class UnknownTaskError(KeyError):
    """A task name (``options["task"]``, ``tasks=``, an ARC ``task_id``) names no task; the message lists close
    matches."""

    def __str__(self) -> str:
        # KeyError's own str() is the repr of its argument: a quoted message with escaped quotes inside.
        return str(self.args[0]) if self.args else ""


def safe_repr(value: Any, limit: int = MAX_REPR_CHARS) -> str:
    """A repr of agent-supplied ``value`` for an error message: at most ``limit`` characters, never raises.

    >>> safe_repr("x" * 1000)[:12], len(safe_repr("x" * 1000)) <= MAX_REPR_CHARS
    ("'xxxxxxxxxxx", True)
    """
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__ / __len__ / __iter__; the type name is all that is left
        try:
            text = f"<{type(value).__name__} object>"
        except Exception:  # noqa: BLE001 - a metaclass with a hostile __name__
            text = "<object>"
    return cap_message(text, limit)


def cap_message(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when anything was cut.

    >>> cap_message("abcdef", 4)
    'abc…'
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def did_you_mean(name: object, known: Iterable[str], n: int = 2, cutoff: float = 0.6) -> str:
    """`` Did you mean 'a' or 'b'?`` naming the entries of ``known`` closest to ``name``, or ``""`` when none is close:
    the hint an "unknown name" message ends with, so that a typo's fix is in the one line that reports it.

    >>> did_you_mean("sls", ["ssl", "binary"]), did_you_mean("xyz", ["ssl"])
    (" Did you mean 'ssl'?", '')
    """
    close = difflib.get_close_matches(str(name), list(known), n=n, cutoff=cutoff)
    return f" Did you mean {' or '.join(map(repr, close))}?" if close else ""


__all__ = [
    "MAX_ERROR_CHARS",
    "EnvClosedError",
    "EnvCrashedError",
    "ResetNeededError",
    "UnknownTaskError",
    "cap_message",
    "did_you_mean",
    "safe_repr",
]
