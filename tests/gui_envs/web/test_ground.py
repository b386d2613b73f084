"""GuiWebGround-v0: spaces, oracle, binary reward on the bbox, box actions, instructions a string matcher cannot solve."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401
from gui_envs.schema.actions import Action
from gui_envs.schema.privileged import privileged_of
from gui_envs.web.describe import describe_page
from tests.oracle_helpers import string_matcher_hits


def test_ground_text_mode() -> None:
    env = gym.make("GuiWebGround-v0")
    try:
        check_env(env.unwrapped, skip_render_check=True)
        for seed in range(4):
            obs, info = env.reset(seed=seed)
            assert obs["instruction"].startswith("click the ")
            x0, y0, x1, y1 = privileged_of(env)["target_bbox"]
            _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
            assert reward == 1.0 and terminated and info["success"]
            env.reset(seed=seed)
            miss = Action.click(float(x1 + 40) % 1280, float(y1 + 40) % 720)
            _, reward, *_ = env.step(miss)
            assert reward == 0.0
        a, _ = env.reset(seed=9)
        box_a = privileged_of(env)["target_bbox"]
        b, _ = env.reset(seed=9)
        assert box_a == privileged_of(env)["target_bbox"] and a["instruction"] == b["instruction"]
    finally:
        env.close()


def test_ground_box_mode() -> None:
    env = gym.make("GuiWebGround-v0", action_type="box", viewport=(640, 400))
    try:
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=1)
        assert obs.shape == (400, 640, 3) and env.action_space.shape == (2,)
        assert privileged_of(env)["target_bbox"][1] >= 22  # never under the instruction banner
        _, reward, terminated, _, _ = env.step(env.unwrapped.oracle_action())
        assert reward == 1.0 and terminated
        env.reset(seed=1)
        _, reward, _, _, info = env.step(np.array([np.nan, 3.0], np.float32))
        assert reward == 0.0 and info["action_error"]
    finally:
        env.close()


def test_string_matching_does_not_solve_the_default_instructions() -> None:
    """Regression: ``click the "<exact unique text>"`` let a string matcher score 20/20."""
    seeds = range(6)
    env = gym.make("GuiWebGround-v0")
    try:
        assert string_matcher_hits(env, seeds) <= 1
        obs, info = env.reset(seed=2)
        assert '"' + privileged_of(env)["target_element"]["text"] + '"' not in obs["instruction"]
        _, _, _, _, after = env.step(env.unwrapped.oracle_action())
        assert after["url"] == obs["url"]  # the click is judged, not performed (perform_click=False)
    finally:
        env.close()
    env = gym.make("GuiWebGround-v0", describe="text")
    try:
        assert string_matcher_hits(env, seeds) == len(seeds)  # the old exact-text form, kept as an option
    finally:
        env.close()
    with pytest.raises(ValueError, match="describe"):
        gym.make("GuiWebGround-v0", describe="words")


def test_structural_descriptions_pick_out_one_element() -> None:
    els = [
        {"id": "1", "tag": "a", "href": "/cart", "bbox": [0, 0, 40, 20], "text": "Cart"},
        {"id": "2", "tag": "a", "href": "/orders", "bbox": [50, 0, 90, 20], "text": "Orders"},
        {"id": "3", "tag": "button", "bbox": [0, 300, 80, 330], "text": "Add to cart", "name": ""},
    ]
    base = {"group_kind": "", "group_index": 0, "group_count": 0, "group_label": "", "anchors": [],
            "type": "", "value": "", "in_label": False, "wraps": "", "heading": "Blue mug"}
    ctx = {"1": {**base, "area": "nav", "action": ""}, "2": {**base, "area": "nav", "action": ""},
           "3": {**base, "area": "main", "action": "/cart/add", "type": "submit"}}
    out = describe_page(els, ctx, (1280, 720))
    assert "the shopping basket link in the header" in out["1"]
    assert "the second link of the menu at the top of the page" in out["2"]
    assert 'the button that puts "Blue mug" in the shopping basket' in out["3"]
    # both links sit at the top left: a position that fits two candidates is never used
    assert not any("top left" in d for d in out["1"] + out["2"])
