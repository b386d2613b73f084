"""Answer-grid clicks for ``ClickBox-v0``: the model names one cell of a coarse grid over the screenshot.

A tiny model from random initialisation cannot write pixel coordinates, but it can learn to name one of
``grid * grid`` cells by a letter (or, with ``letters=2``, by a row letter then a column letter, for grids up to
26 x 26), and the click is then that cell's centre in pixels: a continuous point that
may land just outside the target (a near miss SSL and SCA grade), not an element id that is either right or
wrong. The prompt lists every box by its label and the cell its box is centred on, a text rendering of
``elements`` (bboxes quantised to the answer grid), so the skill is to find the named label among the boxes and
copy its cell: a referring expression grounded on a layout that changes with every seed. When the env withholds
the boxes (``target_by="colour"``), the prompt is the instruction alone and a VLM finds the box in the pixels.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from agents.parsing import ParseError
from agents.prompts.formats import Conversation, PromptContext
from agents.prompts.observation import element_list
from gui_envs.schema.actions import Action

#: Cell names in reading order (left to right, top to bottom). Upper case, so that no letter of the instruction's
#: words ("click the box ...") reads as a cell.
CELL_NAMES = string.ascii_uppercase


@dataclass
class BoxFormat:
    """List the boxes as ``label:cell``; read the answer's cell name as a click at that cell's centre.

    The screenshot (``H x W`` pixels) is split into ``grid x grid`` cells; cell ``(r, c)`` has its centre at
    ``(c * W / grid + (W / grid - 1) / 2, r * H / grid + (H / grid - 1) / 2)``. With ``letters=1`` (default) the
    cells are named ``A, B, ...`` in reading order and the answer's first cell letter names one. With
    ``letters=2`` a cell is named by its row letter then its column letter (``A`` the top row / left column), so
    ``"CB"`` is row 2, column 1, and the answer's first two grid letters name one: a grid up to 26 x 26 (10-pixel
    cells on a 100-pixel canvas with ``grid=10``), fine enough for a click to miss a small box by a few pixels.
    A box is listed under the cell whose centre is nearest its bbox centre. An answer with too few grid letters
    does not parse (``ParseError`` code ``no_cell``).

    Attributes:
        grid: cells per side of the answer grid (``letters=1``: 2-5, so that every cell has one upper-case letter;
            ``letters=2``: 2-26, one letter per row and per column).
        name: format name in logs.
        letters: letters per answer: 1 (a cell letter) or 2 (row letter, column letter).
    """

    grid: int = 5
    name: str = "box"
    # --- two-letter answers (finer grids) ---
    letters: int = 1

    def __post_init__(self) -> None:
        if self.letters not in (1, 2):
            raise ValueError(f"letters must be 1 (cell letter) or 2 (row, column letters), got {self.letters}")
        if self.letters == 1 and not 2 <= self.grid <= 5:
            raise ValueError(
                f"grid must be 2-5 with one letter per cell (A-Y), got {self.grid}; letters=2 allows 2-26"
            )
        if self.letters == 2 and not 2 <= self.grid <= 26:
            raise ValueError(f"grid must be 2-26 with a letter per row and column (A-Z), got {self.grid}")

    @property
    def alphabet(self) -> str:
        """The letters an answer is made of: the cell names (one letter) or the row / column names (two)."""
        return CELL_NAMES[: self.grid * self.grid] if self.letters == 1 else CELL_NAMES[: self.grid]

    def messages(self, ctx: PromptContext) -> Conversation:
        shot = _screen_size(ctx.observation)
        boxes = element_list(ctx.observation.get("elements") if isinstance(ctx.observation, dict) else None)
        # No spaces in the listing: a byte-level tokenizer may merge " A" into one token but not ",A" or ":A", and
        # a cell letter must read as the same token wherever it appears for a small model to copy it.
        listing = ",".join(f"{b.get('text', '?')}:{self._cell_of(b.get('bbox'), shot)}" for b in boxes)
        # No boxes listed (``ClickBox-v0`` with ``target_by="colour"`` withholds them): the instruction alone, and
        # the target must be found in the screenshot.
        text = f"{listing}\n{ctx.instruction}" if listing else ctx.instruction
        if ctx.with_image:
            return [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]
        return [{"role": "user", "content": text}]

    def parse(self, text: str, observation: Any) -> tuple[Action | None, ParseError | None]:
        """The click at the named cell's centre (pixels), or the parse error. Never raises.

        >>> import numpy as np
        >>> BoxFormat().parse("xG!", {"screenshot": np.zeros((100, 100, 3), np.uint8)})[0].point
        (29.5, 29.5)
        >>> BoxFormat(grid=10, letters=2).parse("CJ", {"screenshot": np.zeros((100, 100, 3), np.uint8)})[0].point
        (94.5, 24.5)
        """
        names = self.alphabet
        picked = [names.index(ch) for ch in str(text) if ch in names][: self.letters]
        if len(picked) < self.letters:
            what = "cell letter" if self.letters == 1 else "row letter and column letter"
            return None, ParseError("no_cell", f"no {what} {names[0]}-{names[-1]} in the answer")
        k = picked[0] if self.letters == 1 else picked[0] * self.grid + picked[1]
        size = _screen_size(observation)
        if size is None:
            return None, ParseError("no_screen", "the observation has no screenshot to place the cell on")
        return Action.click(*self._centre(k, size)), None

    def answer_text(self, action: Action, observation: Any) -> str:
        """The cell letter whose centre is nearest the click (for SFT targets).

        >>> import numpy as np
        >>> BoxFormat().answer_text(Action.click(50, 10), {"screenshot": np.zeros((100, 100, 3), np.uint8)})
        'C'
        >>> BoxFormat(grid=10, letters=2).answer_text(Action.click(50, 10), {"screenshot": np.zeros((100, 100, 3),
        ...     np.uint8)})
        'BF'
        """
        size = _screen_size(observation)
        if action.point is None or size is None:
            raise ValueError(
                "BoxFormat.answer_text needs a click with a point and the observation's screenshot"
            )
        x, y = action.point
        return self._cell_of([x, y, x, y], size)

    def answer_tokens(self, tokenizer: Any) -> list[int]:
        """The token ids an answer needs: the grid letters (:attr:`alphabet`), each its own token (for constrained
        sampling, GRPO's ``constrain_answers``). Raises ``ValueError`` when the tokenizer has no single token for a
        letter.

        Constrained sampling keeps only these tokens at every position (end of text included in what is removed),
        so an answer is exactly ``max_new_tokens`` letters: set it to ``letters`` (1 or 2). With two letters both
        positions draw from the same row / column letters, and the parse reads the first as the row."""
        ids = []
        for name in self.alphabet:
            enc = tokenizer.encode(name, add_special_tokens=False)
            if len(enc) != 1:
                raise ValueError(f"the tokenizer splits cell letter {name!r} into {len(enc)} tokens")
            ids.append(int(enc[0]))
        return ids

    def describe(self, action: Any) -> str:
        return action.to_json() if isinstance(action, Action) else "invalid action"

    def _centre(self, k: int, size: tuple[int, int]) -> tuple[float, float]:
        w, h = size
        r, c = divmod(k, self.grid)
        cw, ch = w / self.grid, h / self.grid
        return c * cw + (cw - 1) / 2, r * ch + (ch - 1) / 2

    def _cell_of(self, bbox: Any, size: tuple[int, int] | None) -> str:
        if size is None or bbox is None or len(bbox) != 4:
            return "?"
        w, h = size
        cx, cy = (float(bbox[0]) + float(bbox[2])) / 2, (float(bbox[1]) + float(bbox[3])) / 2
        cw, ch = w / self.grid, h / self.grid
        c = min(self.grid - 1, max(0, round((cx - (cw - 1) / 2) / cw)))
        r = min(self.grid - 1, max(0, round((cy - (ch - 1) / 2) / ch)))
        return CELL_NAMES[r * self.grid + c] if self.letters == 1 else CELL_NAMES[r] + CELL_NAMES[c]


def _screen_size(observation: Any) -> tuple[int, int] | None:
    """``(W, H)`` of the observation's screenshot, or ``None``."""
    shot = observation.get("screenshot") if isinstance(observation, dict) else None
    return (int(shot.shape[1]), int(shot.shape[0])) if shot is not None else None
