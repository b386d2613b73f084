"""9x9 Sudoku: a bitmask backtracking solver and a seeded generator of puzzles with a unique solution.

Cells are indexed 0..80 in row-major order. Internally a cell holds a one-hot digit mask (bit ``d - 1`` for
digit ``d``, 0 for blank) and each row, column and box keeps the OR of its digits, so the candidates of a
cell are ``ALL & ~(row | col | box)``. The solver always branches on the blank cell with the fewest
candidates (minimum remaining values), which solves generated puzzles in a few dozen nodes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from gui_envs.grid.errors import GenerationError, GridConfigError

ALL = 0x1FF
_ROW = [i // 9 for i in range(81)]
_COL = [i % 9 for i in range(81)]
_BOX = [(i // 27) * 3 + (i % 9) // 3 for i in range(81)]
_POPCOUNT = [bin(m).count("1") for m in range(512)]
_DIGIT_OF_BIT = {1 << d: d + 1 for d in range(9)}

#: Most blanks the generator accepts. Greedy digging stalls around 55-60 blanks on most grids, so each
#: extra blank costs restarts: measured medians are 2 ms at 50 blanks, 17 ms at 57 and 52 ms at 58. The
#: theoretical limit is 64 (17 givens), far beyond what digging reaches.
MAX_BLANKS = 58


class _Board:
    """Mutable solver state: cell masks plus the per-row, per-column and per-box digit unions."""

    __slots__ = ("cells", "rows", "cols", "boxes")

    def __init__(self, digits: list[int]) -> None:
        self.cells = [0] * 81
        self.rows = [0] * 9
        self.cols = [0] * 9
        self.boxes = [0] * 9
        for i, d in enumerate(digits):
            if d:
                self.place(i, 1 << (d - 1))

    def place(self, i: int, bit: int) -> None:
        self.cells[i] = bit
        self.rows[_ROW[i]] |= bit
        self.cols[_COL[i]] |= bit
        self.boxes[_BOX[i]] |= bit

    def clear(self, i: int) -> None:
        keep = ~self.cells[i]
        self.cells[i] = 0
        self.rows[_ROW[i]] &= keep
        self.cols[_COL[i]] &= keep
        self.boxes[_BOX[i]] &= keep

    def candidates(self, i: int) -> int:
        return ALL & ~(self.rows[_ROW[i]] | self.cols[_COL[i]] | self.boxes[_BOX[i]])

    def digits(self) -> list[int]:
        return [_DIGIT_OF_BIT.get(m, 0) for m in self.cells]

    def consistent(self) -> bool:
        """True when no digit repeats in a row, column or box (a union hides repeats, so recount)."""
        filled = sum(1 for m in self.cells if m)
        return all(sum(_POPCOUNT[m] for m in unit) == filled for unit in (self.rows, self.cols, self.boxes))


def _search(board: _Board, limit: int, found: list[list[int]], order: list[list[int]] | None) -> int:
    """Depth-first search with minimum-remaining-values branching; returns solutions found (<= limit).

    ``order`` gives, per cell, the digit bits in the order to try them (the generator randomises it);
    None tries digits in increasing order.
    """
    cells = board.cells
    rows, cols, boxes = board.rows, board.cols, board.boxes
    best, best_mask, best_n = -1, 0, 10
    for i in range(81):
        if cells[i]:
            continue
        mask = ALL & ~(rows[_ROW[i]] | cols[_COL[i]] | boxes[_BOX[i]])
        n = _POPCOUNT[mask]
        if n < best_n:
            if n == 0:
                return 0  # dead end: a blank with no candidate
            best, best_mask, best_n = i, mask, n
            if n == 1:
                break
    if best < 0:
        found.append(board.digits())
        return 1
    count = 0
    bits = [b for b in order[best] if best_mask & b] if order is not None else _bits(best_mask)
    for bit in bits:
        board.place(best, bit)
        count += _search(board, limit - count, found, order)
        board.clear(best)
        if count >= limit:
            break
    return count


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


def _board_from(puzzle: NDArray[np.integer]) -> _Board:
    grid = np.asarray(puzzle)
    if grid.shape != (9, 9) or grid.min() < 0 or grid.max() > 9:
        raise ValueError(f"a Sudoku puzzle is a 9x9 grid of 0-9 (0 = blank); got shape {grid.shape}")
    return _Board([int(v) for v in grid.ravel()])


def count_solutions(puzzle: NDArray[np.integer], limit: int = 2) -> int:
    """Count the solutions of a puzzle, stopping at ``limit``.

    Args:
        puzzle: (9, 9) grid, 0 = blank, 1-9 = given.
        limit: Stop counting here; ``limit=2`` answers "is the solution unique?".

    Returns:
        Number of solutions found, at most ``limit``; 0 when the givens already clash.
    """
    board = _board_from(puzzle)
    if not board.consistent():
        return 0
    return _search(board, limit, [], None)


def solve(puzzle: NDArray[np.integer]) -> NDArray[np.uint8] | None:
    """Return one solution of ``puzzle`` as a (9, 9) uint8 grid, or None when it has none."""
    board = _board_from(puzzle)
    found: list[list[int]] = []
    if not board.consistent() or not _search(board, 1, found, None):
        return None
    return np.array(found[0], dtype=np.uint8).reshape(9, 9)


def _random_solution(rng: np.random.Generator) -> list[int]:
    """A random complete grid: the three diagonal boxes (which never constrain one another) get random
    permutations, then the search fills the rest trying digits in a per-cell random order."""
    perms = np.argsort(rng.random((84, 9)), axis=1)  # 81 per-cell digit orders + 3 box fillings
    digits = [0] * 81
    for k, box in enumerate((0, 4, 8)):
        r0, c0 = 3 * (box // 3), 3 * (box % 3)
        for j, d in enumerate(perms[81 + k].tolist()):
            digits[(r0 + j // 3) * 9 + c0 + j % 3] = d + 1
    order = [[1 << d for d in row] for row in perms[:81].tolist()]
    found: list[list[int]] = []
    _search(_Board(digits), 1, found, order)
    return found[0]


def _has_other_solution(board: _Board, i: int, bit: int) -> bool:
    """True when the puzzle on ``board`` (cell ``i`` blank) has a solution with cell ``i`` != ``bit``.

    The board had a unique solution with cell ``i`` holding ``bit``, so any second solution of the dug
    puzzle must differ at ``i``; searching only those branches is much cheaper than counting to two.
    """
    others = board.candidates(i) & ~bit
    while others:
        low = others & -others
        others ^= low
        board.place(i, low)
        hit = _search(board, 1, [], None)
        board.clear(i)
        if hit:
            return True
    return False


def generate_sudoku(
    rng: np.random.Generator, blanks: int, max_attempts: int = 200
) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """Generate a puzzle with exactly ``blanks`` blank cells and a unique solution.

    A random complete grid is dug in a random cell order; a dig is kept only when the solution stays
    unique. When the order runs out before ``blanks`` is reached, a fresh grid is drawn.

    Args:
        rng: Source of all randomness.
        blanks: Number of blank cells, 0..MAX_BLANKS (givens = 81 - blanks).
        max_attempts: Complete grids to try before giving up.

    Returns:
        ``(puzzle, solution)``, both (9, 9) uint8; 0 marks a blank in ``puzzle``.

    Raises:
        GridConfigError: when ``blanks`` is outside 0..MAX_BLANKS.
        GenerationError: when no attempt reached ``blanks`` blanks.
    """
    if not 0 <= blanks <= MAX_BLANKS:
        raise GridConfigError(
            f"blanks={blanks} is outside 0..{MAX_BLANKS}; pass a number of blanks in that range"
        )
    for _ in range(max_attempts):
        solution = _random_solution(rng)
        board = _Board(solution)
        dug = 0
        for i in rng.permutation(81).tolist():
            if dug == blanks:
                break
            bit = board.cells[i]
            board.clear(i)
            # If the dug cell's only candidate is its own digit, uniqueness is kept without any search.
            if board.candidates(i) != bit and _has_other_solution(board, i, bit):
                board.place(i, bit)
                continue
            dug += 1
        if dug == blanks:
            puzzle = np.array(board.digits(), dtype=np.uint8).reshape(9, 9)
            return puzzle, np.array(solution, dtype=np.uint8).reshape(9, 9)
    raise GenerationError(
        f"could not dig {blanks} blanks with a unique solution in {max_attempts} attempts; use fewer blanks"
    )
