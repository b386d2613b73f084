"""Sudoku-v0: generator uniqueness, solver, env checker, seeding, oracle and answer handling."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.grid.errors import GridConfigError
from gui_envs.grid.render import digits_to_text
from gui_envs.grid.solution_checks import verify_sudoku
from gui_envs.grid.sudoku import SudokuEnv
from gui_envs.grid.sudoku_gen import MAX_BLANKS, count_solutions, generate_sudoku, solve
from gui_envs.schema.privileged import privileged_of


@pytest.mark.parametrize("blanks", [0, 20, 50, 55])
def test_generated_puzzles_have_one_solution_and_the_blanks_asked_for(blanks: int) -> None:
    for seed in range(4):
        puzzle, solution = generate_sudoku(np.random.default_rng(seed), blanks)
        assert puzzle.shape == solution.shape == (9, 9) and puzzle.dtype == np.uint8
        assert int((puzzle == 0).sum()) == blanks
        assert verify_sudoku(solution, puzzle).ok
        assert count_solutions(puzzle, limit=2) == 1
        np.testing.assert_array_equal(solve(puzzle), solution)


def test_generator_is_seeded() -> None:
    a, _ = generate_sudoku(np.random.default_rng(1), 50)
    b, _ = generate_sudoku(np.random.default_rng(1), 50)
    c, _ = generate_sudoku(np.random.default_rng(2), 50)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_solver_counts_multiple_and_no_solutions() -> None:
    empty = np.zeros((9, 9), dtype=int)
    assert count_solutions(empty, limit=2) == 2
    assert count_solutions(empty, limit=5) == 5
    clash = empty.copy()
    clash[0, 0] = clash[0, 8] = 5
    assert count_solutions(clash) == 0 and solve(clash) is None
    box_clash = empty.copy()
    box_clash[0, 0] = box_clash[1, 1] = 3  # same box, different row and column
    assert count_solutions(box_clash) == 0
    with pytest.raises(ValueError):
        count_solutions(np.zeros((4, 4)))


def test_check_env() -> None:
    check_env(gym.make("Sudoku-v0").unwrapped)
    for render_mode in ("rgb_array", "ansi"):
        check_env(gym.make("Sudoku-v0", blanks=30, render_mode=render_mode).unwrapped)


def test_seeded_repeatability() -> None:
    env = gym.make("Sudoku-v0")
    obs_a, info_a = env.reset(seed=5)
    obs_b, info_b = gym.make("Sudoku-v0").reset(seed=5)
    np.testing.assert_array_equal(obs_a["grid"], obs_b["grid"])
    assert obs_a["text"] == obs_b["text"]
    obs_b2, _ = (env_b := gym.make("Sudoku-v0")).reset(seed=5)
    np.testing.assert_array_equal(privileged_of(env)["solution_grid"], privileged_of(env_b)["solution_grid"])
    obs_c, _ = env.reset(seed=6)
    assert not np.array_equal(obs_a["grid"], obs_c["grid"])


def test_oracle_solves_several_seeds() -> None:
    env = gym.make("Sudoku-v0")
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        np.testing.assert_array_equal(obs["grid"], info["puzzle_grid"])
        action = env.unwrapped.oracle_action()
        assert env.action_space.contains(action)
        _, reward, terminated, truncated, info = env.step(action)
        assert (reward, terminated, truncated) == (1.0, True, False)
        assert info["success"] and info["parse_error"] is None
        np.testing.assert_array_equal(info["submission_grid"], privileged_of(env)["solution_grid"])


@pytest.mark.parametrize("form", ["array", "flat_array", "nested_list", "one_line", "boxed_text", "json"])
def test_answer_forms(form: str) -> None:
    env = SudokuEnv()
    _, info = env.reset(seed=0)
    sol = env.privileged()["solution_grid"]
    boxed = "\n".join(
        " | ".join(" ".join(map(str, row[k : k + 3])) for k in (0, 3, 6))
        + ("\n------+-------+------" if r in (2, 5) else "")
        for r, row in enumerate(sol.tolist())
    )
    action = {
        "array": sol,
        "flat_array": sol.ravel(),
        "nested_list": sol.tolist(),
        "one_line": "Answer: " + "".join(map(str, sol.ravel())),
        "boxed_text": "Solved it!\n" + boxed + "\nAll rows check out.",
        "json": str(sol.tolist()),
    }[form]
    _, reward, _, _, info = env.step(action)
    assert reward == 1.0, info["reason"]


def test_rejections() -> None:
    env = SudokuEnv()
    _, info = env.reset(seed=0)
    puzzle, sol = info["puzzle_grid"], env.privileged()["solution_grid"]
    _, reward, terminated, _, info = env.step("no idea")
    assert reward == 0.0 and terminated and info["parse_error"] and info["submission_grid"] is None

    def answer(action: object) -> tuple[float, dict]:
        env.reset(seed=0)  # each answer ends its one-step episode
        _, reward, _, _, info = env.step(action)
        return reward, info

    reward, info = answer(np.ones((3, 3), dtype=int))
    assert reward == 0.0 and "9x9" in info["parse_error"]
    reward, info = answer(puzzle)  # blanks left in
    assert reward == 0.0 and info["parse_error"] is None and "not every cell" in info["reason"]
    relabelled = sol % 9 + 1  # relabel digits d -> d + 1 (9 -> 1): still valid, breaks every given
    assert verify_sudoku(relabelled).ok
    reward, info = answer(relabelled)
    assert reward == 0.0 and "was changed" in info["reason"]
    dup = sol.copy()
    dup[0, 0], dup[0, 1] = dup[0, 1], dup[0, 0]
    reward, info = answer(digits_to_text(dup))
    assert reward == 0.0 and not info["success"]


def test_render() -> None:
    env = gym.make("Sudoku-v0", render_mode="rgb_array")
    env.reset(seed=0)
    env.step(np.ones((9, 9), dtype=int))
    image = env.render()
    assert image.shape == (289, 289, 3) and image.dtype == np.uint8


@pytest.mark.parametrize("blanks", [-1, MAX_BLANKS + 1, 50.5])
def test_bad_blanks_raise_named_error(blanks: object) -> None:
    with pytest.raises(GridConfigError):
        SudokuEnv(blanks=blanks)  # type: ignore[arg-type]
