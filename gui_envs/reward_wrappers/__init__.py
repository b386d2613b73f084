"""Reward wrappers, and the one registry of reward names that envs, scripts and trainers read.

Each wrapper replaces an env's reward with one reward family, reading the target from the env's privileged
channel (:mod:`gui_envs.schema.privileged`), never from what the agent sees; the formulas live in :mod:`rewards`.

* :mod:`~gui_envs.reward_wrappers.proximity`: SSL's sweet-spot tiers (``ssl``) and its baselines (``binary``,
  ``continuous``), seed 000, and GUI-R1's ``0.8 * accuracy + 0.2 * format`` (``binary_format``), seed 001;
* :mod:`~gui_envs.reward_wrappers.ipl`: MobileIPL's rule-based step value (``ipl``), seed 003;
* :mod:`~gui_envs.reward_wrappers.graph`: CORE's strategy-graph process reward (``graph``), seed 002.

>>> import gymnasium as gym
>>> import gui_envs
>>> type(with_reward(gym.make("Sudoku-v0"), "binary")).__name__
'BinaryReward'
"""

from __future__ import annotations

import difflib
from typing import Any

import gymnasium as gym

from gui_envs.reward_wrappers.graph import MissingGraphError, StrategyGraphReward
from gui_envs.reward_wrappers.ipl import IPLReward
from gui_envs.reward_wrappers.proximity import (
    PLAN_ARGS,
    BinaryFormatReward,
    BinaryReward,
    ContinuousReward,
    ProximityRewardWrapper,
    RewardConfigError,
    StepEvidence,
    SweetSpotReward,
    UnknownRewardError,
    action_point,
    as_action,
    plan_prediction,
)

#: Every reward name, for :func:`with_reward` and for the trainers' ``reward`` field. ``"env"`` keeps the env's
#: own reward (no wrapper); ``"sweet_spot"`` is another name for ``"ssl"``; ``"graph"`` needs ``graphs=...``.
REWARDS: dict[str, type[gym.Wrapper[Any, Any, Any, Any]] | None] = {
    "env": None,
    "binary": BinaryReward,
    "binary_format": BinaryFormatReward,
    "ssl": SweetSpotReward,
    "sweet_spot": SweetSpotReward,
    "continuous": ContinuousReward,
    "ipl": IPLReward,
    "graph": StrategyGraphReward,
}


def reward_key(reward: str) -> str:
    """The registry key of ``reward``: a name of :data:`REWARDS`, case and ``-`` / ``_`` insensitive.

    >>> reward_key("Sweet-Spot")
    'sweet_spot'

    Raises:
        UnknownRewardError: an unknown name, with the closest known ones.
    """
    key = reward.strip().lower().replace("-", "_") if isinstance(reward, str) else reward
    if key not in REWARDS:
        close = difflib.get_close_matches(str(reward), list(REWARDS), n=2)
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise UnknownRewardError(f"unknown reward {reward!r}; choose one of {sorted(REWARDS)}.{hint}")
    return key


def with_reward(env: gym.Env[Any, Any], reward: str = "ssl", **kwargs: Any) -> gym.Env[Any, Any]:
    """Wrap ``env`` in the reward family ``reward`` (a name in :data:`REWARDS`); ``kwargs`` go to the wrapper.

    Raises:
        UnknownRewardError: an unknown name, with the closest known names.
        RewardConfigError: options given to ``"env"``, which has none.
    """
    cls = REWARDS[reward_key(reward)]
    if cls is None:
        if kwargs:
            raise RewardConfigError(f"reward='env' keeps the env's reward and takes no options, got {kwargs}")
        return env
    return cls(env, **kwargs)


__all__ = [
    "PLAN_ARGS",
    "REWARDS",
    "BinaryFormatReward",
    "BinaryReward",
    "ContinuousReward",
    "IPLReward",
    "MissingGraphError",
    "ProximityRewardWrapper",
    "RewardConfigError",
    "StepEvidence",
    "StrategyGraphReward",
    "SweetSpotReward",
    "UnknownRewardError",
    "action_point",
    "as_action",
    "plan_prediction",
    "reward_key",
    "with_reward",
]
