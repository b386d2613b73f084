"""The gymnasium space of every GUI env: all valid :class:`~gui_envs.schema.actions.Action` values, sampled in a viewport.

:class:`ActionSpace` is what ``env.action_space`` is on the web, phone, MiniWoB, grounding (text mode) and
offline envs. Its ``contains`` is :func:`~gui_envs.schema.actions.coerce_action`'s verdict (an ``Action``, its dict
form, or its JSON text), and ``sample()`` is a valid random action inside the viewport, so that
:class:`agents.random_agent.RandomAgent` is a real random-click baseline rather than a stream of malformed
text.

A sample is drawn in two steps: a kind, with the probabilities of :data:`DEFAULT_WEIGHTS` (or the
``weights`` given), then its arguments, uniformly:

==========  ======  =================================================================================
kind        weight  the action
==========  ======  =================================================================================
``click``   0.60    ``click`` at a uniform random integer pixel ``(x, y)``, ``0 <= x < width``,
                    ``0 <= y < height`` (screenshot pixels)
``type``    0.15    ``type`` of one word into the focused field: a word of the current page's visible
                    text when :meth:`ActionSpace.set_words` was given some, else one of
                    :data:`FALLBACK_WORDS`
``scroll``  0.15    ``scroll`` one page-sized step up, down, left or right
``back``    0.05    ``navigate`` back
``stop``    0.05    ``stop`` with status ``success`` and a word as the answer (ends the episode)
==========  ======  =================================================================================

Clicks dominate because on a GUI most progress is a click; stop is rare so that a random episode lasts about
20 steps, long enough to reach a second page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import create_empty_array

from gui_envs.schema.actions import DIRECTIONS, Action, coerce_action

#: Probability of each sampled kind (module docstring); they sum to 1.
DEFAULT_WEIGHTS: Mapping[str, float] = {"click": 0.60, "type": 0.15, "scroll": 0.15, "back": 0.05, "stop": 0.05}
#: Words typed and answered when the page gave none.
FALLBACK_WORDS: tuple[str, ...] = ("hello", "test", "search", "yes", "42")
#: Most words kept from one page, and the longest word kept (characters): bounds the pickled size.
MAX_WORDS = 256
MAX_WORD_CHARS = 32
_WORD = re.compile(r"\w{2,}")


class ActionSpaceError(ValueError):
    """An :class:`ActionSpace` was built with a viewport or weights it cannot sample from."""


class ActionSpace(gym.Space[Action]):
    """Every action a GUI env accepts; samples are valid random actions inside ``viewport``.

    Args:
        viewport: ``(width, height)`` of the observation's screenshot, pixels.
        weights: probability of each sampled kind (keys from :data:`DEFAULT_WEIGHTS`, non-negative, not all
            zero; normalised here). Default :data:`DEFAULT_WEIGHTS`.
        seed: seeds the sampler, as for any gymnasium space.
    """

    def __init__(
        self,
        viewport: tuple[int, int],
        weights: Mapping[str, float] | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(None, None, seed)
        self.viewport = viewport
        weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
        unknown = sorted(set(weights) - set(DEFAULT_WEIGHTS))
        if unknown:
            raise ActionSpaceError(f"unknown kinds {unknown} in weights; use some of {list(DEFAULT_WEIGHTS)}")
        values = np.array([float(weights.get(k, 0.0)) for k in DEFAULT_WEIGHTS])
        if not np.all(np.isfinite(values)) or np.any(values < 0) or values.sum() <= 0:
            raise ActionSpaceError(f"weights must be finite, >= 0 and not all 0, got {weights}")
        self._kinds = tuple(DEFAULT_WEIGHTS)
        self._p = values / values.sum()
        self.words: tuple[str, ...] = ()

    @property
    def viewport(self) -> tuple[int, int]:
        """``(width, height)`` in pixels; envs whose screen size changes (offline datasets) assign it."""
        return self._viewport

    @viewport.setter
    def viewport(self, value: tuple[int, int]) -> None:
        try:
            width, height = (int(v) for v in value)
        except (TypeError, ValueError):
            raise ActionSpaceError(f"viewport must be (width, height) in pixels, got {value!r}") from None
        if width < 1 or height < 1:
            raise ActionSpaceError(f"viewport must be at least 1x1 pixels, got {width}x{height}")
        self._viewport = (width, height)

    @property
    def weights(self) -> dict[str, float]:
        """The normalised probability of each kind."""
        return {k: float(p) for k, p in zip(self._kinds, self._p, strict=True)}

    def set_words(self, words: Iterable[str]) -> None:
        """Words that ``type`` and ``stop`` samples use from now on, usually :func:`visible_words` of the
        current observation; an empty iterable falls back to :data:`FALLBACK_WORDS`."""
        kept: dict[str, None] = {}
        for word in words:
            if isinstance(word, str) and word and len(word) <= MAX_WORD_CHARS:
                kept[word] = None
                if len(kept) >= MAX_WORDS:
                    break
        self.words = tuple(kept)

    def sample(self, mask: Any = None, probability: Any = None) -> Action:
        """A valid random :class:`Action` inside the viewport (weights in the module docstring)."""
        if mask is not None or probability is not None:
            raise gym.error.Error("ActionSpace.sample takes no mask or probability; set weights instead")
        rng = self.np_random
        kind = self._kinds[int(rng.choice(len(self._kinds), p=self._p))]
        if kind == "click":
            width, height = self.viewport
            return Action.click(float(rng.integers(width)), float(rng.integers(height)))
        if kind == "scroll":
            return Action.scroll(DIRECTIONS[int(rng.integers(len(DIRECTIONS)))])
        if kind == "back":
            return Action.navigate("back")
        words = self.words or FALLBACK_WORDS
        word = words[int(rng.integers(len(words)))]
        return Action.type_text(word) if kind == "type" else Action.stop(answer=word)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is an action an env would carry out: :func:`coerce_action` finds no error."""
        return coerce_action(x)[1] is None

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        width, height = self.viewport
        return f"ActionSpace({width}x{height})"

    def __eq__(self, other: object) -> bool:
        # Words are sampling state, not part of what the space accepts, so they do not count.
        return (
            isinstance(other, ActionSpace)
            and self.viewport == other.viewport
            and bool(np.allclose(self._p, other._p))
        )

    def __hash__(self) -> int:
        return hash((type(self), self.viewport, tuple(np.round(self._p, 12))))


def visible_words(observation: Any) -> list[str]:
    """The words (2+ letters or digits) of the element texts an observation shows, first occurrence first.

    Reads ``observation["elements"]``, the JSON list (or list of dicts) every GUI env puts there; anything
    else gives ``[]``.
    """
    elements = observation.get("elements") if isinstance(observation, Mapping) else None
    if isinstance(elements, str):
        try:
            elements = json.loads(elements)
        except ValueError:
            return []
    if not isinstance(elements, Sequence):
        return []
    seen: dict[str, None] = {}
    for element in elements:
        text = element.get("text") if isinstance(element, Mapping) else None
        if isinstance(text, str):
            seen.update(dict.fromkeys(_WORD.findall(text)))
    return list(seen)


@create_empty_array.register(ActionSpace)
def _empty_actions(space: ActionSpace, n: int = 1, fn: Any = np.zeros) -> tuple[None, ...]:
    """A batch placeholder for vector envs (actions are objects, batched as a tuple like ``Text``)."""
    return (None,) * n
