"""Blind baselines for the grounding envs (``GuiWebGround-v0``, ``GuiAndroidGround-v0``).

A grounding benchmark is only informative when these score low: a string matcher that reads the element list
and clicks the element whose text best matches the instruction, a uniform random click in the screenshot, and
a click on the centre of a random clickable element. ``benchmarks/ground_baselines.py`` prints their scores.
Each policy maps ``(instruction, elements)`` to a click point in screenshot pixels.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import numpy as np

_WORD = re.compile(r"[a-z0-9$.,'&-]+")


def _words(text: str) -> set[str]:
    return {w.strip(".,") for w in _WORD.findall(text.lower())} - {""}


def _centre(el: dict[str, Any]) -> tuple[float, float]:
    x0, y0, x1, y1 = el["bbox"]
    return ((x0 + x1) / 2, (y0 + y1) / 2)


def string_match_point(instruction: str, elements: list[dict[str, Any]]) -> tuple[float, float] | None:
    """The centre (pixels) of the element whose text best matches the instruction, or ``None`` if none has text.

    A quoted phrase in the instruction that equals an element's text wins outright; otherwise the score is the
    share of the element's words that occur in the instruction, ties broken by ``difflib``'s similarity ratio.

    >>> els = [{"text": "Cart", "bbox": [0, 0, 10, 10]}, {"text": "Orders", "bbox": [20, 0, 40, 10]}]
    >>> string_match_point('click the link "Orders"', els)
    (30.0, 5.0)
    """
    texts = [el for el in elements if el.get("text", "").strip()]
    if not texts:
        return None
    quoted = {q.strip().lower() for q in re.findall(r'"([^"]+)"', instruction)}
    for el in texts:
        if el["text"].strip().lower() in quoted:
            return _centre(el)
    said = _words(instruction)
    lowered = instruction.lower()

    def score(el: dict[str, Any]) -> tuple[float, float]:
        words = _words(el["text"])
        overlap = len(words & said) / len(words) if words else 0.0
        return overlap, difflib.SequenceMatcher(None, el["text"].lower(), lowered).ratio()

    return _centre(max(texts, key=score))


def random_point(rng: np.random.Generator, size: tuple[int, int]) -> tuple[float, float]:
    """A uniform point in a ``size`` = ``(width, height)`` screenshot, in pixels."""
    return (float(rng.uniform(0, size[0])), float(rng.uniform(0, size[1])))


def random_element_point(rng: np.random.Generator, elements: list[dict[str, Any]]) -> tuple[float, float] | None:
    """The centre (pixels) of a uniformly drawn clickable element, or ``None`` when there is none."""
    clickable = [el for el in elements if el.get("clickable")]
    if not clickable:
        return None
    return _centre(clickable[int(rng.integers(len(clickable)))])
