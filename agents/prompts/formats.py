"""Output formats: how to ask a model for an action, and how to read its answer back.

An :class:`OutputFormat` turns a :class:`PromptContext` into chat messages and a completion into an env
action. :class:`GuiR1Format` serves GUI envs (the action is an :class:`~gui_envs.schema.actions.Action` in
screenshot pixels); :class:`TextAnswerFormat` serves envs whose action is free text (the grid envs' answer
modes), passing the model's answer through for the env's own parser to judge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.parsing import PIXELS, CoordinateFrame, ParseError, parse_gui_r1, screen_size_of
from agents.prompts.gui_r1 import gui_r1_messages, vocabulary
from agents.prompts.observation import is_gui_observation, render_history, render_observation_text
from gui_envs.schema.actions import Action

Conversation = list[dict[str, Any]]


@dataclass
class PromptContext:
    """Everything a template may put in the prompt.

    Attributes:
        observation: the env observation.
        instruction: the task instruction.
        history: descriptions of the previous actions of this episode, oldest first.
        with_image: the model reads images (a VLM) and the observation has a screenshot.
        info: the public part of the env's reset info (may name an action vocabulary under
            ``"action_vocabulary"``); privileged facts are stripped before it gets here.
    """

    observation: Any
    instruction: str = ""
    history: Sequence[str] = ()
    with_image: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class OutputFormat(Protocol):
    """A prompt template plus the parser for the answers it asks for."""

    name: str

    def messages(self, ctx: PromptContext) -> Conversation:
        """The chat messages; ``{"type": "image"}`` parts stand for the screenshot."""
        ...

    def parse(self, text: str, observation: Any) -> tuple[Any, ParseError | None]:
        """The env action for ``text`` (``None`` when unparseable) and the parse error, if any. Never raises."""
        ...

    def describe(self, action: Any) -> str:
        """A short description of ``action`` for the history of later prompts."""
        ...


@dataclass
class GuiR1Format:
    """GUI-R1 one-shot ``<think>/<answer>`` prompting (seed 001, App. F.1).

    Attributes:
        actions: a vocabulary name from :data:`~agents.prompts.gui_r1.ACTION_VOCABULARIES` or a list of
            action names; ``None`` uses the env's ``info["action_vocabulary"]`` or every action type.
        frame: the coordinate frame the model writes points in (converted to pixels on parsing).
        include_elements: list the observation's elements in the text (always on for text-only models).
        history_items: at most this many previous actions are shown.
    """

    actions: str | Sequence[str] | None = None
    frame: CoordinateFrame = PIXELS
    include_elements: bool = False
    history_items: int = 8
    name: str = "gui_r1"

    def messages(self, ctx: PromptContext) -> Conversation:
        vocab = vocabulary(self.actions if self.actions is not None else ctx.info.get("action_vocabulary"))
        show_text = self.include_elements or not ctx.with_image
        if self.frame.is_pixels:
            note = "integer screenshot pixels"
        else:
            note = f"numbers in [0, {self.frame.scale:g}] relative to the screen width and height"
        return gui_r1_messages(
            ctx.instruction,
            render_history(ctx.history, self.history_items),
            vocab,
            with_image=ctx.with_image,
            observation_text=render_observation_text(ctx.observation) if show_text else "",
            frame_note=note,
        )

    def parse(self, text: str, observation: Any) -> tuple[Action | None, ParseError | None]:
        result = parse_gui_r1(text, self.frame, screen_size_of(observation))
        return result.action, result.error

    def describe(self, action: Any) -> str:
        if isinstance(action, Action):
            return action.to_json()
        return "invalid action"


_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.DOTALL | re.IGNORECASE)


@dataclass
class TextAnswerFormat:
    """Free-text answers for envs whose action space is text (Maze/Sudoku/ARC answer modes).

    The prompt is the observation's text rendering plus a request to think in ``<think>`` and answer in
    ``<answer>``. The action is the ``<answer>`` content when present, else the whole completion; the env's
    parser decides whether it is well formed, so parsing here never fails.
    """

    system: str | None = None
    name: str = "text_answer"

    def messages(self, ctx: PromptContext) -> Conversation:
        text = render_observation_text(ctx.observation)
        if ctx.instruction and ctx.instruction not in text:
            text = f"{ctx.instruction}\n\n{text}"
        if ctx.history:
            text += f"\n\nPrevious answers: {render_history(ctx.history)}"
        text += "\n\nThink step by step inside <think> </think>, then give the final answer inside <answer> </answer>."
        messages: Conversation = []
        if self.system:
            messages.append({"role": "system", "content": self.system})
        messages.append({"role": "user", "content": text})
        return messages

    def parse(self, text: str, observation: Any) -> tuple[str, ParseError | None]:
        match = _ANSWER.search(text) if isinstance(text, str) else None
        answer = match.group(1).strip() if match else str(text)
        return answer, None

    def describe(self, action: Any) -> str:
        return str(action)[:200]


def auto_format(observation: Any) -> OutputFormat:
    """GUI-R1 for GUI observations, free text for everything else."""
    return GuiR1Format() if is_gui_observation(observation) else TextAnswerFormat()
