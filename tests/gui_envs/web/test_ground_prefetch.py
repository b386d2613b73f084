"""GuiWebGround's prepared resets (gui_envs.browser.prefetch): the same episodes as a reset built in the foreground,
isolated from the episode being played, and recovered after a crash."""

from __future__ import annotations

import copy
import functools
import os
import signal
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401
from gui_envs.browser.session import BrowserCrashedError
from gui_envs.browser.site import SiteState
from gui_envs.web.ground import GuiWebGroundEnv, build_page
from gui_envs.web.tasks import SITES
from tests.gui_envs.web.conftest import episode

#: GuiWebGround-Box-v0's page size; seed 1 draws three pages before one has a describable target there.


def named(fresh: gym.Env[Any, Any], seed: int) -> tuple[Any, ...]:
    obs, _ = fresh.reset(options={"seed": seed})
    return episode(fresh, obs)


def assert_same(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    assert a[:4] == b[:4]
    assert np.abs(a[4].astype(int) - b[4].astype(int)).mean() < 2.0  # the same page, JPEG-captured twice


def wait_prepared(u: GuiWebGroundEnv, seed: int) -> Any:
    """The spare side once page seed ``seed`` is prepared on it (a side used before says ``done == 3`` until its
    next preparation starts, hence the key)."""
    spare = u._resets.pair.sides[1]
    for _ in range(50):  # each call lets one background step run
        if spare.key == (seed, 0) and spare.done == 3:
            break
        u._session.call(lambda h: None)
    assert spare.key == (seed, 0) and spare.done == 3
    return spare


def guess(u: GuiWebGroundEnv) -> int:
    return int(copy.deepcopy(u.np_random).integers(2**31 - 1))


def test_an_unseeded_reset_swaps_in_the_episode_a_named_seed_gives(ground_envs: Any) -> None:
    env, fresh = ground_envs
    u = env.unwrapped
    env.reset(seed=5)
    seed = guess(u)
    spare = wait_prepared(u, seed)
    obs, _ = env.reset()
    assert u._resets.pair.active is spare  # swapped in, not rebuilt
    assert_same(episode(env, obs), named(fresh, seed))


def test_a_prepared_page_without_target_falls_back_to_the_same_draws(ground_envs: Any) -> None:
    env, fresh = ground_envs
    u = env.unwrapped
    env.reset(seed=0)
    # Prepare page seed 1 (its first page has no describable target in box mode) as if it were the guess.
    u._resets.prepare_next((1, 0), functools.partial(build_page, 1, 0))
    wait_prepared(u, 1)
    obs, _ = env.reset(options={"seed": 1})
    prefetched = episode(env, obs)
    _, first_url = build_page(1, 0, {host: SiteState(site) for host, site in SITES.items()})
    assert prefetched[0] != first_url  # the retry loop ran
    assert_same(prefetched, named(fresh, 1))


def test_the_prepared_side_is_isolated_from_the_agent(ground_envs: Any) -> None:
    env, fresh = ground_envs
    u = env.unwrapped
    env.reset()  # a caller that named its last two episodes gets no preparation (see the next test)
    env.reset(options={"seed": 0})  # its target, "Add to favourites", changes the classifieds' state
    seed = guess(u)
    spare = wait_prepared(u, seed)
    history = u._session.call(lambda h: spare.cdp.send("Page.getNavigationHistory"))
    assert [e["url"] for e in history["entries"]] == [spare.url]  # "back" leads nowhere
    u._session.call(lambda h: h.page.evaluate("document.cookie = 'agent=1; path=/'"))
    played = "\n".join(u.states["classifieds"].db.iterdump())
    _, reward, *_ = env.step(u.oracle_action())
    assert reward == 1.0 and "\n".join(u.states["classifieds"].db.iterdump()) != played  # the click did change it
    pristine = SiteState(SITES["classifieds"])
    pristine.restore(seed)
    assert list(spare.owner["classifieds"].db.iterdump()) == list(pristine.db.iterdump())
    obs, _ = env.reset()
    assert u._session.call(lambda h: h.page.evaluate("document.cookie")) == ""
    assert_same(episode(env, obs), named(fresh, seed))


def test_a_killed_browser_loses_the_prepared_side_and_reset_recovers(ground_envs: Any) -> None:
    env, fresh = ground_envs
    u = env.unwrapped
    env.reset(seed=3)
    seed = guess(u)
    wait_prepared(u, seed)
    pid = u.browser_pid
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(BrowserCrashedError, match="reset"):
        for _ in range(3):  # the disconnect is noticed by the first call after the kill
            env.step(u.oracle_action())
    obs, _ = env.reset()
    assert u.browser_pid not in (None, pid)
    assert_same(episode(env, obs), named(fresh, seed))


def test_a_caller_that_names_every_episode_gets_no_background_work(ground_envs: Any) -> None:
    env, _ = ground_envs
    u = env.unwrapped
    env.reset()
    env.reset(seed=11)  # the first named reset still prepares (Gymnasium's reset(seed=s), then reset())
    u._session.call(lambda h: None)  # the preparation's first step is queued ahead of this call
    assert u._resets.pair.sides[1].key == (guess(u), 0)
    generation = u._resets.pair._generation
    env.reset(seed=12)
    env.reset(options={"seed": 13})
    u._session.call(lambda h: None)  # anything queued would have run by now
    # Each reset bumped the generation once (the swap); no preparation was started after them.
    assert u._resets.pair._generation == generation + 2 and u._resets.pair.sides[1].key is None
