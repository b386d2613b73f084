"""Maze-v0: generator, env checker, seeding, oracle, both modes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.grid.errors import GridConfigError
from gui_envs.grid.maze import MazeEnv
from gui_envs.grid.maze_gen import (
    FLOOR,
    GOAL,
    PATH,
    START,
    WALL,
    bfs_distances,
    carve_maze,
    grid_side,
    make_layout,
)
from gui_envs.grid.solution_checks import verify_maze_path
from gui_envs.schema.privileged import privileged_of


def _floor_adjacencies(walkable: np.ndarray) -> int:
    return int((walkable[:, :-1] & walkable[:, 1:]).sum() + (walkable[:-1, :] & walkable[1:, :]).sum())


@pytest.mark.parametrize("size", [2, 5, 12, 30])
def test_carved_maze_is_perfect(size: int) -> None:
    for seed in range(3):
        grid = carve_maze(np.random.default_rng(seed), size)
        side = grid_side(size)
        assert grid.shape == (side, side)
        walkable = grid != WALL
        assert (
            not walkable[0].any()
            and not walkable[-1].any()
            and not walkable[:, 0].any()
            and not walkable[:, -1].any()
        )
        assert walkable[1::2, 1::2].all()  # every cell is floor
        assert not walkable[::2, ::2].any()  # lattice corners are always wall
        # Cell graph: passages = cells - 1 (a tree); grid graph: floor adjacencies = floor squares - 1.
        n_cells = size * size
        passages = int(walkable[1:-1:2, 2:-1:2].sum() + walkable[2:-1:2, 1:-1:2].sum())
        assert passages == n_cells - 1
        assert _floor_adjacencies(walkable) == int(walkable.sum()) - 1
        dist = bfs_distances(grid, (1, 1))
        assert (dist[walkable] >= 0).all()  # all connected


def test_layout_start_goal_and_solution() -> None:
    layout = make_layout(np.random.default_rng(7), 8)
    assert layout.grid[layout.start] == START and layout.grid[layout.goal] == GOAL
    assert layout.start[0] % 2 == 1 and layout.goal[1] % 2 == 1
    path = list(layout.solution_path)
    assert verify_maze_path(layout.grid, path, layout.start, layout.goal).ok
    assert len(path) - 1 == layout.dist_to_goal[layout.start]
    assert int((layout.solution_grid == PATH).sum()) == len(path) - 2
    assert not layout.grid.flags.writeable


@pytest.mark.parametrize(
    "kwargs", [{}, {"mode": "navigate"}, {"mode": "navigate", "size": 5, "layout_seed": 3}, {"size": 30}]
)
def test_check_env(kwargs: dict) -> None:
    check_env(gym.make("Maze-v0", **kwargs).unwrapped)


def test_check_env_with_render_modes() -> None:
    for render_mode in ("rgb_array", "ansi"):
        for mode in ("answer", "navigate"):
            check_env(gym.make("Maze-v0", mode=mode, size=4, render_mode=render_mode).unwrapped)


@pytest.mark.parametrize("mode", ["answer", "navigate"])
def test_seeded_repeatability(mode: str) -> None:
    env_a, env_b = gym.make("Maze-v0", mode=mode), gym.make("Maze-v0", mode=mode)
    obs_a, info_a = env_a.reset(seed=11)
    obs_b, info_b = env_b.reset(seed=11)
    grid_a = obs_a["grid"] if mode == "answer" else obs_a
    grid_b = obs_b["grid"] if mode == "answer" else obs_b
    np.testing.assert_array_equal(grid_a, grid_b)
    assert privileged_of(env_a)["solution_path"] == privileged_of(env_b)["solution_path"]
    obs_c, _ = env_a.reset(seed=12)
    grid_c = obs_c["grid"] if mode == "answer" else obs_c
    assert not np.array_equal(grid_a, grid_c)


def test_layout_seed_fixes_the_maze() -> None:
    env = gym.make("Maze-v0", mode="navigate", size=5, layout_seed=0)
    first, _ = env.reset(seed=1)
    second, _ = env.reset(seed=2)
    np.testing.assert_array_equal(first, second)
    other, _ = gym.make("Maze-v0", mode="navigate", size=5, layout_seed=1).reset(seed=1)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("size", [3, 10, 30])
def test_answer_oracle_solves(size: int) -> None:
    env = gym.make("Maze-v0", size=size)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        assert obs["grid"].shape == (grid_side(size),) * 2
        assert obs["text"] == env.unwrapped.render_text() and "S" in obs["text"]
        action = env.unwrapped.oracle_action()
        assert env.action_space.contains(action)
        _, reward, terminated, truncated, info = env.step(action)
        assert (reward, terminated, truncated) == (1.0, True, False)
        assert info["success"] and info["parse_error"] is None and info["reason"] == ""
        np.testing.assert_array_equal(info["submission_grid"], privileged_of(env)["solution_grid"])


def test_answer_rejections_fill_info() -> None:
    env = gym.make("Maze-v0", size=5)
    _, info = env.reset(seed=0)
    _, reward, terminated, _, info = env.step("I cannot solve this.")
    assert reward == 0.0 and terminated and info["parse_error"] and info["submission_grid"] is None
    assert not info["success"]
    wrong_start = list(privileged_of(env)["solution_path"][1:])
    env.reset(seed=0)  # the first answer ended the episode
    _, reward, _, _, info = env.step(wrong_start)
    assert reward == 0.0 and info["parse_error"] is None and "starts at" in info["reason"]
    assert info["submission_grid"].shape == privileged_of(env)["solution_grid"].shape


def test_navigate_oracle_reward_and_info() -> None:
    env = gym.make("Maze-v0", mode="navigate", size=6)
    obs, info = env.reset(seed=5)
    assert obs.shape == (13, 13, 3) and obs.dtype == np.uint8
    priv = privileged_of(env)
    assert not set(info) & set(priv)  # the distance and the solution are privileged, not info
    assert priv["progress"] == 0.0 and priv["distance_to_goal"] == len(priv["solution_path"]) - 1
    distance = priv["distance_to_goal"]
    for step in range(1, distance + 1):
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        assert privileged_of(env)["distance_to_goal"] == distance - step
    assert terminated and not truncated and info["success"] and privileged_of(env)["progress"] == 1.0
    assert reward == pytest.approx(1 - 0.9 * distance / env.unwrapped.max_steps)
    assert obs[info["agent_pos"]][1] == 255 and obs[info["agent_pos"]][2] == 255


def test_navigate_walls_invalid_actions_and_truncation() -> None:
    env = MazeEnv(size=4, mode="navigate", max_steps=5)
    obs, info = env.reset(seed=0)
    start = info["agent_pos"]
    walls = obs[:, :, 0] == 255
    moves = [(0, 1), (1, 0), (0, -1), (-1, 0)]
    blocked = next(a for a, (dr, dc) in enumerate(moves) if walls[start[0] + dr, start[1] + dc])
    obs2, reward, terminated, truncated, info = env.step(blocked)
    assert info["agent_pos"] == start and reward == 0.0 and "action_error" not in info
    np.testing.assert_array_equal(obs, obs2)
    _, _, _, _, info = env.step(7)
    assert "action_error" in info and info["agent_pos"] == start
    _, _, _, _, info = env.step(np.int64(blocked))
    assert "action_error" not in info
    for _ in range(2):
        _, _, terminated, truncated, _ = env.step(blocked)
    assert truncated and not terminated


def test_default_max_steps_and_spaces() -> None:
    env = MazeEnv(size=5, mode="navigate")
    assert env.max_steps == 4 * (2 * 25 - 1)
    assert env.action_space == gym.spaces.Discrete(4)
    answer = MazeEnv(size=5)
    assert isinstance(answer.action_space, gym.spaces.Text) and answer.action_space.max_length >= 8192


def test_render_rgb_and_text() -> None:
    env = gym.make("Maze-v0", mode="navigate", size=5, render_mode="rgb_array", cell_px=4)
    env.reset(seed=0)
    image = env.render()
    assert image.shape == (44, 44, 3) and image.dtype == np.uint8
    maze_lines = env.unwrapped.render_text().splitlines()[-11:]
    assert len(maze_lines) == 11 and sum(line.count("A") for line in maze_lines) == 1


@pytest.mark.parametrize(
    "kwargs",
    [{"size": 1}, {"size": 65}, {"size": 5.0}, {"mode": "walk"}, {"render_mode": "human"}, {"max_steps": 0}],
)
def test_bad_config_raises_named_error(kwargs: dict) -> None:
    with pytest.raises(GridConfigError):
        MazeEnv(**kwargs)


def test_step_before_reset_raises() -> None:
    with pytest.raises(gym.error.ResetNeeded):
        MazeEnv().step("[(1, 1)]")


def test_floor_code_is_zero() -> None:
    # The documented codes are part of the observation contract.
    assert (FLOOR, WALL, START, GOAL, PATH) == (0, 1, 2, 3, 4)
