"""Clock: alarms (add, edit, switch on/off, delete), a world clock, a timer and a stopwatch.

State: ``alarms(hour, minute, label, enabled)``, ``cities(name, offset, added)``, ``timer(seconds,
running)``, ``stopwatch(running, laps)``. Time stands still on the simulated phone (it is always 12:00), so
screens are deterministic; the timer and stopwatch record whether they run, not elapsed time.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from gui_envs.android.apps.base import (
    SEARCHES_SCHEMA,
    PhoneApp,
    appbar_submit,
    fab,
    row_link,
    submit,
    tabs,
    text_field,
)
from gui_envs.browser.site import Request, Response, Router, html_escape, search_query

ALARM_LABELS = ("Wake up", "Gym", "Meeting", "Medication", "School run", "Yoga", "Standup", "Walk the dog")
CITIES = (
    ("London", 0),
    ("Paris", 1),
    ("New York", -5),
    ("Tokyo", 9),
    ("Sydney", 11),
    ("Nairobi", 3),
    ("Lima", -5),
    ("Mumbai", 5),
    ("Toronto", -5),
    ("Berlin", 1),
)


class Clock(PhoneApp):
    host = "clock.phone"
    title = "Clock"
    package = "com.guigym.clock"
    label = "Clock"
    accent = "#1a73e8"
    glyph = "C"
    aliases = ("alarm", "timer", "stopwatch", "deskclock")
    activities = (
        ("/", ".DeskClock"),
        ("/alarms", ".AlarmEditActivity"),
        ("/cities", ".CitySelectionActivity"),
    )
    editable = ("alarms", "cities", "timer", "stopwatch")
    router = Router()
    schema = (
        "CREATE TABLE alarms (id INTEGER PRIMARY KEY, hour INTEGER, minute INTEGER, label TEXT, enabled INTEGER);"
        "CREATE TABLE cities (id INTEGER PRIMARY KEY, name TEXT, offset INTEGER, added INTEGER);"
        "CREATE TABLE timer (id INTEGER PRIMARY KEY, seconds INTEGER, running INTEGER);"
        "CREATE TABLE stopwatch (id INTEGER PRIMARY KEY, running INTEGER, laps INTEGER);" + SEARCHES_SCHEMA
    )

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        labels = rng.permutation(len(ALARM_LABELS))[: int(rng.integers(2, 5))]
        times = set()
        for i in labels:
            while True:
                hour, minute = int(rng.integers(5, 23)), int(rng.choice([0, 15, 30, 45]))
                if (hour, minute) not in times:
                    times.add((hour, minute))
                    break
            db.execute(
                "INSERT INTO alarms (hour, minute, label, enabled) VALUES (?, ?, ?, ?)",
                (hour, minute, ALARM_LABELS[int(i)], int(rng.random() < 0.6)),
            )
        added = set(int(i) for i in rng.permutation(len(CITIES))[:2])
        for i, (name, offset) in enumerate(CITIES):
            db.execute(
                "INSERT INTO cities (name, offset, added) VALUES (?, ?, ?)", (name, offset, int(i in added))
            )
        db.execute("INSERT INTO timer (id, seconds, running) VALUES (1, 0, 0)")
        db.execute("INSERT INTO stopwatch (id, running, laps) VALUES (1, 0, 0)")

    def tabbed(self, current: str, title: str, body: str) -> Response:
        strip = tabs(
            (
                ("alarm", "Alarm", "/"),
                ("clock", "Clock", "/clock"),
                ("timer", "Timer", "/timer"),
                ("stopwatch", "Stopwatch", "/stopwatch"),
            ),
            current,
        )
        return self.screen(title, strip + body)


def hhmm(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _alarm_form(action: str, hour: str = "", minute: str = "", label: str = "") -> str:
    return (
        f'<form method="post" action="{html_escape(action)}" id="alarm_form">'
        f"{text_field('hour', 'Hour (0-23)', hour, rid='hour', kind='text')}"
        f"{text_field('minute', 'Minute (0-59)', minute, rid='minute', kind='text')}"
        f"{text_field('label', 'Label', label, rid='label')}{submit('Save', rid='save')}</form>"
    )


def _int(value: str, low: int, high: int, what: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{what} must be a whole number") from None
    if not low <= number <= high:
        raise ValueError(f"{what} must be between {low} and {high}")
    return number


@Clock.router.get("/")
def _alarms(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    rows = []
    for a in db.execute("SELECT id, hour, minute, label, enabled FROM alarms ORDER BY hour, minute, id"):
        aid, hour, minute, label, enabled = a
        toggle = (
            f'<form method="post" action="/alarms/{aid}/toggle"><label class="switchrow" style="border:0" '
            f'data-class="android.widget.Switch" data-rid="alarm_switch" aria-label="{html_escape(label)} {hhmm(hour, minute)}">'
            f'<input type="checkbox" role="switch" name="on" value="1" data-autosubmit{" checked" if enabled else ""}>'
            "</label></form>"
        )
        rows.append(
            f'<div class="row" style="padding:0">{row_link(f"/alarms/{aid}", hhmm(hour, minute), label, rid="alarm_row")}'
            f"{toggle}</div>"
        )
    body = "".join(rows) or '<p class="empty">No alarms</p>'
    return site.tabbed("alarm", "Alarm", body + fab("/alarms/new", "Add alarm"))


@Clock.router.get("/alarms/new")
def _new_alarm(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    return site.screen(
        "New alarm",
        _alarm_form("/alarms/new"),
        up="/",
        actions=appbar_submit("Save", "alarm_form", "action_save"),
    )


@Clock.router.post("/alarms/new")
def _add_alarm(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    hour = _int(req.arg("hour"), 0, 23, "hour")
    minute = _int(req.arg("minute"), 0, 59, "minute")
    db.execute(
        "INSERT INTO alarms (hour, minute, label, enabled) VALUES (?, ?, ?, 1)",
        (hour, minute, req.arg("label")),
    )
    return Response.redirect("/")


@Clock.router.get("/alarms/<aid>")
def _edit_alarm(site: Clock, db: sqlite3.Connection, req: Request, aid: str) -> Response:
    row = db.execute("SELECT hour, minute, label FROM alarms WHERE id = ?", (aid,)).fetchone()
    if row is None:
        return Response.not_found("alarm")
    form = _alarm_form(f"/alarms/{aid}", str(row[0]), f"{row[1]:02d}", row[2])
    delete = f'<form method="post" action="/alarms/{html_escape(aid)}/delete">{submit("Delete", rid="delete", flat=True)}</form>'
    return site.screen(
        "Edit alarm", form + delete, up="/", actions=appbar_submit("Save", "alarm_form", "action_save")
    )


@Clock.router.post("/alarms/<aid>")
def _save_alarm(site: Clock, db: sqlite3.Connection, req: Request, aid: str) -> Response:
    hour = _int(req.arg("hour"), 0, 23, "hour")
    minute = _int(req.arg("minute"), 0, 59, "minute")
    db.execute(
        "UPDATE alarms SET hour = ?, minute = ?, label = ? WHERE id = ?",
        (hour, minute, req.arg("label"), aid),
    )
    return Response.redirect("/")


@Clock.router.post("/alarms/<aid>/toggle")
def _toggle_alarm(site: Clock, db: sqlite3.Connection, req: Request, aid: str) -> Response:
    db.execute("UPDATE alarms SET enabled = ? WHERE id = ?", (int(req.form.get("on") == "1"), aid))
    return Response.redirect("/")


@Clock.router.post("/alarms/<aid>/delete")
def _delete_alarm(site: Clock, db: sqlite3.Connection, req: Request, aid: str) -> Response:
    db.execute("DELETE FROM alarms WHERE id = ?", (aid,))
    return Response.redirect("/")


@Clock.router.get("/clock")
def _world(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    rows = "".join(
        f'<div class="row" data-class="android.widget.LinearLayout"><span class="grow"><span class="t">{html_escape(name)}</span>'
        f'<span class="s">{hhmm((12 + offset) % 24, 0)}</span></span></div>'
        for name, offset in db.execute("SELECT name, offset FROM cities WHERE added = 1 ORDER BY name")
    )
    body = f'<p class="big" id="local_time">12:00</p>{rows}' + fab("/cities", "Add city", rid="add_city")
    return site.tabbed("clock", "Clock", body)


@Clock.router.get("/cities")
def _cities(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    query = search_query(req.arg("q"))
    rows = list(db.execute("SELECT id, name, offset FROM cities WHERE added = 0 ORDER BY name"))
    if query:
        rows = [r for r in rows if query.lower() in r[1].lower()]
        site.log_search(db, query, len(rows))
    items = (
        "".join(
            f'<form method="post" action="/cities/{cid}"><button class="row" style="width:100%;background:none;border:0;'
            f'border-bottom:1px solid #e2e0ea;font:inherit;text-align:left" data-class="android.widget.TextView" '
            f'data-rid="city">{html_escape(name)}</button></form>'
            for cid, name, _ in rows
        )
        or f'<p class="empty" id="no_results">No cities found for \u201c{html_escape(query)}\u201d</p>'
    )
    search = (
        f'<form method="get" action="/cities" class="search">{text_field("q", "Search for a city", query, rid="search_box")}'
        "</form>"
    )
    return site.screen("Select a city", search + items, up="/clock")


@Clock.router.post("/cities/<cid>")
def _add_city(site: Clock, db: sqlite3.Connection, req: Request, cid: str) -> Response:
    db.execute("UPDATE cities SET added = 1 WHERE id = ?", (cid,))
    return Response.redirect("/clock")


@Clock.router.get("/timer")
def _timer(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    seconds, running = db.execute("SELECT seconds, running FROM timer WHERE id = 1").fetchone()
    if running:
        body = (
            f'<p class="big" id="timer_time">{seconds // 60:02d}:{seconds % 60:02d}</p><p class="muted" style="text-align:'
            f'center">Timer running</p><form method="post" action="/timer/stop">{submit("Stop", rid="stop")}</form>'
        )
    else:
        body = (
            '<form method="post" action="/timer/start" id="timer_form">'
            f"{text_field('minutes', 'Minutes', rid='minutes')}{text_field('seconds', 'Seconds', rid='seconds')}"
            f"{submit('Start', rid='start')}</form>"
        )
    return site.tabbed("timer", "Timer", body)


@Clock.router.post("/timer/start")
def _timer_start(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    minutes = _int(req.arg("minutes") or "0", 0, 999, "minutes")
    seconds = _int(req.arg("seconds") or "0", 0, 59, "seconds")
    total = minutes * 60 + seconds
    if total <= 0:
        raise ValueError("set a time first")
    db.execute("UPDATE timer SET seconds = ?, running = 1 WHERE id = 1", (total,))
    return Response.redirect("/timer")


@Clock.router.post("/timer/stop")
def _timer_stop(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    db.execute("UPDATE timer SET running = 0 WHERE id = 1")
    return Response.redirect("/timer")


@Clock.router.get("/stopwatch")
def _stopwatch(site: Clock, db: sqlite3.Connection, req: Request) -> Response:
    running, laps = db.execute("SELECT running, laps FROM stopwatch WHERE id = 1").fetchone()
    main = "Pause" if running else "Start"
    target = "/stopwatch/pause" if running else "/stopwatch/start"
    body = (
        '<p class="big" id="stopwatch_time">00:00.00</p>'
        f'<p class="muted" style="text-align:center" id="laps">Laps: {laps}</p>'
        f'<div class="row" style="justify-content:center;border:0"><form method="post" action="{target}">'
        f"{submit(main, rid='start_pause')}</form>"
        f'<form method="post" action="/stopwatch/lap">{submit("Lap", rid="lap", flat=True)}</form>'
        f'<form method="post" action="/stopwatch/reset">{submit("Reset", rid="reset", flat=True)}</form></div>'
    )
    return site.tabbed("stopwatch", "Stopwatch", body)


@Clock.router.post("/stopwatch/<what>")
def _stopwatch_do(site: Clock, db: sqlite3.Connection, req: Request, what: str) -> Response:
    sql = {
        "start": "UPDATE stopwatch SET running = 1",
        "pause": "UPDATE stopwatch SET running = 0",
        "lap": "UPDATE stopwatch SET laps = laps + running",
        "reset": "UPDATE stopwatch SET running = 0, laps = 0",
    }.get(what)
    if sql is None:
        return Response.not_found()
    db.execute(sql)
    return Response.redirect("/stopwatch")
