"""Announced resets: a caller that knows its next resets tells the env, so that they are prepared ahead.

A browser env prepares the episode its next ``reset()`` without a seed will draw while the agent acts
(:mod:`gui_envs.browser.prefetch`). A reset that names its seed cannot be guessed, yet the callers that name every
seed know them in advance: GRPO's seed stream, :class:`~gui_envs.multi.GroupEnv` (N members, one seed),
:func:`trainers.rollout.collect_groups` and the held-out evaluation. :func:`announce` passes them on::

    announce(env, [7, 8, Upcoming(seed=9, options={"task": "shop.search"})])
    env.reset(seed=7)   # served from the start prepared while the caller did something else

The announcement is a plan, not a promise: the episode a reset plays is decided by its own arguments, whatever was
announced, and a reset that was not announced (or announced out of order) is built in the foreground as before.
So announcing never changes an episode; it only moves work off the reset's critical path.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Upcoming", "UpcomingResets", "announce"]


@dataclass(frozen=True)
class Upcoming:
    """One announced reset: the arguments of the ``reset(seed=..., options=...)`` call to come.

    Attributes:
        seed: the reset's ``seed`` (``None``: the env's generator draws, as in a plain ``reset()``).
        options: the reset's ``options`` (``{"task": name, "seed": task_seed}`` on the task envs).
    """

    seed: int | None = None
    options: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, item: int | Upcoming | None) -> Upcoming:
        """``item`` as an :class:`Upcoming`: an int is ``reset(seed=item)``, ``None`` a plain ``reset()``.

        >>> Upcoming.of(3)
        Upcoming(seed=3, options=None)
        """
        if isinstance(item, Upcoming):
            return item
        if item is None:
            return cls()
        if isinstance(item, bool) or not isinstance(item, int):
            try:
                item = int(item)  # numpy integers
            except (TypeError, ValueError):
                raise TypeError(
                    f"an announced reset is an int seed, None or an Upcoming, got {item!r}"
                ) from None
        return cls(seed=int(item))

    def matches(self, seed: int | None, options: Mapping[str, Any] | None) -> bool:
        """Whether ``reset(seed=seed, options=options)`` is this reset (``None`` options and ``{}`` are the same).

        >>> Upcoming(3).matches(3, {})
        True
        """
        return self.seed == seed and dict(self.options or {}) == dict(options or {})


class UpcomingResets:
    """The resets announced to one env, in order; each reset that was announced uses its entry up.

    A reset that matches a later entry drops the entries before it (the caller skipped them); one that matches
    none leaves the plan as it is (an evaluation reset between two training ones).
    """

    def __init__(self) -> None:
        self._plan: deque[Upcoming] = deque()

    def replace(self, resets: Iterable[int | Upcoming | None]) -> None:
        """Make ``resets`` the plan (an empty one forgets it)."""
        self._plan = deque(Upcoming.of(r) for r in resets)

    def next(self) -> Upcoming | None:
        """The next announced reset, or ``None`` when nothing is announced."""
        return self._plan[0] if self._plan else None

    def use(self, seed: int | None, options: Mapping[str, Any] | None) -> bool:
        """Record that ``reset(seed=seed, options=options)`` ran; returns whether it had been announced."""
        for i, upcoming in enumerate(self._plan):
            if upcoming.matches(seed, options):
                for _ in range(i + 1):
                    self._plan.popleft()
                return True
        return False

    def __len__(self) -> int:
        return len(self._plan)


def announce(env: Any, resets: Iterable[int | Upcoming | None]) -> bool:
    """Tell ``env`` its next resets, in order (``resets`` replaces what was announced before).

    Args:
        env: a guigym env, any wrapper around one, or a :class:`~gui_envs.multi.GroupEnv`.
        resets: the coming resets' arguments: an int seed (``reset(seed=s)``), ``None`` (``reset()``) or an
            :class:`Upcoming` (seed and options).

    Returns:
        Whether the env takes announcements (the browser envs that prepare their resets do); for any other env
        this does nothing, so a trainer may call it on every env it drives.
    """
    target = getattr(env, "unwrapped", env)
    method = getattr(target, "announce", None)
    if not callable(method):
        return False
    method(resets)
    return True
