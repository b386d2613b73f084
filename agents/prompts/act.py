"""A text agent's view of a web page: the task's elements by letter, answered with ``click X`` or ``type X N``.

What a small model needs to act on a MiniWoB++ page (or any page with few elements) without pixels: the
instruction, the actions taken so far, and one line per element a task may need, each behind a letter:

    Enter the username "karrie" and the password "AU" into the text fields and press login.
    done: type "karrie" into Username
    A label Username
    B field Username = karrie
    C label Password
    D field Password
    E button Login

Listed are buttons, links, tabs, fields (with their label, placeholder and current value), checkboxes (with
their label; ``[x]`` before the letter when ticked, ``[ ]`` when not) and the page's visible text pieces
(MiniWoB's links are plain ``<span>`` elements, so text is listed too); a piece of text nested in a listed element
with the same text is listed once.

The answer is one action:

* ``click X``: click element ``X``;
* ``type X N``: type the instruction's ``N``-th quoted phrase (1-based) into ``X``. The text is copied from the
  instruction by position, as WGE's DOMNET copies an utterance field (Liu et al. 2018, section 4): a tiny model
  learns to point at a phrase long before it learns to spell one out; ``type X "text"`` types the text as written.

With ``mark_matches`` (default) a ``*`` follows the letter of each element whose text the instruction names: a
quoted phrase of the instruction, or, when it quotes nothing, a run of its whole words ("Tab #2", "ONE"). It is
a string match the agent computes from what it sees (the env gives no such hint): the model still has to tell
which marked element to act on and in which order. Without it, a 2-layer model cloning 470 demonstrations per
task did not learn to match a random label in the instruction with the same label in the listing in 1,000 steps
(held-out click-button 0.04, click-link 0.40; ``docs/learning_benchmarks.md``).

A history entry (the env loop keeps each action as JSON) is shown by its element's label on the current page,
so the prompt reads the same whatever the page's internal ids are.
"""

from __future__ import annotations

import hashlib
import random
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.parsing import ParseError
from agents.prompts.formats import Conversation, PromptContext
from agents.prompts.observation import element_list, instruction_of
from gui_envs.schema.actions import Action

LETTERS = string.ascii_uppercase
_QUOTED = re.compile(r'"([^"]*)"')
_ANSWER = re.compile(r'^\s*(click|type)\s+([A-Z])\b\s*(?:(\d+)|"([^"]*)")?', re.IGNORECASE)
_FIELD_TYPES = frozenset({"text", "password", "email", "search", "number", "tel", "url", "textarea"})


def quoted_phrases(instruction: str) -> list[str]:
    """The instruction's double-quoted phrases, in order: what ``type X N`` refers to (``N`` from 1).

    >>> quoted_phrases('Enter the username "karrie" and the password "AU" into the text fields.')
    ['karrie', 'AU']
    """
    return _QUOTED.findall(instruction)


def named_in(text: str, instruction: str) -> bool:
    """Whether ``instruction`` names ``text``: equal to one of its quoted phrases, or, when it quotes nothing, a
    run of its whole words (case-sensitive: MiniWoB's links "Eget" and "eget" are different targets).

    >>> named_in("okay", 'Click on the "okay" button.'), named_in("button", 'Click on the "okay" button.')
    (True, False)
    >>> named_in("Tab #2", "Click on Tab #2."), named_in("Tab #1", "Click on Tab #2.")
    (True, False)
    """
    text = text.strip()
    if not text:
        return False
    phrases = quoted_phrases(instruction)
    if phrases:
        return text in phrases
    return re.search(rf"(?<![\w#]){re.escape(text)}(?!\w)", instruction) is not None


def element_kind(element: Mapping[str, Any]) -> str:
    """``button``, ``link``, ``tab``, ``field``, ``checkbox``, ``radio``, ``select``, ``label`` or ``text``."""
    tag, role, kind = str(element.get("tag", "")), str(element.get("role", "")), str(element.get("type", ""))
    if tag == "input" and kind in ("checkbox", "radio"):
        return kind
    if tag == "textarea" or (tag == "input" and (kind in _FIELD_TYPES or not kind)):
        return "field"
    if tag == "select":
        return "select"
    if role == "tab":
        return "tab"
    if tag == "button" or role == "button" or (tag == "input" and kind in ("button", "submit", "reset")):
        return "button"
    if tag == "a" or role == "link":
        return "link"
    if tag == "label":
        return "label"
    return "text"


def listed_elements(observation: Any, limit: int = len(LETTERS)) -> list[Mapping[str, Any]]:
    """The elements the listing shows, in page order, at most ``limit`` (one per letter).

    Every element with text, and every field, checkbox or button without; an element whose text equals that
    of a listed element it lies inside (a tab's inner link) is the same thing to a reader and is left out. A
    checkbox or radio button inside a ``<label>`` with its text (``<label><input type=checkbox>Idh</label>``)
    takes the label's line: a reader sees one box with its text, and only the box's line can show ``[x]``. Listed
    apart, the label and its box read as two things to tick, and clicking one after the other unticks the box.
    """
    out: list[Mapping[str, Any]] = []
    for el in element_list(observation.get("elements") if isinstance(observation, Mapping) else None):
        if el.get("visible") is False:
            continue
        kind, text = element_kind(el), _text(el)
        if not text and kind in ("text", "label", "link", "tab"):
            continue
        if any(_text(o) == text and _inside(el, o) for o in out):
            continue
        label = next((i for i, o in enumerate(out) if _is_label_of(o, el)), None)
        if label is not None:
            out[label] = el
            continue
        out.append(el)
        if len(out) == limit:
            break
    return out


@dataclass
class ActFormat:
    """List the page's elements by letter; read ``click X`` / ``type X N`` back as an action (module docstring).

    Attributes:
        max_text: characters of each element's text shown (long paragraphs are cut; the prompt stays short).
        history_items: at most this many previous actions are shown (the latest).
        name: format name in logs.
    """

    max_text: int = 24
    history_items: int = 6
    mark_matches: bool = True
    shuffle_letters: bool = False
    name: str = "act"

    def letters(self, observation: Any, count: int) -> str:
        """The letters of the ``count`` listed elements, in listing order: ``A, B, C...``, or with
        ``shuffle_letters`` ``count`` distinct letters drawn from the whole alphabet by a hash of the page (its
        instruction and listed elements), so the same page always gets the same letters.

        Why shuffle: in page order a letter says where an element is, and a small model learns "the first button"
        (on click-test-2 ONE is always listed first) instead of reading the instruction; drawn letters carry no
        position, and every letter is an answer about equally often, so the copy of a letter is learned for all
        of them (BrowserGym's element ids are arbitrary for the same reason). Measured on MiniWoB without pointer
        pre-training, it made cloning worse (held-out click-button 0.03 after 1,200 steps on 100 demonstrations
        per task; ``docs/learning_benchmarks.md``), so the benchmark keeps page order (the default).
        """
        if not self.shuffle_letters:
            return LETTERS[:count]
        page = [instruction_of(observation)] + [
            f"{e.get('id')}|{e.get('tag')}|{_text(e)}" for e in listed_elements(observation)
        ]
        digest = hashlib.sha256("\n".join(page).encode()).digest()
        return "".join(random.Random(digest).sample(LETTERS, count))

    def messages(self, ctx: PromptContext) -> Conversation:
        elements = listed_elements(ctx.observation)
        lines = [ctx.instruction]
        done = [self._history_entry(h, ctx.observation) for h in list(ctx.history)[-self.history_items :]]
        if done:
            lines.append("done: " + "; ".join(done))
        names = self.letters(ctx.observation, len(elements))
        for i, e in enumerate(elements):
            mark = "*" if self.mark_matches and named_in(_text(e), ctx.instruction) else ""
            lines.append(f"{_box_state(e)}{names[i]}{mark} {self._line(e)}")
        return [{"role": "user", "content": "\n".join(lines)}]

    def _line(self, element: Mapping[str, Any]) -> str:
        kind, text = element_kind(element), _text(element)[: self.max_text]
        line = f"{kind} {text}".rstrip()
        value = str(element.get("value") or "")
        if kind in ("field", "select") and value:
            return f"{line} = {value[: self.max_text]}"
        return line

    def _history_entry(self, entry: str, observation: Any) -> str:
        try:
            action = Action.from_json(entry)
        except Exception:  # noqa: BLE001 - a history entry of a malformed answer ("invalid action")
            return "invalid"
        el = _by_id(observation, action.element_id)
        label = _text(el)[: self.max_text] if el is not None else "?"
        if action.type == "type":
            return f'type "{action.text or ""}" into {label or element_kind(el or {})}'
        return f"{action.type} {label}"

    def parse(self, text: str, observation: Any) -> tuple[Action | None, ParseError | None]:
        """The action the answer names, or the parse error. Never raises.

        >>> obs = {"instruction": 'Enter "Kasie".', "elements": [
        ...     {"id": "7", "tag": "input", "type": "text", "text": ""},
        ...     {"id": "8", "tag": "button", "text": "Submit"}]}
        >>> ActFormat().parse("type A 1", obs)[0].to_json()
        '{"type": "type", "element_id": "7", "text": "Kasie"}'
        >>> ActFormat().parse("click B", obs)[0].element_id, ActFormat().parse("click C", obs)[1].code
        ('8', 'no_element')
        """
        m = _ANSWER.match(str(text))
        if m is None:
            return None, ParseError("no_action", "the answer must start with 'click X' or 'type X N'")
        verb, letter, number, literal = m.group(1).lower(), m.group(2).upper(), m.group(3), m.group(4)
        elements = listed_elements(observation)
        names = self.letters(observation, len(elements))
        k = names.find(letter)
        if k < 0:
            listed = (
                (f"A-{names[-1]}" if not self.shuffle_letters else ", ".join(sorted(names)))
                if names
                else "none"
            )
            return None, ParseError("no_element", f"element {letter} is not listed ({listed})")
        element_id = str(elements[k]["id"])
        if verb == "click":
            return Action.click_element(element_id), None
        if literal is not None:
            return Action.type_text(literal, element_id=element_id), None
        phrases = quoted_phrases(instruction_of(observation))
        if number is None or not 1 <= int(number) <= len(phrases):
            return None, ParseError(
                "no_text", f"'type {letter}' needs a phrase number 1-{len(phrases)} or a quoted text"
            )
        return Action.type_text(phrases[int(number) - 1], element_id=element_id), None

    def answer_text(self, action: Action, observation: Any) -> str:
        """The answer that names ``action`` (for SFT targets); a typed text that is a quoted phrase of the
        instruction is named by its number. Raises ``ValueError`` when the action has no answer here."""
        k = _listed_index(action, observation)
        if k is None or action.type not in ("click", "type"):
            raise ValueError(
                f"no listed element for the action {action.to_json()}: it has no answer in this format"
            )
        letter = self.letters(observation, len(listed_elements(observation)))[k]
        if action.type == "click":
            return f"click {letter}"
        phrases = quoted_phrases(instruction_of(observation))
        text = action.text or ""
        return f"type {letter} {phrases.index(text) + 1}" if text in phrases else f'type {letter} "{text}"'

    def describe(self, action: Any) -> str:
        return action.to_json() if isinstance(action, Action) else "invalid action"


def _box_state(element: Mapping[str, Any]) -> str:
    """``[x] `` before a ticked checkbox's (or chosen radio button's) letter, ``[ ] `` before an open one's, else
    nothing: a to-do list's reading.

    Why before the letter: the answer copies a line's letter, and a causal model's token sees only what precedes
    it, so a state at the end of the line (``B* checkbox KB [x]``, the earlier listing) never reached the letter
    it would have to veto; three bytes before it, the state is at a fixed offset from the letter and its ``*``.
    With it (and checklist pages in pointer pre-training) a 2-layer model answered synthetic checklists with a
    tick 0.80 of the time, against 0.28 with the state at the end (``docs/learning_benchmarks.md``).
    """
    if element_kind(element) not in ("checkbox", "radio"):
        return ""
    return "[x] " if str(element.get("value") or "") == "checked" else "[ ] "


def _text(element: Mapping[str, Any] | None) -> str:
    """The element's label. A field without a label or placeholder reports its value as its text (the page's
    extractor falls back to it); that is the value, shown once after ``=``, not a label."""
    text = re.sub(r"\s+", " ", str((element or {}).get("text") or "")).strip()
    value = re.sub(r"\s+", " ", str((element or {}).get("value") or "")).strip()
    if text and text == value and element_kind(element or {}) in ("field", "select"):
        return ""
    return text


def _inside(inner: Mapping[str, Any], outer: Mapping[str, Any]) -> bool:
    a, b = inner.get("bbox"), outer.get("bbox")
    if not a or not b:
        return False
    return a[0] >= b[0] and a[1] >= b[1] and a[2] <= b[2] and a[3] <= b[3]


def _is_label_of(label: Mapping[str, Any], box: Mapping[str, Any]) -> bool:
    """``label`` is a ``<label>`` wrapping the checkbox or radio ``box``: the same text, their boxes overlapping
    (a box's bounding rectangle can stick out of its label's by its margin, so not "inside")."""
    if element_kind(label) != "label" or element_kind(box) not in ("checkbox", "radio"):
        return False
    a, b = label.get("bbox"), box.get("bbox")
    if not a or not b or _text(label) != _text(box):
        return False
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _listed_index(action: Action, observation: Any) -> int | None:
    """The listing position of the element ``action`` acts on: its own line; for an element left out as the same
    thing as a listed one (a tab's inner link), that one's; for a point, the smallest listed element under it."""
    elements = listed_elements(observation)
    if action.element_id is not None:
        k = next((i for i, e in enumerate(elements) if str(e.get("id")) == str(action.element_id)), None)
        target = _by_id(observation, action.element_id)
        if k is None and target is not None:
            k = next(
                (
                    i
                    for i, e in enumerate(elements)
                    if (_text(e) == _text(target) and _inside(target, e)) or _is_label_of(target, e)
                ),
                None,
            )
        return k
    if action.point is None:
        return None
    x, y = action.point
    under = [(_area(e), i) for i, e in enumerate(elements) if _holds(e, x, y)]
    return min(under)[1] if under else None


def _area(element: Mapping[str, Any]) -> float:
    b = element["bbox"]
    return (float(b[2]) - float(b[0])) * (float(b[3]) - float(b[1]))


def _holds(element: Mapping[str, Any], x: float, y: float) -> bool:
    b = element.get("bbox")
    return bool(b) and b[0] <= x <= b[2] and b[1] <= y <= b[3]


def _by_id(observation: Any, element_id: str | None) -> Mapping[str, Any] | None:
    if element_id is None or not isinstance(observation, Mapping):
        return None
    return next(
        (e for e in element_list(observation.get("elements")) if str(e.get("id")) == str(element_id)), None
    )
