"""Grounding ids that off-the-shelf RL libraries (Stable-Baselines3 PPO) train on as they are.

``GuiWebGround-Box-v0`` and ``GuiAndroidGround-Box-v0`` are the grounding envs in box mode with the two
changes an image policy with a Gaussian action head needs, made by the registration so the user writes no
wrapper:

* the action is the click point **normalised** to ``[-1, 1]^2`` (``(-1, -1)`` the top-left pixel, ``(1, 1)``
  the bottom-right one): SB3 samples actions around 0 with unit spread, which in raw pixels would pin every
  click to the top-left corner;
* the observation is the banner screenshot scaled by ``obs_scale`` (default 1/4), so that SB3's ``CnnPolicy``
  stays a few million parameters instead of a hundred.

An optional reward (``reward="binary" | "ssl" | "continuous"``, :func:`gui_envs.wrappers.with_reward`) is
applied *inside* the rescaling, so the reward wrappers see pixel clicks, as they expect.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class DownscaleObservation(gym.ObservationWrapper[np.ndarray, Any, np.ndarray]):
    """An ``(H, W, 3)`` uint8 image observation resized to ``(round(H * scale), round(W * scale), 3)`` pixels."""

    def __init__(self, env: gym.Env[np.ndarray, Any], scale: float) -> None:
        super().__init__(env)
        if not 0 < scale <= 1:
            raise ValueError(f"obs_scale must be in (0, 1], got {scale!r}")
        height, width = env.observation_space.shape[:2]  # type: ignore[index]
        self.size = (max(1, round(width * scale)), max(1, round(height * scale)))
        self.observation_space = spaces.Box(0, 255, (self.size[1], self.size[0], 3), np.uint8)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        from PIL import Image

        return np.asarray(Image.fromarray(observation).resize(self.size, Image.BILINEAR), dtype=np.uint8)


def make_box_ground(
    base_id: str, reward: str | None = None, obs_scale: float = 0.25, reward_kwargs: dict[str, Any] | None = None,
    **kwargs: Any,
) -> gym.Env[np.ndarray, np.ndarray]:
    """``base_id`` (a grounding id) in box mode, reward-wrapped, with normalised actions and smaller images.

    Args:
        base_id: ``GuiWebGround-v0`` or ``GuiAndroidGround-v0``.
        reward: ``None`` (the env's binary hit reward) or a :func:`gui_envs.wrappers.with_reward` name.
        obs_scale: image scale factor in ``(0, 1]``.
        reward_kwargs: arguments of the reward wrapper (``alpha``, ``zones``, ...).
        **kwargs: the base env's arguments (``viewport``, ``describe``, ...).
    """
    env = gym.make(base_id, action_type="box", **kwargs)
    if reward is not None:
        from gui_envs.wrappers import with_reward

        env = with_reward(env, reward, **(reward_kwargs or {}))
    env = gym.wrappers.RescaleAction(env, np.float32(-1.0), np.float32(1.0))
    return DownscaleObservation(env, obs_scale)


__all__ = ["DownscaleObservation", "make_box_ground"]
