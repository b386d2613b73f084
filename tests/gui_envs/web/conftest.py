"""Shared fixtures: one Chromium-backed env per module keeps the web tests fast on small machines."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("playwright")

from gui_envs.browser.chromium import ChromiumNotFoundError, find_chromium  # noqa: E402
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
