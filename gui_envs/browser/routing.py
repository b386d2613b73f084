"""Hermetic request routing: every request is answered in-process by its origin's handler, or aborted.

Used by the web envs, MiniWoB and the simulated phone alike. No request leaves for an origin that is not in the
owner's route table; what was blocked, and every 500 page a handler produced, is collected in a :class:`NetLog`.
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gui_envs.browser import executor
from gui_envs.browser.session import SessionHandles
from gui_envs.browser.site import Request, Response

logger = logging.getLogger(__name__)

#: An origin's request handler (``"http://shop.guigym.test"`` -> ``handler(request)``).
RouteTable = dict[str, Callable[[Request], Response]]


@dataclass
class NetLog:
    """What the router saw since the last step: blocked URLs, a count of blocked navigations, and the
    server errors (one line per 500 page a site handler produced)."""

    blocked: list[str] = field(default_factory=list)
    blocked_documents: int = 0
    server_errors: list[str] = field(default_factory=list)

    def take(self) -> tuple[list[str], list[str]]:
        """The blocked URLs and the server errors since the last call (the env's per-step report); clears both."""
        blocked, errors, self.blocked, self.server_errors = self.blocked, self.server_errors, [], []
        return blocked, errors


def install_routing(handles: SessionHandles, table: RouteTable, net: NetLog, context: Any = None) -> None:
    """Runs in the browser thread after launch: hermetic routing and the navigation flag on ``context``
    (default: the session's own).

    Requests to an origin in ``table`` are answered by its handler; any other request (HTTP or WebSocket) is
    aborted and logged in ``net``. A module-level function, so the session holds no reference to the env. The
    table is read at request time: an owner may add or replace origins in place without a relaunch.
    """

    def route(r: Any) -> None:
        req = r.request
        parts = urllib.parse.urlsplit(req.url)
        handler = table.get(f"{parts.scheme}://{parts.netloc}")
        if handler is None:
            net.blocked.append(req.url)
            if req.is_navigation_request():
                net.blocked_documents += 1
            r.abort("blockedbyclient")
            return
        resp = guarded_response(handler, req, net.server_errors)
        fulfil(r, resp.status, resp.headers, resp.body)

    def websocket(ws: Any) -> None:
        net.blocked.append(ws.url)
        ws.close()

    target = context if context is not None else handles.context
    target.route("**/*", route)
    target.route_web_socket(re.compile(".*"), websocket)
    target.add_init_script(executor.NAV_FLAG_SCRIPT)


def guarded_response(handler: Callable[[Request], Response], req: Any, errors: list[str]) -> Response:
    """``handler``'s answer to the Playwright request ``req``; any exception is a 500 page, never a hang.

    An exception left in a route callback leaves the request unanswered: the page waits for it until the
    call time-out and the session declares the browser dead. Every 500 (from here or from a site's own
    guard, :meth:`~gui_envs.browser.site.Site.handle`) is appended to ``errors`` for ``info``.
    """
    try:
        resp = handler(Request.from_url(req.method, req.url, req.post_data_buffer))
    except Exception as exc:  # noqa: BLE001 - see above: anything but an answer kills the episode
        logger.exception("request handler failed on %s %s", req.method, req.url)
        resp = Response.server_error(f"{req.method} {req.url}", exc)
    if resp.error is not None:
        errors.append(resp.error)
    return resp


def fulfil(route: Any, status: int, headers: dict[str, str], body: str | bytes) -> None:
    """``route.fulfill``, tolerating a request that went away meanwhile (its page navigated or closed)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        route.fulfill(status=status, headers=headers, body=body)
    except PlaywrightError as exc:
        logger.debug("could not fulfil %s: %s", route.request.url, exc)
