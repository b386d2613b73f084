"""The launcher (home screen): a search field labelled "Search apps, web and more" above the app grid.

Typing into the field filters the grid as you type; enter runs a search (``/search?q=``), logged in the
``searches`` table, that lists the matching apps or says that none matched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from gui_envs.android.apps.base import SEARCHES_SCHEMA, PhoneApp, text_field
from gui_envs.browser.site import Request, Response, Router, html_escape, search_query

SEARCH_HINT = "Search apps, web and more"


class Launcher(PhoneApp):
    """The home screen. ``apps`` are the apps it shows, in grid order."""

    host = "launcher.phone"
    title = "Home"
    package = "com.guigym.launcher"
    label = "Launcher"
    accent = "#5b5f97"
    activities = (("/", ".LauncherActivity"), ("/search", ".SearchActivity"))
    router = Router()
    schema = SEARCHES_SCHEMA

    def __init__(self, apps: Sequence[PhoneApp] = ()) -> None:
        self.apps = list(apps)

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        """Nothing to seed: the launcher's only state is its search log."""

    def matches(self, query: str) -> list[PhoneApp]:
        q = query.strip().lower()
        return [a for a in self.apps if q and (q in a.label.lower() or any(q in x for x in a.aliases))]

    def home(self, query: str = "", results: Sequence[PhoneApp] | None = None) -> Response:
        shown = self.apps if results is None else results
        icons = "".join(
            f'<a class="icon" href="{html_escape(a.origin)}/" data-name="{html_escape(a.label)}" aria-label="{html_escape(a.label)}" '
            f'data-class="android.widget.TextView" data-rid="app_icon" data-glyph="{html_escape(a.glyph)}" '
            f'style="--c:{html_escape(a.accent)}">{html_escape(a.label)}</a>'
            for a in shown
        )
        note = ""
        if results is not None and not results:
            note = f'<p class="empty" id="no_results">No apps found for \u201c{html_escape(query)}\u201d</p>'
        body = (
            f'<form method="get" action="/search" class="search" id="search_bar">'
            f"{text_field('q', SEARCH_HINT, query, rid='search_box')}</form>"
            f'<div class="grid" id="app_grid" data-class="android.widget.GridView">{icons}</div>{note}'
            "<style>.grid{display:grid;grid-template-columns:repeat(4,1fr);gap:18px 6px;margin-top:28px}"
            ".icon{display:flex;flex-direction:column;align-items:center;font-size:12px;color:#222;"
            "text-decoration:none}.icon::before{content:attr(data-glyph);display:flex;width:54px;height:54px;"
            "border-radius:50%;background:var(--c);color:#fff;font-size:22px;font-weight:bold;align-items:center;"
            "justify-content:center;margin-bottom:6px}body{background:#dfe3f0}"
            "#search_box{border-radius:26px;padding:12px 18px;margin-top:14px}</style>"
        )
        # The live filter: typing narrows the grid before enter is pressed.
        body = body.replace('id="search_box"', 'id="search_box" data-filter="#app_grid .icon"', 1)
        return self.screen("Home", body, appbar=False)


@Launcher.router.get("/")
def _home(site: Launcher, db: sqlite3.Connection, req: Request) -> Response:
    return site.home()


@Launcher.router.get("/search")
def _search(site: Launcher, db: sqlite3.Connection, req: Request) -> Response:
    query = search_query(req.arg("q"))
    results = site.matches(query)
    site.log_search(db, query, len(results))
    return site.home(query, results)
