"""The GUI-R1 prompt (seed 001, App. F.1; seed 000 sec. 4.1) with the action vocabulary per environment.

The model answers ``<think>...</think><answer>[{"action": ..., "point": [x, y], "input_text": ...}]</answer>``;
actions without coordinates carry ``[-100, -100]``. Points are in the frame the template names: screenshot
pixels by default, as GUI-R1 trains Qwen2.5-VL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gui_envs.schema.actions import ACTION_TYPES

#: Action names each benchmark lets the model choose from. Every name is one that
#: :meth:`gui_envs.schema.actions.Action.from_gui_r1` reads (aliases such as ``press_enter`` included).
ACTION_VOCABULARIES: dict[str, tuple[str, ...]] = {
    "default": ACTION_TYPES,
    "grounding": ("click",),  # ScreenSpot / ScreenSpot-Pro
    "mobile": (
        "click",
        "long_press",
        "scroll",
        "type",
        "navigate_back",
        "navigate_home",
        "open_app",
        "wait",
        "stop",
    ),
    "web": ("click", "double_click", "right_click", "hover", "type", "scroll", "press", "navigate", "stop"),
    "omniact_web": (
        "press_tab",
        "moveto",
        "rightclick",
        "press_enter",
        "scroll",
        "click",
        "press_down",
        "hotkey",
        "press_space",
        "doubleclick",
    ),
    "omniact_desktop": ("click", "moveto", "press_pgdn"),
}

_NEEDS_TEXT = ("type", "open_app", "scroll", "press", "hotkey", "navigate", "stop")


def vocabulary(name_or_actions: str | Sequence[str] | None) -> tuple[str, ...]:
    """Resolve a vocabulary name (see :data:`ACTION_VOCABULARIES`) or pass an explicit list through."""
    if name_or_actions is None:
        return ACTION_VOCABULARIES["default"]
    if isinstance(name_or_actions, str):
        if name_or_actions not in ACTION_VOCABULARIES:
            known = ", ".join(sorted(ACTION_VOCABULARIES))
            raise KeyError(f"unknown action vocabulary {name_or_actions!r}; known: {known}, or pass a list")
        return ACTION_VOCABULARIES[name_or_actions]
    return tuple(name_or_actions)


def gui_r1_prompt(
    instruction: str,
    history: str,
    actions: Sequence[str],
    with_image: bool = True,
    frame_note: str = "integer screenshot pixels",
    observation_text: str = "",
) -> str:
    """The GUI-R1 user message text.

    Args:
        instruction: the task.
        history: the rendered action history (``None`` for the first step).
        actions: the admissible action names.
        with_image: mention the screenshot (VLMs); text-only models read ``observation_text`` instead.
        frame_note: how points are written, e.g. ``integer screenshot pixels`` or ``integers in [0, 1000]``.
        observation_text: element list or other text rendering of the screen.
    """
    enum = "[" + ", ".join(f"'{a}'" for a in actions) + "]"
    needs_text = [a for a in actions if a in _NEEDS_TEXT]
    screen = "In this UI screenshot, " if with_image else "On this screen, "
    text = (
        f"You are GUI-R1, a reasoning GUI Agent Assistant. {screen}I want you to continue executing the "
        f"command '{instruction}', with the action history being '{history}'.\n"
    )
    if observation_text:
        text += f"The screen contains:\n{observation_text}\n"
    text += (
        f"Please provide the action to perform (enumerate from {enum}), the point where the cursor is moved "
        f"to ({frame_note}) if a click is performed, and any input text required to complete the action.\n"
        "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> "
        "tags as follows:\n"
        f"<think> ... </think> <answer>[{{'action': enum{enum}, 'point': [x, y], 'input_text': ''}}]</answer>\n"
    )
    if needs_text:
        text += f"Note: specific input text is necessary for actions enum{needs_text}.\n"
    text += "Actions without a point use [-100, -100].\n"
    text += "Example: [{'action': 'click', 'point': [123, 300], 'input_text': ''}]"
    return text


def gui_r1_messages(
    instruction: str,
    history: str,
    actions: Sequence[str],
    with_image: bool,
    observation_text: str = "",
    frame_note: str = "integer screenshot pixels",
) -> list[dict[str, Any]]:
    """One user message: the screenshot part (VLMs) followed by the GUI-R1 text."""
    text = gui_r1_prompt(instruction, history, actions, with_image, frame_note, observation_text)
    if with_image:
        return [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]
    return [{"role": "user", "content": text}]
