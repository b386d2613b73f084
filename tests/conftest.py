"""Fixtures shared by tests in several folders."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def miniwob_task_envs() -> Any:
    """One env per task, reused across seeds (screenshots off, no page reload: as text agents run)."""
    pytest.importorskip("miniwob")
    pytest.importorskip("playwright")
    import gymnasium as gym

    import gui_envs  # noqa: F401  (registers the envs)
    from gui_envs.browser.chromium import ChromiumNotFoundError, find_chromium

    try:
        find_chromium()
    except ChromiumNotFoundError:  # pragma: no cover - depends on the machine
        pytest.skip("no Chromium on this machine")
    envs: dict[str, Any] = {}
    yield lambda task: envs.setdefault(
        task, gym.make(f"GuiWeb-MiniWoB-{task}-v0", screenshots=False, reload_page=False)
    )
    for env in envs.values():
        env.close()
