"""guigym rewards as TRL reward functions: ``reward(completions, environments, **kwargs) -> list[float]``.

TRL calls every reward function with the batch's ``completions`` and, with ``environment_factory``, the rollout
slots' ``environments`` (:class:`trainers.trl.env.GuiGymEnvironment`). Each function here reads the episode its
environment recorded; none re-judges text, so the reward is the env's (or its wrapper's) judgement from the
privileged channel, as in guigym's own trainer:

* ``env``: the env's verdict, 1.0 for a success (``info["success"]``: app state, the stop answer), else 0;
* ``binary``: SSL's verifier ``C`` of the episode (SSL App. B.4; ``info["binary_reward"]`` at its last step);
  0 for an episode that has not ended;
* ``ssl``: the sweet-spot reward ``R = C + lambda * S_hat`` (SSL section 3.3), summed over the episode's steps;
* ``graph``: CORE's strategy-graph progress in [0, 1] (seed 002, section 3.2) at the episode's last step.

TRL logs each under ``rewards/<name>/mean`` (the function's ``__name__``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trainers.trl.env import Episode, episodes_of

RewardFunc = Callable[..., list[float]]


def env(completions: list[Any], environments: list[Any], **_: Any) -> list[float]:
    """The env's verdict per rollout: 1.0 for a success, else 0.0."""
    return [float(ep.success) for ep in episodes_of(environments, completions)]


def binary(completions: list[Any], environments: list[Any], **_: Any) -> list[float]:
    """SSL's binary verifier ``C`` per rollout (0 until the episode ends)."""
    return [_binary(ep) for ep in episodes_of(environments, completions)]


def _binary(ep: Episode) -> float:
    if not ep.done:
        return 0.0
    c = ep.last_info.get("binary_reward")
    return float(c) if c is not None else float(ep.success)


def ssl(completions: list[Any], environments: list[Any], **_: Any) -> list[float]:
    """The SSL reward per rollout, summed over its steps."""
    return [ep.returns.get("ssl", 0.0) for ep in episodes_of(environments, completions)]


def graph(completions: list[Any], environments: list[Any], **_: Any) -> list[float]:
    """The strategy-graph progress per rollout, in [0, 1]."""
    return [float(ep.last_info.get("graph_progress", 0.0)) for ep in episodes_of(environments, completions)]


#: The reward functions by config name.
REWARD_FUNCS: dict[str, RewardFunc] = {"env": env, "binary": binary, "ssl": ssl, "graph": graph}


def reward_funcs(names: list[str]) -> list[RewardFunc]:
    """The reward functions named ``names`` (:data:`trainers.trl.config.TRL_REWARDS`), in order."""
    return [REWARD_FUNCS[n] for n in names]
