"""App-state fact extractors: each bundled site's and phone app's SQLite state as plain JSON facts.

A label function never touches a live browser or device (seed 002, section 3.1: label functions judge a
*recorded* trajectory). So the env records, at every step, what the state validators of
:mod:`gui_envs.verifiers.api` need, through its privileged channel (:mod:`gui_envs.schema.privileged`), under the key
``"verifier_record"``::

    {"facts": {collection: [description, ...]}, "elements": [...], "location": str}

* ``facts``: one collection per kind of user-editable record, named ``<site or app>.<kind>``
  (``shop.wishlist``, ``forum.comments``, ``clock.alarms``, ``settings.values``...). Each record is one
  **description string** that names every field a task can change, so that "added", "removed" and "edited"
  all read as a description appearing or disappearing (an edit removes the old description and adds the new
  one). Read-only catalogues (products, recipes) are left out; listings and posts are in, because tasks edit
  and delete them.
* ``elements``: the observation's element records (id, text, tag, role, type, bbox in screenshot pixels,
  clickable), trimmed to those fields; the view resolves each action's target element from them.
* ``location``: the page URL (web) or ``package/activity`` (phone).

The descriptions are plain text in a fixed format per collection, documented in :data:`WEB_QUERIES` and
:data:`PHONE_QUERIES`; the synthesiser (:mod:`gui_envs.verifiers.synth`) and the named validators of
:mod:`gui_envs.verifiers.api` both read them through :func:`gui_envs.verifiers.api.validate_fact`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

#: Element fields kept in a record (the rest of the observation record is not needed to describe an action).
ELEMENT_FIELDS = ("id", "text", "tag", "role", "type", "value", "bbox", "clickable", "content_desc", "resource_id")

#: Web collections: ``(site host, collection, SQL yielding one description per row)``.
WEB_QUERIES: tuple[tuple[str, str, str], ...] = (
    ("shop", "wishlist", "SELECT p.name FROM wishlist w JOIN products p ON p.id = w.product_id ORDER BY p.name"),
    (
        "shop",
        "cart",
        "SELECT p.name || ' | qty ' || c.qty || ' | colour ' || IFNULL(c.colour, '') || ' | size '"
        " || IFNULL(c.size, '') FROM cart c JOIN products p ON p.id = c.product_id ORDER BY c.id",
    ),
    (
        "shop",
        "orders",
        "SELECT 'order ' || o.id || ' | ' || o.status || ' | ' || IFNULL(o.name, '') || ' | '"
        " || IFNULL(o.address, '') || ' | ' || IFNULL(o.shipping, '') || ' | ' || IFNULL((SELECT"
        " group_concat(p.name || ' x' || i.qty, ', ') FROM order_items i JOIN products p ON p.id = i.product_id"
        " WHERE i.order_id = o.id), '') FROM orders o ORDER BY o.id",
    ),
    (
        "forum",
        "posts",
        "SELECT title || ' | in ' || subforum || ' | by ' || author || ' | score ' || score || ' | ' || body"
        " FROM posts WHERE deleted = 0 ORDER BY id",
    ),
    (
        "forum",
        "comments",
        "SELECT c.body || ' | on ' || IFNULL(p.title, '') || ' | by ' || c.author FROM comments c"
        " LEFT JOIN posts p ON p.id = c.post_id ORDER BY c.id",
    ),
    (
        "forum",
        "votes",
        "SELECT p.title || ' | ' || CASE WHEN v.value > 0 THEN 'upvoted' WHEN v.value < 0 THEN 'downvoted'"
        " ELSE 'no vote' END FROM votes v JOIN posts p ON p.id = v.post_id WHERE v.value != 0 ORDER BY p.id",
    ),
    ("forum", "subscriptions", "SELECT subforum FROM subscriptions ORDER BY subforum"),
    ("forum", "bios", "SELECT name || ' | ' || bio FROM users ORDER BY name"),
    (
        "classifieds",
        "listings",
        "SELECT title || ' | ' || category || ' | $' || price || ' | ' || location || ' | by ' || seller"
        " FROM listings WHERE deleted = 0 ORDER BY id",
    ),
    (
        "classifieds",
        "favourites",
        "SELECT l.title FROM favourites f JOIN listings l ON l.id = f.listing_id ORDER BY l.title",
    ),
)

#: Phone collections: ``(package, collection, SQL)``; the collection is prefixed with the app's short name.
PHONE_QUERIES: tuple[tuple[str, str, str], ...] = (
    (
        "com.guigym.clock",
        "clock.alarms",
        "SELECT printf('%02d:%02d', hour, minute) || ' | ' || IFNULL(label, '') || ' | '"
        " || CASE WHEN enabled THEN 'on' ELSE 'off' END FROM alarms ORDER BY hour, minute, id",
    ),
    ("com.guigym.clock", "clock.cities", "SELECT name FROM cities WHERE added ORDER BY name"),
    (
        "com.guigym.clock",
        "clock.timer",
        "SELECT seconds || ' s | ' || CASE WHEN running THEN 'running' ELSE 'stopped' END FROM timer",
    ),
    (
        "com.guigym.clock",
        "clock.stopwatch",
        "SELECT CASE WHEN running THEN 'running' ELSE 'stopped' END FROM stopwatch",
    ),
    (
        "com.guigym.contacts",
        "contacts.contacts",
        "SELECT first || ' ' || last || ' | ' || IFNULL(phone, '') || ' | ' || IFNULL(email, '') || ' | '"
        " || CASE WHEN starred THEN 'starred' ELSE 'not starred' END FROM contacts ORDER BY id",
    ),
    (
        "com.guigym.expenses",
        "expenses.expenses",
        "SELECT e.name || ' | ' || printf('%d.%02d', e.amount_cents / 100, e.amount_cents % 100) || ' | '"
        " || IFNULL(e.category, '') || ' | ' || IFNULL(a.name, '') FROM expenses e"
        " LEFT JOIN accounts a ON a.id = e.account_id ORDER BY e.id",
    ),
    (
        "com.guigym.expenses",
        "expenses.opened_account",
        "SELECT a.name FROM prefs p JOIN accounts a ON CAST(a.id AS TEXT) = p.value WHERE p.key = 'last_account'",
    ),
    (
        "com.guigym.notes",
        "notes.notes",
        "SELECT title || ' | ' || IFNULL(body, '') FROM notes ORDER BY id",
    ),
    (
        "com.guigym.notes",
        "notes.todos",
        "SELECT text || ' | ' || CASE WHEN done THEN 'done' ELSE 'open' END FROM todos ORDER BY id",
    ),
    (
        "com.guigym.recipes",
        "recipes.favourites",
        "SELECT name FROM recipes WHERE favourite ORDER BY name",
    ),
    ("com.guigym.settings", "settings.values", "SELECT key || ' | ' || value FROM settings ORDER BY key"),
)


def _collect(dbs: Mapping[str, sqlite3.Connection], queries: Iterable[tuple[str, str, str]], prefix: bool) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for owner, collection, sql in queries:
        db = dbs.get(owner)
        if db is None:
            continue
        name = f"{owner}.{collection}" if prefix else collection
        try:
            out[name] = [str(row[0]) for row in db.execute(sql)]
        except sqlite3.Error:
            # A site whose schema changed must not break the step; its validators then see no records.
            out[name] = []
    return out


def web_facts(states: Mapping[str, Any]) -> dict[str, list[str]]:
    """Facts of the bundled sites; ``states`` maps host -> :class:`~gui_envs.web.sites.base.SiteState`."""
    return _collect({host: state.db for host, state in states.items()}, WEB_QUERIES, prefix=True)


def phone_facts(states: Mapping[str, Any]) -> dict[str, list[str]]:
    """Facts of the simulated phone's apps; ``states`` maps package -> state (``{}`` on a real device)."""
    return _collect({pkg: state.db for pkg, state in states.items()}, PHONE_QUERIES, prefix=False)


def trim_elements(elements: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The element records with only :data:`ELEMENT_FIELDS` (what describing an action needs)."""
    return [{k: el[k] for k in ELEMENT_FIELDS if k in el} for el in elements]


def web_record(states: Mapping[str, Any], elements: Iterable[Mapping[str, Any]], url: str) -> dict[str, Any]:
    """The ``verifier_record`` privileged value of a web env (see the module docstring)."""
    return {"facts": web_facts(states), "elements": trim_elements(elements), "location": str(url)}


def phone_record(states: Mapping[str, Any], elements: Iterable[Mapping[str, Any]], app: tuple[str, str]) -> dict[str, Any]:
    """The ``verifier_record`` privileged value of a phone env; ``app`` is ``(package, activity)``."""
    location = f"{app[0]}/{app[1]}" if app[1] else str(app[0])
    return {"facts": phone_facts(states), "elements": trim_elements(elements), "location": location}
