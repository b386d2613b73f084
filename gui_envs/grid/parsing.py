"""Read grids and maze paths out of free-form agent answers.

Language models wrap their answers in prose, code fences and reasoning, so every parser here searches
the text for the most plausible answer instead of demanding an exact format. No parser ever raises: each
returns a :class:`ParseResult` holding either ``value`` or a human-readable ``error``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from gui_envs.grid.maze_gen import CODE_CHARS, PATH, Cell, path_from_marks

T = TypeVar("T")

#: Largest grid (in cells) a parser builds; bigger answers are rejected rather than allocated.
MAX_CELLS = 100_000


@dataclass(frozen=True)
class ParseResult(Generic[T]):
    """Either a parsed ``value`` or an ``error`` message (exactly one of them is set)."""

    value: T | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when parsing succeeded."""
        return self.error is None


def _never_raise(parse: Callable[..., ParseResult[T]]) -> Callable[..., ParseResult[T]]:
    """Turn any unexpected exception in a parser into an error result: agent text must never crash step."""

    def wrapped(*args: Any, **kwargs: Any) -> ParseResult[T]:
        try:
            return parse(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - last line of defence, by design
            return ParseResult(error=f"could not parse the answer ({type(exc).__name__}: {exc})")

    wrapped.__name__ = parse.__name__
    wrapped.__doc__ = parse.__doc__
    return wrapped


# ----------------------------------------------------------------------------------------------- grids

_ROW_SEPARATORS = " \t,;|+-=_"
# One innermost bracketed row such as "[0, 1, 2]". The patterns below avoid nested quantifiers so that
# matching stays linear in the length of the answer, however adversarial the text.
_BRACKET_ROW = re.compile(r"\[([\d\s,]*)\]")
_ROW_GAP = re.compile(r"\s*(?:,\s*)?")
_OPEN_BRACKET = re.compile(r"\[\s*$")
_LABEL = re.compile(r"[^:]{0,40}:\s*")


@_never_raise
def parse_digit_grid(text: str, blank_chars: str = "") -> ParseResult[NDArray[np.int64]]:
    """Find a grid of single digits in ``text``.

    Two layouts are understood: nested lists (``[[0, 1], [2, 3]]``; the last such list wins) and rows of
    digits, one row per line, with optional separators (spaces, commas, ``|``, ``+``, ``-``), as in
    ``"0 1\\n2 3"`` or ``"01\\n23"``. For row layouts the last block of consecutive digit rows wins, because
    models tend to restate the question before answering; lines made only of separators (Sudoku box
    rules) do not break a block, empty lines and prose do. A short label ending in a colon before a row
    (``"Row 1: 5 3 4"``, ``"Answer: 1234..."``) is skipped.

    Args:
        text: The agent's answer.
        blank_chars: Characters read as the digit 0 (Sudoku blanks such as ``"."``).

    Returns:
        (H, W) int64 grid, or an error when no rectangular grid is found.
    """
    if not isinstance(text, str):
        return ParseResult(error=f"expected text, got {type(text).__name__}")
    nested = _nested_rows(text)
    if nested:
        return _rectangular(nested)
    row_chars = set("0123456789" + blank_chars)
    allowed = row_chars | set(_ROW_SEPARATORS)
    blocks: list[list[list[int]]] = []
    current: list[list[int]] = []
    for line in text.replace("`", " ").splitlines():
        stripped = line.strip()
        if not set(stripped) <= allowed:
            # "Answer: 1 2 3" or "Row 4: 5 6 7": a short label before a colon does not stop a row.
            label = _LABEL.match(stripped)
            stripped = stripped[label.end() :] if label else ""
        if stripped and set(stripped) <= allowed:
            cells = [0 if ch in blank_chars else int(ch) for ch in stripped if ch in row_chars]
            if cells:
                current.append(cells)
            continue  # a separator-only line keeps the block going
        if current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    if not blocks:
        return ParseResult(error="no grid of digits found in the answer")
    return _rectangular(blocks[-1])


def _nested_rows(text: str) -> list[list[int]]:
    """Rows of the last nested list ``[[...], [...]]`` in ``text``; empty when there is none."""
    runs: list[list[str]] = []
    last_end = -1
    for match in _BRACKET_ROW.finditer(text):
        if runs and _ROW_GAP.fullmatch(text, last_end, match.start()):
            runs[-1].append(match.group(1))
        elif _OPEN_BRACKET.search(text, max(0, match.start() - 64), match.start()):
            runs.append([match.group(1)])  # only a row right after "[" opens a list of lists
        last_end = match.end()
    if not runs:
        return []
    # Numbers longer than 3 digits are not grid values; dropping them keeps int() away from huge literals.
    return [[int(tok) for tok in re.findall(r"\d+", row) if len(tok) <= 3] for row in runs[-1]]


def _rectangular(rows: list[list[int]]) -> ParseResult[NDArray[np.int64]]:
    rows = [row for row in rows if row]
    if not rows:
        return ParseResult(error="the grid in the answer is empty")
    widths = sorted({len(row) for row in rows})
    if len(widths) > 1:
        return ParseResult(error=f"the rows of the grid differ in length ({widths})")
    if len(rows) * widths[0] > MAX_CELLS:
        return ParseResult(error=f"the grid has more than {MAX_CELLS} cells")
    return ParseResult(value=np.array(rows, dtype=np.int64))


@_never_raise
def coerce_int_grid(action: Any) -> ParseResult[NDArray[np.int64]]:
    """Accept a non-text grid action (numpy array or nested lists) as a 2-D int64 grid.

    Bools become 0/1; floats are accepted only when every value is a whole number.
    """
    try:
        array = np.asarray(action)
    except (ValueError, TypeError):
        return ParseResult(error="the answer is not a rectangular grid of integers")
    if array.dtype == object or array.ndim != 2:
        return ParseResult(error=f"expected a 2-D grid of integers, got shape {array.shape} of {array.dtype}")
    if array.size > MAX_CELLS:
        return ParseResult(error=f"the grid has more than {MAX_CELLS} cells")
    if array.dtype.kind == "f" and not (np.isfinite(array).all() and (array == np.round(array)).all()):
        return ParseResult(error="the grid holds values that are not whole numbers")
    if array.dtype.kind not in "biuf":
        return ParseResult(error=f"expected a grid of integers, got dtype {array.dtype}")
    return ParseResult(value=array.astype(np.int64))


def parse_grid_action(action: Any, blank_chars: str = "") -> ParseResult[NDArray[np.int64]]:
    """Parse a grid answer given as text (see :func:`parse_digit_grid`) or as an array-like grid."""
    if isinstance(action, str):
        return parse_digit_grid(action, blank_chars)
    return coerce_int_grid(action)


# ------------------------------------------------------------------------------------------ maze paths

# A coordinate pair in parentheses or brackets, e.g. "(3, 5)" or "[3,5]"; at most 9 digits per number so
# int() never sees an absurdly long literal.
_PAIR = re.compile(r"[\[(]\s*(\d{1,9})\s*,\s*(\d{1,9})\s*[\])]")
# Text allowed between two pairs of one run; a bracket closing a list, as in "[(1, 1)], [(2, 2)]", is not.
_PAIR_GAP = re.compile(r"[\s,;>\-]*")
_MOVE_WORDS = re.compile(r"\b(up|down|left|right)\b", re.IGNORECASE)
_MOVE_RUN = re.compile(r"(?<![A-Za-z])[UDLR](?:[\s,;>\-]*[UDLR])*(?![A-Za-z])")
_MOVE_VECTORS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
_MARK_CHARS = "*ox+"
_MAZE_ROW_CHARS = set(CODE_CHARS + _MARK_CHARS + "A ")


@_never_raise
def parse_coordinates(text: str) -> ParseResult[list[Cell]]:
    """Find a list of (row, col) pairs such as ``[(1, 1), (1, 2), (2, 2)]`` or ``(1,1) -> (1,2)``.

    Pairs separated only by commas, arrows or whitespace form one run; the longest run wins (the last one
    on ties), so a stray pair in the reasoning ("the start is (1, 1)") does not spoil the answer.
    """
    runs: list[list[Cell]] = []
    last_end = -1
    for match in _PAIR.finditer(text):
        pair = (int(match.group(1)), int(match.group(2)))
        if runs and _PAIR_GAP.fullmatch(text, last_end, match.start()):
            runs[-1].append(pair)
        else:
            runs.append([pair])
        last_end = match.end()
    if not runs:
        return ParseResult(error="no (row, col) coordinates found in the answer")
    best = max(reversed(runs), key=len)
    return ParseResult(value=best)


@_never_raise
def parse_moves(text: str, start: Cell) -> ParseResult[list[Cell]]:
    """Find a move string such as ``"RRDDL"``, ``"R, R, D"`` or ``"right, right, down"`` and walk it.

    Letters are U (row - 1), D (row + 1), L (col - 1), R (col + 1), one grid square per move; the longest
    run of moves wins. Walls are not checked here: that is the verifier's job.
    """
    normalised = _MOVE_WORDS.sub(lambda m: m.group(1)[0].upper(), text)
    runs = _MOVE_RUN.findall(normalised)
    if not runs:
        return ParseResult(error="no moves (U/D/L/R) found in the answer")
    moves = [ch for ch in max(reversed(runs), key=len) if ch in _MOVE_VECTORS]
    r, c = start
    path = [(r, c)]
    for ch in moves:
        dr, dc = _MOVE_VECTORS[ch]
        r, c = r + dr, c + dc
        path.append((r, c))
    return ParseResult(value=path)


@_never_raise
def parse_maze_char_grid(text: str, shape: tuple[int, int]) -> ParseResult[NDArray[np.bool_]]:
    """Find a character maze with the path drawn in, as in the text observation with ``*`` on the path.

    Rows use ``#`` wall, ``.`` floor, ``S`` start, ``G`` goal, ``A`` agent and any of ``* o x +`` for path
    squares; spaces between characters are ignored. The last block of at least three such rows wins.

    Returns:
        (H, W) bool mask of the path squares, or an error when no maze of ``shape`` is found.
    """
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        row = line.strip()
        if len(row) >= 3 and set(row) <= _MAZE_ROW_CHARS and ("#" in row or "." in row):
            current.append(row.replace(" ", ""))
            continue
        if current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    blocks = [b for b in blocks if len(b) >= 3 and any("#" in row for row in b)]
    if not blocks:
        return ParseResult(error="no maze drawing found in the answer")
    rows = blocks[-1]
    got = (len(rows), max(len(row) for row in rows))
    if got != tuple(shape) or any(len(row) != shape[1] for row in rows):
        return ParseResult(error=f"the drawn maze is {got[0]}x{got[1]} but the maze is {shape[0]}x{shape[1]}")
    marks = np.array([[ch in _MARK_CHARS for ch in row] for row in rows], dtype=bool)
    return ParseResult(value=marks)


@_never_raise
def parse_maze_answer(
    action: Any, grid: NDArray[np.integer], start: Cell, goal: Cell
) -> ParseResult[list[Cell]]:
    """Turn any maze answer into a path of (row, col) squares from the start.

    Understood forms, tried in this order for text: a list of coordinates (:func:`parse_coordinates`), a
    drawn maze with the path marked (:func:`parse_maze_char_grid`), a move string (:func:`parse_moves`).
    Non-text answers may be a (k, 2) array or list of coordinates, or an (H, W) grid in which squares
    equal to ``PATH`` (4), or ``True`` in a bool mask, mark the path.

    Args:
        action: The agent's answer.
        grid: (H, W) symbolic maze grid.
        start: (row, col) of the start; moves and drawn paths are read from here.
        goal: (row, col) of the goal; a drawn path is followed until here.
    """
    shape = tuple(np.shape(grid))
    if isinstance(action, str):
        errors = []
        for result in (
            parse_coordinates(action),
            _marks_to_path(parse_maze_char_grid(action, shape), start, goal),
            parse_moves(action, start),
        ):
            if result.ok:
                return result
            errors.append(result.error)
        return ParseResult(error="; ".join(str(e) for e in errors))
    try:
        array = np.asarray(action)
    except (ValueError, TypeError):
        array = np.empty(0, dtype=object)
    if array.dtype == object:
        return ParseResult(error="the answer is not text, a list of (row, col) pairs or a grid")
    if array.ndim == 2 and array.shape == shape:
        marks = array if array.dtype == bool else array == PATH
        return _marks_to_path(ParseResult(value=marks), start, goal)
    if array.ndim == 2 and array.shape[1] == 2 and array.dtype.kind in "iu":
        return ParseResult(value=[(int(r), int(c)) for r, c in array.tolist()])
    return ParseResult(
        error=f"expected text, a (k, 2) integer array of coordinates or a {shape} grid, got shape {array.shape}"
    )


def _marks_to_path(marks: ParseResult[NDArray[np.bool_]], start: Cell, goal: Cell) -> ParseResult[list[Cell]]:
    if not marks.ok or marks.value is None:
        return ParseResult(error=marks.error)
    return ParseResult(value=path_from_marks(marks.value, start, goal))


def path_to_text(path: list[Cell]) -> str:
    """Write a path in the coordinate format the maze prompt asks for, e.g. ``"[(1, 1), (1, 2)]"``."""
    return "[" + ", ".join(f"({r}, {c})" for r, c in path) + "]"
