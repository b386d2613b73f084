"""Solution checks for the grid tasks: the binary verifiers C(tau) in {0, 1} of the SSL paper (App. B.4), as plain
functions. (Not to be confused with :mod:`gui_envs.verifiers`, CORE's label functions over trajectories.)

Each check returns a :class:`Verdict`: truthy when the answer is correct, with a one-line reason when
it is not, so an env can put the reason in ``info`` and an agent can learn from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from gui_envs.grid.maze_gen import WALL

_DIGITS = np.arange(1, 10)


@dataclass(frozen=True)
class Verdict:
    """Outcome of a verifier.

    Attributes:
        ok: Whether the answer is correct.
        reason: Empty when ``ok``; otherwise why the answer was rejected.
    """

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


_ACCEPT = Verdict(True)


def verify_maze_path(
    grid: NDArray[np.integer], path: Sequence[Sequence[int]], start: Sequence[int], goal: Sequence[int]
) -> Verdict:
    """Maze verifier, SSL App. B.4 "Maze Navigation".

    Accepts when (1) the path starts at ``start``, (2) ends at ``goal``, (3) every square is inside the
    grid and not a wall, and (4) consecutive squares are one move apart (Manhattan distance 1). Revisiting
    a square is allowed: the paper asks for a continuous walkable path, not a simple one.

    Args:
        grid: (H, W) symbolic grid; squares equal to ``WALL`` (1) are walls, all others walkable.
        path: (row, col) squares in grid coordinates.
        start: (row, col) the path must start at.
        goal: (row, col) the path must end at.

    >>> g = np.array([[1, 1, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1], [1, 1, 1, 1]])
    >>> verify_maze_path(g, [(1, 1), (1, 2), (2, 2)], (1, 1), (2, 2)).ok
    True
    >>> verify_maze_path(g, [(1, 1), (2, 2)], (1, 1), (2, 2)).reason
    'squares 0 and 1, (1, 1) and (2, 2), are not one move apart'
    """
    cells = [(int(r), int(c)) for r, c in path]
    if not cells:
        return Verdict(False, "the path is empty")
    start_t, goal_t = (int(start[0]), int(start[1])), (int(goal[0]), int(goal[1]))
    if cells[0] != start_t:
        return Verdict(False, f"the path starts at {cells[0]}, not at the start {start_t}")
    if cells[-1] != goal_t:
        return Verdict(False, f"the path ends at {cells[-1]}, not at the goal {goal_t}")
    height, width = np.shape(grid)
    for i, (r, c) in enumerate(cells):
        if not (0 <= r < height and 0 <= c < width):
            return Verdict(False, f"square {i}, {(r, c)}, is outside the {height}x{width} grid")
        if grid[r, c] == WALL:
            return Verdict(False, f"square {i}, {(r, c)}, is a wall")
    for i in range(len(cells) - 1):
        (r0, c0), (r1, c1) = cells[i], cells[i + 1]
        if abs(r0 - r1) + abs(c0 - c1) != 1:
            return Verdict(
                False, f"squares {i} and {i + 1}, {cells[i]} and {cells[i + 1]}, are not one move apart"
            )
    return _ACCEPT


def verify_sudoku(grid: NDArray[np.integer], givens: NDArray[np.integer] | None = None) -> Verdict:
    """Sudoku verifier, SSL App. B.4 "Sudoku", plus the rule that the puzzle's givens are kept.

    Accepts when (1) all 81 cells hold digits 1-9, (2) each row, (3) each column and (4) each 3x3 box holds
    1-9 exactly once, and, when ``givens`` is passed, every non-zero given is unchanged.

    Args:
        grid: (9, 9) submitted grid.
        givens: Optional (9, 9) puzzle, 0 = blank.

    >>> base = np.array([[(3 * (r % 3) + r // 3 + c) % 9 + 1 for c in range(9)] for r in range(9)])
    >>> verify_sudoku(base).ok
    True
    >>> bad = base.copy(); bad[0, 0], bad[0, 1] = bad[0, 1], bad[0, 0]
    >>> verify_sudoku(bad).reason
    'column 1 does not hold 1-9 exactly once'
    """
    g = np.asarray(grid)
    if g.shape != (9, 9):
        return Verdict(False, f"the grid is {'x'.join(map(str, g.shape))}, not 9x9")
    if not np.isin(g, _DIGITS).all():
        return Verdict(False, "not every cell holds a digit 1-9")
    # Rows, columns and boxes are 1-based in reasons because that is how people count Sudoku lines.
    for i in range(9):
        if not np.array_equal(np.sort(g[i]), _DIGITS):
            return Verdict(False, f"row {i + 1} does not hold 1-9 exactly once")
    for j in range(9):
        if not np.array_equal(np.sort(g[:, j]), _DIGITS):
            return Verdict(False, f"column {j + 1} does not hold 1-9 exactly once")
    for b in range(9):
        r, c = 3 * (b // 3), 3 * (b % 3)
        if not np.array_equal(np.sort(g[r : r + 3, c : c + 3], axis=None), _DIGITS):
            return Verdict(False, f"box {b + 1} does not hold 1-9 exactly once")
    if givens is not None:
        given = np.asarray(givens)
        changed = np.argwhere((given != 0) & (given != g))
        if len(changed):
            r, c = (int(x) for x in changed[0])
            return Verdict(False, f"the given {int(given[r, c])} at row {r + 1}, column {c + 1} was changed")
    return _ACCEPT


def verify_arc(prediction: NDArray[np.integer], reference: NDArray[np.integer]) -> Verdict:
    """ARC-AGI verifier, SSL App. B.4: exact match in both dimensions and every cell value.

    Args:
        prediction: (h, w) predicted output grid.
        reference: (H, W) reference output grid.

    >>> verify_arc(np.array([[1, 2]]), np.array([[1, 2]])).ok
    True
    >>> verify_arc(np.array([[1, 2]]), np.array([[1], [2]])).reason
    'the grid is 1x2, the answer is 2x1'
    """
    pred, ref = np.asarray(prediction), np.asarray(reference)
    if pred.shape != ref.shape:
        shown = "x".join(map(str, pred.shape)) or "empty"
        return Verdict(False, f"the grid is {shown}, the answer is {'x'.join(map(str, ref.shape))}")
    wrong = int(np.count_nonzero(pred != ref))
    if wrong:
        return Verdict(False, f"{wrong} of {ref.size} cells are wrong")
    return _ACCEPT
