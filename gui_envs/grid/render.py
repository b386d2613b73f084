"""Shared rendering of integer grids: RGB images for humans and VLMs, text for LLMs.

Every grid env renders through these helpers so that Maze, Sudoku and ARC agree on one text charset, one
cell-to-pixel scaling and one way of laying several grids out on a canvas.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFont

#: Every character a grid env may put in a text observation or read from a text action: letters, digits,
#: punctuation, space and newline. Tabs and carriage returns are left out on purpose so that a text
#: observation is one canonical string.
TEXT_CHARSET: str = string.ascii_letters + string.digits + string.punctuation + " \n"

#: The ten ARC colours (index = cell value) plus index 10 for padding outside a grid's explicit shape.
ARC_PALETTE: NDArray[np.uint8] = np.array(
    [
        (0, 0, 0),  # 0 black
        (0, 116, 217),  # 1 blue
        (255, 65, 54),  # 2 red
        (46, 204, 64),  # 3 green
        (255, 220, 0),  # 4 yellow
        (170, 170, 170),  # 5 grey
        (240, 18, 190),  # 6 magenta
        (255, 133, 27),  # 7 orange
        (127, 219, 255),  # 8 azure
        (135, 12, 37),  # 9 maroon
        (255, 255, 255),  # 10 padding
    ],
    dtype=np.uint8,
)

#: Maze colours, indexed by the codes of :mod:`gui_envs.grid.maze_gen` (floor, wall, start, goal, path,
#: agent).
MAZE_PALETTE: NDArray[np.uint8] = np.array(
    [(255, 255, 255), (40, 40, 40), (46, 204, 64), (255, 65, 54), (0, 116, 217), (255, 133, 27)],
    dtype=np.uint8,
)

#: Canvas colour between grids (light grey), so black ARC cells stay visible at a grid's edge.
BACKGROUND: tuple[int, int, int] = (200, 200, 200)


def text_space(max_length: int) -> spaces.Text:
    """A ``Text`` space over :data:`TEXT_CHARSET` that also admits the empty string.

    Args:
        max_length: Longest admissible string, in characters.
    """
    return spaces.Text(max_length=max_length, min_length=0, charset=TEXT_CHARSET)


def grid_to_rgb(grid: NDArray[np.integer], palette: NDArray[np.uint8], cell_px: int = 8) -> NDArray[np.uint8]:
    """Paint each grid cell as a ``cell_px`` x ``cell_px`` square coloured by ``palette[value]``.

    Args:
        grid: (H, W) integer grid whose values index ``palette``.
        palette: (K, 3) uint8 colours.
        cell_px: Side of one cell, in pixels.

    Returns:
        (H * cell_px, W * cell_px, 3) uint8 image.

    >>> grid_to_rgb(np.array([[0, 1]]), ARC_PALETTE, cell_px=2).shape
    (2, 4, 3)
    """
    colours = palette[np.clip(grid, 0, len(palette) - 1)]
    return np.repeat(np.repeat(colours, cell_px, axis=0), cell_px, axis=1)


def compose_rows(
    rows: Sequence[Sequence[NDArray[np.uint8]]],
    gap_px: int = 8,
    background: tuple[int, int, int] = BACKGROUND,
) -> NDArray[np.uint8]:
    """Lay images out in rows (left to right, top to bottom) on one canvas.

    Args:
        rows: Each inner sequence is one row of (h, w, 3) uint8 images; rows may differ in length.
        gap_px: Space between neighbouring images and around the border, in pixels.
        background: Canvas colour.

    Returns:
        (H, W, 3) uint8 canvas just large enough for every row.
    """
    row_heights = [max((im.shape[0] for im in row), default=0) for row in rows]
    row_widths = [sum(im.shape[1] for im in row) + gap_px * max(len(row) - 1, 0) for row in rows]
    height = sum(row_heights) + gap_px * (len(rows) + 1)
    width = max(row_widths, default=0) + 2 * gap_px
    canvas = np.empty((max(height, 1), max(width, 1), 3), dtype=np.uint8)
    canvas[:] = background
    y = gap_px
    for row, row_h in zip(rows, row_heights, strict=True):
        x = gap_px
        for im in row:
            canvas[y : y + im.shape[0], x : x + im.shape[1]] = im
            x += im.shape[1] + gap_px
        y += row_h + gap_px
    return canvas


def digits_to_text(grid: NDArray[np.integer], sep: str = " ", blank: str | None = None) -> str:
    """Write a grid of small non-negative integers one row per line.

    Args:
        grid: (H, W) integer grid.
        sep: String between the cells of a row.
        blank: When given, cells equal to 0 are written as this string (Sudoku writes blanks as ``"."``).

    >>> print(digits_to_text(np.array([[1, 0], [3, 4]]), blank="."))
    1 .
    3 4
    """
    lines = []
    for row in np.asarray(grid).tolist():
        cells = [blank if (blank is not None and v == 0) else str(v) for v in row]
        lines.append(sep.join(cells))
    return "\n".join(lines)


def sudoku_board_rgb(
    givens: NDArray[np.integer],
    entries: NDArray[np.integer] | None = None,
    wrong: NDArray[np.bool_] | None = None,
    cell_px: int = 32,
) -> NDArray[np.uint8]:
    """Draw a 9x9 Sudoku board: givens in black, entries in blue (red where ``wrong``), thick box lines.

    Args:
        givens: (9, 9) puzzle, 0 = blank.
        entries: Optional (9, 9) digits the agent filled in; drawn only where ``givens`` is blank.
        wrong: Optional (9, 9) mask of entries to draw in red.
        cell_px: Side of one cell, in pixels.

    Returns:
        (9 * cell_px + 1, 9 * cell_px + 1, 3) uint8 image.
    """
    side = 9 * cell_px + 1
    image = Image.new("RGB", (side, side), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    for k in range(10):
        width = 3 if k % 3 == 0 else 1
        xy = k * cell_px
        draw.line([(xy, 0), (xy, side)], fill=(0, 0, 0), width=width)
        draw.line([(0, xy), (side, xy)], fill=(0, 0, 0), width=width)
    try:
        font: ImageFont.ImageFont | ImageFont.FreeTypeFont = ImageFont.load_default(
            size=max(8, cell_px * 9 // 16)
        )
    except TypeError:  # Pillow < 10.1 has only the small bitmap font
        font = ImageFont.load_default()
    for r in range(9):
        for c in range(9):
            value, colour = int(givens[r, c]), (0, 0, 0)
            if value == 0 and entries is not None:
                value = int(entries[r, c])
                colour = (255, 65, 54) if wrong is not None and wrong[r, c] else (0, 90, 200)
            if 1 <= value <= 9:
                # Centre the digit from its bounding box (bitmap fonts do not support anchors).
                left, top, right, bottom = draw.textbbox((0, 0), str(value), font=font)
                x = c * cell_px + (cell_px - (right - left)) / 2 - left
                y = r * cell_px + (cell_px - (bottom - top)) / 2 - top
                draw.text((x, y), str(value), fill=colour, font=font)
    return np.asarray(image, dtype=np.uint8).copy()
