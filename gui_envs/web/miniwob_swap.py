"""The swap test's instruction rewrite: the same MiniWoB page, the same sentence, another target.

An agent that reads the instruction must change its action when the instruction names something else on the
same page; one that ignores it keeps acting the same way (issue 37, the swap test). :func:`swap_instruction`
keeps the wording of the instruction's template (:mod:`gui_envs.web.miniwob_instructions`) and changes only
what fills its slots, drawing the new target from what the page shows:

=========================  =================================================================================
template (task)            the swapped request
=========================  =================================================================================
``Click button {0}.``      another button label on the page (click-test-2: ONE <-> TWO)
sequence of two buttons    the two buttons in the other order (``Click button TWO, then click button ONE.``)
``Click on the "{0}" ...`` another button label on the page, different text (click-button)
``Click on the link ...``  another link's text (click-link)
``Click on Tab #{0}.``     another tab number on the page (click-tab)
dialog button ``"{0}"``    another of the dialog's buttons: ``Cancel``, ``OK`` or ``x`` (click-dialog-2)
``Focus into the {0} ...`` another ordinal among the text fields present (focus-text-2)
``Enter "{0}" ...``        another of MiniWoB's fifty names (enter-text)
login                      another username (a lowercased name) and another password (login-user)
``Select {0} and ...``     another selection of the listed checkboxes, whose first box differs
                           (click-checkboxes)
=========================  =================================================================================

Every swap changes the first thing to do: another element to click, or other text to type. (For the
checkboxes the first named box differs, or one list is ``nothing``, because a follower ticks boxes in the
order the instruction lists them and a selection sharing the first box would begin with the same click.)
:func:`swap_instruction` returns ``None`` when the page holds no other target. This module knows MiniWoB's
wording, not any agent: the test pairs it with the demonstrator's ``first_action`` (``agents/``), as the
layering (rewards <- gui_envs <- agents <- trainers) requires.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_envs.web.miniwob_instructions import (
    ALPHANUMERIC,
    FIFTY_NAMES,
    NOTHING,
    buttons,
    checkbox_names,
    checkbox_slot,
    checkboxes,
    dialog_label,
    links,
    ordinal,
    parse_instruction,
    parse_ordinal,
    tabs,
    text_fields,
)

#: Length range (characters, inclusive) of a swapped password: ``ui_utils.generateString(2, 6)`` draws
#: ``core.randi(2, 6)`` characters, and ``randi`` excludes its upper end.
PASSWORD_CHARS = (2, 5)
#: Draws of a random checkbox selection before falling back to a fixed one.
_SELECTION_TRIES = 100


def swap_instruction(
    instruction: str, elements: list[dict[str, Any]], rng: np.random.Generator
) -> str | None:
    """The same instruction naming a different target that exists on the same page.

    Args:
        instruction: the page's instruction, as the observation holds it.
        elements: the page's parsed ``elements`` (:func:`gui_envs.browser.observation.parse_elements`).
        rng: draws the new target where the page offers several.

    Returns:
        The rewritten instruction (same template, other slot values), or ``None`` when the wording is not a
        known template or the page has no other target for it.
    """
    parsed = parse_instruction(instruction)
    if parsed is None:
        return None
    name, slots = parsed.name, parsed.slots
    if name == "click_button_sequence":
        labels = _texts(buttons(elements))
        ok = slots[0] != slots[1] and slots[0] in labels and slots[1] in labels
        return parsed.with_slots(slots[1], slots[0]) if ok else None
    if name in ("click_button_named", "click_quoted_button"):
        return _other(parsed.with_slots, slots[0], _texts(buttons(elements)), rng)
    if name == "click_link":
        return _other(parsed.with_slots, slots[0], _texts(links(elements)), rng)
    if name == "click_tab":
        return _other(parsed.with_slots, slots[0], [str(n) for n in sorted(tabs(elements))], rng)
    if name == "click_dialog_button":
        return _other(parsed.with_slots, slots[0], _unique(dialog_label(e) for e in buttons(elements)), rng)
    if name == "focus_textbox":
        asked = parse_ordinal(slots[0])
        others = [ordinal(n) for n in range(1, len(text_fields(elements)) + 1) if n != asked]
        return parsed.with_slots(str(rng.choice(others))) if others else None
    if name == "enter_text":
        return _other(parsed.with_slots, slots[0], list(FIFTY_NAMES), rng)
    if name == "login":
        users = [n.lower() for n in FIFTY_NAMES if n.lower() != slots[0]]
        return parsed.with_slots(str(rng.choice(users)), _password(rng, avoid=slots[1]))
    if name == "select_checkboxes":
        selection = _selection(checkbox_names(slots[0]), _texts(checkboxes(elements)), rng)
        return None if selection is None else parsed.with_slots(checkbox_slot(selection))
    return None


# ----- helpers ----------------------------------------------------------------------------------------


def _unique(texts: Any) -> list[str]:
    """Distinct texts in first-seen order, without those a quoted slot cannot hold."""
    out: list[str] = []
    for t in texts:
        t = str(t).strip()
        if t and '"' not in t and t not in out:
            out.append(t)
    return out


def _texts(elements: list[dict[str, Any]]) -> list[str]:
    return _unique(e.get("text", "") for e in elements)


def _other(fill: Any, current: str, candidates: Sequence[str], rng: np.random.Generator) -> str | None:
    """``fill(c)`` for a random candidate ``c`` other than ``current``; ``None`` if there is none."""
    others = [c for c in candidates if c != current]
    return fill(str(others[int(rng.integers(len(others)))])) if others else None


def _password(rng: np.random.Generator, avoid: str) -> str:
    while True:
        n = int(rng.integers(PASSWORD_CHARS[0], PASSWORD_CHARS[1] + 1))
        text = "".join(ALPHANUMERIC[int(i)] for i in rng.integers(len(ALPHANUMERIC), size=n))
        if text != avoid:
            return text


def _selection(named: list[str], labels: list[str], rng: np.random.Generator) -> list[str] | None:
    """Another selection of ``labels`` (page order) whose first label differs from ``named``'s first.

    Drawn as MiniWoB draws it (each box with probability 1/2); ``None`` when the page lists no box that could
    change the first step (no boxes, or only the one already named first).
    """
    labels = [t for t in labels if t != NOTHING]  # a box called "nothing" would read as the empty list
    first = named[0] if named else None
    for _ in range(_SELECTION_TRIES):
        pick = [t for t in labels if rng.random() < 0.5]
        if (pick[0] if pick else None) != first and set(pick) != set(named):
            return pick
    # Unlucky draws: the empty selection, or the first label other than the current first one.
    if first is not None:
        return []
    rest = [t for t in labels if t != first]
    return rest[:1] or None
