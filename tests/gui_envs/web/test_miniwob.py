"""GuiWeb-MiniWoB-*: served through routing, seeded starts, the page's own reward, the lifted timer."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs
from gui_envs.actions import Action
from gui_envs.web.observation import parse_elements

pytest.importorskip("miniwob")


def test_ids_registered() -> None:
    ids = [i for i in gui_envs.guigym_env_ids() if i.startswith("GuiWeb-MiniWoB-")]
    assert len(ids) >= 120 and "GuiWeb-MiniWoB-click-test-v0" in ids


def test_click_test_and_enter_text() -> None:
    env = gym.make("GuiWeb-MiniWoB-click-test-v0")
    try:
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=0)
        assert info["instruction"] == "Click the button." and obs["screenshot"].shape == (210, 160, 3)
        button = next(e for e in parse_elements(obs["elements"]) if e["text"] == "Click Me!")
        env.unwrapped._session.call(lambda h: h.page.wait_for_timeout(200))  # the old 10 s timer is lifted
        assert env.unwrapped._session.call(lambda h: h.page.evaluate("core.EPISODE_MAX_TIME")) > 10**9
        _, reward, terminated, _, info = env.step(Action.click_element(button["id"]))
        assert terminated and reward > 0.99 and info["success"]
        a = parse_elements(env.reset(seed=5)[0]["elements"])
        b = parse_elements(env.reset(seed=5)[0]["elements"])
        assert [e["bbox"] for e in a] == [e["bbox"] for e in b]  # seeded through Math.seedrandom
    finally:
        env.close()
    with gym.make("GuiWeb-MiniWoB-enter-text-v0") as env:
        obs, info = env.reset(seed=1)
        word = info["instruction"].split('"')[1]
        elements = parse_elements(obs["elements"])
        field = next(e for e in elements if e["role"] == "text")
        submit = next(e for e in elements if e["text"] == "Submit")
        env.step(Action.type_text(word, element_id=field["id"]))
        _, reward, terminated, _, info = env.step(Action.click_element(submit["id"]))
        assert terminated and reward > 0.99
        env.reset(seed=2)
        wrong = parse_elements(env.unwrapped._base_obs("")["elements"])
        submit = next(e for e in wrong if e["text"] == "Submit")
        _, reward, terminated, _, info = env.step(Action.click_element(submit["id"]))
        assert terminated and reward == -1.0 and not info["success"]  # MiniWoB's own verdict
