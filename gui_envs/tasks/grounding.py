"""The pieces both grounding envs share (web and phone): the box action, the instruction banner, ordinals.

A grounding episode names one element ("the second Add to cart button") and scores the agent's click on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from gui_envs.schema.errors import safe_repr

#: Height in pixels of the instruction banner drawn over the top of a box-mode screenshot.
BANNER_PX = 22

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def ordinal(index: int, count: int) -> str:
    """The word for the 1-based ``index`` of ``count`` items; ``"last"`` for the last of more than three.

    >>> ordinal(2, 5), ordinal(5, 5), ordinal(3, 3)
    ('second', 'last', 'third')
    """
    if index == count and count > 3:
        return "last"
    return _ORDINALS[index - 1] if index <= len(_ORDINALS) else f"{index}th"


def pick(descriptions: list[str], rng: np.random.Generator) -> str:
    """One description, drawn with the episode's generator."""
    return descriptions[int(rng.integers(len(descriptions)))]


def box_action_space(width: int, height: int) -> spaces.Box:
    """The ``Box`` action of box-mode grounding: a point ``(x, y)`` in screenshot pixels, inside the image."""
    return spaces.Box(
        np.zeros(2, np.float32), np.array([width - 1, height - 1], np.float32), dtype=np.float32
    )


def box_point(action: Any) -> tuple[tuple[float, float] | None, str | None]:
    """The ``(x, y)`` point of a box-mode action, or why it is not one. Never raises."""
    try:
        arr = np.asarray(action, dtype=np.float64).reshape(-1)
    except Exception:  # noqa: BLE001 - ragged, 10**400 (OverflowError), 5,000-deep (RecursionError), hostile dunders
        arr = np.empty(0)
    if arr.shape != (2,) or not np.all(np.isfinite(arr)):
        return None, f"a box action is two finite numbers (x, y), got {safe_repr(action)}"
    return (float(arr[0]), float(arr[1])), None


def draw_instruction_banner(image: np.ndarray, text: str) -> np.ndarray:
    """Draw ``text`` in a dark banner over the top :data:`BANNER_PX` pixels of a copy of ``image``.

    Box-mode observations are the screenshot alone, so an image-only policy reads its instruction here.
    """
    from PIL import Image, ImageDraw

    canvas = Image.fromarray(image)
    draw = ImageDraw.Draw(canvas)
    draw.rectangle((0, 0, image.shape[1], BANNER_PX - 1), fill=(0, 0, 0))
    draw.text((4, 5), text[:160], fill=(255, 255, 0))
    return np.asarray(canvas)
