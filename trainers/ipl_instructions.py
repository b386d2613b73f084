"""MobileIPL instruction evolution: Q&A about recorded screens, mixed into the warm-up SFT (seed 003, sec. 3.2).

The paper has GPT-4o write three levels of Q&A grounded in the training screenshots, and warm-up SFT trains on
the trajectories ``T`` and this Q&A set ``Q`` together, so the seed policy does not overfit the fixed CoaT
pattern:

* **Level I, general GUI Q&A**: grounding (where is X), reference (what is at this box) and page description.
* **Level II, widget captions and relationships**: what a widget does, and how widgets nest (the paper's case:
  agents tap the text view that labels a button instead of the button).
* **Level III, advanced FAQ**: the page's structure, and what tapping a control leads to.

:func:`evolve` asks a hook for each recorded screen. The hook is where an LLM goes (``hook(screen) -> [QA]``,
named in the config as ``module:function``); the default, :func:`rule_based_qa`, writes the same kinds of
question from the screen's public element list (the texts, roles and boxes an accessibility tree shows, i.e.
what the screenshot shows) and, for Level III's navigation question, from the next recorded screen. It never
reads the task's ground truth beyond what the trajectory itself did, and its answers are templates, so they
add question forms rather than knowledge. Rules of the default:

* an element's **name** is its text up to the first comma (a tile ``"Network & internet, Wi-Fi"`` is named
  ``"Network & internet"``), else its content description; elements with neither are skipped;
* its **role word** comes from the Android class: ``Switch`` -> switch, ``Button``/``ImageButton`` -> button,
  ``EditText`` -> text field, ``CheckBox`` -> checkbox, anything clickable else -> item, else -> label;
* a label is **nested** in an item when its box lies inside the item's box;
* boxes are written in CoaT's grounding format on the 0-1000 scale.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.parsing import NORM_1000, format_box

#: The evolution levels (seed 003, sec. 3.2).
LEVELS: tuple[int, ...] = (1, 2, 3)

_ROLE_WORDS = {
    "Switch": "switch",
    "ToggleButton": "switch",
    "Button": "button",
    "ImageButton": "button",
    "EditText": "text field",
    "CheckBox": "checkbox",
    "RadioButton": "option",
}


@dataclass(frozen=True)
class QA:
    """One evolved question and its answer.

    Attributes:
        level: 1, 2 or 3 (see the module docstring).
        kind: ``grounding``, ``reference``, ``description``, ``caption``, ``relation``, ``structure`` or
            ``navigation`` (the default's kinds; a hook may use its own).
        question: the user turn.
        answer: the assistant turn the warm-up trains on.
    """

    level: int
    kind: str
    question: str
    answer: str


@dataclass
class Screen:
    """What a hook may read about one recorded screen.

    Attributes:
        elements: the screen's public elements (``text``, ``role``, ``bbox`` in screenshot pixels,
            ``clickable``, ``content_desc``, ``resource_id``).
        screen_size: ``(width, height)`` in screenshot pixels.
        instruction: the episode's task.
        screenshot: the (H, W, 3) image, when recorded (what an LLM hook would look at).
        tapped: the element the recorded action tapped, if any.
        next_elements: the elements of the screen that followed, if any.
    """

    elements: list[dict[str, Any]]
    screen_size: tuple[int, int]
    instruction: str = ""
    screenshot: Any = None
    tapped: dict[str, Any] | None = None
    next_elements: list[dict[str, Any]] = field(default_factory=list)


QAHook = Callable[[Screen], list[QA]]


def element_name(element: Mapping[str, Any]) -> str:
    """The name a person would call ``element`` by: its text up to the first comma, else its content description.

    >>> element_name({"text": "Network & internet, Wi-Fi, airplane mode"})
    'Network & internet'
    >>> element_name({"text": "", "content_desc": "Navigate up"})
    'Navigate up'
    """
    text = str(element.get("text") or "").strip() or str(element.get("content_desc") or "").strip()
    return text.split(", ")[0].strip()


def role_word(element: Mapping[str, Any]) -> str:
    """The role word of ``element`` (switch, button, text field, checkbox, option, item, label).

    >>> role_word({"role": "Switch"}), role_word({"role": "LinearLayout", "clickable": True})
    ('switch', 'item')
    """
    role = str(element.get("role") or element.get("tag") or "").rsplit(".", 1)[-1]
    if role in _ROLE_WORDS:
        return _ROLE_WORDS[role]
    return "item" if element.get("clickable") else "label"


def _inside(inner: Sequence[float], outer: Sequence[float]) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def _named(elements: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        dict(e)
        for e in elements
        if element_name(e) and e.get("bbox") is not None and "systemui" not in str(e.get("resource_id", ""))
    ]


def _title(elements: Sequence[Mapping[str, Any]]) -> str | None:
    for e in elements:
        if str(e.get("resource_id", "")).endswith(":id/title") and element_name(e):
            return element_name(e)
    return None


def rule_based_qa(screen: Screen, levels: Sequence[int] = LEVELS) -> list[QA]:
    """The default evolution of one screen: the module docstring's rules, levels ``levels`` only."""
    named = _named(screen.elements)
    items = [e for e in named if e.get("clickable")]
    out: list[QA] = []
    if 1 in levels:
        for e in items:
            name, box = element_name(e), format_box(e["bbox"], NORM_1000, screen.screen_size)
            out.append(QA(1, "grounding", f"Where is '{name}' on the screen?", box))
            out.append(QA(1, "reference", f"What is at {box}?", f"the '{name}' {role_word(e)}"))
        if named:
            listed = ", ".join(f"'{n}'" for n in dict.fromkeys(element_name(e) for e in named))
            out.append(QA(1, "description", "Describe the page.", f"The page shows {listed}."))
    if 2 in levels:
        for e in items:
            name, role = element_name(e), role_word(e)
            what = {"switch": f"it turns {name} on or off", "text field": f"it takes typed text for {name}",
                    "checkbox": f"it ticks or clears {name}"}.get(role, f"tapping it opens {name}")  # fmt: skip
            out.append(
                QA(2, "caption", f"What does the '{name}' {role} do?", f"The '{name}' {role}: {what}.")
            )
        for label in (e for e in named if not e.get("clickable")):
            parents = [p for p in items if _inside(label["bbox"], p["bbox"]) and element_name(p) != ""]
            if parents:
                parent = min(
                    parents, key=lambda p: (p["bbox"][2] - p["bbox"][0]) * (p["bbox"][3] - p["bbox"][1])
                )
                out.append(QA(2, "relation", f"Can the text '{element_name(label)}' be tapped?",
                              f"It is a label inside the '{element_name(parent)}' {role_word(parent)}; "
                              f"tap the {role_word(parent)}."))  # fmt: skip
    if 3 in levels:
        if named:
            title = _title(named)
            head = f"A title '{title}' at the top" if title else "No title"
            body = ", ".join(f"'{element_name(e)}'" for e in items)
            count = f"{len(items)} tappable element" + ("" if len(items) == 1 else "s")
            out.append(
                QA(3, "structure", "How is this page organised?", f"{head}, then {count}: {body or 'none'}.")
            )
        if screen.tapped is not None and screen.next_elements:
            nxt = _title(screen.next_elements)
            if nxt:
                name = element_name(screen.tapped)
                out.append(
                    QA(3, "navigation", f"What happens after tapping '{name}'?", f"The '{nxt}' page opens.")
                )
    return out


def load_hook(spec: str) -> QAHook:
    """The hook named ``module:function`` (for an LLM: it receives a :class:`Screen` and returns ``[QA]``)."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"evolution_hook must be 'module:function', got {spec!r}")
    fn = getattr(importlib.import_module(module), name, None)
    if not callable(fn):
        raise ValueError(f"evolution_hook {spec!r} names nothing callable")
    return fn  # type: ignore[no-any-return]


def evolve(screens: Sequence[Screen], levels: Sequence[int] = LEVELS, hook: QAHook | None = None) -> list[QA]:
    """Instruction evolution over ``screens``: the hook's Q&A (default :func:`rule_based_qa`), levels ``levels``,
    each distinct ``(question, answer)`` once (a screen seen in many episodes is not counted many times)."""
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad:
        raise ValueError(f"instruction evolution levels are {LEVELS}, got {bad}")
    seen: set[tuple[str, str]] = set()
    out: list[QA] = []
    for screen in screens:
        qas = hook(screen) if hook is not None else rule_based_qa(screen, levels)
        for qa in qas:
            if qa.level in levels and (qa.question, qa.answer) not in seen:
                seen.add((qa.question, qa.answer))
                out.append(qa)
    return out
