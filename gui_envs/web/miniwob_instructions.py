"""The wording of MiniWoB++ instructions, for the click, focus, type and login tasks of the learning suite.

Each :class:`Template` is one sentence pattern that a MiniWoB page writes into its query (``#query``), with
numbered slots for what it asks: ``'Click on the "{0}" button.'`` for ``click-button``. The same pattern
both reads an instruction (:func:`parse_instruction`) and writes one (:meth:`Template.format`), so that the
demonstrator (:mod:`agents.miniwob_demonstrator`) and the swap test (:mod:`gui_envs.web.miniwob_swap`)
agree on the wording by construction. Templates are recognised by their wording, never by task name: two
tasks that write the same sentence are the same instruction.

The sentences are copied from the pages' ``genProblem`` in the ``miniwob`` package (``html/miniwob/*.html``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: ``ui_utils.FIFTY_NAMES`` of MiniWoB's ``common/ui_utils.js``: the names ``enter-text`` asks for, and
#: (lowercased) ``login-user``'s usernames.
FIFTY_NAMES: tuple[str, ...] = (
    "Kenda", "Karrie", "Joye", "Cheree", "Deneen", "Tula", "Briana", "Beaulah", "Vina", "Vanda",
    "Cierra", "Leonie", "Bernardine", "Keli", "Renda", "Marcella", "Kanesha", "Enola", "Nathalie", "Annis",
    "Nieves", "Lyda", "Livia", "Kasie", "Tora", "Macie", "Agustina", "Dolores", "Ashlea", "Cristin",
    "Jerald", "Teodoro", "Rex", "Riley", "Jess", "Emile", "Donovan", "Keneth", "Chas", "Thaddeus",
    "Sergio", "Michel", "Myron", "Olin", "Dannie", "Juan", "Alan", "Ignacio", "Truman", "Augus",
)  # fmt: skip
#: ``ui_utils.alphanumericChars``: the alphabet of ``login-user``'s passwords and the checkbox labels.
ALPHANUMERIC = "qwertyuiopasdfghjklzxcvbnmQWERTYUIOPASDFGHJKLZXCVBNM1234567890"
#: What ``click-checkboxes`` writes in place of the list when no box is to be selected.
NOTHING = "nothing"
#: The separator of ``click-checkboxes``' list (``clickNames.join(', ')``).
LIST_SEPARATOR = ", "

_SLOT = re.compile(r"\{(\d)\}")
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_SUFFIXES = {1: "st", 2: "nd", 3: "rd"}


@dataclass(frozen=True)
class Template:
    """One instruction sentence with numbered slots.

    Attributes:
        name: a short name for the kind of request (not a task name).
        pattern: the sentence, with ``{0}``, ``{1}`` where the page puts what it asks.
        examples: MiniWoB tasks known to write this sentence (documentation only; never used to match).
    """

    name: str
    pattern: str
    examples: tuple[str, ...] = ()
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Literal parts escaped, each slot a non-greedy group: the pattern is the only copy of the wording.
        parts = _SLOT.split(self.pattern)
        regex = "".join(re.escape(p) if i % 2 == 0 else "(.+?)" for i, p in enumerate(parts))
        object.__setattr__(self, "_regex", re.compile(regex, re.DOTALL))

    def match(self, instruction: str) -> tuple[str, ...] | None:
        """The slot values if ``instruction`` (stripped) is this sentence, else ``None``."""
        m = self._regex.fullmatch(instruction.strip())
        return None if m is None else m.groups()

    def format(self, *slots: str) -> str:
        """The sentence with ``slots`` filled in."""
        return self.pattern.format(*slots)


# Order matters where one sentence is a prefix pattern of another: the sequence before the single button.
TEMPLATES: tuple[Template, ...] = (
    Template("click_button_sequence", "Click button {0}, then click button {1}.", ("click-button-sequence",)),
    Template("click_button_named", "Click button {0}.", ("click-test-2",)),
    Template("click_quoted_button", 'Click on the "{0}" button.', ("click-button",)),
    Template("click_link", 'Click on the link "{0}".', ("click-link",)),
    Template("click_tab", "Click on Tab #{0}.", ("click-tab",)),
    Template("click_dialog_button", 'Click the button in the dialog box labeled "{0}".', ("click-dialog-2",)),
    Template("focus_textbox", "Focus into the {0} input textbox.", ("focus-text-2",)),
    Template("enter_text", 'Enter "{0}" into the text field and press Submit.', ("enter-text",)),
    Template(
        "login",
        'Enter the username "{0}" and the password "{1}" into the text fields and press login.',
        ("login-user",),
    ),
    Template("select_checkboxes", "Select {0} and click Submit.", ("click-checkboxes",)),
)
TEMPLATES_BY_NAME: dict[str, Template] = {t.name: t for t in TEMPLATES}


@dataclass(frozen=True)
class ParsedInstruction:
    """An instruction read against :data:`TEMPLATES`: which sentence it is and what fills its slots."""

    template: Template
    slots: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.template.name

    def with_slots(self, *slots: str) -> str:
        """The same sentence asking for ``slots`` instead."""
        return self.template.format(*slots)


def parse_instruction(instruction: str) -> ParsedInstruction | None:
    """The first template whose sentence ``instruction`` is, with its slot values; ``None`` if none is."""
    for template in TEMPLATES:
        slots = template.match(instruction)
        if slots is not None:
            return ParsedInstruction(template, slots)
    return None


def ordinal(n: int) -> str:
    """English ordinal as MiniWoB writes it: ``1st``, ``2nd``, ``3rd``, ``4th``, ..., ``11th``, ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else _SUFFIXES.get(n % 10, "th")
    return f"{n}{suffix}"


def parse_ordinal(text: str) -> int | None:
    """Inverse of :func:`ordinal` (any suffix accepted); ``None`` when ``text`` is not ``<digits><suffix>``."""
    m = _ORDINAL.fullmatch(text.strip())
    return None if m is None else int(m.group(1))


def checkbox_names(slot: str) -> list[str]:
    """The labels a ``Select ... and click Submit.`` list names, in its order (``[]`` for ``nothing``)."""
    return [] if slot == NOTHING else slot.split(LIST_SEPARATOR)


def checkbox_slot(names: list[str]) -> str:
    """Inverse of :func:`checkbox_names`: how the page writes a list of labels."""
    return LIST_SEPARATOR.join(names) if names else NOTHING


# ----- reading the page: which elements a template's slot can name -------------------------------------
# Each reads only what the observation's ``elements`` show a user (tag, role, text, value, type); the
# demonstrator finds its target with them and the swap test draws its other targets from them, so the two
# always agree on what is on the page.

#: What the jQuery UI dialog's title-bar close button is called in ``elements`` (its accessible text; on screen
#: it is an X icon), and what ``click-dialog-2`` calls it in the instruction.
DIALOG_CLOSE_TEXTS: frozenset[str] = frozenset({"Close", "x", "\u00d7"})
DIALOG_CLOSE_LABEL = "x"
_TAB_TEXT = re.compile(r"Tab #(\d+)")


def buttons(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The buttons (``<button>`` or role ``button``), in page order."""
    return [e for e in elements if e.get("tag") == "button" or e.get("role") == "button"]


def links(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The links: ``<a>``, and the ``<span>`` words that ``click-link`` makes clickable (its jQuery handlers are
    invisible to the element extractor, so ``clickable`` is false there; a user sees them as link-styled)."""
    return [e for e in elements if e.get("tag") in ("a", "span") and str(e.get("text", "")).strip()]


def tabs(elements: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Tab number -> the element to click. MiniWoB lists each tab twice (the ``li`` of role ``tab`` and its inner
    ``a``); the ``a`` is taken because ``click-tab`` listens on it."""
    out: dict[int, dict[str, Any]] = {}
    for e in elements:
        m = _TAB_TEXT.fullmatch(str(e.get("text", "")).strip())
        if m is None or not (e.get("tag") == "a" or e.get("role") == "tab"):
            continue
        n = int(m.group(1))
        if n not in out or e.get("tag") == "a":
            out[n] = e
    return out


def dialog_label(element: dict[str, Any]) -> str:
    """A dialog button's label as the instruction writes it: ``x`` for the title bar's close button."""
    text = str(element.get("text", "")).strip()
    return DIALOG_CLOSE_LABEL if text in DIALOG_CLOSE_TEXTS else text


def text_fields(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The one-line text inputs (not passwords, checkboxes or buttons), in page order."""
    return [
        e
        for e in elements
        if e.get("tag") in ("input", "textarea") and e.get("type", "") in ("", "text", "email", "search")
    ]


def password_fields(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The password inputs, in page order."""
    return [e for e in elements if e.get("tag") == "input" and e.get("type") == "password"]


def checkboxes(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checkboxes, in page order; each one's ``text`` is its label and ``value`` is ``checked`` when ticked."""
    return [e for e in elements if e.get("type") == "checkbox" or e.get("role") == "checkbox"]
