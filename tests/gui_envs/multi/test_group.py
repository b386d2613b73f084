"""GroupEnv: PettingZoo's API test on a grid id and on GuiWebGround-v0, group credit, one shared Chromium."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, parallel_api_test  # noqa: E402

import gui_envs  # noqa: E402,F401
from gui_envs.multi import GroupConfigError, env, parallel_env  # noqa: E402
from gui_envs.schema.privileged import privileged_of  # noqa: E402
from rewards.sca import spatial_credit  # noqa: E402


def test_parallel_api_on_grid_ids() -> None:
    group = parallel_env("Maze-v0", n_agents=3, env_kwargs={"mode": "navigate", "size": 3})
    parallel_api_test(group, num_cycles=300)
    group.close()
    group = parallel_env("ClickGrid-v0", n_agents=4, credit="sca")
    parallel_api_test(group, num_cycles=5)
    group.close()


def test_aec_conversion_passes_api_test() -> None:
    aec = env("Maze-v0", n_agents=2, env_kwargs={"mode": "navigate", "size": 2, "max_steps": 6})
    api_test(aec, num_cycles=20)
    aec.close()


def test_copies_start_identical_and_grpo_credit_by_hand() -> None:
    group = parallel_env("Maze-v0", n_agents=2, env_kwargs={"mode": "navigate", "size": 2, "max_steps": 30})
    obs, _ = group.reset(seed=3)
    np.testing.assert_array_equal(obs["agent_0"], obs["agent_1"])
    oracle = group.envs["agent_0"].unwrapped
    # agent_0 follows the oracle to the goal; agent_1 bumps into walls until truncated.
    while group.agents:
        actions = {}
        if "agent_0" in group.agents:
            actions["agent_0"] = oracle.oracle_action()
        if "agent_1" in group.agents:
            actions["agent_1"] = next(a for a in range(4) if group.envs["agent_1"].unwrapped.oracle_action() != a)
        _, _, _, _, infos = group.step(actions)
    result = group.group_result
    assert result is not None and result["returns"]["agent_0"] > 0 == result["returns"]["agent_1"]
    # GRPO over two returns (r, 0): mean r/2, population std r/2, so credits +1 and -1 (up to eps).
    assert result["credits"]["agent_0"] == pytest.approx(1.0, abs=1e-4)
    assert result["credits"]["agent_1"] == pytest.approx(-1.0, abs=1e-4)
    assert infos[next(iter(infos))]["group_credit"] in (result["credits"]["agent_0"], result["credits"]["agent_1"])
    group.close()


def test_bad_arguments_are_named_errors() -> None:
    with pytest.raises(GroupConfigError, match="n_agents"):
        parallel_env("ClickGrid-v0", n_agents=1)
    with pytest.raises(GroupConfigError, match="credit"):
        parallel_env("ClickGrid-v0", n_agents=2, credit="ppo")


def test_web_ground_group_shares_one_chromium_and_takes_sca_credit() -> None:
    group = parallel_env(
        "GuiWebGround-v0", n_agents=5, credit="sca", env_kwargs={"action_type": "box", "viewport": (640, 400)}
    )
    try:
        parallel_api_test(group, num_cycles=3)
        obs, infos = group.reset(seed=1)
        pids = {e.unwrapped.browser_pid for e in group.envs.values()}
        # The copies share one Chromium; those that only take the group's start (they never act on the page)
        # open no context on it at all (gui_envs.browser.prefetch.ResetPreparer.share_starts).
        assert len(pids - {None}) == 1, "the 5 copies should share one Chromium"
        box = privileged_of(group.envs["agent_0"])["target_bbox"]
        assert all(privileged_of(e)["target_bbox"] == box for e in group.envs.values())
        assert all("target_bbox" not in str(i) for i in infos.values())
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        clicks = [[cx, cy], [box[0] + 1, box[1] + 1], [5.0, 390.0], [630.0, 390.0], [320.0, 395.0]]
        _, rewards, _, _, infos = group.step({a: np.array(c, np.float32) for a, c in zip(group.agents, clicks, strict=True)})
        assert [rewards[a] for a in group.possible_agents] == [1.0, 1.0, 0.0, 0.0, 0.0]
        expected = spatial_credit(np.array(clicks, np.float32).astype(float), [1, 1, 0, 0, 0], [1, 1, 0, 0, 0], box)
        got = [infos[a]["group_credit"] for a in group.possible_agents]
        np.testing.assert_allclose(got, expected.credits)
        assert infos["agent_0"]["group"]["branch"] == expected.branch == "residual"
        assert infos["agent_2"]["clicks"] == [[5.0, 390.0]]
        assert all("target_bbox" not in str(i) for i in infos.values())
    finally:
        group.close()


def test_which_ids_share_a_browser() -> None:
    from gui_envs.multi.group import _accepts_shared_browser

    assert _accepts_shared_browser("GuiWebGround-Box-v0", {})
    assert _accepts_shared_browser("GuiAndroidGround-v0", {})
    assert not _accepts_shared_browser("GuiAndroid-v0", {"backend": "uiautomator2"})
    assert not _accepts_shared_browser("Maze-v0", {})


def test_simulated_phones_share_one_chromium() -> None:
    group = parallel_env("GuiAndroidGround-v0", n_agents=2)
    try:
        obs, _ = group.reset(seed=0)
        pids = {e.unwrapped.backend.browser_pid for e in group.envs.values()}
        assert len(pids) == 1 and None not in pids
        np.testing.assert_array_equal(obs["agent_0"]["screenshot"], obs["agent_1"]["screenshot"])
    finally:
        group.close()


def test_sca_routes_on_the_env_verdict_not_a_shaped_return() -> None:
    # ClickGrid with a proximity reward: a near miss earns a positive return but is no success.
    group = parallel_env("ClickGrid-v0", n_agents=5, credit="sca", reward="continuous")
    group.reset(seed=0)
    x0, y0, x1, y1 = privileged_of(group.envs["agent_0"])["target_bbox"]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    # Every click misses, at different distances: an all-miss group, which SCA routes to Prox.
    clicks = [(x1 + 2, cy), (x1 + 6, cy), (cx, y1 + 3), (cx, y1 + 40), (x1 + 60, y1 + 60)]
    actions = {
        a: f'{{"type": "click", "point": [{x}, {y}]}}' for a, (x, y) in zip(group.possible_agents, clicks, strict=True)
    }
    _, rewards, _, _, infos = group.step(actions)
    assert all(rewards[a] > 0 for a in group.possible_agents)  # near misses are paid by the shaped reward...
    result = infos["agent_0"]["group"]
    expected = spatial_credit(np.array(clicks), [0] * 5, [rewards[a] for a in group.possible_agents],
                              [x0, y0, x1, y1])
    assert result["branch"] == expected.branch == "prox"  # ...but routing reads the verdicts: no hit at all
    np.testing.assert_allclose([result["credits"][a] for a in group.possible_agents], expected.credits)
    group.close()
