"""``render_mode="human"`` is the browser window itself: headed where a display exists, headless otherwise
(no pygame involved). Nothing here launches a browser: the choice is made at construction."""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_envs  # noqa: F401
from gui_envs.browser.chromium import headless_for


def test_human_render_is_headed_only_where_a_display_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    env = gym.make("GuiWeb-v0", render_mode="human")
    assert env.unwrapped.headless is True and env.unwrapped.render() is None
    env.close()
    monkeypatch.setenv("DISPLAY", ":0")
    env = gym.make("GuiWebGround-v0", render_mode="human")
    assert env.unwrapped.headless is False
    env.close()
    # Without "human" the caller's headless flag stands, display or not.
    assert headless_for("rgb_array", True) is True and headless_for(None, False) is False


def test_unknown_render_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="'human'"):
        gym.make("GuiWeb-v0", render_mode="ansi").unwrapped  # noqa: B018
