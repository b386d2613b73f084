"""Rewards by name for the trainers: the reward wrappers of :mod:`gui_envs.wrappers`, plus MobileIPL's rule.

``env``, ``binary``, ``ssl`` and ``continuous`` are :func:`gui_envs.wrappers.with_reward`'s families;
``ipl`` is :class:`IPLReward`, a wrapper of the same base whose one method calls
:func:`rewards.ipl.leaf_value`. All of them read the target from the env's privileged channel, never from
what the policy sees.
"""

from __future__ import annotations

import difflib
from typing import Any

import gymnasium as gym

from gui_envs.wrappers import REWARDS, ProximityRewardWrapper, StepEvidence, UnknownRewardError, with_reward
from rewards.ipl import leaf_value
from rewards.steps import StepTarget

#: Every reward name a trainer config accepts.
REWARD_NAMES: tuple[str, ...] = ("env", "binary", "ssl", "continuous", "ipl")


class IPLReward(ProximityRewardWrapper):
    """MobileIPL's rule-based value ``v`` of a grounding step (seed 003, section 3.3, Eq. leaf_value).

    GUI steps: :func:`rewards.ipl.leaf_value` of the action against a click on the privileged target box,
    with the screen size taken from the screenshot the action answered (distances in normalised screen
    units). Grids and navigation: the binary verdict ``C``. Unitless, in ``[0, 1]``.

    Args:
        env: the env to wrap.
        **ipl_kwargs: keyword arguments of :func:`rewards.ipl.leaf_value` (``v_type``, ``v_format``, ...).
    """

    def __init__(self, env: gym.Env[Any, Any], **ipl_kwargs: Any) -> None:
        super().__init__(env)
        self.ipl_kwargs = dict(ipl_kwargs)

    def shape(self, ev: StepEvidence) -> float:
        if ev.mode != "gui":
            return ev.weight * ev.correct
        shot = self._last_obs.get("screenshot") if isinstance(self._last_obs, dict) else None
        if shot is None:
            raise ValueError("reward 'ipl' needs a screenshot in the observation to normalise distances")
        size = (float(shot.shape[1]), float(shot.shape[0]))
        return float(leaf_value(ev.prediction, StepTarget("click", box=ev.box), size, **self.ipl_kwargs))


def make_reward_env(env: gym.Env[Any, Any], reward: str, **kwargs: Any) -> gym.Env[Any, Any]:
    """``env`` wrapped in the reward named ``reward`` (one of :data:`REWARD_NAMES`).

    Raises:
        UnknownRewardError: an unknown name, with the closest known ones.
    """
    if reward == "ipl":
        return IPLReward(env, **kwargs)
    return with_reward(env, reward, **kwargs)


def check_reward_name(reward: str) -> None:
    """Raise :class:`UnknownRewardError` unless ``reward`` is a known name."""
    if reward == "ipl" or (isinstance(reward, str) and reward.strip().lower().replace("-", "_") in REWARDS):
        return
    close = difflib.get_close_matches(str(reward), list(REWARD_NAMES), n=2)
    hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
    raise UnknownRewardError(f"unknown reward {reward!r}; choose one of {list(REWARD_NAMES)}.{hint}")
