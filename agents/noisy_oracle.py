"""A scripted noisy expert: the oracle with random detours, for seeding CORE's self-training in tests.

A tiny model cannot solve GUI tasks, so CORE's expansion and extrapolation would never fire on its samples.
This agent follows the oracle plan (:class:`~agents.oracle.OracleAgent`) but, with probability ``p`` per
chance, takes one of three detours:

* **another route**: where the plan types several words (a search), it types one of those words instead and
  the plan carries on from the step after (a different search that usually still finds the item). The
  trajectory then succeeds without the expert's key step "type the full name": a new path for the strategy
  graph (seed 002, section 3.2).
* **a wrong item**: where the plan clicks an element, it clicks another one of the same role (the next product
  in a list) and the plan carries on from the step after, so the episode does the task to the wrong item: an
  env failure with a real state change, material for failure-driven exploration (section 3.3.2).
* **a wrong turn**: it clicks a random clickable element instead of the plan's click. The episode may still
  succeed (the plan resumes on the new screen) or fail.

Like the oracle it reads the env's plan (``env.unwrapped.oracle``), so it is a test fixture, not a policy.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import AgentOutput, BaseAgent
from agents.oracle import OracleAgent
from agents.prompts.observation import element_list
from gui_envs.schema.actions import Action


class NoisyOracleAgent(BaseAgent):
    """The oracle with random detours (see the module docstring).

    Args:
        env: the env whose plan to follow (one slot: the agent keeps episode state).
        p: probability of a detour at each chance (a multi-word ``type`` or a click).
        seed: seeds the detour draws.
    """

    name = "noisy_oracle"

    def __init__(self, env: gym.Env[Any, Any], p: float = 0.5, seed: int | None = None) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p}")
        self.env, self.p = env, float(p)
        self.oracle = OracleAgent(env)
        self.rng = np.random.default_rng(seed)
        self._skip_from: int | None = None

    def reset(self, instruction: str = "", info: dict[str, Any] | None = None) -> None:
        self._skip_from = None

    def act(self, observation: Any) -> AgentOutput:
        plan = getattr(self.env.unwrapped, "oracle", None)
        if plan is not None and self._skip_from is not None:
            # The variant search replaced the plan's type step: move the plan past it, as if typed.
            if plan.index == self._skip_from:
                plan.index, plan._pending = self._skip_from + 1, None
            self._skip_from = None
        action = self.oracle.act(observation).action
        if plan is None or not isinstance(action, Action) or self.rng.random() >= self.p:
            return AgentOutput(action=action)
        words = [w for w in (action.text or "").split() if len(w) > 2] if action.type == "type" else []
        if len(words) >= 2:
            self._skip_from = plan.index
            variant = words[int(self.rng.integers(len(words)))]
            return AgentOutput(action=Action.from_dict({**action.to_dict(), "text": variant}), extra={"detour": "route"})
        if action.type == "click":
            elements = [e for e in element_list(observation.get("elements")) if e.get("clickable") and e.get("bbox")]
            target = next((e for e in elements if action.element_id is not None and str(e.get("id")) == str(action.element_id)), None)
            siblings = [e for e in elements if target is not None and e is not target and e.get("text")
                        and e.get("role") == target.get("role") and e.get("text") != target.get("text")]  # fmt: skip
            if siblings and self.rng.random() < 0.5:
                # Another item of the same kind (the next product in the list); the plan carries on from there.
                self._skip_from = plan.index
                el = siblings[int(self.rng.integers(len(siblings)))]
                return AgentOutput(action=Action.click_element(str(el["id"])), extra={"detour": "wrong item"})
            if elements:
                el = elements[int(self.rng.integers(len(elements)))]
                x0, y0, x1, y1 = el["bbox"]
                return AgentOutput(action=Action.click((x0 + x1) / 2, (y0 + y1) / 2), extra={"detour": "wrong turn"})
        return AgentOutput(action=action)
