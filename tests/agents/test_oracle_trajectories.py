"""Oracle episodes on the GUI envs are expert demonstrations: they succeed and load back identically."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401
from agents import OracleAgent
from agents.episode import run_episode
from gui_envs.schema.trajectory import Trajectory, load_trajectories

GUI_ENVS = [
    pytest.param("GuiWeb-v0", id="web"),
    pytest.param("GuiAndroid-v0", id="android"),
]


@pytest.mark.parametrize("env_id", GUI_ENVS)
def test_oracle_trajectories_load_back_identically(env_id: str, tmp_path: Path) -> None:
    with gym.make(env_id) as env:
        agent = OracleAgent(env)
        originals = [run_episode(env, agent, seed=seed, record_screenshots=True) for seed in (0, 1)]
    for traj in originals:
        assert traj.success is True, (traj.task, traj.seed)
        traj.save(tmp_path)
    loaded = {t.id: t for t in load_trajectories(tmp_path, load_images=True)}
    assert set(loaded) == {t.id for t in originals}
    for original in originals:
        copy = loaded[original.id]
        _assert_same(original, copy)


def _assert_same(a: Trajectory, b: Trajectory) -> None:
    header_a, header_b = a.header(), b.header()
    assert header_a == header_b
    assert len(a.steps) == len(b.steps)
    for step_a, step_b in zip(a.steps, b.steps, strict=True):
        record_a, record_b = step_a.to_record(), step_b.to_record()
        record_a.pop("image_path")
        record_b.pop("image_path")
        assert record_a == record_b
        assert step_a.action == step_b.action
        np.testing.assert_array_equal(step_a.screenshot, step_b.screenshot)
