"""One prepared start per group (prefetch.ResetPreparer.share_starts through GroupEnv): the members play the episode
a lone env plays, observed once; the agents' actions stay in their own member; a killed browser is one group's."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pettingzoo")

import gui_envs  # noqa: E402,F401
from gui_envs.browser.session import BrowserCrashedError  # noqa: E402
from gui_envs.browser.site import SiteState  # noqa: E402
from gui_envs.multi import GroupEnv  # noqa: E402
from gui_envs.schema.actions import Action  # noqa: E402
from gui_envs.schema.privileged import privileged_of  # noqa: E402
from gui_envs.schema.upcoming import Upcoming, announce  # noqa: E402
from gui_envs.web.tasks import SITES  # noqa: E402

WEB = {"sites": ("shop",), "tasks": ["shop.add_to_wishlist"]}
BOX = {"action_type": "box", "viewport": (640, 400)}
#: An action that changes nothing: wait (the shared schema's ``wait``).
WAIT = Action(type="wait")


def count_observations(group: GroupEnv) -> dict[str, list[int]]:
    """Wrap every member's page observer so that each call is counted, per member."""
    calls: dict[str, list[int]] = {}
    for agent, env in group.envs.items():
        pair = env.unwrapped._resets.pair
        calls[agent] = []

        def counted(
            page: Any, observe: Callable[[Any], Any] = pair.observe, seen: list[int] = calls[agent]
        ) -> Any:
            seen.append(1)
            return observe(page)

        pair.observe = counted
    return calls


def test_web_members_share_one_observed_start_and_act_apart() -> None:
    group = GroupEnv("GuiWeb-v0", n_agents=3, env_kwargs=WEB)
    lone = gym.make("GuiWeb-v0", **WEB)
    try:
        calls = count_observations(group)
        obs, infos = group.reset(seed=4)
        assert (
            calls["agent_0"] and not calls["agent_1"] and not calls["agent_2"]
        )  # observed by the first only
        reference, _ = lone.reset(seed=4)
        for o in obs.values():
            assert (o["instruction"], o["elements"], o["url"]) == (
                reference["instruction"],
                reference["elements"],
                reference["url"],
            )
            assert np.abs(o["screenshot"].astype(int) - reference["screenshot"].astype(int)).mean() < 2.0
        first, second, third = (e.unwrapped for e in group.envs.values())
        assert second._view is not first._view  # a copy each: nothing mutable is shared
        assert not np.shares_memory(second._frame, first._frame)
        # The first agent solves the task on its own copy; it reaches neither the others' sites nor their pages.
        first._session.call(lambda h: h.page.evaluate("document.cookie = 'agent=0; path=/'"))
        rewards = {}
        while "agent_0" in group.agents:
            actions = {a: WAIT for a in group.agents} | {"agent_0": first.oracle_action()}
            _, step_rewards, *_ = group.step(actions)
            rewards.update(step_rewards)
        assert rewards["agent_0"] == 1.0
        pristine = SiteState(SITES["shop"])
        pristine.restore(infos["agent_0"]["task_seed"])
        for member in (second, third):
            assert list(member.states["shop"].db.iterdump()) == list(pristine.db.iterdump())
            assert member._session.call(lambda h: h.page.evaluate("document.cookie")) == ""
        # The second agent's page is a page of its own at the start: the oracle solves the task there too.
        while "agent_1" in group.agents:
            actions = {a: WAIT for a in group.agents} | {"agent_1": second.oracle_action()}
            _, step_rewards, *_ = group.step(actions)
            rewards.update(step_rewards)
        assert rewards["agent_1"] == 1.0
    finally:
        group.close()
        lone.close()


def test_an_announced_group_reset_is_prepared_by_the_first_member_only() -> None:
    group = GroupEnv("GuiWebGround-v0", n_agents=3, env_kwargs=BOX)
    lone = gym.make("GuiWebGround-v0", **BOX)
    try:
        calls = count_observations(group)
        group.reset(seed=0)
        announce(group, [21, 22])
        first = group.envs["agent_0"].unwrapped
        key = first._announced(Upcoming(21))[0]
        for _ in range(50):  # let the background preparation run
            if first._resets.pair.sides[1].key == key and first._resets.pair.sides[1].done == 3:
                break
            first._session.call(lambda h: None)
        prepared = first._resets.pair.sides[1].observed
        assert prepared is not None
        obs, _ = group.reset(seed=21)
        assert first._view is prepared[0]  # swapped in, not observed again
        assert not calls["agent_1"] and not calls["agent_2"]
        reference, _ = lone.reset(seed=21)
        box = privileged_of(lone)["target_bbox"]
        for agent, o in obs.items():
            assert np.abs(o.astype(int) - reference.astype(int)).mean() < 2.0
            assert privileged_of(group.envs[agent])["target_bbox"] == box
    finally:
        group.close()
        lone.close()


def test_a_killed_browser_fails_its_own_group_only_and_reset_recovers() -> None:
    a = GroupEnv("GuiWeb-v0", n_agents=2, env_kwargs=WEB)
    b = GroupEnv("GuiWeb-v0", n_agents=2, env_kwargs=WEB)
    try:
        before, _ = a.reset(seed=2)
        b.reset(seed=3)
        pid_a, pid_b = a.shared_browser.browser_pid, b.shared_browser.browser_pid
        assert pid_a != pid_b
        os.kill(pid_a, signal.SIGKILL)
        with pytest.raises(BrowserCrashedError):
            for _ in range(3):  # the disconnect is noticed by the first call after the kill
                a.step(dict.fromkeys(a.agents, WAIT))
        _, rewards, *_ = b.step(dict.fromkeys(b.agents, WAIT))  # the other group carries on
        assert b.shared_browser.browser_pid == pid_b and set(rewards) == set(b.possible_agents)
        after, _ = a.reset(seed=2)
        assert a.shared_browser.browser_pid not in (None, pid_a, pid_b)
        assert {e.unwrapped.browser_pid for e in a.envs.values()} == {a.shared_browser.browser_pid}
        for agent in a.possible_agents:
            assert (after[agent]["instruction"], after[agent]["url"]) == (
                before[agent]["instruction"],
                before[agent]["url"],
            )
        b.step(dict.fromkeys(b.agents, WAIT))
        assert b.shared_browser.browser_pid == pid_b
    finally:
        a.close()
        b.close()


def test_starts_are_shared_only_between_copies_made_alike() -> None:
    made = [gym.make("GuiWebGround-v0", **kwargs) for kwargs in (BOX, BOX, {**BOX, "viewport": (800, 600)})]
    source, alike, other = (env.unwrapped for env in made)
    source._resets.pair.played = [((7, 0), "observed")]
    alike.share_starts(source)
    other.share_starts(source)  # another page size observes another screenshot
    assert alike._resets.pair.offered == {(7, 0): "observed"} and other._resets.pair.offered == {}
    for env in made:
        env.close()
