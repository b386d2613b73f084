"""Notes: notes (create, edit, delete, search) and a to-do list (add, check off, delete by long press).

State: ``notes(title, body)``, ``todos(text, done)``, ``searches``.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from gui_envs.android.apps.base import (
    SEARCHES_SCHEMA,
    PhoneApp,
    appbar_submit,
    fab,
    matching_rows,
    row_link,
    search_form,
    submit,
    tabs,
    text_field,
)
from gui_envs.browser.site import Request, Response, Router, html_escape, search_query

NOTE_POOL: tuple[tuple[str, str], ...] = (
    ("Shopping list", "Milk, eggs, bread and apples"),
    ("Book club", "Next meeting on Thursday at 7pm"),
    ("Gift ideas", "Scarf for mum, puzzle for Leo"),
    ("Packing", "Passport, charger, sunscreen"),
    ("Recipe ideas", "Try the lentil soup this week"),
    ("Car service", "Garage booked for the 14th"),
    ("Wifi password", "Guest network key is on the router"),
    ("Meeting notes", "Budget review moved to Friday"),
    ("Garden", "Plant tomatoes after the last frost"),
    ("Movies", "Watch the new documentary"),
)
TODO_POOL: tuple[str, ...] = (
    "Call the bank",
    "Water the plants",
    "Pay rent",
    "Book dentist",
    "Renew library card",
    "Buy stamps",
    "Clean the fridge",
    "Reply to Sam",
    "Back up photos",
    "Order printer paper",
)


class Notes(PhoneApp):
    host = "notes.phone"
    title = "Notes"
    package = "com.guigym.notes"
    label = "Notes"
    accent = "#f9ab00"
    glyph = "N"
    aliases = ("note", "to-do", "todo", "keep", "tasks")
    activities = (
        ("/", ".NotesActivity"),
        ("/note", ".EditNoteActivity"),
        ("/new", ".EditNoteActivity"),
        ("/todo", ".TodoActivity"),
    )
    editable = ("notes", "todos")
    router = Router()
    schema = (
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT);"
        "CREATE TABLE todos (id INTEGER PRIMARY KEY, text TEXT, done INTEGER);" + SEARCHES_SCHEMA
    )

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        for i in sorted(int(i) for i in rng.permutation(len(NOTE_POOL))[:5]):
            db.execute("INSERT INTO notes (title, body) VALUES (?, ?)", NOTE_POOL[i])
        for i in sorted(int(i) for i in rng.permutation(len(TODO_POOL))[:4]):
            db.execute(
                "INSERT INTO todos (text, done) VALUES (?, ?)", (TODO_POOL[i], int(rng.random() < 0.3))
            )

    def tabbed(self, current: str, body: str) -> Response:
        strip = tabs((("notes", "Notes", "/"), ("todo", "To-do", "/todo")), current)
        return self.screen("Notes", strip + body)


def _note_rows(rows: list[tuple[int, str, str]]) -> str:
    return "".join(row_link(f"/note/{nid}", title, body[:40], rid="note_row") for nid, title, body in rows)


def _form(action: str, title: str = "", body: str = "") -> str:
    return (
        f'<form method="post" action="{html_escape(action)}" id="note_form">{text_field("title", "Title", title, rid="note_title")}'
        f"{text_field('body', 'Note', body, rid='note_body', multiline=True)}{submit('Save', rid='save')}</form>"
    )


@Notes.router.get("/")
def _notes(site: Notes, db: sqlite3.Connection, req: Request) -> Response:
    rows = _note_rows(list(db.execute("SELECT id, title, body FROM notes ORDER BY id")))
    body = (
        search_form("/search", "Search notes")
        + (rows or '<p class="empty">No notes</p>')
        + fab("/new", "New note")
    )
    return site.tabbed("notes", body)


@Notes.router.get("/search")
def _search(site: Notes, db: sqlite3.Connection, req: Request) -> Response:
    query = search_query(req.arg("q"))
    rows = matching_rows(
        db, "SELECT id, title, body FROM notes WHERE title LIKE ? OR body LIKE ? ORDER BY id", query
    )
    return site.search_screen(
        db, query, len(rows), _note_rows(rows), "Search notes", "Search notes", "No notes match"
    )


@Notes.router.get("/new")
def _new(site: Notes, db: sqlite3.Connection, req: Request) -> Response:
    return site.screen(
        "New note", _form("/new"), up="/", actions=appbar_submit("Save", "note_form", "action_save")
    )


@Notes.router.post("/new")
def _create(site: Notes, db: sqlite3.Connection, req: Request) -> Response:
    if not (req.arg("title") or req.arg("body")):
        raise ValueError("an empty note is not saved")
    db.execute(
        "INSERT INTO notes (title, body) VALUES (?, ?)", (req.arg("title"), req.form.get("body", "").strip())
    )
    return Response.redirect("/")


@Notes.router.get("/note/<nid>")
def _note(site: Notes, db: sqlite3.Connection, req: Request, nid: str) -> Response:
    row = db.execute("SELECT title, body FROM notes WHERE id = ?", (nid,)).fetchone()
    if row is None:
        return Response.not_found("note")
    delete = f'<form method="post" action="/note/{html_escape(nid)}/delete">{submit("Delete", rid="delete", flat=True)}</form>'
    return site.screen(
        "Edit note",
        _form(f"/note/{nid}", *row) + delete,
        up="/",
        actions=appbar_submit("Save", "note_form", "action_save"),
    )


@Notes.router.post("/note/<nid>")
def _save(site: Notes, db: sqlite3.Connection, req: Request, nid: str) -> Response:
    db.execute(
        "UPDATE notes SET title = ?, body = ? WHERE id = ?",
        (req.arg("title"), req.form.get("body", "").strip(), nid),
    )
    return Response.redirect("/")


@Notes.router.post("/note/<nid>/delete")
def _delete(site: Notes, db: sqlite3.Connection, req: Request, nid: str) -> Response:
    db.execute("DELETE FROM notes WHERE id = ?", (nid,))
    return Response.redirect("/")


@Notes.router.get("/todo")
def _todo(site: Notes, db: sqlite3.Connection, req: Request) -> Response:
    items = "".join(
        f'<form method="post" action="/todo/{tid}/toggle"><input type="hidden" name="done" value="0">'
        f'<label class="switchrow" data-class="android.widget.CheckBox" data-rid="todo_item" data-longclick '
        f'data-long="/todo/{tid}/menu">{html_escape(text)}<input type="checkbox" name="done" value="1" data-autosubmit'
        f'{" checked" if done else ""} style="width:22px;height:22px"></label></form>'
        for tid, text, done in db.execute("SELECT id, text, done FROM todos ORDER BY id")
    )
    add = (
        f'<form method="post" action="/todo/add" class="search">{text_field("text", "Add a task", rid="new_task")}'
        f"{submit('Add', rid='add_task')}</form>"
    )
    hint = '<p class="muted" style="font-size:12px">Touch and hold a task for more options</p>'
    return site.tabbed("todo", add + (items or '<p class="empty">Nothing to do</p>') + hint)


@Notes.router.post("/todo/add")
def _todo_add(site: Notes, db: sqlite3.Connection, req: Request) -> Response:
    text = req.arg("text")
    if not text:
        raise ValueError("type a task first")
    db.execute("INSERT INTO todos (text, done) VALUES (?, 0)", (text,))
    return Response.redirect("/todo")


@Notes.router.post("/todo/<tid>/toggle")
def _todo_toggle(site: Notes, db: sqlite3.Connection, req: Request, tid: str) -> Response:
    db.execute(
        "UPDATE todos SET done = ? WHERE id = ?", (int(req.form_lists.get("done", ["0"])[-1] == "1"), tid)
    )
    return Response.redirect("/todo")


@Notes.router.get("/todo/<tid>/menu")
def _todo_menu(site: Notes, db: sqlite3.Connection, req: Request, tid: str) -> Response:
    row = db.execute("SELECT text FROM todos WHERE id = ?", (tid,)).fetchone()
    if row is None:
        return Response.not_found("task")
    body = (
        f'<p class="t" id="task_text" style="font-size:18px">{html_escape(row[0])}</p>'
        f'<form method="post" action="/todo/{html_escape(tid)}/delete">{submit("Delete task", rid="delete")}</form>'
        f'<a class="btn flat" href="/todo" id="cancel" data-class="android.widget.Button">Cancel</a>'
    )
    return site.screen("Task options", body, up="/todo")


@Notes.router.post("/todo/<tid>/delete")
def _todo_delete(site: Notes, db: sqlite3.Connection, req: Request, tid: str) -> Response:
    db.execute("DELETE FROM todos WHERE id = ?", (tid,))
    return Response.redirect("/todo")
