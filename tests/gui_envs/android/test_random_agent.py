"""RandomAgent on GuiAndroid-v0: 200 valid actions, none malformed (the random-tap baseline)."""

from __future__ import annotations

from gui_envs.android.env import GuiAndroidEnv
from tests.random_helpers import random_walk


def test_random_agent_on_guiandroid_sends_no_malformed_action(android_env: GuiAndroidEnv) -> None:
    assert repr(android_env.action_space) == "ActionSpace(360x800)"
    malformed, _ = random_walk(android_env, 200)
    assert malformed == []
