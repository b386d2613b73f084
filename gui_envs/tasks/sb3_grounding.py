"""Grounding ids that off-the-shelf RL libraries (Stable-Baselines3 PPO) train on as they are.

``GuiWebGround-Box-v0`` and ``GuiAndroidGround-Box-v0`` are the grounding envs in box mode with the two
changes an image policy with a Gaussian action head needs, made by the registration so the user writes no
wrapper:

* the action is the click point **normalised** to ``[-1, 1]^2`` (``(-1, -1)`` the top-left pixel, ``(1, 1)``
  the bottom-right one): SB3 samples actions around 0 with unit spread, which in raw pixels would pin every
  click to the top-left corner. Anything that is not two finite numbers (a string, ``None``, a wrong shape,
  NaN) reaches the base env as it is and is its ``action_error`` no-op (:class:`NormalisedClick`);
* the observation is the banner screenshot scaled by ``obs_scale`` (default 1/4), so that SB3's ``CnnPolicy``
  stays a few million parameters instead of a hundred.

An optional reward (``reward="binary" | "ssl" | "continuous"``, :func:`gui_envs.reward_wrappers.with_reward`) is
applied *inside* the rescaling, so the reward wrappers see pixel clicks, as they expect.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_envs.tasks.grounding import box_point


class NormalisedClick(gym.ActionWrapper[np.ndarray, Any, Any]):
    """A click in ``[-1, 1]^2`` mapped linearly onto the base env's pixel ``Box`` (gymnasium's ``RescaleAction``
    without its exceptions): an action that is not two finite numbers is handed to the base env unchanged, whose
    step makes it an ``action_error`` no-op, as every guigym step does with a malformed action."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        space = env.action_space
        if not isinstance(space, spaces.Box):
            raise TypeError(f"NormalisedClick needs a Box pixel action space, got {space}")
        self._low, self._high = space.low.astype(np.float64), space.high.astype(np.float64)
        self.action_space = spaces.Box(-1.0, 1.0, space.shape, np.float32)

    def action(self, action: Any) -> Any:
        point, error = box_point(action)
        if error is not None or point is None:
            return action
        unit = (np.asarray(point, np.float64).reshape(self._low.shape) + 1.0) / 2.0
        return (self._low + unit * (self._high - self._low)).astype(np.float32)


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
        reward: ``None`` (the env's binary hit reward) or a :func:`gui_envs.reward_wrappers.with_reward` name.
        obs_scale: image scale factor in ``(0, 1]``.
        reward_kwargs: arguments of the reward wrapper (``alpha``, ``zones``, ...).
        **kwargs: the base env's arguments (``viewport``, ``describe``, ...).
    """
    env = gym.make(base_id, action_type="box", **kwargs)
    if reward is not None:
        from gui_envs.reward_wrappers import with_reward

        env = with_reward(env, reward, **(reward_kwargs or {}))
    env = NormalisedClick(env)
    return DownscaleObservation(env, obs_scale)


__all__ = ["DownscaleObservation", "NormalisedClick", "make_box_ground"]
