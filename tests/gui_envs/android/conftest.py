"""Shared fixtures: one simulated phone (one Chromium) for the whole Android test directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright")

from gui_envs.android.env import GuiAndroidEnv  # noqa: E402
from gui_envs.web.chromium import ChromiumNotFoundError, find_chromium  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"

try:
    find_chromium()
    HAVE_CHROMIUM = True
except ChromiumNotFoundError:  # pragma: no cover - depends on the machine
    HAVE_CHROMIUM = False

needs_chromium = pytest.mark.skipif(not HAVE_CHROMIUM, reason="no Chromium on this machine")


@pytest.fixture(scope="session")
def android_env() -> Iterator[GuiAndroidEnv]:
    if not HAVE_CHROMIUM:
        pytest.skip("no Chromium on this machine")
    env = GuiAndroidEnv()
    yield env
    env.close()


def run_oracle(env: GuiAndroidEnv, task: str, seed: int, max_steps: int = 30) -> tuple[float, dict]:
    """Play the oracle plan of ``task`` on ``seed``; return (total reward, final info)."""
    env.reset(options={"task": task, "seed": seed})
    total, info = 0.0, {}
    for _ in range(max_steps):
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        total += reward
        assert info["action_error"] is None, (task, seed, info["action_error"])
        assert info["oracle_error"] is None, (task, seed, info["oracle_error"])
        if terminated or truncated:
            break
    return total, info
