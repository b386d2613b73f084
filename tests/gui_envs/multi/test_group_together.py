"""A group's members step together (GroupEnv.step_members over a shared browser's lanes): each member plays the
episode it plays stepped alone, the browser works on several members' pages at once, and a lane's calls keep their
order."""

from __future__ import annotations

import threading
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("playwright")

import gui_envs  # noqa: E402,F401
from gui_envs.browser.session import SessionHandles  # noqa: E402
from gui_envs.browser.shared import SharedBrowser  # noqa: E402
from gui_envs.multi import GroupEnv  # noqa: E402
from gui_envs.schema.actions import Action  # noqa: E402
from trainers.rollout import GroupWorkers  # noqa: E402

WEB = {"sites": ("shop",), "tasks": ["shop.add_to_wishlist"], "max_steps": 4}
#: Each member's scripted actions, one per step: the members' pages part ways from the first step.
SCRIPTS = (
    [Action.click(640, 360), Action.click(120, 30), Action.scroll("down"), Action.click(400, 250)],
    [Action(type="wait", duration=0.1), Action.click(900, 420), Action.click(300, 600), Action.press("tab")],
    [
        Action.scroll("down"),
        Action.click(640, 100),
        Action(type="wait", duration=0.1),
        Action.click(200, 200),
    ],
)


def same(a: Any, b: Any) -> bool:
    """Equal observations / infos: arrays by value, containers item by item."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return (
            isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(same(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and bool(np.array_equal(a, b))
    return bool(a == b)


def play_alone(seed: int, script: list[Action]) -> list[Any]:
    """A lone env's reset and steps under ``script``, until its episode ends."""
    env = gym.make("GuiWeb-v0", **WEB)
    try:
        out: list[Any] = [env.reset(seed=seed)[0]]
        for action in script:
            obs, reward, terminated, truncated, info = env.step(action)
            out.append((obs, reward, terminated, truncated, info))
            if terminated or truncated:
                break
        return out
    finally:
        env.close()


def test_members_stepping_together_play_the_episodes_they_play_alone() -> None:
    group = GroupEnv("GuiWeb-v0", n_agents=3, env_kwargs=WEB)
    try:
        assert group.step_together
        agents = group.possible_agents
        seen: dict[str, list[Any]] = {a: [] for a in agents}
        for seed in (5, 6):
            for agent in agents:
                seen[agent] = []
            # reset_members: the members as GRPO's GroupWorkers drive them (the env's own obs and info).
            for agent, (obs, _) in group.reset_members(seed).items():
                seen[agent].append(obs)
            live = list(agents)
            for t in range(WEB["max_steps"]):
                results = group.step_members({a: SCRIPTS[agents.index(a)][t] for a in live})
                for agent, (obs, reward, terminated, truncated, info) in results.items():
                    seen[agent].append((obs, reward, terminated, truncated, info))
                live = [a for a in live if not any(results[a][2:4])]
            for i, agent in enumerate(agents):
                assert same(seen[agent], play_alone(seed, SCRIPTS[i])), (seed, agent)
        # The members' calls did overlap in the browser (else this test shows nothing about stepping together).
        assert group.shared_browser.session()._worker.most_at_once >= 2
    finally:
        group.close()


def test_group_workers_step_a_groups_members_together_as_separate_envs_would() -> None:
    workers = GroupWorkers("GuiWeb-v0", num_envs=4, group_size=2, env_kwargs=WEB)
    try:
        firsts = workers.reset([7, 7, 8, 8], 4)
        results = workers.step({i: SCRIPTS[i % 2][0] for i in range(4)})
        for i, seed in enumerate([7, 7, 8, 8]):
            alone = play_alone(seed, SCRIPTS[i % 2][:1])
            assert same(firsts[i][0], alone[0])
            assert same(results[i], alone[1]), i
    finally:
        workers.close()


def test_a_lanes_calls_keep_their_order_and_other_lanes_run_while_it_waits() -> None:
    shared = SharedBrowser()
    try:
        a, b = shared.context(), shared.context()
        order: list[str] = []
        started, flag = threading.Event(), threading.Event()

        def waits_for_b(h: SessionHandles) -> bool:
            order.append("a1")
            started.set()
            for _ in range(500):  # 5 s at most: a browser wait each time, where other lanes may run
                if flag.is_set():
                    return True
                h.page.wait_for_timeout(10)
            return False

        def then(h: SessionHandles) -> None:
            order.append("a2")

        answer: list[bool] = []
        caller = threading.Thread(target=lambda: answer.append(a.call(waits_for_b)))
        caller.start()
        assert started.wait(30)
        a.submit(then)  # queued on lane a behind the waiting call
        b.call(lambda h: (order.append("b"), flag.set()))  # lane b runs while lane a waits
        caller.join(30)
        a.call(lambda h: None)
        assert answer == [True]
        assert order == ["a1", "b", "a2"]
    finally:
        shared.close()
