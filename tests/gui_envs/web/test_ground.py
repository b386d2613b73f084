"""GuiWebGround-v0: spaces, oracle, binary reward on the bbox, box actions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401
from gui_envs.actions import Action
from gui_envs.privileged import privileged_of


def test_ground_text_mode() -> None:
    env = gym.make("GuiWebGround-v0")
    try:
        check_env(env.unwrapped, skip_render_check=True)
        for seed in range(4):
            obs, info = env.reset(seed=seed)
            assert obs["instruction"].startswith("click the ")
            x0, y0, x1, y1 = privileged_of(env)["target_bbox"]
            _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
            assert reward == 1.0 and terminated and info["success"]
            env.reset(seed=seed)
            miss = Action.click(float(x1 + 40) % 1280, float(y1 + 40) % 720)
            _, reward, *_ = env.step(miss)
            assert reward == 0.0
        a, _ = env.reset(seed=9)
        box_a = privileged_of(env)["target_bbox"]
        b, _ = env.reset(seed=9)
        assert box_a == privileged_of(env)["target_bbox"] and a["instruction"] == b["instruction"]
    finally:
        env.close()


def test_ground_box_mode() -> None:
    env = gym.make("GuiWebGround-v0", action_type="box", viewport=(640, 400))
    try:
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=1)
        assert obs.shape == (400, 640, 3) and env.action_space.shape == (2,)
        assert privileged_of(env)["target_bbox"][1] >= 22  # never under the instruction banner
        _, reward, terminated, _, _ = env.step(env.unwrapped.oracle_action())
        assert reward == 1.0 and terminated
        env.reset(seed=1)
        _, reward, _, _, info = env.step(np.array([np.nan, 3.0], np.float32))
        assert reward == 0.0 and info["action_error"]
    finally:
        env.close()
