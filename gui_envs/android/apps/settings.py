"""Settings: Wi-Fi, airplane mode, Bluetooth, dark theme, brightness, and About phone; with a settings search.

State: ``settings(key, value)`` (``wifi``, ``airplane``, ``bluetooth``, ``dark_mode``, ``adaptive``: ``0``/``1``;
``brightness``: 0-100), ``device(key, value)`` (``model``, ``android_version``: what About phone shows, drawn
per seed from :data:`MODELS` and :data:`ANDROID_VERSIONS`), ``searches``.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from gui_envs.android.apps.base import SEARCHES_SCHEMA, PhoneApp, row_link, search_form, switch
from gui_envs.browser.site import Request, Response, Router, html_escape, search_query

#: Searchable entries: (title, summary, page).
ENTRIES: tuple[tuple[str, str, str], ...] = (
    ("Network & internet", "Wi-Fi, airplane mode", "/network"),
    ("Wi-Fi", "Network & internet", "/network"),
    ("Airplane mode", "Network & internet", "/network"),
    ("Connected devices", "Bluetooth", "/devices"),
    ("Bluetooth", "Connected devices", "/devices"),
    ("Display", "Dark theme, brightness", "/display"),
    ("Dark theme", "Display", "/display"),
    ("Brightness level", "Display", "/display"),
    ("About phone", "Model, Android version", "/about"),
)
#: Switches a phone may lack, by key: (title, page). Seeded present and off; a task can take one off the phone
#: (``settings.turn_on_setting``'s infeasible seeds), and then no page or search shows it.
OPTIONAL: dict[str, tuple[str, str]] = {
    "nfc": ("NFC", "/devices"),
    "hotspot": ("Mobile hotspot", "/network"),
    "night_light": ("Night light", "/display"),
}
#: The device names and Android versions a seeded phone may have. Drawn per seed rather than fixed: a fixed
#: version would be an answer a policy memorises across episodes instead of reading About phone.
MODELS = ("Pixel 6", "Pixel 7", "Pixel 7a", "Pixel 8", "Pixel 8 Pro", "Pixel 9")
ANDROID_VERSIONS = ("12", "13", "14", "15", "16")
BUILD_NUMBER = "UQ1A.240105.004"


class Settings(PhoneApp):
    host = "settings.phone"
    title = "Settings"
    package = "com.guigym.settings"
    label = "Settings"
    accent = "#5f6368"
    glyph = "\u2699"
    aliases = ("setting", "preferences", "system settings")
    activities = (
        ("/", ".Settings"),
        ("/network", ".Settings$NetworkDashboardActivity"),
        ("/devices", ".Settings$ConnectedDeviceDashboardActivity"),
        ("/display", ".Settings$DisplaySettingsActivity"),
        ("/about", ".Settings$MyDeviceInfoActivity"),
        ("/search", ".SearchActivity"),
    )
    editable = ("settings",)
    router = Router()
    schema = (
        "CREATE TABLE settings (key TEXT PRIMARY KEY, value INTEGER);"
        "CREATE TABLE device (key TEXT PRIMARY KEY, value TEXT);" + SEARCHES_SCHEMA
    )

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        for key in ("wifi", "bluetooth", "dark_mode", "adaptive"):
            db.execute("INSERT INTO settings VALUES (?, ?)", (key, int(rng.random() < 0.5)))
        db.execute("INSERT INTO settings VALUES ('airplane', 0)")
        db.execute("INSERT INTO settings VALUES ('brightness', ?)", (int(rng.integers(3, 8)) * 10,))
        # Drawn last, so the switches above keep the values earlier seeds gave them.
        db.execute("INSERT INTO device VALUES ('model', ?)", (MODELS[int(rng.integers(len(MODELS)))],))
        db.execute(
            "INSERT INTO device VALUES ('android_version', ?)",
            (ANDROID_VERSIONS[int(rng.integers(len(ANDROID_VERSIONS)))],),
        )
        db.executemany("INSERT INTO settings VALUES (?, 0)", [(key,) for key in OPTIONAL])


def device_info(db: sqlite3.Connection) -> dict[str, str]:
    """What About phone shows: ``{"model": ..., "android_version": ...}``."""
    return {str(k): str(v) for k, v in db.execute("SELECT key, value FROM device")}


def value(db: sqlite3.Connection, key: str) -> int:
    """One setting's value."""
    return int(db.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()[0])


def present(db: sqlite3.Connection, page: str | None = None) -> list[tuple[str, str, str]]:
    """The optional switches this phone has (:data:`OPTIONAL`), on ``page`` or on any: ``(key, title, page)``."""
    have = {str(k) for (k,) in db.execute("SELECT key FROM settings")}
    return [(k, t, p) for k, (t, p) in OPTIONAL.items() if k in have and page in (None, p)]


def _optional(db: sqlite3.Connection, page: str) -> str:
    return "".join(switch(page, k, t, bool(value(db, k))) for k, t, _ in present(db, page))


def _set(db: sqlite3.Connection, req: Request, *keys: str) -> None:
    for key in keys:
        if key in req.form:
            db.execute(
                "UPDATE settings SET value = ? WHERE key = ?", (int(req.form_lists[key][-1] == "1"), key)
            )


@Settings.router.get("/")
def _home(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    rows = "".join(
        row_link(page, title, summary, rid="dashboard_tile")
        for title, summary, page in ENTRIES
        if title in ("Network & internet", "Connected devices", "Display", "About phone")
    )
    return site.screen("Settings", search_form("/search", "Search settings") + rows)


@Settings.router.get("/search")
def _search(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    query = search_query(req.arg("q"))
    titles = {p: t for t, _, p in ENTRIES if t in ("Network & internet", "Connected devices", "Display")}
    entries = [*ENTRIES, *((t, titles[p], p) for _, t, p in present(db))]
    hits = [x for x in entries if query and query.lower() in x[0].lower()]
    rows = "".join(row_link(page, title, summary, rid="search_result") for title, summary, page in hits)
    return site.search_screen(
        db, query, len(hits), rows, "Search settings", "Search settings", "No results for"
    )


@Settings.router.get("/network")
def _network(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    body = (
        switch("/network", "wifi", "Wi-Fi", bool(value(db, "wifi")))
        + switch("/network", "airplane", "Airplane mode", bool(value(db, "airplane")))
        + _optional(db, "/network")
    )
    return site.screen("Network & internet", body, up="/")


@Settings.router.post("/network")
def _network_save(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    _set(db, req, "wifi", "airplane", *(k for k, _, _ in present(db, "/network")))
    return Response.redirect("/network")


@Settings.router.get("/devices")
def _devices(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    return site.screen(
        "Connected devices",
        switch("/devices", "bluetooth", "Bluetooth", bool(value(db, "bluetooth"))) + _optional(db, "/devices"),
        up="/",
    )


@Settings.router.post("/devices")
def _devices_save(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    _set(db, req, "bluetooth", *(k for k, _, _ in present(db, "/devices")))
    return Response.redirect("/devices")


@Settings.router.get("/display")
def _display(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    level = value(db, "brightness")
    slider = (
        '<form method="post" action="/display/brightness"><h2>Brightness level</h2>'
        f'<input type="range" min="0" max="100" step="1" name="brightness" value="{level}" id="brightness" '
        'aria-label="Brightness level" data-autosubmit style="width:100%;margin:14px 0;height:28px"></form>'
    )
    body = (
        switch("/display", "dark_mode", "Dark theme", bool(value(db, "dark_mode")))
        + switch("/display", "adaptive", "Adaptive brightness", bool(value(db, "adaptive")))
        + _optional(db, "/display")
        + slider
    )
    return site.screen("Display", body, up="/")


@Settings.router.post("/display")
def _display_save(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    _set(db, req, "dark_mode", "adaptive", *(k for k, _, _ in present(db, "/display")))
    return Response.redirect("/display")


@Settings.router.post("/display/brightness")
def _brightness(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    level = max(0, min(100, int(req.arg("brightness") or "0")))
    db.execute("UPDATE settings SET value = ? WHERE key = 'brightness'", (level,))
    return Response.redirect("/display")


@Settings.router.get("/about")
def _about(site: Settings, db: sqlite3.Connection, req: Request) -> Response:
    device = device_info(db)
    rows = "".join(
        f'<div class="row" data-class="android.widget.LinearLayout"><span class="grow"><span class="t">{html_escape(k)}</span>'
        f'<span class="s" id="{html_escape(rid)}">{html_escape(v)}</span></span></div>'
        for k, v, rid in (
            ("Device name", device["model"], "device_name"),
            ("Android version", device["android_version"], "android_version"),
            ("Build number", BUILD_NUMBER, "build_number"),
        )
    )
    return site.screen("About phone", rows, up="/")
