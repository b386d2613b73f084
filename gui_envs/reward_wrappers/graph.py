"""``StrategyGraphReward``: CORE's dense process reward from a strategy graph (seed 002, section 3.2).

After every step the episode so far is judged by the task's strategy graph
(:class:`~gui_envs.verifiers.graph.StrategyGraph`): the reward is the largest fraction of any path whose label
functions have passed *in temporal order* so far, a number in [0, 1] that never decreases within an episode and
reaches 1 when some path passes fully. The label functions run in the sandbox
(:mod:`gui_envs.verifiers.sandbox`) on a view built from the env's privileged channel (``verifier_record``:
the element list and app-state facts before each step, and after the step just taken), so the agent sees
nothing new.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym

from gui_envs.schema.privileged import privileged_of
from gui_envs.verifiers.api import view_from_records
from gui_envs.verifiers.graph import StrategyGraph


class MissingGraphError(KeyError):
    """No strategy graph was given for the task the env drew; pass ``graphs={task name: graph}``."""


def _as_graph(value: Any) -> StrategyGraph:
    if isinstance(value, StrategyGraph):
        return value
    if isinstance(value, Mapping):
        return StrategyGraph.from_json(dict(value))
    return StrategyGraph.from_json(json.loads(Path(value).read_text()))


class StrategyGraphReward(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Replace the env's reward by the strategy-graph process reward (see the module docstring).

    Reward per step: ``mode="progress"`` (default) the best in-order path fraction so far, in [0, 1];
    ``mode="increment"`` its increase at this step (an episode's rewards then sum to the final fraction).
    ``info`` gains ``graph_progress`` (the fraction) and ``graph_label`` (``fully``/``partially``/``failed``).

    Args:
        env: a guigym web or phone env (it must answer ``privileged()`` with a ``verifier_record``).
        graphs: one :class:`StrategyGraph` for every task, or a mapping task name -> graph (a graph, its JSON
            dict, or a JSON file path).
        mode: ``"progress"`` or ``"increment"``.
        timeout_s: per label function, seconds.
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        graphs: StrategyGraph | Mapping[str, Any] | None = None,
        mode: str = "progress",
        timeout_s: float = 2.0,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, graphs=graphs, mode=mode, timeout_s=timeout_s)
        super().__init__(env)
        if graphs is None:
            raise MissingGraphError("StrategyGraphReward needs graphs=StrategyGraph or {task name: graph}")
        if mode not in ("progress", "increment"):
            raise ValueError(f"mode must be 'progress' or 'increment', got {mode!r}")
        self.single = _as_graph(graphs) if isinstance(graphs, StrategyGraph) else None
        self.graphs = {} if self.single is not None else {str(k): _as_graph(v) for k, v in dict(graphs).items()}
        self.mode, self.timeout_s = mode, float(timeout_s)
        self._graph: StrategyGraph | None = None
        self._records: list[dict[str, Any]] = []
        self._actions: list[dict[str, Any] | None] = []
        self._instruction, self._best = "", 0.0

    def _record(self) -> dict[str, Any]:
        return dict(privileged_of(self.env).get("verifier_record") or {})

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        task = info.get("task")
        if self.single is not None:
            self._graph = self.single
        elif task in self.graphs:
            self._graph = self.graphs[task]
        else:
            raise MissingGraphError(f"no strategy graph for task {task!r}; known: {sorted(self.graphs)[:10]}")
        self._instruction = str(info.get("instruction", ""))
        self._records, self._actions, self._best = [self._record()], [], 0.0
        info["graph_progress"], info["graph_label"] = 0.0, "failed"
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        from gui_envs.schema.actions import coerce_action

        parsed = coerce_action(action)[0]
        obs, _, terminated, truncated, info = self.env.step(action)
        self._actions.append(parsed.to_dict() if parsed is not None else None)
        self._records.append(self._record())
        assert self._graph is not None, "call reset() first"
        view = view_from_records(self._instruction, self._actions, self._records)
        result = self._graph.classify(view, self.timeout_s)
        previous, self._best = self._best, max(self._best, result.best_fraction)
        info["graph_progress"], info["graph_label"] = self._best, result.label
        reward = self._best if self.mode == "progress" else self._best - previous
        return obs, float(reward), terminated, truncated, info
