"""Parsers for grids and maze paths: every text format, garbage, and a never-raises property."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.grid.maze_gen import PATH, make_layout
from gui_envs.grid.parsing import (
    coerce_int_grid,
    parse_coordinates,
    parse_digit_grid,
    parse_grid_action,
    parse_maze_answer,
    parse_maze_char_grid,
    parse_moves,
    path_to_text,
)

LAYOUT = make_layout(np.random.default_rng(0), 5)


@pytest.mark.parametrize(
    "text",
    [
        "1 2 3\n4 5 6",
        "123\n456",
        "1,2,3\n4,5,6",
        "[[1, 2, 3], [4, 5, 6]]",
        "The answer is [[1,2,3],[4,5,6]].",
        "Output:\n```\n1 2 3\n4 5 6\n```\nDone.",
        "Input:\n9 9 9\n9 9 9\n\nOutput:\n1 2 3\n4 5 6\nThat is my answer.",  # last block wins
        "[[9, 9]] was the input; the output is [[1, 2, 3], [4, 5, 6]]",  # last nested list wins
        "| 1 2 3 |\n|-------|\n| 4 5 6 |",  # separator lines do not break a block
        "Row 1: 1 2 3\nRow 2: 4 5 6",  # labelled rows
    ],
)
def test_digit_grid_formats(text: str) -> None:
    result = parse_digit_grid(text)
    assert result.ok, result.error
    np.testing.assert_array_equal(result.value, [[1, 2, 3], [4, 5, 6]])


def test_digit_grid_blanks_and_single_row() -> None:
    assert parse_digit_grid("1 . 3\n. 5 6", blank_chars=".").value.tolist() == [[1, 0, 3], [0, 5, 6]]
    assert parse_digit_grid("1" * 81).value.shape == (1, 81)
    assert parse_digit_grid("Answer: " + "1" * 81).value.shape == (1, 81)
    assert parse_digit_grid("Example 1 input (2x1):\n1\n2\nOutput:\n3\n4").value.tolist() == [[3], [4]]


@pytest.mark.parametrize("text", ["", "no digits here", "1 2 3\n4 5", "[[1, 2], [3]]", "x" * 10_000, "[[]]"])
def test_digit_grid_garbage_is_an_error(text: str) -> None:
    result = parse_digit_grid(text)
    assert not result.ok and result.value is None and result.error


def test_grid_action_arrays() -> None:
    assert parse_grid_action(np.eye(2, dtype=bool)).value.tolist() == [[1, 0], [0, 1]]
    assert parse_grid_action([[1.0, 2.0]]).value.dtype == np.int64
    assert not parse_grid_action([[1.5]]).ok
    assert not parse_grid_action([1, 2, 3]).ok  # 1-D
    assert not parse_grid_action([[1, 2], [3]]).ok  # ragged
    assert not parse_grid_action(object()).ok
    assert not coerce_int_grid([["a"]]).ok


def test_coordinates() -> None:
    assert parse_coordinates("[(1, 1), (1, 2), (2, 2)]").value == [(1, 1), (1, 2), (2, 2)]
    assert parse_coordinates("[[1,1],[1,2]]").value == [(1, 1), (1, 2)]
    assert parse_coordinates("(1,1) -> (1,2) -> (2,2)").value == [(1, 1), (1, 2), (2, 2)]
    # A stray pair in the reasoning does not spoil the answer: the longest run wins.
    text = "Start is (1, 1) and the goal (2, 2). Path: [(1, 1), (1, 2), (2, 2)]"
    assert parse_coordinates(text).value == [(1, 1), (1, 2), (2, 2)]
    assert not parse_coordinates("no pairs").ok
    assert not parse_coordinates("(" + "9" * 5000 + ", 1)").ok  # absurd numbers are not read


def test_moves() -> None:
    start = (1, 1)
    expected = [(1, 1), (1, 2), (2, 2), (2, 1), (1, 1)]
    for text in [
        "RDLU",
        "R D L U",
        "R, D, L, U",
        "R -> D -> L -> U",
        "right, down, left, up",
        "Moves: RDLU.",
    ]:
        assert parse_moves(text, start).value == expected, text
    assert not parse_moves("nothing to see", start).ok


def test_maze_char_grid_and_path_from_marks() -> None:
    text = "\n".join("".join(".#SG*"[v] for v in row) for row in LAYOUT.solution_grid.tolist())
    marks = parse_maze_char_grid("My answer:\n" + text + "\nEnd.", LAYOUT.grid.shape)
    assert marks.ok
    assert int(marks.value.sum()) == len(LAYOUT.solution_path) - 2  # start and goal are not starred
    assert "is 3x" in parse_maze_char_grid("###\n#.#\n###", LAYOUT.grid.shape).error
    assert not parse_maze_char_grid("hello", LAYOUT.grid.shape).ok


@pytest.mark.parametrize(
    "form", ["coords", "moves", "text_grid", "array_path", "list_path", "path_grid", "bool_grid"]
)
def test_maze_answer_forms_recover_the_solution(form: str) -> None:
    path = list(LAYOUT.solution_path)
    steps = {(0, 1): "R", (1, 0): "D", (0, -1): "L", (-1, 0): "U"}
    action = {
        "coords": path_to_text(path),
        "moves": "".join(steps[(b[0] - a[0], b[1] - a[1])] for a, b in zip(path, path[1:], strict=False)),
        "text_grid": "\n".join("".join(".#SG*"[v] for v in row) for row in LAYOUT.solution_grid.tolist()),
        "array_path": np.array(path),
        "list_path": [list(p) for p in path],
        "path_grid": LAYOUT.solution_grid,
        "bool_grid": LAYOUT.solution_grid == PATH,
    }[form]
    result = parse_maze_answer(action, LAYOUT.grid, LAYOUT.start, LAYOUT.goal)
    assert result.ok, result.error
    assert result.value == path


@pytest.mark.parametrize(
    "action", ["", "garbage", 3.5, None, np.zeros((3, 3)), [[1, 2, 3]], {"a": 1}, [[1, 2], [3]]]
)
def test_maze_answer_garbage_is_an_error(action: object) -> None:
    result = parse_maze_answer(action, LAYOUT.grid, LAYOUT.start, LAYOUT.goal)
    assert not result.ok and result.error


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    for result in (
        parse_digit_grid(text),
        parse_digit_grid(text, blank_chars="."),
        parse_maze_answer(text, LAYOUT.grid, LAYOUT.start, LAYOUT.goal),
    ):
        assert result.ok != (result.error is not None)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="[](),0123456789 \n.#*SGUDLR-|", max_size=300))
def test_answer_like_text_never_raises(text: str) -> None:
    # Text built from the characters the parsers look for reaches much deeper into them than random text.
    parse_digit_grid(text)
    parse_maze_answer(text, LAYOUT.grid, LAYOUT.start, LAYOUT.goal)


@pytest.mark.parametrize(
    "text", ["[" * 20_000, "[1" * 10_000, "(" + " " * 20_000, "U " * 10_000 + "x", " ," * 10_000]
)
def test_adversarial_text_parses_quickly(text: str) -> None:
    begin = time.perf_counter()
    parse_digit_grid(text)
    parse_maze_answer(text, LAYOUT.grid, LAYOUT.start, LAYOUT.goal)
    assert time.perf_counter() - begin < 1.0


ANSWER_ENVS = {env_id: gym.make(env_id) for env_id in ("Maze-v0", "Sudoku-v0", "Arc-v0")}


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(ANSWER_ENVS)), st.text(max_size=300))
def test_env_step_never_raises_on_arbitrary_text(env_id: str, text: str) -> None:
    env = ANSWER_ENVS[env_id]
    env.reset(seed=0)  # each answer ends its one-step episode
    _, reward, terminated, _, info = env.step(text)
    assert reward in (0.0, 1.0) and terminated
    assert (info["parse_error"] is None) == (info["submission_grid"] is not None)
