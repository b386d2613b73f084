"""Cell-letter answers for grid-of-cells grounding (``ClickGrid-v0``): the model names a cell, not a point.

A model that has never seen the GUI-R1 JSON (a tiny one from random initialisation) cannot write a click.
Naming one of ``rows * cols`` cells by its letter makes the env's nine answers reachable from the first
step, so the learning tests measure learning, not format discovery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.parsing import ParseError
from agents.prompts.formats import Conversation, PromptContext
from gui_envs.schema.actions import Action

#: Cell labels in reading order (the same as ``gui_envs.grid.click_grid.LABELS``).
LABELS = "abcdefghi"


@dataclass
class CellFormat:
    """Ask for a cell letter; read the first letter ``a .. LABELS[rows * cols - 1]`` of the answer (any case)
    as a click at that cell's centre.

    The click is in screenshot pixels: the screenshot is split into ``rows x cols`` equal cells, lettered in
    reading order. An answer without such a letter does not parse (``ParseError`` code ``no_cell``).

    Attributes:
        rows: grid rows.
        cols: grid columns.
        name: format name in logs.
    """

    rows: int = 3
    cols: int = 3
    name: str = "cell"

    def messages(self, ctx: PromptContext) -> Conversation:
        text = f"{ctx.instruction}. Cell:"
        if ctx.with_image:  # a VLM sees the screenshot before the question
            return [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]
        return [{"role": "user", "content": text}]

    def parse(self, text: str, observation: Any) -> tuple[Action | None, ParseError | None]:
        """The click at the named cell's centre (pixels), or the parse error. Never raises.

        >>> import numpy as np
        >>> CellFormat().parse("xB!", {"screenshot": np.zeros((96, 96, 3), np.uint8)})[0].point
        (47.5, 15.5)
        """
        labels = LABELS[: self.rows * self.cols]
        k = next((labels.index(ch) + 1 for ch in str(text).lower() if ch in labels), None)
        if k is None:
            return None, ParseError("no_cell", f"no cell letter {labels[0]}-{labels[-1]} in the answer")
        shot = observation.get("screenshot") if isinstance(observation, dict) else None
        if shot is None:
            return None, ParseError("no_screen", "the observation has no screenshot to place the cell on")
        h, w = int(shot.shape[0]), int(shot.shape[1])
        ch, cw = h / self.rows, w / self.cols
        r, c = divmod(k - 1, self.cols)
        return Action.click(c * cw + (cw - 1) / 2, r * ch + (ch - 1) / 2), None

    def answer_text(self, action: Action, observation: Any) -> str:
        """The answer that parses back to ``action``: the letter of the cell its point lies in (for SFT targets).

        >>> import numpy as np
        >>> CellFormat().answer_text(Action.click(50, 20), {"screenshot": np.zeros((96, 96, 3), np.uint8)})
        'b'
        """
        shot = observation.get("screenshot") if isinstance(observation, dict) else None
        if action.point is None or shot is None:
            raise ValueError("CellFormat.answer_text needs a click with a point and the observation's screenshot")
        h, w = int(shot.shape[0]), int(shot.shape[1])
        r = min(self.rows - 1, max(0, int(action.point[1] // (h / self.rows))))
        c = min(self.cols - 1, max(0, int(action.point[0] // (w / self.cols))))
        return LABELS[r * self.cols + c]

    def describe(self, action: Any) -> str:
        return action.to_json() if isinstance(action, Action) else "invalid action"
