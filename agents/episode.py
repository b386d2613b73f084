"""Run one agent for one episode in one env and record it as a Trajectory.

The agent is handed the observations and :func:`~gui_envs.privileged.public_info` of the reset info, nothing
else. The env's privileged facts (target boxes, reference answers) are read here for the record only
(:attr:`~gui_envs.trajectory.Step.privileged`), after the agent has chosen its action.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import Agent
from gui_envs.actions import Action
from gui_envs.privileged import privileged_of, public_info
from gui_envs.trajectory import Step, Trajectory


def run_episode(
    env: gym.Env[Any, Any],
    agent: Agent,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int = 1000,
    record_screenshots: bool = False,
    record_privileged: bool = True,
) -> Trajectory:
    """Play one episode and return its trajectory.

    Args:
        env: any gymnasium env; guigym envs put ``success`` (and optionally ``score``) in the final ``info``.
        agent: anything with ``act``; ``reset(instruction, info)`` is called when present.
        seed: passed to ``env.reset``.
        options: passed to ``env.reset``.
        max_steps: a safety cap (steps) for envs without their own time limit.
        record_screenshots: keep ``observation["screenshot"]`` (GUI envs) or ``env.render()`` (envs with
            ``render_mode="rgb_array"``) in each step, so that saving writes PNGs.
        record_privileged: keep the env's privileged facts about each step's state in
            :attr:`~gui_envs.trajectory.Step.privileged` (for scoring and trainers; on web and phone envs this
            resolves the oracle's next target once per step).
    """
    obs, info = env.reset(seed=seed, options=options)
    info = public_info(info)
    instruction = _instruction(obs, info)
    if hasattr(agent, "reset"):
        agent.reset(instruction, dict(info))
    traj = Trajectory(
        instruction=instruction,
        env_id=env.spec.id if env.spec is not None else None,
        task=info.get("task"),
        seed=seed,
        metadata={"agent": getattr(agent, "name", type(agent).__name__)},
    )
    terminated = truncated = False
    while not (terminated or truncated) and len(traj.steps) < max_steps:
        screenshot = _screenshot(env, obs) if record_screenshots else None
        out = agent.act(obs)
        privileged = privileged_of(env) if record_privileged else {}
        obs, reward, terminated, truncated, info = env.step(out.action)
        traj.steps.append(
            Step(
                action=out.action if isinstance(out.action, Action) else None,
                reward=float(reward),
                output_text=out.text if out.text is not None else _describe(out.action),
                screenshot=screenshot,
                terminated=bool(terminated),
                truncated=bool(truncated),
                info=info,
                privileged=privileged,
                action_error=info.get("action_error") or info.get("parse_error") or out.parse_error,
                token_ids=out.token_ids,
                logprobs=out.logprobs,
            )
        )
    traj.success = bool(info.get("success", False))
    traj.score = float(info.get("score", 1.0 if traj.success else 0.0))
    return traj


def _instruction(obs: Any, info: dict[str, Any]) -> str:
    if isinstance(obs, dict) and isinstance(obs.get("instruction"), str):
        return obs["instruction"]
    return str(info.get("instruction", ""))


def _screenshot(env: gym.Env[Any, Any], obs: Any) -> np.ndarray | None:
    if isinstance(obs, dict) and isinstance(obs.get("screenshot"), np.ndarray):
        return obs["screenshot"]
    if env.render_mode == "rgb_array":
        frame = env.render()
        return frame if isinstance(frame, np.ndarray) else None
    return None


def _describe(action: Any) -> str | None:
    """Non-Action actions (grid answers, discrete moves) are kept as text so the record is complete."""
    if action is None or isinstance(action, Action):
        return None
    if isinstance(action, np.ndarray):
        return str(action.tolist())
    return str(action)
