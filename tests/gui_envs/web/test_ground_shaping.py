"""SSL shaping on the real grounding env: the wrapper reads the env's target bbox (SSL App. B.1)."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

import gui_envs  # noqa: F401
from gui_envs.reward_wrappers import SweetSpotReward
from gui_envs.schema.actions import Action
from gui_envs.schema.privileged import privileged_of


def test_sweet_spot_reward_on_gui_web_ground() -> None:
    with SweetSpotReward(gym.make("GuiWebGround-v0"), alpha=0.2, zones=4) as env:
        _, info = env.reset(seed=0)
        x1, y1, x2, y2 = privileged_of(env)["target_bbox"]
        # The box centre has phi = 1, which lies in zone (tau_1, tau_0] = (e^-1/2, 1]; the paper's
        # discretisation (App. B.1) pays the zone's lower boundary: R = 1 + 0.2 * e^-0.5 = 1.12131.
        _, reward, terminated, _, info = env.step(Action.click((x1 + x2) / 2, (y1 + y2) / 2))
        assert terminated
        assert info["binary_reward"] == 1.0 and info["proximity"] == pytest.approx(1.0)
        assert reward == pytest.approx(1 + 0.2 * math.exp(-0.5))
        # A click outside the box earns nothing: phi is 0 outside (correctness first).
        _, info = env.reset(seed=0)
        x1, y1, x2, y2 = privileged_of(env)["target_bbox"]
        _, reward, _, _, info = env.step(Action.click(x2 + 40, y2 + 40))
        assert reward == 0.0 and info["binary_reward"] == 0.0 and info["proximity"] == 0.0
