"""Shared fixtures: one Chromium-backed env per module keeps the web tests fast on small machines."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("playwright")

from gui_envs.browser.chromium import ChromiumNotFoundError, find_chromium  # noqa: E402
from gui_envs.schema.privileged import privileged_of  # noqa: E402
from gui_envs.web.env import GuiWebEnv  # noqa: E402

try:
    find_chromium()
except ChromiumNotFoundError:  # pragma: no cover - depends on the machine
    pytest.skip("no Chromium on this machine", allow_module_level=True)


@pytest.fixture(scope="module")
def web_env() -> Iterator[GuiWebEnv]:
    env = GuiWebEnv()
    yield env
    env.close()


#: GuiWebGround-v0 in box mode on a small viewport: the prepared- and announced-reset tests' set-up.
BOX = {"action_type": "box", "viewport": (640, 400)}


@pytest.fixture(scope="module")
def ground_envs() -> Iterator[tuple[gym.Env[Any, Any], gym.Env[Any, Any]]]:
    """The GuiWebGround-v0 env under test (clicks performed) and a reference env that only ever gets named resets."""
    env = gym.make("GuiWebGround-v0", perform_click=True, **BOX)
    fresh = gym.make("GuiWebGround-v0", **BOX)
    yield env, fresh
    env.close()
    fresh.close()


def episode(env: gym.Env[Any, Any], obs: np.ndarray) -> tuple[Any, ...]:
    """What decides a grounding episode: page URL, target id, instruction, privileged target box, and the frame."""
    u = env.unwrapped
    return u._view.url, u.target["id"], u.instruction, privileged_of(env)["target_bbox"], obs
