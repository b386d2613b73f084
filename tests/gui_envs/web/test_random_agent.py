"""RandomAgent on GuiWeb-v0 and a MiniWoB id: 200 valid actions, none malformed (the random-click baseline)."""

from __future__ import annotations

import gymnasium as gym
import pytest

from gui_envs.schema.action_space import ActionSpace
from gui_envs.web.env import GuiWebEnv
from tests.random_helpers import random_walk


def test_random_agent_on_guiweb_sends_no_malformed_action(web_env: GuiWebEnv) -> None:
    assert repr(web_env.action_space) == "ActionSpace(1280x720)"
    malformed, _ = random_walk(web_env, 200)
    assert malformed == []


def test_random_agent_on_miniwob_sends_no_malformed_action() -> None:
    pytest.importorskip("miniwob")
    with gym.make("GuiWeb-MiniWoB-click-button-v0") as env:
        assert env.action_space == ActionSpace((500, 400))
        malformed, _ = random_walk(env, 200)
    assert malformed == []


def test_miniwob_step_after_leaving_the_task_page_is_not_an_error() -> None:
    pytest.importorskip("miniwob")
    from gui_envs.schema.actions import Action

    with gym.make("GuiWeb-MiniWoB-click-button-v0") as env:
        env.reset(seed=0)
        # Before the fix the page's globals were read unguarded and step raised a ReferenceError.
        _, reward, terminated, _, info = env.step(Action.navigate("back"))
        assert reward == 0.0 and not terminated and not info["success"]
