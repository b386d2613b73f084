"""Maze-v0 navigate mode with Stable-Baselines3: env checker and a tiny PPO run."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401  (registers the ids)

sb3 = pytest.importorskip("stable_baselines3")
from stable_baselines3.common.env_checker import check_env  # noqa: E402


@pytest.mark.filterwarnings("ignore:The minimal resolution for an image:UserWarning")
def test_sb3_check_env_navigate() -> None:
    # The size-18 maze is 37x37, big enough that SB3 does not warn about CnnPolicy input size either.
    for size in (4, 18):
        check_env(gym.make("Maze-v0", mode="navigate", size=size, layout_seed=0).unwrapped, warn=True)


def test_ppo_smoke_run_on_a_fixed_maze() -> None:
    env = gym.make("Maze-v0", mode="navigate", size=3, layout_seed=0)
    model = sb3.PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=256)
    after = list(model.policy.parameters())
    assert any(not np.allclose(a.detach().numpy(), b.numpy()) for a, b in zip(after, before, strict=True))
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(int(action))


def test_cnn_policy_takes_the_observation_unchanged() -> None:
    env = gym.make("Maze-v0", mode="navigate", size=18, layout_seed=0)
    model = sb3.PPO("CnnPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=32)
