"""A hermetic browser: one session whose every request is answered from a route table, relaunched after a crash,
and the page-level work done on it (open a start page, act and observe).

The web envs, MiniWoB and the simulated phone run on it, so the session's life cycle, its routing and what the
router reports are written once. The session is a browser of the env's own, or a context on a
:class:`~gui_envs.browser.shared.SharedBrowser` (N envs, one Chromium): the same calls either way.
"""

from __future__ import annotations

import functools
import urllib.parse
from collections.abc import Callable
from typing import Any

from gui_envs.browser import executor
from gui_envs.browser.observation import PageView
from gui_envs.browser.routing import NetLog, RouteTable, install_routing
from gui_envs.browser.session import BrowserSession, BrowserTimeoutError, SessionHandles
from gui_envs.browser.shared import ContextSession, SharedBrowser
from gui_envs.schema.actions import Action

#: ``observe(page) -> (view, image bytes)``, run in the browser thread.
Observe = Callable[[Any], tuple[PageView, bytes]]
#: A browser of the env's own, or a context on a shared one (same interface).
Session = BrowserSession | ContextSession


class HermeticBrowser:
    """A :class:`BrowserSession` (or a :class:`ContextSession` on ``shared``) with hermetic routing, opened on first
    use and after a crash.

    Args:
        viewport: the page's ``(width, height)`` in CSS pixels.
        headless: run Chromium headless.
        timeout_s: time limit of one browser call in seconds (a time-out is an action error, not a crash).
        device_scale_factor: device pixels per CSS pixel (the simulated phone's density).
        shared: open the session as a context of this browser instead of launching one; closing it closes only
            its contexts, and a crash of the shared browser is relaunched by the next :meth:`ensure`.

    Attributes:
        net: what the router reported (blocked requests, 500 pages); an owner with routing of its own (two
            contexts, :mod:`gui_envs.browser.prefetch`) points it at the active context's log.
        origins: the origins the live session routes (read at launch: the executor checks navigations on it).
    """

    def __init__(
        self,
        viewport: tuple[int, int],
        headless: bool = True,
        timeout_s: float = 10.0,
        device_scale_factor: float = 1.0,
        shared: SharedBrowser | None = None,
    ) -> None:
        self.viewport, self.headless, self.timeout_s = viewport, headless, float(timeout_s)
        self.device_scale_factor = float(device_scale_factor)
        self.shared = shared
        self.session: Session | None = None
        self.net = NetLog()
        self.origins: frozenset[str] = frozenset()

    def ensure(
        self, routes: Callable[[], RouteTable], setup: Callable[[SessionHandles], None] | None = None
    ) -> Session:
        """The live session; opens one (first use, or after a crash) routing ``routes()``, or running ``setup``
        (which must install the routing itself) in the browser thread after the launch."""
        if self.session is not None and not self.session.alive:
            self.session.close()
            self.session = None
        if self.session is None:
            table = routes()
            self.origins = frozenset(table)
            setup = setup or functools.partial(install_routing, table=table, net=self.net)
            if self.shared is not None:
                self.session = self.shared.context(
                    setup, self.viewport, self.timeout_s, device_scale_factor=self.device_scale_factor
                )
            else:
                self.session = BrowserSession(
                    setup=setup,
                    viewport=self.viewport,
                    headless=self.headless,
                    call_timeout_s=self.timeout_s,
                    device_scale_factor=self.device_scale_factor,
                )
        return self.session

    def take_blocked(self) -> list[str]:
        """The requests blocked since the last call; clears the list."""
        blocked, self.net.blocked = self.net.blocked, []
        return blocked

    def take_server_errors(self) -> list[str]:
        """The handler failures (500 pages) since the last call, one line each; clears the list."""
        errors, self.net.server_errors = self.net.server_errors, []
        return errors

    @property
    def browser_pid(self) -> int | None:
        """PID of the Chromium browser process (``None`` before the first launch)."""
        return self.session.browser_pid if self.session is not None else None

    def close(self) -> None:
        """Close the session: the env's browser, or only its contexts on a shared one."""
        if self.session is not None:
            self.session.close()
            self.session = None

    # ----- page-level work --------------------------------------------------------------------------------
    def open(self, session: Session, url: str, observe: Observe) -> tuple[PageView, bytes]:
        """Open ``url`` on a fresh page (an episode's start) and observe it."""

        def work(h: SessionHandles) -> tuple[PageView, bytes]:
            h.context.clear_cookies()
            # A new page per episode, whose first history entry is replaced by the start page: "back" can
            # reach neither an earlier episode's pages nor about:blank.
            page = h.fresh_page()
            with page.expect_navigation(wait_until="load"):
                page.evaluate("u => location.replace(u)", url)
            return observe(h.page)

        seen = session.call(work)
        # While the agent acts, open the next episode's page on this origin (its renderer started, this
        # episode's old page closed), so that the next reset only navigates. A path no site routes: a 404 page,
        # served without touching the site's state; location.replace then drops it from the history.
        parts = urllib.parse.urlsplit(url)
        session.submit(functools.partial(SessionHandles.prepare_page, url=f"{parts.scheme}://{parts.netloc}/__next__"))
        return seen

    def act(self, action: Action, view: PageView, home_url: str, observe: Observe) -> tuple[str | None, PageView, bytes]:
        """Execute ``action`` on the page the agent saw as ``view``, wait for what it started, and observe.

        Returns the action error (``None``: it ran) and the new observation. A time-out or an argument Playwright
        refused is an action error; a crash propagates (:class:`~gui_envs.browser.session.BrowserCrashedError`).
        """
        from playwright.sync_api import Error as PlaywrightError

        net, origins, timeout_ms = self.net, self.origins, self.timeout_s * 1000

        def work(h: SessionHandles) -> tuple[str | None, PageView, bytes]:
            blocked_before = net.blocked_documents
            error = executor.execute(h.page, action, view, self.viewport, origins, home_url)
            executor.settle(h.page, timeout_ms, lambda: net.blocked_documents, blocked_before)
            return (error, *observe(h.page))

        def reobserve(h: SessionHandles) -> tuple[PageView, bytes]:
            try:
                h.page.wait_for_load_state("load", timeout=timeout_ms)
            except PlaywrightError:
                pass
            return observe(h.page)

        assert self.session is not None
        try:
            return self.session.call(work)
        except BrowserTimeoutError as exc:
            error = f"the action timed out: {exc}"
        except PlaywrightError as exc:
            # The session raises BrowserCrashedError (not a PlaywrightError) when the browser is gone; any
            # Playwright error left is this action's fault (arguments Playwright refused), so a no-op.
            error = f"the browser refused the action: {str(exc).splitlines()[0] if str(exc) else exc!r}"
        return (error, *self.session.call(reobserve))
