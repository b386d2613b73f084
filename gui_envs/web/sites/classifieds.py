"""Classifieds: listings with search, category/location filters and sort; post, edit and delete an ad;
favourites. Ads with ``mine = 1`` belong to the signed-in user.
"""

from __future__ import annotations

import sqlite3
import urllib.parse

import numpy as np

from gui_envs.browser.site import (
    LIKE_LITERAL,
    Request,
    Response,
    Router,
    html_escape,
    like_contains,
    row_by_id,
    search_query,
)
from gui_envs.web.sites.base import WebSite, button, form, hidden, svg_swatch, table, text_input

CATEGORIES: dict[str, tuple[str, ...]] = {
    "Bikes": ("Road bike", "Mountain bike", "Kids bike", "Folding bike", "Cargo bike", "BMX"),
    "Furniture": ("Oak table", "Sofa", "Bookshelf", "Desk chair", "Wardrobe", "Bed frame"),
    "Phones": ("Smartphone", "Flip phone", "Phone case", "Charger dock", "Tablet", "Smartwatch"),
    "Books": ("Cookbook", "Atlas", "Comic set", "Dictionary", "Novel box set", "Textbook"),
    "Instruments": ("Acoustic guitar", "Keyboard piano", "Violin", "Drum kit", "Ukulele", "Trumpet"),
}
LOCATIONS = ("Springfield", "Riverton", "Lakeside", "Hillview")
CONDITIONS = ("New", "Like new", "Good", "Fair")
ADJECTIVES = ("Vintage", "Barely used", "Sturdy", "Compact", "Large", "Red", "Blue", "Classic")
SELLERS = ("maria_k", "tom.b", "lee88", "sam_sells", "noor", "ivan_p")
SORTS = {
    "new": ("Newest", "id DESC"),
    "price_asc": ("Cheapest first", "price, id"),
    "price_desc": ("Most expensive first", "price DESC, id"),
}
ME = "you"

router = Router()


class ClassifiedsSite(WebSite):
    host = "classifieds"
    title = "Guigym Classifieds"
    router = router
    nav = (("Listings", "/"), ("Post an ad", "/post"), ("My ads", "/my-ads"), ("Favourites", "/favourites"))
    schema = """
    CREATE TABLE listings(id INTEGER PRIMARY KEY, title TEXT, category TEXT, price INTEGER, location TEXT,
        seller TEXT, condition TEXT, description TEXT, mine INTEGER DEFAULT 0, deleted INTEGER DEFAULT 0);
    CREATE TABLE favourites(listing_id INTEGER PRIMARY KEY);
    CREATE TABLE categories(name TEXT PRIMARY KEY);
    """

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        # The categories are data, not code: a task may take one off the site (classifieds.post_ad's
        # infeasible seeds), and every page and the ad form then offer only the others.
        db.executemany("INSERT INTO categories(name) VALUES (?)", [(c,) for c in CATEGORIES])
        titles: set[str] = set()
        for category, items in CATEGORIES.items():
            n = 0
            while n < 8:
                title = f"{rng.choice(ADJECTIVES)} {rng.choice(items).lower()}"
                title = title[0].upper() + title[1:]
                if title in titles:
                    continue
                titles.add(title)
                n += 1
                base = {"Bikes": 150, "Furniture": 120, "Phones": 200, "Books": 15, "Instruments": 250}[
                    category
                ]
                db.execute(
                    "INSERT INTO listings(title, category, price, location, seller, condition, description, mine)"
                    " VALUES (?,?,?,?,?,?,?,?)",
                    (
                        title,
                        category,
                        int(base // 2 + rng.integers(0, base * 2)),
                        str(rng.choice(LOCATIONS)),
                        str(rng.choice(SELLERS)),
                        str(rng.choice(CONDITIONS)),
                        f"{title}, {rng.choice(CONDITIONS).lower()} condition. Pick-up only.",
                        int(n <= 1 and category in ("Bikes", "Books")),
                    ),
                )
        db.execute("UPDATE listings SET seller = ? WHERE mine = 1", (ME,))


def categories(db: sqlite3.Connection) -> tuple[str, ...]:
    """The site's categories, in the seeded order."""
    return tuple(r[0] for r in db.execute("SELECT name FROM categories ORDER BY rowid"))


def listing_row(db: sqlite3.Connection, lid: str | int) -> sqlite3.Row:
    return row_by_id(db, "listings", lid, "listing", live_only=True)


def _line(l: sqlite3.Row) -> str:  # noqa: E741
    return (
        f"<div class='post row'>{svg_swatch(l['id'], '#8a6', 48)}<a href='/listing/{l['id']}'>{html_escape(l['title'])}</a>"
        f"<span class='price'>${l['price']}</span><span class='muted'>{html_escape(l['location'])} · "
        f"{html_escape(l['category'])}</span></div>"
    )


@router.get("/")
def listings(site: ClassifiedsSite, db: sqlite3.Connection, req: Request) -> Response:
    q, category, location, sort = (
        search_query(req.arg("q")),
        req.arg("category"),
        req.arg("location"),
        req.arg("sort") or "new",
    )
    where, params = ["deleted = 0"], []
    for column, value in (("category", category), ("location", location)):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    if q:
        where.append(f"(title {LIKE_LITERAL} OR description {LIKE_LITERAL})")
        params += [like_contains(q)] * 2
    order = SORTS.get(sort, SORTS["new"])[1]
    rows = db.execute(
        f"SELECT * FROM listings WHERE {' AND '.join(where)} ORDER BY {order}", params
    ).fetchall()

    def link(**changes: str) -> str:
        args = {"q": q, "category": category, "location": location, "sort": sort, **changes}
        return "/?" + urllib.parse.urlencode({k: v for k, v in args.items() if v})

    keep = "".join(hidden(k, v) for k, v in (("category", category), ("location", location)) if v)
    search = form("/", text_input("q", "Keyword", q) + keep + button("Search"), method="get", cls="row")
    cats = " ".join(f"<a href='{html_escape(link(category=c))}'>{html_escape(c)}</a>" for c in categories(db))
    locs = " ".join(f"<a href='{html_escape(link(location=c))}'>{html_escape(c)}</a>" for c in LOCATIONS)
    sorts = " ".join(f"<a href='{html_escape(link(sort=k))}'>{html_escape(v[0])}</a>" for k, v in SORTS.items())
    body = (
        f"{search}<div class='row'>Category: {cats} <a href='{html_escape(link(category=''))}'>Any category</a></div>"
        f"<div class='row'>Location: {locs} <a href='{html_escape(link(location=''))}'>Anywhere</a></div>"
        f"<div class='row'>Sort: {sorts}</div><p class='muted'>{len(rows)} listings</p>"
        + ("".join(_line(r) for r in rows) or "<p>No listings match.</p>")
    )
    return site.page("Listings", body)


@router.get("/listing/<lid>")
def listing(site: ClassifiedsSite, db: sqlite3.Connection, req: Request, lid: str) -> Response:
    l = listing_row(db, lid)  # noqa: E741
    fav = db.execute("SELECT 1 FROM favourites WHERE listing_id = ?", (l["id"],)).fetchone()
    toggle = form(
        f"/listing/{l['id']}/favourite",
        button("Remove from favourites" if fav else "Add to favourites"),
        cls="inline",
    )
    own = ""
    if l["mine"]:
        own = f"<a class='button' href='/listing/{l['id']}/edit'>Edit ad</a>" + form(
            f"/listing/{l['id']}/delete", button("Delete ad"), cls="inline"
        )
    facts = table(
        ("Detail", "Value"),
        (
            ("Price", f"${l['price']}"),
            ("Category", l["category"]),
            ("Location", l["location"]),
            ("Condition", l["condition"]),
            ("Seller", l["seller"]),
        ),
    )
    body = (
        f"<div class='row'>{svg_swatch(l['id'], '#8a6', 140)}{facts}</div><p>{html_escape(l['description'])}</p>"
        f"<div class='row'>{toggle}{own}</div>"
    )
    return site.page(l["title"], body)


@router.post("/listing/<lid>/favourite")
def favourite(site: ClassifiedsSite, db: sqlite3.Connection, req: Request, lid: str) -> Response:
    l = listing_row(db, lid)  # noqa: E741
    if db.execute("SELECT 1 FROM favourites WHERE listing_id=?", (l["id"],)).fetchone():
        db.execute("DELETE FROM favourites WHERE listing_id=?", (l["id"],))
    else:
        db.execute("INSERT INTO favourites VALUES (?)", (l["id"],))
    return Response.redirect(f"/listing/{l['id']}")


def _ad_form(db: sqlite3.Connection, action: str, l: sqlite3.Row | None = None) -> str:  # noqa: E741
    def radios(name: str, options: tuple[str, ...], chosen: str) -> str:
        return (
            f"<div class='row'>{name.title()}: "
            + "".join(
                f"<label><input type='radio' name='{name}' value='{html_escape(o)}'{' checked' if o == chosen else ''}> {html_escape(o)}</label>"
                for o in options
            )
            + "</div>"
        )

    inner = (
        "<div class='row'>"
        + text_input("title", "Title", l["title"] if l else "")
        + "</div><div class='row'>"
        + text_input("price", "Price", str(l["price"]) if l else "", "number")
        + "</div>"
        + ("" if l else radios("category", categories(db), "") + radios("location", LOCATIONS, ""))
        + "<div class='row'><label>Description <textarea name='description' aria-label='Description' rows='3' "
        f"cols='60'>{html_escape(l['description']) if l else ''}</textarea></label></div>"
        + button("Save ad" if l else "Publish ad")
    )
    return form(action, inner)


@router.get("/post")
def post_form(site: ClassifiedsSite, db: sqlite3.Connection, req: Request) -> Response:
    return site.page("Post an ad", _ad_form(db, "/post"))


@router.post("/post")
def post(site: ClassifiedsSite, db: sqlite3.Connection, req: Request) -> Response:
    title, category, location = req.arg("title"), req.arg("category"), req.arg("location")
    price = req.arg("price")
    if not (title and category in categories(db) and location in LOCATIONS and price.isdigit()):
        return site.page(
            "Post an ad",
            "<p class='flash'>Please fill in title, a whole-dollar price, category and "
            "location.</p>" + _ad_form(db, "/post"),
        )
    cur = db.execute(
        "INSERT INTO listings(title, category, price, location, seller, condition, description, mine)"
        " VALUES (?,?,?,?,?,?,?,1)",
        (title, category, int(price), location, ME, "Good", req.arg("description")),
    )
    return Response.redirect(f"/listing/{cur.lastrowid}")


@router.get("/listing/<lid>/edit")
def edit_form(site: ClassifiedsSite, db: sqlite3.Connection, req: Request, lid: str) -> Response:
    l = listing_row(db, lid)  # noqa: E741
    if not l["mine"]:
        return site.page("Not allowed", "<p>You can only edit your own ads.</p>")
    return site.page("Edit ad", _ad_form(db, f"/listing/{l['id']}/edit", l))


@router.post("/listing/<lid>/edit")
def edit(site: ClassifiedsSite, db: sqlite3.Connection, req: Request, lid: str) -> Response:
    l = listing_row(db, lid)  # noqa: E741
    price = req.arg("price")
    if l["mine"] and req.arg("title") and price.isdigit():
        db.execute(
            "UPDATE listings SET title=?, price=?, description=? WHERE id=?",
            (req.arg("title"), int(price), req.arg("description"), l["id"]),
        )
    return Response.redirect(f"/listing/{l['id']}")


@router.post("/listing/<lid>/delete")
def delete(site: ClassifiedsSite, db: sqlite3.Connection, req: Request, lid: str) -> Response:
    db.execute("UPDATE listings SET deleted = 1 WHERE id = ? AND mine = 1", (int(lid),))
    return Response.redirect("/my-ads")


@router.get("/my-ads")
def my_ads(site: ClassifiedsSite, db: sqlite3.Connection, req: Request) -> Response:
    rows = db.execute("SELECT * FROM listings WHERE mine = 1 AND deleted = 0 ORDER BY id").fetchall()
    return site.page("My ads", "".join(_line(r) for r in rows) or "<p>You have no ads.</p>")


@router.get("/favourites")
def favourites(site: ClassifiedsSite, db: sqlite3.Connection, req: Request) -> Response:
    rows = db.execute(
        "SELECT l.* FROM favourites f JOIN listings l ON l.id = f.listing_id WHERE l.deleted = 0 ORDER BY l.id"
    ).fetchall()
    return site.page(
        "Favourites",
        f"<p>{len(rows)} saved</p>" + ("".join(_line(r) for r in rows) or "<p>No favourites yet.</p>"),
    )
