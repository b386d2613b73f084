"""Announced resets (gui_envs.schema.upcoming): a named reset that was announced is served from the start prepared in the
background, plays the episode the same reset gives unannounced, and that start is isolated from the agent."""

from __future__ import annotations

import doctest
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401
import gui_envs.schema.upcoming
from gui_envs.browser.site import SiteState
from gui_envs.schema.actions import Action
from gui_envs.schema.errors import ResetOptionsError
from gui_envs.schema.upcoming import Upcoming, UpcomingResets, announce
from gui_envs.tasks.base import UnknownTaskError
from gui_envs.web.env import GuiWebEnv
from gui_envs.web.tasks import SITES
from tests.gui_envs.web.conftest import episode


def settle(u: Any) -> Any:
    """Let every queued background step run (each browser call runs after what was queued before it); returns the
    spare side."""
    spare = u._resets.pair.sides[1]
    for _ in range(50):
        if spare.key is not None and spare.done == 3:
            break
        u._session.call(lambda h: None)
    return spare


# ----- the plan (no browser) ---------------------------------------------------------------------------------
def test_the_plan_is_used_in_order_and_skipped_entries_are_dropped() -> None:
    plan = UpcomingResets()
    plan.replace([1, Upcoming(2, {"task": "a"}), 3, None])
    assert plan.next() == Upcoming(1)
    assert not plan.use(9, None) and len(plan) == 4  # not announced: the plan stays
    assert plan.use(2, {"task": "a"}) and plan.next() == Upcoming(3)  # 1 was skipped
    assert plan.use(3, {}) and plan.next() == Upcoming() and plan.use(None, None) and plan.next() is None
    with pytest.raises(TypeError, match="announced reset"):
        plan.replace(["seven"])  # type: ignore[list-item]


def test_doctests() -> None:
    assert doctest.testmod(gui_envs.schema.upcoming).failed == 0


def test_an_env_without_prepared_resets_ignores_announcements() -> None:
    env = gym.make("ClickGrid-v0")
    assert announce(env, [1, 2]) is False
    env.close()


# ----- GuiWeb-v0 -----------------------------------------------------------------------------------------------
def test_an_announced_reset_is_swapped_in_and_is_the_unannounced_episode(web_env: GuiWebEnv) -> None:
    named = Upcoming(options={"task": "shop.add_to_wishlist", "seed": 3})
    web_env.reset(seed=1)
    assert announce(web_env, [5, named])
    prepared = settle(web_env).observed
    obs, info = web_env.reset(seed=5)
    assert web_env._view is prepared[0]  # swapped in: the reset built and observed nothing
    spare = settle(web_env)  # the next announced one is prepared meanwhile
    assert spare.key == ("shop.add_to_wishlist", 3)
    prepared = spare.observed
    obs2, info2 = web_env.reset(options=dict(named.options or {}))
    assert web_env._view is prepared[0]
    # The same resets, unannounced (built in the foreground), give the same episodes.
    for (seen, seen_info), kwargs in (
        ((obs, info), {"seed": 5}),
        ((obs2, info2), {"options": dict(named.options)}),
    ):
        again, again_info = web_env.reset(**kwargs)
        assert (again_info["task"], again_info["task_seed"]) == (seen_info["task"], seen_info["task_seed"])
        assert (again["instruction"], again["elements"], again["url"]) == (
            seen["instruction"],
            seen["elements"],
            seen["url"],
        )


def test_the_announced_start_is_isolated_from_the_agent(web_env: GuiWebEnv) -> None:
    web_env.reset(options={"task": "shop.add_to_wishlist", "seed": 3})
    announce(
        web_env, [Upcoming(options={"task": "shop.add_to_wishlist", "seed": 3})]
    )  # the very same episode
    spare = settle(web_env)
    web_env._session.call(lambda h: h.page.evaluate("document.cookie = 'agent=1; path=/'"))
    for _ in range(4):  # the oracle adds the product to the wishlist: the played copy of the shop changes
        web_env.step(web_env.oracle_action())
    pristine = SiteState(SITES["shop"])
    pristine.restore(3)
    assert list(web_env.states["shop"].db.iterdump()) != list(pristine.db.iterdump())
    assert list(spare.owner["shop"].db.iterdump()) == list(pristine.db.iterdump())
    history = web_env._session.call(lambda h: spare.cdp.send("Page.getNavigationHistory"))
    assert [e["url"] for e in history["entries"]] == [spare.url]
    prepared = spare.observed
    obs, _ = web_env.reset(options={"task": "shop.add_to_wishlist", "seed": 3})
    assert web_env._view is prepared[0]
    assert web_env._session.call(lambda h: h.page.evaluate("document.cookie")) == ""
    _, reward, *_ = web_env.step(Action.stop())  # nothing of the agent's wishlist came along
    assert reward == 0.0


def test_an_unannounced_reset_is_built_in_the_foreground_and_keeps_the_plan(web_env: GuiWebEnv) -> None:
    web_env.reset(seed=2)
    announce(web_env, [7, 8])
    settle(web_env)
    obs, info = web_env.reset(seed=4)  # an evaluation reset between two announced ones
    assert web_env._resets.upcoming.next() == Upcoming(7)
    spare = settle(web_env)
    assert spare.key == web_env._announced(Upcoming(7))[0]
    prepared = spare.observed
    web_env.reset(seed=7)
    assert web_env._view is prepared[0] and web_env._resets.upcoming.next() == Upcoming(8)
    announce(web_env, [])
    again, again_info = web_env.reset(seed=4)
    assert (again["instruction"], again["url"], again_info["task"]) == (
        obs["instruction"],
        obs["url"],
        info["task"],
    )


def test_announcing_what_a_reset_refuses_raises_at_once(web_env: GuiWebEnv) -> None:
    with pytest.raises(UnknownTaskError):
        web_env.announce([Upcoming(options={"task": "shop.no_such_task", "seed": 1})])
    with pytest.raises(ResetOptionsError):
        web_env.announce([Upcoming(options={"colour": "red"})])


# ----- GuiWebGround-v0 -----------------------------------------------------------------------------------------


def assert_same(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    assert a[:4] == b[:4]
    assert np.abs(a[4].astype(int) - b[4].astype(int)).mean() < 2.0  # the same page, JPEG-captured twice


@pytest.mark.parametrize(
    "upcoming", [Upcoming(seed=21), Upcoming(options={"seed": 4}), Upcoming(22, {"seed": 23})]
)
def test_an_announced_grounding_reset_is_swapped_in_and_is_the_unannounced_episode(
    ground_envs: Any, upcoming: Upcoming
) -> None:
    env, fresh = ground_envs
    u = env.unwrapped
    env.reset(seed=0)
    env.step(u.oracle_action())  # the agent's click is performed on its own page
    announce(env, [upcoming])
    prepared = settle(u).observed
    obs, _ = env.reset(seed=upcoming.seed, options=dict(upcoming.options) if upcoming.options else None)
    assert u._view is prepared[0]  # swapped in: the reset built and observed nothing
    reference, _ = fresh.reset(
        seed=upcoming.seed, options=dict(upcoming.options) if upcoming.options else None
    )
    assert_same(episode(env, obs), episode(fresh, reference))
