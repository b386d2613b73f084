"""Text renderings of observations, shared by every prompt template.

GUI observations (``dict`` with ``instruction``, ``elements`` and ``screenshot``) become an element list; grid
observations carry their own ``text`` rendering; anything else is ``str(observation)``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: At most this many elements are listed, so a long page cannot blow the context window.
MAX_ELEMENTS = 80


def is_gui_observation(observation: Any) -> bool:
    """A GUI env observation: a dict with a ``screenshot`` or ``elements``."""
    return isinstance(observation, Mapping) and ("screenshot" in observation or "elements" in observation)


def instruction_of(observation: Any, fallback: str = "") -> str:
    """The task instruction in the observation, or ``fallback``."""
    if isinstance(observation, Mapping) and isinstance(observation.get("instruction"), str):
        return observation["instruction"]
    return fallback


def element_list(elements: Any) -> list[Mapping[str, Any]]:
    """The element dicts of an observation's ``elements``: a list, or the JSON text GuiWeb / GuiAndroid send."""
    if isinstance(elements, str):
        try:
            elements = json.loads(elements)
        except json.JSONDecodeError:
            return []
    return [e for e in elements or [] if isinstance(e, Mapping)]


def render_elements(elements: Sequence[Mapping[str, Any]] | str | None, limit: int = MAX_ELEMENTS) -> str:
    """One line per element: ``[id] role "text" value=... bbox=(x1, y1, x2, y2)`` (pixels)."""
    elements = element_list(elements)
    if not elements:
        return ""
    lines = []
    for element in list(elements)[:limit]:
        parts = [f"[{element.get('id', '?')}]", str(element.get("role", "element"))]
        if element.get("text"):
            parts.append(repr(str(element["text"])[:80]))
        if element.get("value"):
            parts.append(f"value={str(element['value'])[:40]!r}")
        bbox = element.get("bbox")
        if bbox is not None and len(bbox) == 4:
            parts.append("bbox=(" + ", ".join(str(int(round(float(v)))) for v in bbox) + ")")
        if element.get("clickable") is False:
            parts.append("(not clickable)")
        lines.append(" ".join(parts))
    if len(elements) > limit:
        lines.append(f"... {len(elements) - limit} more elements")
    return "\n".join(lines)


def render_observation_text(observation: Any) -> str:
    """The text a text-only model reads for this observation (without instruction and history)."""
    if isinstance(observation, str):
        return observation
    if isinstance(observation, Mapping):
        if isinstance(observation.get("text"), str):
            return observation["text"]
        parts = []
        location = observation.get("url") or observation.get("location") or observation.get("app")
        if location:
            parts.append(f"Location: {location}")
        elements = render_elements(observation.get("elements"))
        if elements:
            parts.append("Elements:\n" + elements)
        return "\n".join(parts)
    return str(observation)


def render_history(history: Sequence[str], max_items: int = 8) -> str:
    """Previous actions, oldest first, numbered; ``None`` when there are none (GUI-R1's wording)."""
    if not history:
        return "None"
    items = list(history)[-max_items:]
    first = len(history) - len(items) + 1
    return "; ".join(f"step {first + i}: {h}" for i, h in enumerate(items))
