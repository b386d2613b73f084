"""Contacts: a searchable, alphabetical list; create, edit, star (favourite) and delete contacts.

State: ``contacts(first, last, phone, email, starred)``, ``searches``.
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
    text_field,
)
from gui_envs.browser.site import Request, Response, Router, html_escape, search_query

FIRST_NAMES = (
    "Ava",
    "Ben",
    "Chloe",
    "Daniel",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Isla",
    "Jonas",
    "Kemi",
    "Liam",
    "Maya",
    "Noah",
    "Olga",
    "Priya",
    "Quinn",
    "Rosa",
    "Sam",
    "Tariq",
)
LAST_NAMES = (
    "Adams",
    "Brown",
    "Chen",
    "Diaz",
    "Evans",
    "Fischer",
    "Garcia",
    "Hughes",
    "Ito",
    "Jensen",
    "Khan",
    "Lopez",
    "Moreau",
    "Novak",
    "Okafor",
    "Patel",
)


class Contacts(PhoneApp):
    host = "contacts.phone"
    title = "Contacts"
    package = "com.guigym.contacts"
    label = "Contacts"
    accent = "#1967d2"
    glyph = "\u263a"
    aliases = ("contact", "people", "phone book")
    activities = (
        ("/", ".PeopleActivity"),
        ("/contact", ".QuickContactActivity"),
        ("/new", ".ContactEditorActivity"),
    )
    editable = ("contacts",)
    router = Router()
    schema = (
        "CREATE TABLE contacts (id INTEGER PRIMARY KEY, first TEXT, last TEXT, phone TEXT, email TEXT, starred INTEGER);"
        + SEARCHES_SCHEMA
    )

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        firsts = rng.permutation(len(FIRST_NAMES))[:9]
        for i in firsts:
            first = FIRST_NAMES[int(i)]
            last = LAST_NAMES[int(rng.integers(len(LAST_NAMES)))]
            phone = f"+1 555-{int(rng.integers(100, 1000)):03d}-{int(rng.integers(0, 10000)):04d}"
            db.execute(
                "INSERT INTO contacts (first, last, phone, email, starred) VALUES (?, ?, ?, ?, ?)",
                (first, last, phone, f"{first.lower()}.{last.lower()}@example.com", int(rng.random() < 0.2)),
            )


def full_name(first: str, last: str) -> str:
    return f"{first} {last}".strip()


def _form(action: str, first: str = "", last: str = "", phone: str = "", email: str = "") -> str:
    return (
        f'<form method="post" action="{html_escape(action)}" id="contact_form">'
        f"{text_field('first', 'First name', first, rid='first_name')}"
        f"{text_field('last', 'Last name', last, rid='last_name')}"
        f"{text_field('phone', 'Phone', phone, rid='phone')}{text_field('email', 'Email', email, rid='email')}"
        f"{submit('Save', rid='save')}</form>"
    )


_SELECT = "SELECT id, first, last, phone, starred FROM contacts"


def _list(rows: list[tuple[int, str, str, str, int]]) -> str:
    return "".join(
        row_link(
            f"/contact/{cid}",
            full_name(first, last),
            phone,
            rid="contact_row",
            trailing='<span aria-hidden="true">\u2605</span>' if starred else "",
        )
        for cid, first, last, phone, starred in rows
    )


@Contacts.router.get("/")
def _people(site: Contacts, db: sqlite3.Connection, req: Request) -> Response:
    starred = list(db.execute(_SELECT + " WHERE starred = 1 ORDER BY first, last"))
    head = f"<h2>Favourites</h2>{_list(starred)}<h2>All contacts</h2>" if starred else ""
    rows = _list(list(db.execute(_SELECT + " ORDER BY first, last")))
    body = search_form("/search", "Search contacts") + head + rows + fab("/new", "Create contact")
    return site.screen("Contacts", body)


@Contacts.router.get("/search")
def _search(site: Contacts, db: sqlite3.Connection, req: Request) -> Response:
    query = search_query(req.arg("q"))
    rows = matching_rows(
        db, _SELECT + " WHERE first || ' ' || last LIKE ? OR phone LIKE ? ORDER BY first, last", query
    )
    return site.search_screen(
        db, query, len(rows), _list(rows), "Search", "Search contacts", "No contacts found for"
    )


@Contacts.router.get("/new")
def _new(site: Contacts, db: sqlite3.Connection, req: Request) -> Response:
    return site.screen(
        "Create contact", _form("/new"), up="/", actions=appbar_submit("Save", "contact_form", "action_save")
    )


@Contacts.router.post("/new")
def _create(site: Contacts, db: sqlite3.Connection, req: Request) -> Response:
    if not (req.arg("first") or req.arg("last")):
        raise ValueError("a contact needs a name")
    cur = db.execute(
        "INSERT INTO contacts (first, last, phone, email, starred) VALUES (?, ?, ?, ?, 0)",
        (req.arg("first"), req.arg("last"), req.arg("phone"), req.arg("email")),
    )
    return Response.redirect(f"/contact/{cur.lastrowid}")


@Contacts.router.get("/contact/<cid>")
def _contact(site: Contacts, db: sqlite3.Connection, req: Request, cid: str) -> Response:
    row = db.execute(
        "SELECT first, last, phone, email, starred FROM contacts WHERE id = ?", (cid,)
    ).fetchone()
    if row is None:
        return Response.not_found("contact")
    first, last, phone, email, starred = row
    star = "Remove from favourites" if starred else "Add to favourites"
    body = (
        f'<p class="big" style="font-size:28px" id="contact_name">{html_escape(full_name(first, last))}</p>'
        f'<div class="row" data-class="android.widget.LinearLayout"><span class="grow"><span class="t" id="phone_number">'
        f'{html_escape(phone)}</span><span class="s">Mobile</span></span></div>'
        f'<div class="row" data-class="android.widget.LinearLayout"><span class="grow"><span class="t" id="email_address">'
        f'{html_escape(email)}</span><span class="s">Email</span></span></div>'
        f'<form method="post" action="/contact/{html_escape(cid)}/star">{submit(star, rid="star")}</form>'
        f'<a class="btn flat" href="/contact/{html_escape(cid)}/edit" id="edit" data-class="android.widget.Button">Edit</a>'
        f'<form method="post" action="/contact/{html_escape(cid)}/delete">{submit("Delete", rid="delete", flat=True)}</form>'
    )
    return site.screen("Contact", body, up="/")


@Contacts.router.get("/contact/<cid>/edit")
def _edit(site: Contacts, db: sqlite3.Connection, req: Request, cid: str) -> Response:
    row = db.execute("SELECT first, last, phone, email FROM contacts WHERE id = ?", (cid,)).fetchone()
    if row is None:
        return Response.not_found("contact")
    return site.screen(
        "Edit contact",
        _form(f"/contact/{cid}/edit", *row),
        up=f"/contact/{cid}",
        actions=appbar_submit("Save", "contact_form", "action_save"),
    )


@Contacts.router.post("/contact/<cid>/edit")
def _save(site: Contacts, db: sqlite3.Connection, req: Request, cid: str) -> Response:
    db.execute(
        "UPDATE contacts SET first = ?, last = ?, phone = ?, email = ? WHERE id = ?",
        (req.arg("first"), req.arg("last"), req.arg("phone"), req.arg("email"), cid),
    )
    return Response.redirect(f"/contact/{cid}")


@Contacts.router.post("/contact/<cid>/star")
def _star(site: Contacts, db: sqlite3.Connection, req: Request, cid: str) -> Response:
    db.execute("UPDATE contacts SET starred = 1 - starred WHERE id = ?", (cid,))
    return Response.redirect(f"/contact/{cid}")


@Contacts.router.post("/contact/<cid>/delete")
def _delete(site: Contacts, db: sqlite3.Connection, req: Request, cid: str) -> Response:
    db.execute("DELETE FROM contacts WHERE id = ?", (cid,))
    return Response.redirect("/")
