"""``ClickBox-v0``: one-step grounding on a canvas of labelled boxes whose layout is drawn per seed.

``ClickGrid-v0`` has nine prompts, so a model can pass it by memorising nine answers. Here every seed draws a
new layout (how many boxes is fixed; their labels, colours, positions and sizes are not), so the answer to an
unseen seed must be read off the observation, and a held-out split of seeds measures exactly that. The click
is a continuous point in pixels, so a near miss is a real distance for SSL's tiers and SCA's spatial credit.
"""

from __future__ import annotations

import json
import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_envs.grid.errors import GridConfigError
from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.lifecycle import GuardedClose, check_render_mode, guarded_reset, guarded_step

#: What the instruction names the target by: its label (listed in ``elements``) or its colour (seen in pixels).
TARGET_BY = ("label", "colour")
#: Most boxes a layout holds (``n_boxes``).
MAX_BOXES = 6
#: Box labels are drawn from these digits (not letters: the ``box`` output format names answer cells by letter).
LABEL_POOL = string.digits
#: Characters an action string may hold (the env reads Action or GUI-R1 JSON; anything else is malformed).
_CHARSET = string.printable
#: Box colours by name (RGB); a colour-named target (``target_by="colour"``) is the box filled with one of them.
COLOURS = {
    "red": (230, 57, 70), "orange": (241, 143, 1), "yellow": (255, 209, 102), "green": (6, 214, 160),
    "blue": (17, 138, 178), "navy": (7, 59, 76), "purple": (131, 56, 236), "pink": (255, 0, 110),
}  # fmt: skip
#: Gap in pixels kept between boxes, so that no point lies in two of them.
_GAP = 2
_MAX_TRIES = 100
#: Boxes (at their largest, with the gap) may cover at most this fraction of the canvas.
_MAX_DENSITY = 0.55


class ClickBoxEnv(GuardedClose, gym.Env[dict[str, Any], Any]):
    """Click the box the instruction names, among ``n_boxes`` labelled boxes placed at random.

    ## Layout (drawn per seed)

    ``n_boxes`` distinct labels from ``0-9`` and distinct colours; each box a rectangle with sides drawn
    uniformly from ``[min_side, max_side]`` pixels, at a uniform position on the ``W x H`` canvas (``W = H =
    canvas_px``, or ``(W, H) = viewport``), at least 2 pixels from every other box; one box, drawn uniformly, is
    the target.

    ## Observation

    ``Dict``: ``screenshot`` (H, W, 3) uint8 (the canvas's pixels), a light background and each
    box a flat colour with a 1-pixel dark border (labels are not drawn in v0: a pixel-only agent sees the
    colours, the labels are in ``elements``); ``elements`` (``Text``: a JSON list, as in ``GuiWeb-v0``), one
    dict per box in a seeded order unrelated to the target: ``id`` (1-based), ``role`` ``"box"``, ``text``
    (its label), ``color`` (its colour name), ``bbox`` ``[x0, y0, x1, y1]`` pixels (inclusive), ``clickable``
    ``true``; ``instruction`` (``Text``): ``click the box labelled "7"``. Only the instruction says which box
    is the target.

    ## Pixel task (``target_by="colour"``)

    The same layout per seed (the same random draws), but the instruction names the target by its colour,
    ``click the red box``, and ``elements`` is ``"[]"``: the list would pair the colour with its bbox. The
    agent's text is then one of eight phrases whatever the layout, so only the screenshot says where the box is,
    and a held-out seed is a layout never seen. The configuration of ``tests/trainers/test_grpo_pixels.py``,
    ``n_boxes=2, canvas_px=140, min_side=30, max_side=44`` (a 140-pixel canvas is 5 x 5 visual tokens of a
    Qwen-VL, one per cell of the ``box`` format's answer grid), has these chance levels over 2,000 seeds
    (``tests/gui_envs/grid/test_click_box.py``): a uniformly random click 0.053 (its expected value, the
    target's area over the canvas's, 0.067), a random answer cell 0.069, the best constant answer cell 0.129,
    the centre of a random box 0.50 (what a policy that finds the boxes but not the colour gets).

    ## Action

    An :class:`~gui_envs.schema.actions.Action` in screenshot pixels, its dict form, text (JSON or GUI-R1) or an
    ``(x, y)`` pair. Only a click's ``point`` is graded; any other action, or a malformed one, is a miss
    (``info["action_error"]`` says why for malformed ones; nothing raises).

    ## Reward

    1.0 when the click lands inside the target box (borders included), else 0.0. With the defaults, over 3,000
    seeds: a uniformly random click scores 0.063, a random cell of the ``box`` format's 5 x 5 answer grid 0.062,
    the centre of a random listed box 0.25 (``1 / n_boxes``: what a policy that reads the layout but not the
    instruction gets).

    ## Episode end

    Terminates after the one step.

    ## Privileged (:mod:`gui_envs.schema.privileged`)

    ``target_bbox``: ``[x0, y0, x1, y1]`` pixels of the target box (inclusive); ``target_element``: its ``id``
    in ``elements``. The reward wrappers (``ssl``, ``binary``, ``continuous``) and SCA read the box from there.

    ## Version history

    * v0: first version; ``target_by="colour"`` and ``viewport`` (a non-square canvas, e.g. the 1280 x 720
      screenshots of the 3B GRPO configs for ``benchmarks/gpu_check.sh``) added later, the default observation
      unchanged.

    Args:
        n_boxes: boxes per layout (1-6; with 1 there is no distractor: where the box is, not which, is the task,
            so only ``target_by="colour"`` takes 1: a one-item element list would hand the target's bbox over).
        canvas_px: side of the square canvas in pixels (>= 2 * max_side, and roomy enough that the boxes at their
            largest cover at most 55% of it).
        min_side: smallest box side in pixels (>= 4). An answer grid whose cells are at most ``min_side - 1``
            pixels wide (the ``box`` output format's 5 x 5 grid of 20-pixel cells, with the defaults) has a
            cell centre inside every box, so a cell-naming policy can hit any target.
        max_side: largest box side in pixels (>= min_side).
        viewport: ``(width, height)`` of a non-square canvas in pixels, used instead of ``canvas_px`` (each side
            >= 2 * max_side, the same 55% cover limit); ``None`` (default): ``canvas_px`` square. The name is
            the browser envs' keyword, so :func:`trainers.memory_plan.env_viewport` reads the screenshot size.
        target_by: ``"label"`` (the default: the label, boxes listed in ``elements``) or ``"colour"`` (the
            colour, boxes withheld: a pixel-only task).
        render_mode: ``"rgb_array"`` or ``None``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(
        self,
        n_boxes: int = 4,
        canvas_px: int = 100,
        min_side: int = 22,
        max_side: int = 34,
        target_by: str = "label",
        render_mode: str | None = None,
        viewport: tuple[int, int] | None = None,
    ) -> None:
        if target_by not in TARGET_BY:
            raise GridConfigError(f"target_by must be one of {TARGET_BY}, got {target_by!r}")
        if not 1 <= n_boxes <= MAX_BOXES:
            raise GridConfigError(f"n_boxes must be 1-{MAX_BOXES}, got {n_boxes}")
        if n_boxes == 1 and target_by == "label":
            raise GridConfigError(
                "n_boxes=1 needs target_by='colour': with one box the element list would give away its bbox"
            )
        if not 4 <= min_side <= max_side:
            raise GridConfigError(
                f"need 4 <= min_side <= max_side, got min_side={min_side}, max_side={max_side}"
            )
        if viewport is None:
            width = height = canvas_px
            if canvas_px < 2 * max_side:
                raise GridConfigError(
                    f"canvas_px={canvas_px} must be >= 2 * max_side = {2 * max_side} so the boxes fit"
                )
        else:
            width, height = (int(v) for v in viewport)
            if min(width, height) < 2 * max_side:
                raise GridConfigError(
                    f"viewport={tuple(viewport)} must be >= 2 * max_side = {2 * max_side} pixels a side so the "
                    "boxes fit"
                )
        if n_boxes * (max_side + _GAP) ** 2 > _MAX_DENSITY * width * height:
            need = int(np.ceil((n_boxes / _MAX_DENSITY) ** 0.5 * (max_side + _GAP)))
            raise GridConfigError(
                f"{n_boxes} boxes of up to {max_side} pixels are too crowded on a {width} x {height} canvas to place "
                f"at random: raise canvas_px (or both viewport sides) to {need} or lower max_side or n_boxes"
            )
        self.n_boxes, self.canvas_px, self.min_side, self.max_side = n_boxes, canvas_px, min_side, max_side
        self.width, self.height = width, height
        self.target_by = target_by
        check_render_mode(type(self), render_mode)
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {
                "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
                "elements": spaces.Text(200 * n_boxes, min_length=0, charset=_CHARSET),
                "instruction": spaces.Text(64, min_length=0, charset=_CHARSET),
            }
        )
        self.action_space = spaces.Text(256, min_length=0, charset=_CHARSET)
        self.boxes: list[dict[str, Any]] = []
        self.target = 1
        self._screen = np.zeros((height, width, 3), np.uint8)

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        rects = self._place(rng)
        labels = rng.choice(list(LABEL_POOL), size=self.n_boxes, replace=False)
        colours = rng.choice(list(COLOURS), size=self.n_boxes, replace=False)
        self.boxes = [
            {"id": i + 1, "role": "box", "text": str(labels[i]), "color": str(colours[i]), "bbox": rects[i],
             "clickable": True}
            for i in range(self.n_boxes)
        ]  # fmt: skip
        self.target = int(rng.integers(1, self.n_boxes + 1))
        self._screen = self._draw()
        return self._obs(), {"task": "click_box"}

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        act, error = coerce_action(action, allow_point=True)
        info: dict[str, Any] = {"task": "click_box"}
        hit = False
        if act is None:
            info["action_error"] = error
        elif act.point is not None:
            x0, y0, x1, y1 = self.target_box()
            x, y = act.point
            hit = x0 <= x <= x1 and y0 <= y <= y1
        info["success"] = hit
        return self._obs(), float(hit), True, False, info

    def target_box(self) -> list[int]:
        """The target's ``[x0, y0, x1, y1]`` in pixels (inclusive)."""
        return list(self.boxes[self.target - 1]["bbox"])

    def privileged(self) -> dict[str, Any]:
        """The target box (pixels) and its element id; see the class docstring."""
        return {"target_bbox": [float(v) for v in self.target_box()], "target_element": self.target}

    def oracle_action(self) -> Action:
        """A click at the target box's centre."""
        x0, y0, x1, y1 = self.target_box()
        return Action.click((x0 + x1) / 2, (y0 + y1) / 2)

    def render(self) -> np.ndarray | None:
        return self._screen.copy() if self.render_mode == "rgb_array" else None

    def _place(self, rng: np.random.Generator) -> list[list[int]]:
        # Box by box, each redrawn until it keeps clear of those placed; a layout that gets stuck starts over.
        # The density cap of __init__ keeps both rare.
        for _ in range(_MAX_TRIES):
            rects: list[list[int]] = []
            for _ in range(self.n_boxes):
                for _ in range(_MAX_TRIES):
                    w, h = (int(v) for v in rng.integers(self.min_side, self.max_side + 1, size=2))
                    x0 = int(rng.integers(0, self.width - w + 1))
                    y0 = int(rng.integers(0, self.height - h + 1))
                    rect = [x0, y0, x0 + w - 1, y0 + h - 1]
                    if not any(_overlaps(rect, r) for r in rects):
                        rects.append(rect)
                        break
                else:
                    break
            if len(rects) == self.n_boxes:
                return rects
        raise RuntimeError(f"no layout of {self.n_boxes} boxes found")  # pragma: no cover - density cap

    def _obs(self) -> dict[str, Any]:
        target = self.boxes[self.target - 1] if self.boxes else {"text": "", "color": ""}
        if self.target_by == "colour":
            # Pixels only: the element list would pair the named colour with its bbox, so it is withheld.
            return {
                "screenshot": self._screen.copy(),
                "elements": "[]",
                "instruction": f"click the {target['color']} box",
            }
        return {
            "screenshot": self._screen.copy(),
            "elements": json.dumps(self.boxes),
            "instruction": f'click the box labelled "{target["text"]}"',
        }

    def _draw(self) -> np.ndarray:
        img = np.full((self.height, self.width, 3), 245, np.uint8)
        for box in self.boxes:
            x0, y0, x1, y1 = box["bbox"]
            img[y0 : y1 + 1, x0 : x1 + 1] = 40  # border
            img[y0 + 1 : y1, x0 + 1 : x1] = COLOURS[box["color"]]
        return img


def _overlaps(a: list[int], b: list[int]) -> bool:
    """Whether two inclusive boxes come closer than ``_GAP`` pixels."""
    return not (a[2] + _GAP < b[0] or b[2] + _GAP < a[0] or a[3] + _GAP < b[1] or b[3] + _GAP < a[1])
