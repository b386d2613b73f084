"""``executor.settle`` against a scripted page: the navigation races a real browser only hits sometimes."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError

from gui_envs.browser import executor
from gui_envs.browser.session import BrowserTimeoutError

GONE = PlaywrightError("Execution context was destroyed, most likely because of a navigation")
CLOSED = PlaywrightError("Target page, context or browser has been closed")


class ScriptedPage:
    """Answers ``evaluate(LEAVING_JS)`` from a script and logs every call.

    Each answer is what the page says: ``"leaving"``, a ``document.readyState`` (``"loading"``,
    ``"interactive"``, ``"complete"``), or a Playwright error to raise.
    """

    def __init__(self, answers: list[str | PlaywrightError]) -> None:
        self.answers = list(answers)
        self.calls: list[str] = []

    def evaluate(self, script: str) -> Any:
        if script != executor.LEAVING_JS:
            self.calls.append("clear_flag")
            return None
        answer = self.answers.pop(0) if self.answers else "leaving"  # only the deadline ends it
        if isinstance(answer, PlaywrightError):
            self.calls.append("ask:error")
            raise answer
        self.calls.append(f"ask:{answer}")
        return answer

    def wait_for_load_state(self, state: str, timeout: float) -> None:
        self.calls.append("load_state")

    def wait_for_timeout(self, ms: float) -> None:
        self.calls.append("sleep")

    def wait_for_event(self, event: str, timeout: float) -> None:
        self.calls.append("wait_event")
        raise PlaywrightError("Timeout 100ms exceeded while waiting for event 'load'")


def test_destroyed_context_waits_for_the_new_document() -> None:
    # Another origin swaps the renderer: the old context is gone before the new document answers. Waiting for
    # "load" right away would answer for the old document, so settle must ask again until one answers.
    page = ScriptedPage([GONE, GONE, "interactive"])
    executor.settle(page, 1000, lambda: 0, 0)
    assert page.calls == ["ask:error", "sleep", "ask:error", "sleep", "ask:interactive", "load_state"]


def test_no_navigation_returns_after_one_question() -> None:
    # The page is not leaving and has loaded: no second round trip to wait for "load".
    page = ScriptedPage(["complete"])
    executor.settle(page, 1000, lambda: 0, 0)
    assert page.calls == ["ask:complete"]


def test_a_page_still_loading_is_waited_for() -> None:
    page = ScriptedPage(["loading"])
    executor.settle(page, 1000, lambda: 0, 0)
    assert page.calls == ["ask:loading", "load_state"]


def test_blocked_navigation_clears_the_flag() -> None:
    # The router refused the document request before settle was called: counting from before the action
    # is what tells the wait to stop.
    page = ScriptedPage(["leaving"])
    executor.settle(page, 1000, lambda: 1, 0)
    assert page.calls == ["ask:leaving", "clear_flag"]


def test_endless_navigation_times_out() -> None:
    page = ScriptedPage([])
    with pytest.raises(BrowserTimeoutError, match="did not finish navigating"):
        executor.settle(page, 50, lambda: 0, 0)


def test_other_page_errors_propagate() -> None:
    page = ScriptedPage([CLOSED])
    with pytest.raises(PlaywrightError, match="has been closed"):
        executor.settle(page, 1000, lambda: 0, 0)
