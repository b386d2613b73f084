"""Browser session faults and where the env can run: killed browser, asyncio loops, threads, vector envs."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading

import gymnasium as gym
import numpy as np
import psutil
import pytest

import gui_envs  # noqa: F401
from gui_envs.browser.session import BrowserCrashedError, BrowserSession
from gui_envs.schema.actions import Action
from gui_envs.web.env import GuiWebEnv
from tests.process_helpers import alive as _alive


def test_killed_browser_raises_then_reset_recovers() -> None:
    env = GuiWebEnv(sites=("shop",))
    try:
        env.reset(options={"task": "shop.open_wishlist", "seed": 0})
        old_tree = env._session.process_tree
        pid = env.browser_pid
        assert pid is not None and psutil.Process(pid).name().startswith("chrom")
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrowserCrashedError, match="reset"):
            for _ in range(3):  # the disconnect is noticed by the first call after the kill
                env.step(Action.scroll("down"))
        obs, info = env.reset(options={"task": "shop.open_wishlist", "seed": 0})
        assert env.browser_pid != pid and obs["screenshot"].std() > 5
        _, reward, terminated, _, _ = env.step(env.oracle_action())
        assert terminated and reward == 1.0
        assert _alive(old_tree) == []  # nothing of the killed browser's tree is left
        new_tree = env._session.process_tree
    finally:
        env.close()
    assert _alive(new_tree) == []


def test_close_and_gc_leave_no_process() -> None:
    env = GuiWebEnv(sites=("shop",))
    env.reset(options={"task": "shop.open_wishlist", "seed": 0})
    tree = env._session.process_tree
    assert len(_alive(tree)) >= 2
    env.close()
    assert _alive(tree) == []
    session = BrowserSession()
    tree = session.process_tree
    del session
    gc.collect()
    assert _alive(tree) == []


def test_context_manager() -> None:
    with gym.make("GuiWeb-Shop-v0") as env:
        env.reset(seed=0)
        tree = env.unwrapped._session.process_tree
    assert _alive(tree) == []


def test_inside_running_event_loop() -> None:
    async def main() -> float:
        env = gym.make("GuiWeb-Shop-v0")
        try:
            env.reset(options={"task": "shop.open_wishlist", "seed": 1})
            _, reward, *_ = env.step(env.unwrapped.oracle_action())
            return float(reward)
        finally:
            env.close()

    assert asyncio.run(main()) == 1.0


def test_from_another_thread() -> None:
    env = GuiWebEnv(sites=("shop",))
    env.reset(options={"task": "shop.search", "seed": 2})  # made and reset here...
    results: list[float] = []

    def worker() -> None:  # ...stepped there
        for _ in range(5):
            _, reward, terminated, _, _ = env.step(env.oracle_action())
            results.append(reward)
            if terminated:
                break

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(120)
    env.close()
    assert sum(results) == 1.0


def test_async_vector_env_steps() -> None:
    envs = gym.vector.AsyncVectorEnv(
        [lambda: gym.make("GuiWeb-Shop-v0", viewport=(640, 480)) for _ in range(4)]
    )
    try:
        obs, infos = envs.reset(seed=0, options={"task": "shop.open_wishlist", "seed": 3})
        assert obs["screenshot"].shape == (4, 480, 640, 3)
        actions = [Action.navigate("url", url="http://shop.guigym.test/wishlist").to_json()] * 4
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        assert np.allclose(rewards, 1.0) and terminated.all()
    finally:
        envs.close()
