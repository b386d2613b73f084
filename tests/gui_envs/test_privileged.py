"""The privileged channel: a cheating agent searches everything it is handed for the referee's secrets.

For each family of ids the harness plays the oracle (so the episode walks through states with different
targets and answers), hands a cheating agent every observation and every ``info`` (more than
``run_episode`` hands any agent), records the env's privileged facts at every state, and then searches what
the agent was given for any of those facts. Page content (the screenshot, the element list and its
renderings) legitimately lists every element's box and text, so it is not searched for boxes and answers;
the instruction and every other observation field and every info value are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401  (registers the ids)
from agents.base import AgentOutput, BaseAgent
from agents.episode import run_episode
from gui_envs.schema.privileged import PRIVILEGED_KEYS, privileged_of, public_info
from trainers.rollout import RolloutConfig, collect_episodes

#: Observation fields that render the page itself (every element's box and text is there by design).
PAGE_CONTENT = {"screenshot", "elements", "som", "axtree"}
#: Info fields that describe the agent's own action (its parse, the box of the element it chose).
OWN_ACTION = {"action_bbox", "prediction", "submission_grid"}


def _leaves(value: Any, skip: set[str] = frozenset()) -> Iterator[Any]:  # type: ignore[assignment]
    """Every value inside ``value``: dict values (minus ``skip`` keys), list items, and the containers."""
    if isinstance(value, dict):
        yield value
        for k, v in value.items():
            if k not in skip:
                yield from _leaves(v)
    elif isinstance(value, list | tuple):
        yield value
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _as_list(value: Any) -> Any:
    return value.tolist() if isinstance(value, np.ndarray) else value


def find_leaks(given: list[Any], secrets: list[dict[str, Any]]) -> list[str]:
    """The privileged facts of ``secrets`` that appear anywhere in ``given`` (observations and infos)."""
    leaves = [leaf for item in given for leaf in _leaves(item, PAGE_CONTENT | OWN_ACTION)]
    arrays = [leaf for leaf in leaves if isinstance(leaf, np.ndarray)]
    strings = [leaf for leaf in leaves if isinstance(leaf, str)]
    seqs = [list(leaf) for leaf in leaves if isinstance(leaf, list | tuple)]
    leaks = []
    for facts in secrets:
        for key, value in facts.items():
            if value is None or isinstance(value, bool | int | float):
                continue  # scalars (distances, progress) are guarded by the key check below
            if isinstance(value, str):
                hit = value in strings or (len(value) >= 4 and any(value in s for s in strings))
            elif isinstance(value, np.ndarray):
                hit = any(a.shape == value.shape and np.array_equal(a, value) for a in arrays) or any(
                    s == value.tolist() for s in seqs
                )
            elif isinstance(value, dict):
                text = json.dumps(value, sort_keys=True, default=str)
                hit = any(isinstance(leaf, dict) and json.dumps(leaf, sort_keys=True, default=str) == text for leaf in leaves)
            else:
                target = [_as_list(v) for v in value]
                hit = target in seqs or any(np.array_equal(a, np.asarray(target)) for a in arrays)
            if hit:
                leaks.append(f"{key}={value!r}")
    for item in given:
        if isinstance(item, dict) and "_info_keys" in item:
            leaks += [f"info key {k!r}" for k in item["_info_keys"] if k in PRIVILEGED_KEYS]
    return leaks


class CheatingAgent(BaseAgent):
    """Keeps everything it is handed; moves by the oracle so that the episode visits many states."""

    name = "cheater"

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        self.env = env
        self.given: list[Any] = []

    def reset(self, instruction: str = "", info: dict[str, Any] | None = None) -> None:
        self.given += [instruction, {"_info_keys": sorted(info or {}), **(info or {})}]

    def act(self, observation: Any) -> AgentOutput:
        self.given.append(observation)
        return AgentOutput(action=self.env.unwrapped.oracle_action())


def play_and_search(env: gym.Env[Any, Any], options_list: list[dict[str, Any] | None], max_steps: int = 20) -> None:
    """Hand the cheater every obs and info of several oracle episodes; assert it finds no secret."""
    agent = CheatingAgent(env)
    secrets: list[dict[str, Any]] = []
    for k, options in enumerate(options_list):
        obs, info = env.reset(seed=k, options=options)
        agent.reset(info.get("instruction", ""), info)
        secrets.append(privileged_of(env))
        for _ in range(max_steps):
            action = agent.act(obs).action
            obs, _, terminated, truncated, info = env.step(action)
            agent.given.append({"_info_keys": sorted(info), **info})
            secrets.append(privileged_of(env))
            if terminated or truncated:
                break
        agent.given.append(obs)
    assert any(s for s in secrets), "the env exposes no privileged facts: nothing was searched"
    assert find_leaks(agent.given, secrets) == []


def test_the_search_finds_planted_leaks() -> None:
    """The detector itself: each kind of secret is found when it is planted in what the agent is given."""
    secrets = [
        {"reference_answer": "$12.50", "target_bbox": [1, 2, 30, 40], "solution_grid": np.eye(3, dtype=np.uint8)},
        {"target_action": {"type": "click", "point": [3.0, 4.0]}, "distance_to_goal": 7},
    ]
    clean = [{"instruction": "what is the price?", "screenshot": np.zeros((2, 2, 3)), "elements": "[1, 2, 30, 40]"}]
    assert find_leaks(clean, secrets) == []
    assert find_leaks([{"note": "the answer is $12.50"}], secrets) == ["reference_answer='$12.50'"]
    assert find_leaks([{"box": (1, 2, 30, 40)}], secrets) == ["target_bbox=[1, 2, 30, 40]"]
    assert find_leaks([{"grid": np.eye(3, dtype=np.uint8)}], secrets)[0].startswith("solution_grid")
    assert find_leaks([{"t": {"type": "click", "point": [3.0, 4.0]}}], secrets)[0].startswith("target_action")
    assert find_leaks([{"_info_keys": ["progress"], "progress": 0.5}], secrets) == ["info key 'progress'"]


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("Maze-v0", {"size": 4}),
        ("Maze-v0", {"size": 4, "mode": "navigate"}),
        ("Sudoku-v0", {}),
        ("Arc-v0", {}),
        ("GuiOffline-v0", {"dataset": "gui_odyssey"}),
        ("GuiOffline-v0", {"dataset": "screenspot"}),
    ],
)
def test_no_secret_reaches_the_agent_offline_families(env_id: str, kwargs: dict[str, Any]) -> None:
    env = gym.make(env_id, **kwargs)
    play_and_search(env, [None, None, None], max_steps=60)


def test_no_secret_reaches_the_agent_on_the_web() -> None:
    tasks = ["shop.price", "classifieds.condition_of", "forum.author_of", "shop.add_to_wishlist"]
    env = gym.make("GuiWeb-v0", screenshots=False)
    try:
        play_and_search(env, [{"task": t, "seed": 3} for t in tasks])
    finally:
        env.close()


def test_no_secret_reaches_the_agent_on_the_phone() -> None:
    tasks = ["contacts.phone_number", "expenses.open_account", "contacts.edit_phone", "recipes.add_favourite"]
    env = gym.make("GuiAndroid-v0", screenshots=False)
    try:
        play_and_search(env, [{"task": t, "seed": 2} for t in tasks])
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["GuiWebGround-v0", "GuiAndroidGround-v0", "GuiWeb-MiniWoB-click-test-v0"])
def test_no_secret_reaches_the_agent_grounding_and_miniwob(env_id: str) -> None:
    env = gym.make(env_id)
    try:
        if env_id.startswith("GuiWeb-MiniWoB"):
            # MiniWoB's reward is computed by the page itself: the env holds no answer to leak.
            _, info = env.reset(seed=0)
            assert not (set(info) | set(env.step({"type": "wait"})[-1])) & PRIVILEGED_KEYS
            return
        play_and_search(env, [None, None, None])
    finally:
        env.close()


def test_run_episode_and_collectors_hand_agents_public_info_only() -> None:
    """The episode runners strip privileged names even from an env that wrongly puts them in info."""

    class LeakyEnv(gym.Wrapper):
        def reset(self, **kwargs: Any) -> tuple[Any, dict]:
            obs, info = self.env.reset(**kwargs)
            return obs, {**info, **privileged_of(self.env)}

    env = LeakyEnv(gym.make("Sudoku-v0"))
    agent = CheatingAgent(env)
    traj = run_episode(env, agent, seed=0)
    assert find_leaks(agent.given, [s.privileged for s in traj.steps]) == []
    assert "solution_grid" in traj.steps[0].privileged  # recorded for the trainer, not handed over
    agent2 = CheatingAgent(env)
    (traj2,) = collect_episodes([env], agent2, [0], RolloutConfig(progress=False))
    assert "solution_grid" in traj2.steps[0].privileged
    assert find_leaks(agent2.given, [s.privileged for s in traj2.steps]) == []


def test_lm_prompt_context_never_holds_privileged_keys() -> None:
    from agents.lm_agent import LMAgent

    agent = LMAgent.__new__(LMAgent)  # the reset path alone; no model needed
    agent.reset("find the price", {"task": "shop.price", "reference_answer": "$3", "target_bbox": [1, 2, 3, 4]})
    assert agent.info == {"task": "shop.price"}
    assert public_info({"a": {"solution_grid": 1, "b": 2}}) == {"a": {"b": 2}}
