"""Shared fixtures: one simulated phone (one Chromium) for the whole Android test directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright")

from gui_envs.android.env import GuiAndroidEnv  # noqa: E402
from gui_envs.browser.chromium import ChromiumNotFoundError, find_chromium  # noqa: E402

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
