"""Hand-made accept/reject cases for the grid solution checks (the SSL App. B.4 binary verifiers)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from gui_envs.grid import maze_gen, render, solution_checks
from gui_envs.grid.maze_gen import FLOOR, GOAL, START, WALL
from gui_envs.grid.solution_checks import verify_arc, verify_maze_path, verify_sudoku

# A 5x5 grid: the start (1, 1) reaches the goal (3, 3) only via (1, 2), (1, 3), (2, 3).
#   #####
#   #S..#
#   ###.#
#   #..G#
#   #####
MAZE = np.full((5, 5), WALL)
MAZE[1, 1:4] = FLOOR
MAZE[2, 3] = FLOOR
MAZE[3, 1:4] = FLOOR
MAZE[1, 1], MAZE[3, 3] = START, GOAL
S, G = (1, 1), (3, 3)
GOOD_PATH = [(1, 1), (1, 2), (1, 3), (2, 3), (3, 3)]

# A valid solved Sudoku built from the shifted-rows pattern.
SOLVED = np.array([[(3 * (r % 3) + r // 3 + c) % 9 + 1 for c in range(9)] for r in range(9)])

# A Latin square that is not a Sudoku: every row and column holds 1-9, the boxes do not.
LATIN = np.array([[(r + c) % 9 + 1 for c in range(9)] for r in range(9)])


def test_doctests_pass() -> None:
    for module in (solution_checks, render, maze_gen):
        assert doctest.testmod(module).failed == 0


def test_maze_accepts_the_shortest_path_and_a_path_with_a_detour() -> None:
    assert verify_maze_path(MAZE, GOOD_PATH, S, G).ok
    detour = [(1, 1), (1, 2), (1, 1), (1, 2), (1, 3), (2, 3), (3, 3)]  # revisits are allowed
    assert verify_maze_path(MAZE, detour, S, G)


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ([], "empty"),
        ([(1, 2), (1, 3), (2, 3), (3, 3)], "starts at (1, 2)"),  # wrong start
        ([(1, 1), (1, 2), (1, 3), (2, 3)], "ends at (2, 3)"),  # wrong end
        ([(1, 1), (2, 1), (3, 1), (3, 2), (3, 3)], "(2, 1), is a wall"),  # through a wall
        ([(1, 1), (1, 2), (1, 3), (3, 3)], "not one move apart"),  # a jump of two squares
        ([(1, 1), (2, 2), (3, 3)], "is a wall"),  # diagonal moves land on walls here
        ([(1, 1), (1, 2), (1, 3), (2, 3), (3, 3), (3, 3)], "not one move apart"),  # standing still
        ([(1, 1), (9, 9), (3, 3)], "outside the 5x5 grid"),
    ],
)
def test_maze_rejects(path: list[tuple[int, int]], needle: str) -> None:
    verdict = verify_maze_path(MAZE, path, S, G)
    assert not verdict.ok and not verdict
    assert needle in verdict.reason


def test_maze_diagonal_step_on_floor_is_rejected() -> None:
    open_grid = np.zeros((4, 4), dtype=int)
    assert "not one move apart" in verify_maze_path(open_grid, [(0, 0), (1, 1)], (0, 0), (1, 1)).reason


def test_sudoku_accepts_a_solution_and_keeps_givens() -> None:
    givens = SOLVED * (np.arange(81).reshape(9, 9) % 3 == 0)
    assert verify_sudoku(SOLVED).ok
    assert verify_sudoku(SOLVED, givens).ok


def _swap_rows_cells(grid: np.ndarray) -> np.ndarray:
    bad = grid.copy()
    bad[0, 0], bad[0, 1] = bad[0, 1], bad[0, 0]
    return bad


@pytest.mark.parametrize(
    ("grid", "needle"),
    [
        (np.where(np.eye(9, dtype=bool), 0, SOLVED), "not every cell"),  # blanks left
        (np.where(np.eye(9, dtype=bool), 10, SOLVED), "not every cell"),  # not a digit
        (SOLVED[:8], "not 9x9"),
        (np.vstack([SOLVED[:1]] * 9), "column 1"),  # every row fine, columns repeat
        (LATIN, "box 1"),  # rows and columns fine, boxes repeat
        (_swap_rows_cells(SOLVED), "column 1"),  # swapping in a row breaks two columns
    ],
)
def test_sudoku_rejects(grid: np.ndarray, needle: str) -> None:
    verdict = verify_sudoku(grid)
    assert not verdict.ok
    assert needle in verdict.reason


def test_sudoku_rejects_a_duplicate_in_a_row() -> None:
    bad = SOLVED.copy()
    bad[4, 4] = bad[4, 5]
    assert "row 5" in verify_sudoku(bad).reason


def test_sudoku_rejects_changed_givens_even_when_valid() -> None:
    relabel = np.array([0, 2, 1, 3, 4, 5, 6, 7, 8, 9])  # swap digits 1 and 2: still a valid Sudoku
    other = relabel[SOLVED]
    givens = np.where(SOLVED == 1, 1, 0)
    assert verify_sudoku(other).ok
    verdict = verify_sudoku(other, givens)
    assert not verdict.ok and "given 1" in verdict.reason


def test_arc_exact_match_only() -> None:
    ref = np.array([[1, 2, 3], [4, 5, 6]])
    assert verify_arc(ref.copy(), ref).ok
    assert verify_arc(ref.astype(np.uint8), ref).ok  # dtype does not matter, values do
    assert "2x3" in verify_arc(ref.T, ref).reason  # wrong dims
    assert "the grid is 2x2" in verify_arc(ref[:, :2], ref).reason
    off_by_one = ref.copy()
    off_by_one[1, 2] = 7
    assert verify_arc(off_by_one, ref).reason == "1 of 6 cells are wrong"
    assert not verify_arc(np.zeros((0, 0)), ref).ok
