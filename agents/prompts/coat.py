"""MobileIPL's CoaT four-turn dialogue prompts (seed 003, App. "CoaT Multi-turn Dialogue Prompts").

Turn 1 describes the page, turn 2 thinks about the next action, turn 3 decides it in words (``click xxx``,
``scroll down``, ``type "..."``, ``press Back``, ``stop``), turn 4 grounds a click as a box on a 0-1000 scale.
The wording follows the paper's appendix; ``{instruction}``, ``{history}`` and ``{action}`` are filled in.

``style="compact"`` asks the same four questions in a few words each (:data:`COMPACT`), for small text-only models
trained on CPU: the paper's turns are 100-400 tokens each, so a four-turn dialogue is about 1,000 tokens of
prompt per step, which is most of a tiny model's training and sampling time. The turns, their order and what
each answer must contain are the same.
"""

from __future__ import annotations

from typing import Any

#: Turn names in order (s1..s4 of seed 003, sec. 3.1).
TURNS: tuple[str, ...] = ("description", "thought", "action", "grounding")

PAGE_DESCRIPTION = (
    "Based on the mobile screenshot, identify and describe the key elements visible on the screen, "
    "including any text, buttons, icons, input fields, or other interactive components."
)
ACTION_THOUGHT = (
    "Given the task: {instruction}, and considering the contextual details from the image alongside the full "
    "history of previous actions: {history}, determine the most logical and effective next step. Focus on "
    "providing a clear, actionable, and goal-oriented response to advance the task."
)
ACTION_DECISION = (
    "Task: Determine the Most Appropriate Next Step. Based on the previous analysis and the objective, "
    "determine the most appropriate next step to achieve the goal. Choose from the following options:\n"
    "- **click**: Select a button or specific UI element by specifying it clearly (e.g., 'click xxx', where "
    "'xxx' is the button name or identifier).\n"
    "- **scroll**: Perform a scrolling action if the required element is not visible, specifying the "
    "direction (e.g., 'scroll up', 'scroll down').\n"
    '- **type**: Input specific text into a field or search bar, specifying the text clearly (e.g., type "content").\n'
    "- **press**: Interact with device-level buttons such as Home, Back, or Enter, specifying the button "
    '(e.g., "press Back").\n'
    "- **stop**: Conclude the task, indicating that the objective has been achieved.\n"
    "Provide the chosen action in the specified format and ensure it aligns with the analysis and the "
    "visible UI elements."
)
CLICK_GROUNDING = (
    "As discussed earlier, your task now is to identify the precise screen region coordinates to tap for the "
    "action {action}. The coordinates must be integers and strictly within the range of 0 to 1000 for both "
    "axes. Please provide your response in the required format: "
    "<|box_start|>(top_x, top_y),(bottom_x, bottom_y)<|box_end|>. Ensure your output adheres to these "
    "constraints and remains concise."
)


#: The four turns in a few words each (``style="compact"``).
COMPACT: tuple[str, ...] = (
    "Describe the screen.",
    "Task: {instruction}. Done so far: {history}. Next step?",
    'Decide: click xxx, scroll up/down, type "...", press Back/Home, or stop.',
    "Box for {action} (0-1000).",
)

#: The prompt styles :func:`coat_user_turn` knows.
STYLES: tuple[str, ...] = ("paper", "compact")


def coat_user_turn(
    turn: int, instruction: str, history: str, action: str = "", with_image: bool = True, style: str = "paper"
) -> dict[str, Any]:
    """The user message of CoaT turn ``turn`` (0-based), in ``style`` (``paper`` or ``compact``). The screenshot
    goes with turn 0 only."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    if turn == 0:
        text = PAGE_DESCRIPTION if style == "paper" else COMPACT[0]
        if not with_image:
            return {"role": "user", "content": text}
        return {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}
    template = (
        (ACTION_THOUGHT, ACTION_DECISION, CLICK_GROUNDING)[turn - 1] if style == "paper" else COMPACT[turn]
    )
    return {
        "role": "user",
        "content": template.format(instruction=instruction, history=history, action=action),
    }
