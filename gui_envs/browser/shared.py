"""One Chromium for many envs: each env gets its own browser context on a shared browser.

A :class:`~gui_envs.browser.session.BrowserSession` launches a browser per env. A group of N copies of one
env (:mod:`gui_envs.multi`) would then start N browsers, N Playwright drivers and N worker threads. With a
:class:`SharedBrowser`, each env opens a :class:`ContextSession` instead: an isolated browser context
(cookies, storage, request routing of its own) on the one browser, driven by the one worker thread. The envs
see the same interface as a ``BrowserSession`` (``call``, ``submit``, ``close``, ``alive``).

Calls of one context run one after another in the shared worker thread; calls of different contexts made from
several threads at once (a group's members stepping together) overlap where they wait for the browser (the host
session's ``lanes``), so the browser works on several pages at once. The saving is in memory, in start-up (one
browser launch) and in that overlap. ``python benchmarks/group_speed.py`` and ``rollout_speed.py`` measure it.

A crash of the shared browser takes every context with it; each env's next ``reset`` then opens a context on
a freshly launched browser (:meth:`SharedBrowser.session` relaunches on demand).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from gui_envs.browser.session import BrowserCrashedError, BrowserSession, SessionHandles, open_context

T = TypeVar("T")

__all__ = ["ContextSession", "SharedBrowser"]


class SharedBrowser:
    """A browser that envs share through contexts; launched on first use, relaunched after a crash.

    Args:
        headless: run Chromium without a window.
        call_timeout_s: the host session's default call limit (seconds); each context sets its own.
    """

    def __init__(self, headless: bool = True, call_timeout_s: float = 10.0) -> None:
        self.headless, self.call_timeout_s = headless, float(call_timeout_s)
        self._host: BrowserSession | None = None
        self._lock = threading.Lock()

    def session(self) -> BrowserSession:
        """The live host session (launching one if there is none or the last one died)."""
        with self._lock:
            if self._host is not None and not self._host.alive:
                self._host.close()
                self._host = None
            if self._host is None:
                # Lanes: each context's calls are a lane, so envs called from several threads (a group's members
                # stepping together) overlap in the browser where they wait for it.
                self._host = BrowserSession(headless=self.headless, call_timeout_s=self.call_timeout_s, lanes=True)
            return self._host

    def context(
        self,
        setup: Callable[[SessionHandles], None] | None = None,
        viewport: tuple[int, int] = (1280, 720),
        call_timeout_s: float = 10.0,
        device_scale_factor: float = 1.0,
    ) -> ContextSession:
        """A new :class:`ContextSession` on this browser (arguments as :class:`BrowserSession`'s)."""
        return ContextSession(self.session(), setup, viewport, call_timeout_s, device_scale_factor)

    @property
    def browser_pid(self) -> int | None:
        """PID of the shared Chromium, or ``None`` before the first launch."""
        return self._host.browser_pid if self._host is not None else None

    def close(self) -> None:
        """Close the browser (every context on it); idempotent."""
        with self._lock:
            if self._host is not None:
                self._host.close()
                self._host = None


class ContextSession:
    """A browser context on a :class:`SharedBrowser`'s host session, with ``BrowserSession``'s interface.

    Args:
        host: the session whose browser and worker thread this context uses.
        setup: called in the worker thread with the context's :class:`SessionHandles` (routing, scripts).
        viewport: ``(width, height)`` in CSS pixels.
        call_timeout_s: default Playwright timeout for this context's calls (seconds).
        device_scale_factor: device pixels per CSS pixel.
    """

    def __init__(
        self,
        host: BrowserSession,
        setup: Callable[[SessionHandles], None] | None = None,
        viewport: tuple[int, int] = (1280, 720),
        call_timeout_s: float = 10.0,
        device_scale_factor: float = 1.0,
    ) -> None:
        self.host, self.viewport, self.call_timeout_s = host, viewport, float(call_timeout_s)
        self.dead_reason: str | None = None
        self._closed = False
        self._lane = object()  # this context's calls keep their order; other contexts' may overlap them

        def on_page_crash(_page: Any) -> None:
            # Only this context's renderer died; the browser and the other contexts carry on.
            if self.dead_reason is None:
                self.dead_reason = "the page's renderer crashed"

        def start(h: SessionHandles) -> SessionHandles:
            handles = open_context(
                h.playwright, h.browser, viewport, device_scale_factor, self.call_timeout_s, on_page_crash
            )
            if setup is not None:
                setup(handles)
            return handles

        self._handles: SessionHandles = host.call(start, timeout_s=60.0)

    @property
    def alive(self) -> bool:
        """False once this context's page crashed, the shared browser died, or the context was closed."""
        return not self._closed and self.dead_reason is None and self.host.alive

    @property
    def browser_pid(self) -> int | None:
        """PID of the shared Chromium."""
        return self.host.browser_pid

    @property
    def process_tree(self) -> frozenset[int]:
        """PIDs of the shared browser tree."""
        return self.host.process_tree

    def call(self, fn: Callable[[SessionHandles], T], timeout_s: float | None = None) -> T:
        """Run ``fn(handles)`` with this context's handles in the shared worker thread (see
        :meth:`BrowserSession.call` for the errors)."""
        if not self.alive:
            reason = self.dead_reason or ("context closed" if self._closed else "the shared browser died")
            raise BrowserCrashedError(f"the browser context is gone ({reason}); call env.reset() to reopen it")
        handles = self._handles
        limit = timeout_s if timeout_s is not None else self.call_timeout_s
        return self.host.call(lambda _h: fn(handles), limit, lane=self._lane)

    def submit(self, fn: Callable[[SessionHandles], object]) -> None:
        """Queue background work on this context (see :meth:`BrowserSession.submit`)."""
        if self.alive:
            handles = self._handles
            self.host.submit(lambda _h: fn(handles), lane=self._lane)

    def close(self) -> None:
        """Close this session's contexts (the one it opened and any its owner opened through the handles, such
        as a prepared-reset context); the shared browser and the other envs' contexts stay up. Idempotent."""
        if self._closed:
            return
        self._closed = True
        handles = self._handles

        def close_all(_h: SessionHandles) -> None:
            # Read in the worker thread: background work queued before the close may still open a context.
            for context in handles.contexts:
                context.close()

        # Queued, not waited on: an env's __del__ may run in the worker thread itself (where its last
        # reference was dropped), and waiting there for the worker would deadlock. Errors are only logged.
        self.host.submit(close_all, lane=self._lane)

    def __enter__(self) -> ContextSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
