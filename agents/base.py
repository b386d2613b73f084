"""The Agent protocol: what guigym needs from any policy.

A user's agent is any object with ``act(observation) -> AgentOutput`` (``reset`` is optional). Agents do not
raise on their own mistakes: a model that writes garbage returns an output whose ``action`` is ``None`` and
whose ``parse_error`` says why, and the env scores it as malformed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class AgentOutput:
    """What an agent produced for one observation.

    Attributes:
        action: what to pass to ``env.step``: an ``Action`` for GUI envs, or an element of the env's action
            space (an int for Maze navigate mode, a string or grid for answer modes). ``None`` when the
            model output did not parse.
        text: the raw model output, if the agent is a language model.
        token_ids: generated token ids, for trainers.
        logprobs: log-probabilities of ``token_ids`` under the sampling policy.
        parse_error: why ``text`` did not parse, if it did not.
        extra: anything else worth logging.
    """

    action: Any
    text: str | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    parse_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act``. ``reset`` and ``act_batch`` have defaults in :class:`BaseAgent`."""

    def act(self, observation: Any) -> AgentOutput: ...


class BaseAgent:
    """Convenience base class: no-op ``reset`` and a sequential ``act_batch``."""

    name: str = "agent"

    def reset(self, instruction: str = "", info: dict[str, Any] | None = None) -> None:
        """Start a new episode. ``info`` is the public part of the env's reset info (task name, ...; never the
        privileged facts of :mod:`gui_envs.schema.privileged`)."""

    def act(self, observation: Any) -> AgentOutput:
        raise NotImplementedError

    def act_batch(self, observations: Sequence[Any]) -> list[AgentOutput]:
        """One output per observation; model-backed agents override this with one batched call."""
        return [self.act(obs) for obs in observations]
