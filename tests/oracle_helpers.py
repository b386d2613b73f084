"""Test helpers shared by the GUI env and trainer suites: play a task's oracle plan, record oracle demonstrations of
``ClickBox-v0``, score the string-matching baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.ground_baselines import string_match_point
from gui_envs.browser.observation import parse_elements
from gui_envs.schema.actions import Action


def record_box_demos(folder: Path, seeds: range, screenshots: bool = False, **env_kwargs: Any) -> Path:
    """Oracle episodes of ``ClickBox-v0(**env_kwargs)`` at ``seeds``, saved under ``folder`` (each records its seed;
    with ``screenshots``, its screenshot too, for a policy that reads pixels without replaying the env).

    Each is named by its seed: trajectories load in folder-name order, so the samples' order (and a seeded run's
    batches) is the same in every test run, not that of fresh random ids."""
    import gymnasium as gym

    from agents import OracleAgent
    from gui_envs.schema.trajectory import save_trajectories
    from trainers.rollout import RolloutConfig, collect_episodes

    env = gym.make("ClickBox-v0", **env_kwargs)
    cfg = RolloutConfig(max_steps=1, record_screenshots=screenshots, progress=False)
    trajs = [collect_episodes([env], OracleAgent(env), [seed], cfg)[0] for seed in seeds]
    env.close()
    for traj in trajs:
        traj.id = f"seed-{traj.seed:06d}"
    save_trajectories(trajs, folder)
    return folder


def run_oracle(env: Any, task: str, seed: int, max_steps: int = 40) -> tuple[float, dict]:
    """Play the oracle plan of ``task`` on ``seed``; return (total reward, final info).

    Every step must be accepted (no ``action_error``) and the oracle must find its target (no
    ``oracle_error``), so a plan that only succeeds by luck fails here.
    """
    env.reset(options={"task": task, "seed": seed})
    total, info = 0.0, {}
    for _ in range(max_steps):
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        total += reward
        assert info["action_error"] is None, (task, seed, info["action_error"])
        oracle_error = env.privileged()["oracle_error"]
        assert oracle_error is None, (task, seed, oracle_error)
        if terminated or truncated:
            break
    return total, info


def string_matcher_hits(env: Any, seeds: range) -> int:
    """How many grounding episodes the string-matching baseline wins, judged by the env's own reward."""
    hits = 0
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        point = string_match_point(obs["instruction"], parse_elements(obs["elements"]))
        assert point is not None
        _, reward, *_ = env.step(Action.click(*point))
        hits += int(reward)
    return hits
