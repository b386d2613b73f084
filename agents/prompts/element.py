"""Element-letter clicks: the model names one clickable element of the screen by a letter.

A tiny model trained on CPU in minutes cannot write GUI-R1 JSON with pixel coordinates, but it can learn to
find the element the instruction names in a short listing and copy the letter in front of it. The prompt is the
instruction and the screen's clickable elements, one per letter (``A:Clock;B:Expenses;...``, in the env's element
order); the answer is one letter, read back as a click on that element (``Action.click_element``). Opening an
app is a click on its home-screen icon, as a user would do it, so every step of a plan made of taps and app
launches has an answer in this format. CORE's self-training loop uses it (``output_format: element``).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.parsing import ParseError
from agents.prompts.formats import Conversation, PromptContext
from agents.prompts.observation import element_list
from gui_envs.schema.actions import Action

#: Element names in listing order. Upper case, so that no letter of the instruction's words reads as an answer.
LETTERS = string.ascii_uppercase


def clickable(observation: Any) -> list[Mapping[str, Any]]:
    """The observation's clickable elements with a label, in the env's order, at most 26 (one per letter)."""
    elements = element_list(observation.get("elements") if isinstance(observation, Mapping) else None)
    return [e for e in elements if e.get("clickable") and _label(e)][: len(LETTERS)]


def _label(element: Mapping[str, Any]) -> str:
    return str(element.get("text") or element.get("content_desc") or "").strip()


@dataclass
class ElementFormat:
    """List the clickable elements as ``letter:text``; read the first listed letter of the answer as a click.

    Attributes:
        max_text: characters of each element's text shown (a long row label is cut; the prompt stays short).
        name: format name in logs.
    """

    max_text: int = 24
    name: str = "element"

    def messages(self, ctx: PromptContext) -> Conversation:
        # No spaces around the letters: a byte-level tokenizer may merge " A" into one token but not ";A" or
        # ":A", and a letter must read as the same token wherever it appears for a small model to copy it.
        listing = ";".join(
            f"{LETTERS[i]}:{_label(e)[: self.max_text]}{'/switch' if str(e.get('role', '')).lower() == 'switch' else ''}"
            for i, e in enumerate(clickable(ctx.observation))
        )
        text = f"{ctx.instruction}\n{listing}"
        return [{"role": "user", "content": text}]

    def parse(self, text: str, observation: Any) -> tuple[Action | None, ParseError | None]:
        """The click on the element named by the answer's first listed letter, or the parse error. Never raises.

        >>> obs = {"elements": [{"id": "3", "text": "Clock", "clickable": True}, {"id": "4", "text": "x"}]}
        >>> ElementFormat().parse("A", obs)[0].element_id, ElementFormat().parse("B", obs)[1].code
        ('3', 'no_element')
        """
        elements = clickable(observation)
        names = LETTERS[: len(elements)]
        k = next((names.index(ch) for ch in str(text) if ch in names), None)
        if k is None:
            return None, ParseError(
                "no_element", f"no element letter A-{names[-1] if names else 'A'} in the answer"
            )
        return Action.click_element(str(elements[k]["id"])), None

    def answer_text(self, action: Action, observation: Any) -> str:
        """The letter of the element ``action`` acts on (for SFT targets): the element with the action's id, the
        smallest clickable element under its point, or, for ``open_app``, the app's icon on the screen.
        Raises ``ValueError`` when no listed element matches (the step has no answer in this format).

        >>> obs = {"elements": [{"id": "0", "text": "Row", "clickable": True, "bbox": [0, 0, 100, 50]},
        ...                     {"id": "1", "text": "On", "clickable": True, "bbox": [60, 10, 90, 40]}]}
        >>> [ElementFormat().answer_text(a, obs) for a in (Action.click(70, 20), Action.click(10, 20))]
        ['B', 'A']
        """
        elements = clickable(observation)
        k = None
        if action.type == "open_app" and action.app:
            k = next(
                (i for i, e in enumerate(elements) if _label(e).lower() == str(action.app).lower()), None
            )
        elif action.type == "click" and action.element_id is not None:
            k = next((i for i, e in enumerate(elements) if str(e.get("id")) == str(action.element_id)), None)
        elif action.type == "click" and action.point is not None:
            x, y = action.point
            under = [(_area(e["bbox"]), i) for i, e in enumerate(elements)
                     if e.get("bbox") and e["bbox"][0] <= x <= e["bbox"][2] and e["bbox"][1] <= y <= e["bbox"][3]]  # fmt: skip
            k = min(under)[1] if under else None
        if k is None:
            raise ValueError(
                f"no listed element for the action {action.to_json()}: it has no answer in this format"
            )
        return LETTERS[k]

    def answer_tokens(self, tokenizer: Any) -> list[int]:
        """The token ids of the letters, each its own token. Raises ``ValueError`` when a letter is split."""
        ids = []
        for name in LETTERS:
            enc = tokenizer.encode(name, add_special_tokens=False)
            if len(enc) != 1:
                raise ValueError(f"the tokenizer splits letter {name!r} into {len(enc)} tokens")
            ids.append(int(enc[0]))
        return ids

    def describe(self, action: Any) -> str:
        return action.to_json() if isinstance(action, Action) else "invalid action"


def _area(bbox: Any) -> float:
    return (float(bbox[2]) - float(bbox[0])) * (float(bbox[3]) - float(bbox[1]))
