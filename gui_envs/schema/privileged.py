"""The privileged channel: what only the referee's side may read.

An environment is a referee. The reference answer of an information task, the box of the element the oracle
would act on next, a puzzle's solution, the oracle's plan and any measure of distance to the goal would let an
agent score without doing the task, and a trainer would learn to read them. So they never travel in the
observation or in the ``info`` that ``reset`` and ``step`` return. They travel in one place only:

* every guigym env answers :meth:`PrivilegedEnv.privileged` on its unwrapped instance: a fresh ``dict`` of the
  facts about the **current state** (after ``reset``, or after the last ``step``), computed when asked, so an
  env pays for the oracle only when someone reads it;
* :func:`privileged_of` reads it through any stack of wrappers; :func:`privileged_of_vector` reads it from
  each sub-env of a gymnasium vector env.

Who reads it: the reward wrappers (:mod:`gui_envs.reward_wrappers`), the rollout collectors of :mod:`trainers`
(they store it in :attr:`gui_envs.schema.trajectory.Step.privileged`, which no agent is handed), the oracle agent and
``guigym eval``'s scoring. Who never gets it: agents. :func:`agents.episode.run_episode` and the collectors
pass agents the observation and :func:`public_info` of the info, which also strips the names below, should a
third-party env put them in ``info``.

Keys used by the bundled envs (each env documents its own):

``reference_answer``
    str or ``None``: the answer an information task accepts (web, phone).
``target_bbox``
    ``[x0, y0, x1, y1]`` screenshot pixels, or ``None``: the element the oracle acts on next (web, phone,
    grounding envs, offline datasets).
``target_element``
    the target's record (grounding envs).
``target_action``
    the recorded action of the current step, as a dict (offline datasets).
``solution_grid`` / ``solution_path``
    the reference grid (Maze, Sudoku, ARC) and the maze's shortest path.
``distance_to_goal`` / ``progress``
    Maze navigate: moves left along the maze, and ``1 - distance / initial distance``.
``click_offset``
    offline datasets: the last prediction minus the target centre, pixels.
``oracle_error``
    why the oracle plan could not be resolved on this page, if it could not.
``verifier_record``
    web and phone: ``{"facts", "elements", "location"}``, the app-state facts, element list and URL or app
    that CORE's label functions judge a recorded episode by (:mod:`gui_envs.verifiers.facts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

#: Names that only the privileged channel may carry; :func:`public_info` drops them from any ``info``.
PRIVILEGED_KEYS: frozenset[str] = frozenset(
    {
        "reference_answer",
        "target_bbox",
        "target_element",
        "target_action",
        "target",
        "bbox",
        "solution",
        "solution_grid",
        "solution_path",
        "distance_to_goal",
        "progress",
        "click_offset",
        "oracle_plan",
        "oracle_action",
        "oracle_error",
    }
)


@runtime_checkable
class PrivilegedEnv(Protocol):
    """An env with a privileged channel (every bundled guigym env)."""

    def privileged(self) -> dict[str, Any]:
        """The privileged facts about the current state (see the module docstring); a fresh dict."""
        ...


def privileged_of(env: gym.Env[Any, Any]) -> dict[str, Any]:
    """The privileged facts of ``env``'s current state, through any wrappers; ``{}`` for envs without any."""
    unwrapped = getattr(env, "unwrapped", env)
    read = getattr(unwrapped, "privileged", None)
    return dict(read()) if callable(read) else {}


def privileged_of_vector(env: gym.vector.VectorEnv) -> list[dict[str, Any]]:
    """One :func:`privileged_of` per sub-env of a gymnasium vector env (sync or async), in slot order."""
    try:
        values = env.call("privileged")
    except AttributeError:
        return [{} for _ in range(env.num_envs)]
    return [dict(v) if isinstance(v, Mapping) else {} for v in values]


def public_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``info`` without any :data:`PRIVILEGED_KEYS` (top level and nested dicts)."""
    return {
        k: public_info(v) if isinstance(v, Mapping) else v
        for k, v in info.items()
        if k not in PRIVILEGED_KEYS
    }
