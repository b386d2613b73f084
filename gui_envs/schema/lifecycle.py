"""The life of an episode, the same on every guigym env: written once here, applied to each env's ``reset``, ``step``
and ``close`` by the decorators :func:`guarded_reset`, :func:`guarded_step` and :func:`guarded_close`.

The rules (the PettingZoo :class:`~gui_envs.multi.group.GroupEnv` follows them too):

* **One episode at a time.** ``step`` runs only inside an episode: before the first ``reset``, after a ``reset`` or
  ``step`` that raised, and after a step that returned ``terminated`` or ``truncated`` it raises
  :class:`~gui_envs.schema.errors.ResetNeededError`. An ended episode is never judged again: a second ``stop`` after a
  wrong one would otherwise be paid.
* **Closed is final.** ``step`` and ``reset`` after ``close()`` raise :class:`~gui_envs.schema.errors.EnvClosedError`; a
  closed env never relaunches its browser. ``close`` may be called any number of times.
* **One call at a time.** ``reset``, ``step`` and ``close`` of one env are serialised by the env's re-entrant
  lock: calls from several threads run one after another, in the order they take the lock. They still play one
  episode, so once one thread's step ends it, the other threads' steps raise ``ResetNeededError``.
* **Reset options** are ``None`` or a mapping whose keys are among the env class's :attr:`reset_options`; anything
  else is a ``ResetOptionsError`` (a ``TypeError`` and a ``ValueError``) that says what to pass, raised before the env changes.
* **Bounded messages.** ``info["action_error"]``, ``["parse_error"]`` and ``["reason"]`` are cut to
  :data:`~gui_envs.schema.errors.MAX_ERROR_CHARS` characters.

So ``step`` raises only ``ResetNeededError`` and ``EnvClosedError`` (and a failure of the browser or device itself,
which each env documents); an agent's action, however malformed, is a no-op with ``info["action_error"]``.
"""

from __future__ import annotations

import difflib
import functools
import numbers
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple, TypeVar

from gui_envs.schema.errors import EnvClosedError, ResetNeededError, ResetOptionsError, cap_message, safe_repr

F = TypeVar("F", bound=Callable[..., Any])

#: ``info`` entries that carry error text, capped by every guarded ``step``.
ERROR_KEYS = ("action_error", "parse_error", "reason")


class ResetOption(NamedTuple):
    """One key ``reset(options=...)`` takes: the accepted value types and what to pass, for the error message.
    ``None`` is always accepted (the option is not given)."""

    types: tuple[type, ...]
    what: str
    minimum: int | None = None


#: A non-negative integer seed (``options["seed"]``).
SEED = ResetOption((numbers.Integral,), "a non-negative int", minimum=0)
#: A task template's name (``options["task"]``).
TASK = ResetOption((str,), "a task name (str)")


@dataclass
class _Life:
    """Where an env is in its life: ``new`` (never reset), ``running``, ``ended`` (by ``why``), ``failed`` (a reset or
    step raised) or ``closed``; and the lock that serialises its calls."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    phase: str = "new"
    why: str = ""

    def __getstate__(self) -> dict[str, str]:
        # A lock cannot be pickled or deep-copied; a copied env (a grid env sent to a worker) gets a lock of its own.
        return {"phase": self.phase, "why": self.why}

    def __setstate__(self, state: dict[str, str]) -> None:
        self.lock, self.phase, self.why = threading.RLock(), state["phase"], state["why"]


def _life(env: Any) -> _Life:
    # dict.setdefault is atomic: two threads racing on a fresh env get the same lock.
    return env.__dict__.setdefault("_lifecycle", _Life())


def env_name(env: Any) -> str:
    """The env's registered id where it has one, else its class name (for messages)."""
    spec = getattr(env, "spec", None)
    return str(getattr(spec, "id", None) or type(env).__name__)


def is_closed(env: Any) -> bool:
    """Whether ``close()`` was called on ``env`` (a guarded env)."""
    return _life(env).phase == "closed"


def _check_step(env: Any, life: _Life) -> None:
    name = env_name(env)
    if life.phase == "closed":
        raise EnvClosedError(f"{name} is closed: step() after close() is refused; make a new env")
    if life.phase == "new":
        raise ResetNeededError(f"{name}: call reset() before step()")
    if life.phase == "failed":
        raise ResetNeededError(f"{name}: the last reset() or step() raised; call reset() before step()")
    if life.phase == "ended":
        raise ResetNeededError(f"{name}: the episode ended ({life.why}); call reset() to start a new one")


def check_reset_options(env: Any, options: Any) -> None:
    """Raise :class:`~gui_envs.schema.errors.ResetOptionsError` unless ``options`` is ``None`` or a mapping of the keys ``env`` takes
    (its class attribute ``reset_options``: name -> :class:`ResetOption`; ``None`` there: any keys, which the env
    passes on to envs that check them)."""
    if options is None:
        return
    name = env_name(env)
    accepted: Mapping[str, ResetOption] | None = getattr(type(env), "reset_options", None)
    takes = (
        "takes no reset options (pass options=None)"
        if accepted is not None and not accepted
        else "takes options=None or a dict"
        + (" with the keys " + ", ".join(f"{k!r} ({o.what})" for k, o in accepted.items()) if accepted else "")
    )
    if not isinstance(options, Mapping):
        raise ResetOptionsError(f"{name} {takes}; got options of type {type(options).__name__}")
    if accepted is None:
        return
    for key, value in options.items():
        option = accepted.get(key) if isinstance(key, str) else None
        if option is None:
            close = difflib.get_close_matches(key, list(accepted), n=1) if isinstance(key, str) else []
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ResetOptionsError(f"{name} has no reset option {safe_repr(key)}: it {takes}.{hint}")
        if value is None:
            continue
        wrong_type = isinstance(value, bool) or not isinstance(value, option.types)
        if wrong_type or (option.minimum is not None and value < option.minimum):
            raise ResetOptionsError(f"{name} reset option {key!r} must be {option.what}, got {safe_repr(value)}")


def check_render_mode(env_type: type, render_mode: Any) -> None:
    """Raise ``ValueError`` when ``render_mode`` is neither ``None`` nor one of ``env_type.metadata["render_modes"]``.

    Gymnasium only warns about an unknown mode, and an env that ignores it would then render nothing without a
    word; the message names the modes the env accepts.
    """
    modes = list(getattr(env_type, "metadata", {}).get("render_modes", []))
    if render_mode is not None and render_mode not in modes:
        raise ValueError(cap_message(f"render_mode={safe_repr(render_mode)} is unknown; use None or one of {modes}"))


def guarded_reset(reset: F) -> F:
    """``reset`` under the life-cycle rules (module docstring): refused once closed, options checked first, and the
    episode running only once it returns."""

    @functools.wraps(reset)
    def wrapper(self: Any, seed: int | None = None, options: Any = None) -> Any:
        life = _life(self)
        with life.lock:
            if life.phase == "closed":
                raise EnvClosedError(f"{env_name(self)} is closed: reset() after close() is refused; make a new env")
            check_reset_options(self, options)
            life.phase = "failed"  # until the reset returns: a half-done reset leaves no episode to step
            out = reset(self, seed=seed, options=options)
            life.phase = "running"
            return out

    wrapper.lifecycle_guard = "reset"  # type: ignore[attr-defined]  (tests find unguarded envs by it)
    return wrapper  # type: ignore[return-value]


def _gym_episode_over(env: Any, result: Any) -> str:
    return "terminated" if result[2] else "truncated" if result[3] else ""


def guarded_step(step: F | None = None, *, episode_over: Callable[[Any, Any], str] = _gym_episode_over) -> Any:
    """``step`` under the life-cycle rules (module docstring). ``episode_over(env, result)`` names why a step's
    result ends the episode (``""``: it does not); by default gymnasium's ``terminated`` / ``truncated``."""

    def decorate(step: F) -> F:
        @functools.wraps(step)
        def wrapper(self: Any, action: Any) -> Any:
            life = _life(self)
            with life.lock:
                _check_step(self, life)
                life.phase = "failed"  # until the step returns: the episode's state is unknown after an exception
                result = step(self, action)
                why = episode_over(self, result)
                life.phase, life.why = ("ended", why) if why else ("running", "")
                info = result[4] if len(result) == 5 else None
                if isinstance(info, dict):
                    for key in ERROR_KEYS:
                        if isinstance(info.get(key), str):
                            info[key] = cap_message(info[key])
                return result

        wrapper.lifecycle_guard = "step"  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate(step) if step is not None else decorate


def guarded_close(close: F) -> F:
    """``close`` under the life-cycle rules: the env is closed from now on, whatever ``close`` itself does."""

    @functools.wraps(close)
    def wrapper(self: Any) -> None:
        life = _life(self)
        with life.lock:
            life.phase = "closed"
            close(self)

    wrapper.lifecycle_guard = "close"  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


class GuardedClose:
    """Mixin for an env without a ``close`` of its own (grid, offline): ``close`` under the life-cycle rules. Its
    envs take no reset options unless they say otherwise (``reset_options``)."""

    reset_options: ClassVar[Mapping[str, ResetOption]] = MappingProxyType({})

    @guarded_close
    def close(self) -> None:
        super().close()  # type: ignore[misc]


__all__ = [
    "ERROR_KEYS",
    "GuardedClose",
    "SEED",
    "TASK",
    "ResetOption",
    "check_reset_options",
    "env_name",
    "guarded_close",
    "guarded_reset",
    "guarded_step",
    "is_closed",
]
