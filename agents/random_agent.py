"""A uniformly random agent over the env's action space: the floor every learner must beat."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agents.base import AgentOutput, BaseAgent
from gui_envs.schema.action_space import ActionSpace, visible_words


class RandomAgent(BaseAgent):
    """Samples the env's action space with its own seeded generator.

    On GUI envs (an :class:`~gui_envs.schema.action_space.ActionSpace`) a sample is a valid random action inside the
    screenshot: mostly clicks at random pixels, sometimes typing a word read from the current observation's
    elements, scrolling, going back or stopping (weights in :mod:`gui_envs.schema.action_space`). For text action
    spaces (the grid answer modes) a sample is random characters, which the env scores as a malformed or wrong
    answer: that is the honest floor for an agent that knows nothing.
    """

    name = "random"

    def __init__(self, action_space: gym.Space[Any], seed: int | None = None) -> None:
        self.action_space = action_space
        self.action_space.seed(seed)

    def act(self, observation: Any) -> AgentOutput:
        if isinstance(self.action_space, ActionSpace):
            self.action_space.set_words(visible_words(observation))
        return AgentOutput(action=self.action_space.sample())
