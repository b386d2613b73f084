"""The oracle agent: follows the env's own solution. Its episodes are the expert demonstrations."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agents.base import AgentOutput, BaseAgent
from agents.episode import run_episode
from gui_envs.schema.trajectory import Trajectory


class OracleUnavailableError(TypeError):
    """The env has no ``oracle_action()``, so there is nothing for the oracle to follow."""


class OracleAgent(BaseAgent):
    """Asks ``env.unwrapped.oracle_action()`` for the next action of the task's oracle plan.

    Every guigym env with a known solution implements ``oracle_action``: grid envs return the full answer
    (answer modes) or the next shortest-path move (navigate mode); GUI envs return the next Action of the
    task's oracle plan.
    """

    name = "oracle"

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        self.env = env
        if not hasattr(env.unwrapped, "oracle_action"):
            raise OracleUnavailableError(
                f"{type(env.unwrapped).__name__} has no oracle_action(); use --agent random or your own agent"
            )

    def act(self, observation: Any) -> AgentOutput:
        return AgentOutput(action=self.env.unwrapped.oracle_action())


def record_oracle(env: gym.Env[Any, Any], task: str, seed: int, max_steps: int = 40) -> Trajectory:
    """Play ``task``'s oracle plan on task seed ``seed`` in ``env`` (a web or phone env) and return the episode.

    These are the expert demonstrations that CORE's label functions (seed 002, sec. 3.1) are synthesised from.
    """
    return run_episode(env, OracleAgent(env), options={"task": task, "seed": seed}, max_steps=max_steps)
