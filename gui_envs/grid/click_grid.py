"""``ClickGrid-v0``: one-step grounding on a 3x3 grid of lettered cells, drawn without a browser.

The smallest GUI env there is: nine distinct correct answers, no Chromium, microseconds per step. Trainers
use it to show that learning happens (a tiny random policy on CPU), and the SSL / SCA reward comparison runs
on it because its target boxes, click points and misses are real screenshot geometry.
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_envs.grid.errors import GridConfigError
from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.lifecycle import GuardedClose, check_render_mode, guarded_reset, guarded_step

#: Cell labels in reading order.
LABELS = "abcdefghi"
#: Characters an action string may hold (the env reads Action or GUI-R1 JSON; anything else is malformed).
_CHARSET = string.printable
_PALETTE = np.array(
    [[230, 57, 70], [241, 143, 1], [255, 209, 102], [6, 214, 160], [17, 138, 178], [7, 59, 76],
     [131, 56, 236], [255, 0, 110], [58, 134, 255]],
    dtype=np.uint8,
)  # fmt: skip


class ClickGridEnv(GuardedClose, gym.Env[dict[str, Any], Any]):
    """Click the cell the instruction names, on a ``rows x cols`` grid of coloured cells.

    ## Observation

    ``Dict``: ``screenshot`` (H, W, 3) uint8 with ``H = rows * cell_px`` and ``W = cols * cell_px`` pixels,
    each cell a flat colour with a 1-pixel dark border; ``instruction`` (str): ``"click cell c"`` with the
    cells lettered ``a, b, c, ...`` in reading order (left to right, top to bottom).

    ## Action

    An :class:`~gui_envs.schema.actions.Action` in screenshot pixels, its dict form, or text (JSON or GUI-R1). Only
    the click's ``point`` is graded; any other action, or a malformed one, is a miss (``info["action_error"]``
    says why for malformed ones; nothing raises).

    ## Reward

    1.0 when the click lands inside the target cell's box (borders included), else 0.0.

    ## Episode end

    Terminates after the one step.

    ## Privileged (:mod:`gui_envs.schema.privileged`)

    ``target_bbox``: ``[x0, y0, x1, y1]`` pixels of the target cell (inclusive); ``target_element``: its
    number ``k`` (1-based; letter ``LABELS[k - 1]``). The reward wrappers (``ssl``, ``binary``, ``continuous``) and SCA read the box from there.

    ## Version history

    * v0: first version.

    Args:
        rows: grid rows (1-3).
        cols: grid columns (1-3).
        cell_px: side of one cell in pixels (>= 4).
        render_mode: ``"rgb_array"`` or ``None``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(self, rows: int = 3, cols: int = 3, cell_px: int = 32, render_mode: str | None = None) -> None:
        if not (1 <= rows <= 3 and 1 <= cols <= 3 and rows * cols >= 2):
            raise GridConfigError(f"rows and cols must be 1-3 with at least 2 cells, got {rows}x{cols}")
        if cell_px < 4:
            raise GridConfigError(f"cell_px must be >= 4 pixels, got {cell_px}")
        self.rows, self.cols, self.cell_px = rows, cols, cell_px
        check_render_mode(type(self), render_mode)
        self.render_mode = render_mode
        h, w = rows * cell_px, cols * cell_px
        self.observation_space = spaces.Dict(
            {
                "screenshot": spaces.Box(0, 255, (h, w, 3), np.uint8),
                "instruction": spaces.Text(32, min_length=0, charset=_CHARSET),
            }
        )
        self.action_space = spaces.Text(256, min_length=0, charset=_CHARSET)
        self._screen = self._draw()
        self.target = 1

    @property
    def num_cells(self) -> int:
        return self.rows * self.cols

    def cell_box(self, k: int) -> tuple[int, int, int, int]:
        """Cell ``k`` (1-based, reading order) as ``(x0, y0, x1, y1)`` pixels, inclusive."""
        r, c = divmod(k - 1, self.cols)
        s = self.cell_px
        return (c * s, r * s, c * s + s - 1, r * s + s - 1)

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        self.target = int(self.np_random.integers(1, self.num_cells + 1))
        return self._obs(), {"task": "click_cell"}

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        act, error = coerce_action(action, allow_point=True)
        info: dict[str, Any] = {"task": "click_cell"}
        hit = False
        if act is None:
            info["action_error"] = error
        elif act.point is not None:
            x0, y0, x1, y1 = self.cell_box(self.target)
            x, y = act.point
            hit = x0 <= x <= x1 and y0 <= y <= y1
        info["success"] = hit
        return self._obs(), float(hit), True, False, info

    def privileged(self) -> dict[str, Any]:
        """The target cell's box (pixels) and number; see the class docstring."""
        return {"target_bbox": [float(v) for v in self.cell_box(self.target)], "target_element": self.target}

    def oracle_action(self) -> Action:
        """A click at the target cell's centre."""
        x0, y0, x1, y1 = self.cell_box(self.target)
        return Action.click((x0 + x1) / 2, (y0 + y1) / 2)

    def render(self) -> np.ndarray | None:
        return self._screen.copy() if self.render_mode == "rgb_array" else None

    def _obs(self) -> dict[str, Any]:
        return {"screenshot": self._screen.copy(), "instruction": f"click cell {LABELS[self.target - 1]}"}

    def _draw(self) -> np.ndarray:
        s = self.cell_px
        img = np.zeros((self.rows * s, self.cols * s, 3), np.uint8)
        for k in range(1, self.num_cells + 1):
            x0, y0, x1, y1 = self.cell_box(k)
            img[y0 : y1 + 1, x0 : x1 + 1] = 40  # border
            img[y0 + 1 : y1, x0 + 1 : x1] = _PALETTE[k - 1]
        return img
