"""``IPLReward``: MobileIPL's rule-based value of a grounding step (seed 003, section 3.3)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from gui_envs.reward_wrappers.proximity import ProximityRewardWrapper, StepEvidence
from rewards.ipl import leaf_value
from rewards.steps import StepTarget


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


__all__ = ["IPLReward"]
