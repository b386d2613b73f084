"""Recipes: a searchable recipe book with favourites; a search with no match says "No results".

State: ``recipes(name, cuisine, minutes, servings, calories, favourite)``, ``searches``.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from gui_envs.android.apps.base import SEARCHES_SCHEMA, PhoneApp, row_link, search_form, submit, tabs
from gui_envs.browser.site import (
    LIKE_LITERAL,
    Request,
    Response,
    Router,
    html_escape,
    like_contains,
    search_query,
)

#: The pool recipes are drawn from: (name, cuisine).
RECIPE_POOL: tuple[tuple[str, str], ...] = (
    ("Margherita Pizza", "Italian"),
    ("Spaghetti Carbonara", "Italian"),
    ("Mushroom Risotto", "Italian"),
    ("Chicken Tikka Masala", "Indian"),
    ("Chana Masala", "Indian"),
    ("Palak Paneer", "Indian"),
    ("Beef Tacos", "Mexican"),
    ("Chicken Enchiladas", "Mexican"),
    ("Guacamole", "Mexican"),
    ("Pad Thai", "Thai"),
    ("Green Curry", "Thai"),
    ("Miso Soup", "Japanese"),
    ("Chicken Teriyaki", "Japanese"),
    ("Greek Salad", "Greek"),
    ("Moussaka", "Greek"),
    ("Pancakes", "American"),
    ("Banana Bread", "American"),
    ("Caesar Salad", "American"),
    ("Shakshuka", "Middle Eastern"),
    ("Falafel Wrap", "Middle Eastern"),
)


class Recipes(PhoneApp):
    host = "recipes.phone"
    title = "Recipes"
    package = "com.guigym.recipes"
    label = "Recipes"
    accent = "#e8710a"
    glyph = "R"
    aliases = ("recipe", "cookbook")
    activities = (
        ("/", ".RecipeListActivity"),
        ("/recipe", ".RecipeDetailActivity"),
        ("/search", ".SearchActivity"),
    )
    editable = ("recipes",)
    router = Router()
    schema = (
        "CREATE TABLE recipes (id INTEGER PRIMARY KEY, name TEXT, cuisine TEXT, minutes INTEGER, servings INTEGER,"
        " calories INTEGER, favourite INTEGER);" + SEARCHES_SCHEMA
    )

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        chosen = sorted(int(i) for i in rng.permutation(len(RECIPE_POOL))[:12])
        for i in chosen:
            name, cuisine = RECIPE_POOL[i]
            db.execute(
                "INSERT INTO recipes (name, cuisine, minutes, servings, calories, favourite) VALUES (?, ?, ?, ?, ?, ?)",
                (name, cuisine, *draw_details(rng)),
            )

    def list_screen(self, current: str, body: str, query: str = "") -> Response:
        strip = tabs((("all", "All recipes", "/"), ("favourites", "Favourites", "/favourites")), current)
        return self.screen("Recipes", search_form("/search", "Search recipes", query) + strip + body)


def draw_details(rng: np.random.Generator) -> tuple[int, int, int, int]:
    """A recipe's ``(minutes, servings, calories, favourite)``, drawn as the seeded book draws them."""
    return (
        int(rng.integers(2, 19)) * 5,
        int(rng.integers(1, 7)),
        int(rng.integers(15, 90)) * 10,
        int(rng.random() < 0.25),
    )


def _rows(rows: list[tuple[int, str, str, int]]) -> str:
    return "".join(
        row_link(f"/recipe/{rid}", name, f"{cuisine} \u00b7 {minutes} min", rid="recipe_row")
        for rid, name, cuisine, minutes in rows
    )


_LIST_SQL = "SELECT id, name, cuisine, minutes FROM recipes"


@Recipes.router.get("/")
def _all(site: Recipes, db: sqlite3.Connection, req: Request) -> Response:
    return site.list_screen("all", _rows(list(db.execute(_LIST_SQL + " ORDER BY name"))))


@Recipes.router.get("/favourites")
def _favourites(site: Recipes, db: sqlite3.Connection, req: Request) -> Response:
    rows = list(db.execute(_LIST_SQL + " WHERE favourite = 1 ORDER BY name"))
    return site.list_screen("favourites", _rows(rows) or '<p class="empty">No favourites yet</p>')


@Recipes.router.get("/search")
def _search(site: Recipes, db: sqlite3.Connection, req: Request) -> Response:
    query = search_query(req.arg("q"))
    rows = list(
        db.execute(_LIST_SQL + f" WHERE name {LIKE_LITERAL} OR cuisine {LIKE_LITERAL} ORDER BY name", (like_contains(query),) * 2)
    )
    rows = rows if query else []
    site.log_search(db, query, len(rows))
    empty = f'<p class="empty" id="no_results">No results for \u201c{html_escape(query)}\u201d</p>'
    return site.list_screen("all", _rows(rows) or empty, query)


@Recipes.router.get("/recipe/<rid>")
def _recipe(site: Recipes, db: sqlite3.Connection, req: Request, rid: str) -> Response:
    row = db.execute(
        "SELECT name, cuisine, minutes, servings, calories, favourite FROM recipes WHERE id = ?", (rid,)
    ).fetchone()
    if row is None:
        return Response.not_found("recipe")
    name, cuisine, minutes, servings, calories, fav = row
    label = "Remove from favourites" if fav else "Add to favourites"
    body = (
        f'<p class="muted" id="cuisine">{html_escape(cuisine)}</p>'
        f'<div class="row" data-class="android.widget.LinearLayout"><span class="grow"><span class="t" id="time">'
        f'Time: {minutes} min</span><span class="t" id="servings">Servings: {servings}</span>'
        f'<span class="t" id="calories">Calories: {calories} kcal</span></span></div>'
        f'<form method="post" action="/recipe/{html_escape(rid)}/favourite">{submit(label, rid="favourite")}</form>'
    )
    return site.screen(name, body, up="/")


@Recipes.router.post("/recipe/<rid>/favourite")
def _toggle(site: Recipes, db: sqlite3.Connection, req: Request, rid: str) -> Response:
    db.execute("UPDATE recipes SET favourite = 1 - favourite WHERE id = ?", (rid,))
    return Response.redirect(f"/recipe/{rid}")
