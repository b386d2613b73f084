"""Run RandomAgent on a GUI env and collect the action errors that say the action itself was malformed."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agents import RandomAgent
from gui_envs.schema.actions import coerce_action

#: How ``coerce_action`` (the only parse and validation step an env runs) begins its messages; every other
#: ``action_error`` is the env's verdict on a well-formed action ("no text field has focus", ...).
MALFORMED_PREFIXES = ("malformed action", "no action")


def random_walk(env: gym.Env[Any, Any], steps: int, seed: int = 0) -> tuple[list[str], int]:
    """``steps`` RandomAgent steps (resetting when an episode ends); returns the malformed-action errors
    (from the env's info and from re-parsing each action's JSON) and how many episodes succeeded."""
    agent = RandomAgent(env.action_space, seed=seed)
    obs, _ = env.reset(seed=seed)
    malformed: list[str] = []
    successes = 0
    episode = 0
    for _ in range(steps):
        action = agent.act(obs).action
        error = coerce_action(action.to_json())[1]
        if error is not None:
            malformed.append(error)
        obs, _, terminated, truncated, info = env.step(action)
        error = info.get("action_error")
        if error is not None and str(error).startswith(MALFORMED_PREFIXES):
            malformed.append(str(error))
        if terminated or truncated:
            successes += bool(info.get("success"))
            episode += 1
            obs, _ = env.reset(seed=seed + episode)
    return malformed, successes
