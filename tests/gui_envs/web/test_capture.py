"""observation.screenshot captures with one CDP call the bytes Playwright's page.screenshot gives with its settings."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")

import gymnasium as gym  # noqa: E402

import gui_envs  # noqa: E402,F401
from gui_envs.browser import observation  # noqa: E402
from gui_envs.browser.session import SessionHandles  # noqa: E402
from gui_envs.schema.actions import Action  # noqa: E402


def both(h: SessionHandles) -> list[tuple[bytes, bytes]]:
    """(ours, Playwright's) for JPEG at the env's quality and for PNG, on the page as it is."""
    page = h.page
    return [
        (
            observation.screenshot(page),
            page.screenshot(type="jpeg", quality=90, animations="allow", caret="initial"),
        ),
        (
            observation.screenshot(page, "png"),
            page.screenshot(type="png", animations="allow", caret="initial"),
        ),
    ]


@pytest.mark.parametrize("viewport", [(1280, 720), (640, 400)])
def test_capture_gives_playwrights_bytes_at_the_start_and_after_a_scroll(viewport: tuple[int, int]) -> None:
    env = gym.make("GuiWeb-v0", sites=("shop",), viewport=viewport)
    try:
        obs, _ = env.reset(seed=3)
        session = env.unwrapped._session
        for ours, theirs in session.call(both):
            assert ours == theirs and len(ours) > 1000
        # What the env observed is that capture, decoded.
        jpeg = session.call(lambda h: observation.screenshot(h.page))
        assert (observation.decode(jpeg, viewport) == obs["screenshot"]).all()
        env.step(Action.scroll("down"))
        assert session.call(lambda h: h.page.evaluate("window.scrollY")) > 0
        for ours, theirs in session.call(both):
            assert ours == theirs
    finally:
        env.close()
