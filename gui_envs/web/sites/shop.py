"""Shop: a catalogue with search, filters and sort, product pages with options and nutrition or spec tables,
wishlist, cart, checkout and orders. All state lives in the env's SQLite database.
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

PER_PAGE = 12
CATEGORIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Snacks": (
        ("Crunchy", "Spicy", "Honey", "Salted", "Smoky", "Zesty", "Maple"),
        ("Almonds", "Pretzels", "Crackers", "Granola Bar", "Trail Mix", "Popcorn", "Rice Cakes"),
    ),
    "Drinks": (
        ("Sparkling", "Iced", "Cold Brew", "Green", "Tropical", "Ginger"),
        ("Lemonade", "Tea", "Coffee", "Juice", "Smoothie", "Soda"),
    ),
    "Electronics": (
        ("Compact", "Wireless", "Smart", "Ultra", "Portable", "Pro"),
        ("Headphones", "Speaker", "Keyboard", "Mouse", "Charger", "Webcam"),
    ),
    "Clothing": (
        ("Cotton", "Wool", "Linen", "Fleece", "Denim", "Classic"),
        ("T-Shirt", "Sweater", "Jacket", "Hoodie", "Scarf", "Shirt"),
    ),
}
BRANDS = ("Acme", "Northwind", "Bluebird", "Kestrel", "Orchid", "Summit", "Tidal", "Juniper")
COLOURS = {
    "Red": "#c0392b",
    "Blue": "#2e6fd8",
    "Green": "#27ae60",
    "Black": "#222222",
    "White": "#f0f0f0",
    "Yellow": "#e1b12c",
    "Purple": "#8e44ad",
}
SIZES = ("S", "M", "L", "XL")
SORTS = {
    "price_asc": ("Price: low to high", "price_cents ASC, id"),
    "price_desc": ("Price: high to low", "price_cents DESC, id"),
    "rating": ("Best rated", "rating DESC, id"),
    "name": ("Name A-Z", "name ASC"),
}
SHIPPING = {"standard": ("Standard (5 days)", 0), "express": ("Express (1 day)", 1500)}

router = Router()


def money(cents: int) -> str:
    """``1999`` -> ``"$19.99"``."""
    return f"${cents // 100}.{cents % 100:02d}"


class ShopSite(WebSite):
    host = "shop"
    title = "Guigym Shop"
    router = router
    nav = (("Catalogue", "/"), ("Wishlist", "/wishlist"), ("Cart", "/cart"), ("Orders", "/orders"))
    schema = """
    CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT UNIQUE, brand TEXT, category TEXT, colour TEXT,
        colours TEXT, sizes TEXT, price_cents INTEGER, rating REAL, stock INTEGER, description TEXT,
        calories INTEGER, protein REAL, fat REAL, carbs REAL, sugar REAL,
        battery_h INTEGER, weight_g INTEGER, warranty_y INTEGER);
    CREATE TABLE wishlist(product_id INTEGER PRIMARY KEY, added INTEGER);
    CREATE TABLE cart(id INTEGER PRIMARY KEY, product_id INTEGER, qty INTEGER, colour TEXT, size TEXT);
    CREATE TABLE orders(id INTEGER PRIMARY KEY, status TEXT, name TEXT, address TEXT, shipping TEXT,
        total_cents INTEGER);
    CREATE TABLE order_items(order_id INTEGER, product_id INTEGER, qty INTEGER, colour TEXT, size TEXT,
        price_cents INTEGER);
    """

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        names: set[str] = set()
        for category, (adjectives, nouns) in CATEGORIES.items():
            count = 0
            while count < 12:
                brand = str(rng.choice(BRANDS))
                name = f"{brand} {rng.choice(adjectives)} {rng.choice(nouns)}"
                if name in names:
                    continue
                names.add(name)
                count += 1
                colour = str(rng.choice(list(COLOURS)))
                food = category in ("Snacks", "Drinks")
                offered = sorted(set(rng.choice(list(COLOURS), size=3).tolist()) | {colour})
                sizes = ",".join(SIZES[: int(rng.integers(2, 5))]) if category == "Clothing" else ""
                base = {"Snacks": 300, "Drinks": 200, "Electronics": 2500, "Clothing": 1500}[category]
                price = int(base + rng.integers(0, base * 3) // 10 * 10 + 9)
                db.execute(
                    "INSERT INTO products(name, brand, category, colour, colours, sizes, price_cents, rating,"
                    " stock, description, calories, protein, fat, carbs, sugar, battery_h, weight_g, warranty_y)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        name,
                        brand,
                        category,
                        colour,
                        ",".join(offered) if category in ("Clothing", "Electronics") else "",
                        sizes,
                        price,
                        round(float(rng.uniform(2.5, 5.0)), 1),
                        int(rng.integers(0, 40)),
                        f"The {name.lower()} from {brand}, a customer favourite in {category.lower()}.",
                        int(rng.integers(8, 60)) * 10 if food else None,
                        round(float(rng.uniform(0, 20)), 1) if food else None,
                        round(float(rng.uniform(0, 25)), 1) if food else None,
                        round(float(rng.uniform(5, 60)), 1) if food else None,
                        round(float(rng.uniform(0, 30)), 1) if food else None,
                        int(rng.integers(4, 40)) if category == "Electronics" else None,
                        int(rng.integers(5, 90)) * 10 if category == "Electronics" else None,
                        int(rng.integers(1, 4)) if category == "Electronics" else None,
                    ),
                )


def _product(db: sqlite3.Connection, pid: str | int) -> sqlite3.Row:
    return row_by_id(db, "products", pid, "product")


def _card(p: sqlite3.Row) -> str:
    return (
        f'<div class="card">{svg_swatch(p["id"], COLOURS[p["colour"]])}'
        f'<a href="/product/{p["id"]}">{html_escape(p["name"])}</a><div class="price">{money(p["price_cents"])}</div>'
        f'<div class="muted">{html_escape(p["category"])} · {p["rating"]:.1f} stars</div></div>'
    )


@router.get("/")
def catalogue(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    q = search_query(req.arg("q"))
    category, sort = req.arg("category"), req.arg("sort") or "name"
    page = max(1, int(req.arg("page") or 1))
    where, params = ["1=1"], []
    if q:
        where.append(f"(name {LIKE_LITERAL} OR category {LIKE_LITERAL})")
        params += [like_contains(q)] * 2
    if category:
        where.append("category = ?")
        params.append(category)
    order = SORTS.get(sort, SORTS["name"])[1]
    rows = db.execute(
        f"SELECT * FROM products WHERE {' AND '.join(where)} ORDER BY {order}", params
    ).fetchall()
    shown = rows[(page - 1) * PER_PAGE : page * PER_PAGE]

    def link(**changes: str) -> str:
        args = {"q": q, "category": category, "sort": sort, **changes}
        return "/?" + urllib.parse.urlencode({k: v for k, v in args.items() if v})

    search = form(
        "/",
        text_input("q", "Search", q) + (hidden("category", category) if category else "") + button("Search"),
        method="get",
        cls="row",
    )
    cats = (
        " ".join(f'<a href="{html_escape(link(category=c, page=""))}">{html_escape(c)}</a>' for c in CATEGORIES)
        + f' <a href="{html_escape(link(category="", page=""))}">All categories</a>'
    )
    sorts = " ".join(f'<a href="{html_escape(link(sort=k, page=""))}">{html_escape(v[0])}</a>' for k, v in SORTS.items())
    pages = (len(rows) + PER_PAGE - 1) // PER_PAGE
    pager = " ".join(
        f'<a href="{html_escape(link(page=str(n)))}">Page {n}</a>' if n != page else f"<b>Page {n}</b>"
        for n in range(1, pages + 1)
    )
    grid = "".join(_card(p) for p in shown) or "<p>No products match.</p>"
    body = (
        f"{search}<div class='row'>Category: {cats}</div><div class='row'>Sort: {sorts}</div>"
        f"<p class='muted'>{len(rows)} products</p><div class='grid'>{grid}</div><div class='row'>{pager}</div>"
    )
    return site.page("Catalogue" + (f": {category}" if category else ""), body)


@router.get("/product/<pid>")
def product(site: ShopSite, db: sqlite3.Connection, req: Request, pid: str) -> Response:
    p = _product(db, pid)
    options = ""
    if p["colours"]:
        options += (
            "<div class='row'>Colour: "
            + "".join(
                f'<label><input type="radio" name="colour" value="{html_escape(c)}"{" checked" if c == p["colour"] else ""}>'
                f" {html_escape(c)}</label>"
                for c in p["colours"].split(",")
            )
            + "</div>"
        )
    if p["sizes"]:
        options += (
            "<div class='row'>Size: "
            + "".join(
                f'<label><input type="radio" name="size" value="{s}"{" checked" if i == 0 else ""}> {s}</label>'
                for i, s in enumerate(p["sizes"].split(","))
            )
            + "</div>"
        )
    buy = form(
        "/cart/add",
        hidden("product_id", p["id"])
        + options
        + "<div class='row'>"
        + text_input("qty", "Quantity", "1", kind="number")
        + button("Add to cart")
        + "</div>",
    )
    in_wishlist = db.execute("SELECT 1 FROM wishlist WHERE product_id=?", (p["id"],)).fetchone()
    wish = (
        form("/wishlist/remove", hidden("product_id", p["id"]) + button("Remove from wishlist"), cls="inline")
        if in_wishlist
        else form("/wishlist/add", hidden("product_id", p["id"]) + button("Add to wishlist"), cls="inline")
    )
    if p["calories"] is not None:
        facts = "<h2>Nutrition facts (per serving)</h2>" + table(
            ("Nutrient", "Amount"),
            (
                ("Calories", f"{p['calories']} calories"),
                ("Protein", f"{p['protein']} g"),
                ("Fat", f"{p['fat']} g"),
                ("Carbohydrates", f"{p['carbs']} g"),
                ("Sugar", f"{p['sugar']} g"),
            ),
        )
    elif p["battery_h"] is not None:
        facts = "<h2>Specifications</h2>" + table(
            ("Spec", "Value"),
            (
                ("Battery life", f"{p['battery_h']} hours"),
                ("Weight", f"{p['weight_g']} g"),
                ("Warranty", f"{p['warranty_y']} years"),
            ),
        )
    else:
        facts = ""
    stock = f"{p['stock']} in stock" if p["stock"] else "Out of stock"
    body = (
        f"<div class='row'>{svg_swatch(p['id'], COLOURS[p['colour']], 160)}<div><p class='price'>"
        f"{money(p['price_cents'])}</p><p>{html_escape(p['description'])}</p><p class='muted'>Brand: {html_escape(p['brand'])} · "
        f"{html_escape(p['category'])} · Rating {p['rating']:.1f} · {stock}</p>{wish}</div></div>{buy}{facts}"
    )
    return site.page(p["name"], body)


@router.post("/wishlist/add")
def wishlist_add(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    p = _product(db, req.arg("product_id"))
    n = db.execute("SELECT COUNT(*) FROM wishlist").fetchone()[0]
    db.execute("INSERT OR IGNORE INTO wishlist(product_id, added) VALUES (?, ?)", (p["id"], n))
    return Response.redirect(f"/product/{p['id']}")


@router.post("/wishlist/remove")
def wishlist_remove(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    pid = int(req.arg("product_id"))
    db.execute("DELETE FROM wishlist WHERE product_id = ?", (pid,))
    return Response.redirect(req.arg("next") or f"/product/{pid}")


@router.get("/wishlist")
def wishlist(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    rows = db.execute(
        "SELECT p.* FROM wishlist w JOIN products p ON p.id = w.product_id ORDER BY w.added"
    ).fetchall()
    items = "".join(
        f"<div class='post row'><a href='/product/{p['id']}'>{html_escape(p['name'])}</a> <span class='price'>"
        f"{money(p['price_cents'])}</span>"
        + form(
            "/wishlist/remove",
            hidden("product_id", p["id"]) + hidden("next", "/wishlist") + button("Remove"),
            cls="inline",
        )
        + "</div>"
        for p in rows
    )
    return site.page("Wishlist", f"<p>{len(rows)} items</p>{items or '<p>Your wishlist is empty.</p>'}")


@router.post("/cart/add")
def cart_add(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    p = _product(db, req.arg("product_id"))
    qty = int(req.arg("qty") or 1)
    if qty < 1:
        raise ValueError("quantity must be at least 1")
    colour, size = req.arg("colour"), req.arg("size")
    row = db.execute(
        "SELECT id FROM cart WHERE product_id=? AND colour=? AND size=?", (p["id"], colour, size)
    ).fetchone()
    if row:
        db.execute("UPDATE cart SET qty = qty + ? WHERE id = ?", (qty, row[0]))
    else:
        db.execute(
            "INSERT INTO cart(product_id, qty, colour, size) VALUES (?,?,?,?)", (p["id"], qty, colour, size)
        )
    return Response.redirect("/cart")


@router.post("/cart/update")
def cart_update(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    qty = int(req.arg("qty") or 0)
    if qty <= 0:
        db.execute("DELETE FROM cart WHERE id = ?", (int(req.arg("item_id")),))
    else:
        db.execute("UPDATE cart SET qty = ? WHERE id = ?", (qty, int(req.arg("item_id"))))
    return Response.redirect("/cart")


@router.post("/cart/remove")
def cart_remove(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    db.execute("DELETE FROM cart WHERE id = ?", (int(req.arg("item_id")),))
    return Response.redirect("/cart")


def cart_rows(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return db.execute(
        "SELECT c.id AS item_id, c.qty, c.colour, c.size, p.* FROM cart c JOIN products p ON p.id = c.product_id"
        " ORDER BY c.id"
    ).fetchall()


@router.get("/cart")
def cart(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    rows = cart_rows(db)
    total = sum(r["qty"] * r["price_cents"] for r in rows)
    items = "".join(
        f"<div class='post row'><a href='/product/{r['id']}'>{html_escape(r['name'])}</a>"
        f"<span class='muted'>{html_escape(' '.join(x for x in (r['colour'], r['size']) if x))}</span>"
        f"<span class='price'>{money(r['price_cents'])}</span>"
        + form(
            "/cart/update",
            hidden("item_id", r["item_id"])
            + text_input("qty", f"Quantity of {r['name']}", str(r["qty"]), "number")
            + button("Update"),
            cls="inline",
        )
        + form("/cart/remove", hidden("item_id", r["item_id"]) + button("Remove"), cls="inline")
        + "</div>"
        for r in rows
    )
    checkout = "<p><a class='button' href='/checkout'>Checkout</a></p>" if rows else ""
    body = f"{items or '<p>Your cart is empty.</p>'}<p>Total: <b>{money(total)}</b></p>{checkout}"
    return site.page("Cart", body)


@router.get("/checkout")
def checkout_form(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    ship = (
        "<div class='row'>Shipping: "
        + "".join(
            f'<label><input type="radio" name="shipping" value="{k}"{" checked" if k == "standard" else ""}>'
            f" {html_escape(v[0])} (+{money(v[1])})</label>"
            for k, v in SHIPPING.items()
        )
        + "</div>"
    )
    inner = (
        "<div class='row'>"
        + text_input("name", "Full name")
        + "</div><div class='row'>"
        + text_input("address", "Address")
        + f"</div>{ship}"
        + button("Place order")
    )
    return site.page("Checkout", form("/checkout", inner))


@router.post("/checkout")
def checkout(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    rows = cart_rows(db)
    name, address, shipping = req.arg("name"), req.arg("address"), req.arg("shipping") or "standard"
    if not rows:
        return site.page("Checkout", "<p>Your cart is empty.</p>")
    if not name or not address:
        return site.page("Checkout", "<p>Please give a name and an address. <a href='/checkout'>Back</a></p>")
    total = sum(r["qty"] * r["price_cents"] for r in rows) + SHIPPING[shipping][1]
    cur = db.execute(
        "INSERT INTO orders(status, name, address, shipping, total_cents) VALUES ('placed',?,?,?,?)",
        (name, address, shipping, total),
    )
    for r in rows:
        db.execute(
            "INSERT INTO order_items VALUES (?,?,?,?,?,?)",
            (cur.lastrowid, r["id"], r["qty"], r["colour"], r["size"], r["price_cents"]),
        )
    db.execute("DELETE FROM cart")
    return Response.redirect(f"/orders/{cur.lastrowid}")


@router.get("/orders")
def orders(site: ShopSite, db: sqlite3.Connection, req: Request) -> Response:
    rows = db.execute("SELECT * FROM orders ORDER BY id DESC").fetchall()
    items = "".join(
        f"<div class='post row'><a href='/orders/{o['id']}'>Order #{o['id']}</a> <span>{html_escape(o['status'])}</span>"
        f"<span class='price'>{money(o['total_cents'])}</span></div>"
        for o in rows
    )
    return site.page("Orders", items or "<p>No orders yet.</p>")


@router.get("/orders/<oid>")
def order(site: ShopSite, db: sqlite3.Connection, req: Request, oid: str) -> Response:
    o = db.execute("SELECT * FROM orders WHERE id = ?", (int(oid),)).fetchone()
    if o is None:
        return Response.not_found("order")
    items = db.execute(
        "SELECT i.*, p.name FROM order_items i JOIN products p ON p.id = i.product_id WHERE order_id = ?",
        (o["id"],),
    ).fetchall()
    rows = table(
        ("Product", "Quantity", "Options", "Price"),
        (
            (i["name"], i["qty"], " ".join(x for x in (i["colour"], i["size"]) if x), money(i["price_cents"]))
            for i in items
        ),
    )
    cancel = form(f"/orders/{o['id']}/cancel", button("Cancel order")) if o["status"] == "placed" else ""
    body = (
        f"<p>Status: <b>{html_escape(o['status'])}</b></p><p>Ship to {html_escape(o['name'])}, {html_escape(o['address'])} "
        f"({html_escape(o['shipping'])})</p>{rows}<p>Total: <b>{money(o['total_cents'])}</b></p>{cancel}"
    )
    return site.page(f"Order #{o['id']}", body)


@router.post("/orders/<oid>/cancel")
def cancel(site: ShopSite, db: sqlite3.Connection, req: Request, oid: str) -> Response:
    db.execute("UPDATE orders SET status = 'cancelled' WHERE id = ? AND status = 'placed'", (int(oid),))
    return Response.redirect(f"/orders/{int(oid)}")
