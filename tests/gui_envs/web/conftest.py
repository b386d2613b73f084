"""Shared fixtures: one Chromium-backed env per module keeps the web tests fast on small machines."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("playwright")

from gui_envs.web.chromium import ChromiumNotFoundError, find_chromium  # noqa: E402
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


def run_oracle(env: GuiWebEnv, task: str, seed: int, max_steps: int = 40) -> tuple[float, dict]:
    """Play the oracle plan of ``task`` on ``seed``; return (total reward, final info)."""
    _, info = env.reset(options={"task": task, "seed": seed})
    total = 0.0
    for _ in range(max_steps):
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        total += reward
        assert info["action_error"] is None, (task, seed, info["action_error"])
        assert info["oracle_error"] is None, (task, seed, info["oracle_error"])
        if terminated or truncated:
            break
    return total, info
