"""A scripted MiniWoB++ demonstrator that reads the page as a user would.

It sees what a text agent sees: the observation's ``instruction`` and its ``elements`` (the DOM listing of
:func:`gui_envs.browser.observation.elements_json`), plus the actions it has taken in this episode. It never
reads MiniWoB's reward, its JavaScript state, the env's ``info`` or the oracle. The instruction is recognised
by its wording (:data:`gui_envs.web.miniwob_instructions.TEMPLATES`), not by the task's name; the element it
names is found by its text, and text to type is copied from the instruction.

Its episodes are the warm-start demonstrations of the MiniWoB learning benchmark (issue 37; WGE, Liu et al.
2018, used 10 human demonstrations per task). An instruction it does not know, or a page without the element
the instruction names, gives an output with ``action=None`` and ``parse_error`` starting ``unsupported:``.

Multi-step plans are decided from the page and the history, one step at a time, so one demonstrator can serve
many episodes at once (:meth:`MiniWoBDemonstrator.act_batch`, as :func:`agents.episode.play` calls it):

* enter text: type into the field until its value is the text, then click Submit;
* log in: type the username, then the password, then click Login;
* checkboxes: click each named box that is not ``checked`` (and each unnamed one that is), then Submit;
* a button sequence: click the first button until the history holds a click on it, then the second.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.base import AgentOutput, BaseAgent
from gui_envs.browser.observation import parse_elements
from gui_envs.schema.actions import Action, InvalidActionError
from gui_envs.web.miniwob_instructions import (
    buttons,
    checkbox_names,
    checkboxes,
    dialog_label,
    links,
    parse_instruction,
    parse_ordinal,
    password_fields,
    tabs,
    text_fields,
)

Element = dict[str, Any]


class UnsupportedInstructionError(ValueError):
    """The demonstrator has no plan for this instruction on this page (unknown wording, or no such element)."""


def next_action(instruction: str, elements: list[Element], history: Sequence[Action] = ()) -> Action:
    """The demonstrator's next action for ``instruction`` on a page listing ``elements``.

    Args:
        instruction: the task's utterance, as the observation holds it.
        elements: the parsed ``elements`` of the observation.
        history: this episode's earlier actions, oldest first.

    Raises:
        UnsupportedInstructionError: the wording matches no known template, or the page lacks what it names.
    """
    parsed = parse_instruction(instruction)
    if parsed is None:
        raise UnsupportedInstructionError(f"no template matches the instruction {instruction!r}")
    name, slots = parsed.name, parsed.slots
    if name == "click_button_sequence":
        first, second = (
            _by_text(buttons(elements), slots[0], "button"),
            _by_text(buttons(elements), slots[1], "button"),
        )
        done = any(_hits(a, first, elements) for a in history)
        return _click(second if done else first, elements)
    if name in ("click_button_named", "click_quoted_button"):
        return _click(_by_text(buttons(elements), slots[0], "button"), elements)
    if name == "click_link":
        return _click(_by_text(links(elements), slots[0], "link"), elements)
    if name == "click_tab":
        tab = tabs(elements).get(int(slots[0])) if slots[0].isdigit() else None
        if tab is None:
            raise UnsupportedInstructionError(f"no tab #{slots[0]} on the page")
        return _click(tab, elements)
    if name == "click_dialog_button":
        matches = [e for e in buttons(elements) if dialog_label(e) == slots[0]]
        if not matches:
            raise UnsupportedInstructionError(f"no dialog button labelled {slots[0]!r} on the page")
        return _click(matches[0], elements)
    if name == "focus_textbox":
        n, fields = parse_ordinal(slots[0]), text_fields(elements)
        if n is None or not 1 <= n <= len(fields):
            raise UnsupportedInstructionError(f"no {slots[0]} text field on the page ({len(fields)} fields)")
        return _click(fields[n - 1], elements)
    if name == "enter_text":
        return _fill_then_click(
            [(_first(text_fields(elements), "text field"), slots[0])], elements, history, "submit"
        )
    if name == "login":
        user = _first(text_fields(elements), "username field")
        password = _first(password_fields(elements), "password field")
        return _fill_then_click([(user, slots[0]), (password, slots[1])], elements, history, "login")
    if name == "select_checkboxes":
        return _tick_then_submit(checkbox_names(slots[0]), elements)
    raise UnsupportedInstructionError(f"no plan for the template {name!r}")  # a template added without a plan


def first_action(instruction: str, elements: list[Element]) -> Action | None:
    """The demonstrator's first action for ``instruction`` on a fresh page, or ``None`` if it has none.

    The swap test (:mod:`gui_envs.web.miniwob_swap`) compares this action under the original and the swapped
    instruction: an agent that follows the instruction must change its action the same way.
    """
    try:
        return next_action(instruction, elements, ())
    except UnsupportedInstructionError:
        return None


class MiniWoBDemonstrator(BaseAgent):
    """The scripted demonstrator as an agent (see the module docstring for what it reads and does).

    ``act`` keeps this episode's history itself (cleared by ``reset``); ``act_batch`` is stateless and takes each
    slot's history from the caller, as Action JSON strings (what :func:`agents.episode.play` passes).
    """

    name = "miniwob-demonstrator"

    def __init__(self) -> None:
        self._history: list[Action] = []

    def reset(self, instruction: str = "", info: dict[str, Any] | None = None) -> None:
        """Start a new episode: forget the actions of the last one (``info`` is not read)."""
        self._history = []

    def act(self, observation: dict[str, Any]) -> AgentOutput:
        out = _decide(observation, self._history, None)
        if isinstance(out.action, Action):
            self._history.append(out.action)
        return out

    def act_batch(
        self,
        observations: Sequence[dict[str, Any]],
        histories: Sequence[Sequence[str]] | None = None,
        instructions: Sequence[str] | None = None,
    ) -> list[AgentOutput]:
        """One output per observation, each from its observation and its slot's history alone.

        Args:
            observations: MiniWoB observations (dicts with ``instruction`` and ``elements``).
            histories: per slot, the episode's earlier actions as Action JSON strings, oldest first; entries
                that are not actions (a failed parse's placeholder) are skipped. ``None``: every slot is at the
                start of its episode.
            instructions: per slot, the instruction to use when the observation has none.
        """
        outs = []
        for i, obs in enumerate(observations):
            history = _actions(histories[i]) if histories is not None else []
            outs.append(_decide(obs, history, instructions[i] if instructions is not None else None))
        return outs


# ----- helpers ----------------------------------------------------------------------------------------


def _decide(observation: dict[str, Any], history: Sequence[Action], fallback: str | None) -> AgentOutput:
    """The next action as an output; anything it cannot plan is an ``unsupported:`` parse error, never raised."""
    try:
        instruction = observation.get("instruction") or fallback or ""
        raw = observation.get("elements", "[]")
        elements = parse_elements(raw) if isinstance(raw, str) else list(raw)
        return AgentOutput(action=next_action(str(instruction), elements, history))
    except (UnsupportedInstructionError, ValueError, TypeError, AttributeError, KeyError) as exc:
        # A malformed observation is reported like an unknown instruction: the demonstrator has no action.
        return AgentOutput(action=None, parse_error=f"unsupported: {exc}")


def _actions(history: Sequence[str | Action]) -> list[Action]:
    out = []
    for item in history:
        if isinstance(item, Action):
            out.append(item)
            continue
        try:
            out.append(Action.from_json(item))
        except (InvalidActionError, TypeError):
            continue  # "invalid action" and plain-text entries carry no click or typed text
    return out


def _box(element: Element) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(v) for v in element["bbox"])
    return x0, y0, x1, y1


def _inside(point: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def _occluders(target: Element, elements: list[Element]) -> list[tuple[float, float, float, float]]:
    """Boxes drawn over ``target``: elements after it in page order whose box overlaps it and is not inside it.

    Later siblings paint over earlier ones (click-test-2 places its two buttons at random, so TWO can cover the
    middle of ONE); boxes inside the target are its own children, which pass a click on to it.
    """
    tx0, ty0, tx1, ty1 = t = _box(target)
    index = next(i for i, e in enumerate(elements) if e is target)
    out = []
    for e in elements[index + 1 :]:
        if "bbox" not in e:
            continue
        x0, y0, x1, y1 = b = _box(e)
        overlaps = x0 < tx1 and tx0 < x1 and y0 < ty1 and ty0 < y1
        if overlaps and not (x0 >= tx0 and y0 >= ty0 and x1 <= tx1 and y1 <= ty1) and b != t:
            out.append(b)
    return out


def _click(target: Element, elements: list[Element]) -> Action:
    """Click ``target``: on its element id, or, when something covers its centre, at the visible point nearest
    its centre (screenshot pixels), as a user aims at the part of a button they can see."""
    covers = _occluders(target, elements) if "bbox" in target else []
    x0, y0, x1, y1 = _box(target) if covers else (0.0, 0.0, 0.0, 0.0)
    centre = ((x0 + x1) / 2, (y0 + y1) / 2)
    if not covers or not any(_inside(centre, b) for b in covers):
        return Action.click_element(target["id"])
    # A 1-pixel grid inside a 1-pixel margin; a point on an occluder's edge counts as covered.
    points = [
        (float(x), float(y))
        for x in range(int(x0) + 1, int(x1))
        for y in range(int(y0) + 1, int(y1))
        if not any(_inside((x, y), b) for b in covers)
    ]
    if not points:
        return Action.click_element(target["id"])  # fully covered: nothing better to aim at
    x, y = min(points, key=lambda p: (p[0] - centre[0]) ** 2 + (p[1] - centre[1]) ** 2)
    return Action.click(x, y)


def _hits(action: Action, target: Element, elements: list[Element]) -> bool:
    """Whether a past click landed on ``target`` (by its id, or at a visible point of it)."""
    if action.type != "click":
        return False
    if action.element_id is not None:
        return action.element_id == target["id"]
    if action.point is None or "bbox" not in target or not _inside(action.point, _box(target)):
        return False
    return not any(_inside(action.point, b) for b in _occluders(target, elements))


def _by_text(candidates: list[Element], text: str, kind: str) -> Element:
    # Exact text, as the pages compare it (click-button's "ok" and "Ok" are different buttons).
    for e in candidates:
        if str(e.get("text", "")).strip() == text:
            return e
    raise UnsupportedInstructionError(f"no {kind} {text!r} on the page")


def _first(candidates: list[Element], kind: str) -> Element:
    if not candidates:
        raise UnsupportedInstructionError(f"no {kind} on the page")
    return candidates[0]


def _button_named(elements: list[Element], label: str) -> Element:
    # The instruction writes "press login" for a button reading "Login": case does not matter here.
    for e in buttons(elements):
        if str(e.get("text", "")).strip().lower() == label:
            return e
    raise UnsupportedInstructionError(f"no {label!r} button on the page")


def _fill_then_click(
    fills: list[tuple[Element, str]], elements: list[Element], history: Sequence[Action], button: str
) -> Action:
    """Type each text into its field unless the field already holds it, then click ``button``."""
    for field, text in fills:
        typed = any(a.type == "type" and a.element_id == field["id"] and a.text == text for a in history)
        if field.get("value") != text and not typed:
            return Action.type_text(text, element_id=field["id"])
    return _click(_button_named(elements, button), elements)


def _tick_then_submit(names: list[str], elements: list[Element]) -> Action:
    """Tick the named boxes, untick any other ticked box, then click Submit; the page's ticks are the state."""
    boxes = checkboxes(elements)
    wanted = []
    for label in names:
        box = next((b for b in boxes if str(b.get("text", "")).strip() == label), None)
        if box is None:
            raise UnsupportedInstructionError(f"no checkbox labelled {label!r} on the page")
        wanted.append(box)
        if box.get("value") != "checked":
            return _click(box, elements)
    wanted_ids = {b["id"] for b in wanted}
    for box in boxes:
        if box["id"] not in wanted_ids and box.get("value") == "checked":
            return _click(box, elements)
    return _click(_button_named(elements, "submit"), elements)
