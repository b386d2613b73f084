"""A uniformly random agent over the env's action space: the floor every learner must beat."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agents.base import AgentOutput, BaseAgent


class RandomAgent(BaseAgent):
    """Samples the env's action space with its own seeded generator.

    For text action spaces (the grid answer modes) a sample is random characters, which the env scores as
    a malformed or wrong answer: that is the honest floor for an agent that knows nothing.
    """

    name = "random"

    def __init__(self, action_space: gym.Space[Any], seed: int | None = None) -> None:
        self.action_space = action_space
        self.action_space.seed(seed)

    def act(self, observation: Any) -> AgentOutput:
        return AgentOutput(action=self.action_space.sample())
