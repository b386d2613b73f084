"""Expenses: several accounts (``Personal``, ``Pro Expense``, ...), each with its expenses; add, edit, delete,
and a search over every account.

State: ``accounts(name)``, ``expenses(account_id, name, amount_cents, category)``, ``prefs(key, value)``
(``last_account``: the account last opened), ``searches``.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from gui_envs.android.apps.base import (
    SEARCHES_SCHEMA,
    PhoneApp,
    appbar_submit,
    chips,
    fab,
    row_link,
    search_form,
    submit,
    text_field,
)
from gui_envs.browser.site import (
    LIKE_LITERAL,
    Request,
    Response,
    Router,
    html_escape,
    like_contains,
    search_query,
)

ACCOUNTS = ("Personal", "Pro Expense", "Household", "Travel")
CATEGORIES = ("Food", "Transport", "Office", "Utilities", "Other")
ITEMS = {
    "Food": ("Groceries", "Lunch", "Coffee", "Pizza night", "Bakery", "Sushi dinner"),
    "Transport": ("Taxi", "Train ticket", "Fuel", "Bus pass", "Parking"),
    "Office": ("Printer ink", "Notebooks", "Desk lamp", "Software licence", "Monitor stand"),
    "Utilities": ("Electricity bill", "Water bill", "Internet", "Phone plan"),
    "Other": ("Gift", "Haircut", "Cinema", "Books", "Gym membership"),
}


def money(cents: int) -> str:
    """``123456`` -> ``"$1,234.56"``."""
    return f"${cents / 100:,.2f}"


def parse_amount(text: str) -> int:
    """``"12.5"`` / ``"$12.50"`` -> ``1250`` cents; raises ``ValueError`` on anything else."""
    cleaned = text.replace("$", "").replace(",", "").strip()
    value = float(cleaned)
    if not 0 < value < 1_000_000:
        raise ValueError("the amount must be between 0 and 1,000,000")
    return round(value * 100)


class Expenses(PhoneApp):
    host = "expenses.phone"
    title = "Expenses"
    package = "com.guigym.expenses"
    label = "Expenses"
    accent = "#0b8043"
    glyph = "$"
    aliases = ("expense", "pro expense", "budget")
    activities = (
        ("/", ".AccountsActivity"),
        ("/account", ".ExpenseListActivity"),
        ("/expense", ".ExpenseEditActivity"),
        ("/search", ".SearchActivity"),
    )
    editable = ("expenses",)
    router = Router()
    schema = (
        "CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT);"
        "CREATE TABLE expenses (id INTEGER PRIMARY KEY, account_id INTEGER, name TEXT, amount_cents INTEGER,"
        " category TEXT);"
        "CREATE TABLE prefs (key TEXT PRIMARY KEY, value TEXT);" + SEARCHES_SCHEMA
    )

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        for name in ACCOUNTS:
            db.execute("INSERT INTO accounts (name) VALUES (?)", (name,))
        for account_id in range(1, len(ACCOUNTS) + 1):
            used: set[str] = set()
            for _ in range(int(rng.integers(3, 6))):
                category = CATEGORIES[int(rng.integers(len(CATEGORIES)))]
                name = ITEMS[category][int(rng.integers(len(ITEMS[category])))]
                if name in used:
                    continue
                used.add(name)
                cents = int(rng.integers(3, 400)) * 100 + int(rng.choice([0, 25, 50, 99]))
                db.execute(
                    "INSERT INTO expenses (account_id, name, amount_cents, category) VALUES (?, ?, ?, ?)",
                    (account_id, name, cents, category),
                )


def _rows(db: sqlite3.Connection, where: str, params: tuple[object, ...]) -> str:
    return "".join(
        row_link(f"/expense/{xid}", name, f"{money(cents)} \u00b7 {category}", rid="expense_row")
        for xid, name, cents, category in db.execute(
            f"SELECT id, name, amount_cents, category FROM expenses WHERE {where} ORDER BY id", params
        )
    )


def _form(action: str, name: str = "", amount: str = "", category: str = "Other") -> str:
    return (
        f'<form method="post" action="{html_escape(action)}" id="expense_form">'
        f"{text_field('name', 'Name', name, rid='name')}{text_field('amount', 'Amount', amount, rid='amount')}"
        f"<h2>Category</h2>{chips('category', CATEGORIES, category, rid='category')}"
        f"{submit('Save', rid='save')}</form>"
    )


@Expenses.router.get("/")
def _accounts(site: Expenses, db: sqlite3.Connection, req: Request) -> Response:
    rows = "".join(
        row_link(f"/account/{aid}", name, f"{count} expenses \u00b7 {money(total or 0)}", rid="account_row")
        for aid, name, count, total in db.execute(
            "SELECT a.id, a.name, COUNT(x.id), SUM(x.amount_cents) FROM accounts a "
            "LEFT JOIN expenses x ON x.account_id = a.id GROUP BY a.id ORDER BY a.id"
        )
    )
    return site.screen("Accounts", search_form("/search", "Search expenses") + rows)


@Expenses.router.get("/search")
def _search(site: Expenses, db: sqlite3.Connection, req: Request) -> Response:
    query = search_query(req.arg("q"))
    like = like_contains(query)
    count = (
        db.execute(f"SELECT COUNT(*) FROM expenses WHERE name {LIKE_LITERAL}", (like,)).fetchone()[0] if query else 0
    )
    rows = _rows(db, f"name {LIKE_LITERAL}", (like,)) if query else ""
    return site.search_screen(db, query, count, rows, "Search", "Search expenses", "No expenses match")


@Expenses.router.get("/account/<aid>")
def _account(site: Expenses, db: sqlite3.Connection, req: Request, aid: str) -> Response:
    row = db.execute("SELECT name FROM accounts WHERE id = ?", (aid,)).fetchone()
    if row is None:
        return Response.not_found("account")
    # The app remembers the account last opened, as many do (the "open account X" task reads it).
    db.execute("INSERT OR REPLACE INTO prefs (key, value) VALUES ('last_account', ?)", (aid,))
    total = db.execute(
        "SELECT COALESCE(SUM(amount_cents), 0) FROM expenses WHERE account_id = ?", (aid,)
    ).fetchone()[0]
    head = f'<p class="muted" id="account_total">Total: {money(total)}</p>'
    rows = _rows(db, "account_id = ?", (aid,)) or '<p class="empty">No expenses yet</p>'
    return site.screen(row[0], head + rows + fab(f"/account/{aid}/new", "Add expense"), up="/")


@Expenses.router.get("/account/<aid>/new")
def _new(site: Expenses, db: sqlite3.Connection, req: Request, aid: str) -> Response:
    return site.screen(
        "New expense",
        _form(f"/account/{aid}/new"),
        up=f"/account/{aid}",
        actions=appbar_submit("Save", "expense_form", "action_save"),
    )


@Expenses.router.post("/account/<aid>/new")
def _add(site: Expenses, db: sqlite3.Connection, req: Request, aid: str) -> Response:
    name = req.arg("name")
    if not name:
        raise ValueError("give the expense a name")
    category = req.arg("category") or "Other"
    db.execute(
        "INSERT INTO expenses (account_id, name, amount_cents, category) VALUES (?, ?, ?, ?)",
        (aid, name, parse_amount(req.arg("amount")), category if category in CATEGORIES else "Other"),
    )
    return Response.redirect(f"/account/{aid}")


@Expenses.router.get("/expense/<xid>")
def _edit(site: Expenses, db: sqlite3.Connection, req: Request, xid: str) -> Response:
    row = db.execute(
        "SELECT account_id, name, amount_cents, category FROM expenses WHERE id = ?", (xid,)
    ).fetchone()
    if row is None:
        return Response.not_found("expense")
    aid, name, cents, category = row
    delete = f'<form method="post" action="/expense/{html_escape(xid)}/delete">{submit("Delete", rid="delete", flat=True)}</form>'
    return site.screen(
        "Edit expense",
        _form(f"/expense/{xid}", name, f"{cents / 100:.2f}", category) + delete,
        up=f"/account/{aid}",
        actions=appbar_submit("Save", "expense_form", "action_save"),
    )


@Expenses.router.post("/expense/<xid>")
def _save(site: Expenses, db: sqlite3.Connection, req: Request, xid: str) -> Response:
    row = db.execute("SELECT account_id FROM expenses WHERE id = ?", (xid,)).fetchone()
    if row is None:
        return Response.not_found("expense")
    category = req.arg("category") or "Other"
    db.execute(
        "UPDATE expenses SET name = ?, amount_cents = ?, category = ? WHERE id = ?",
        (
            req.arg("name"),
            parse_amount(req.arg("amount")),
            category if category in CATEGORIES else "Other",
            xid,
        ),
    )
    return Response.redirect(f"/account/{row[0]}")


@Expenses.router.post("/expense/<xid>/delete")
def _delete(site: Expenses, db: sqlite3.Connection, req: Request, xid: str) -> Response:
    row = db.execute("SELECT account_id FROM expenses WHERE id = ?", (xid,)).fetchone()
    if row is None:
        return Response.not_found("expense")
    db.execute("DELETE FROM expenses WHERE id = ?", (xid,))
    return Response.redirect(f"/account/{row[0]}")
