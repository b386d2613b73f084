"""Tasks that span two apps: read something in one, write it down in another (as in AndroidWorld)."""

from __future__ import annotations

from gui_envs.android.apps.contacts import Contacts, full_name
from gui_envs.android.apps.expenses import ACCOUNTS, Expenses, money
from gui_envs.android.apps.notes import Notes
from gui_envs.android.apps.recipes import Recipes
from gui_envs.android.tasks.base import (
    PhoneState,
    PlanStep,
    StateTask,
    open_app,
    search_in,
    tap,
    type_into,
)

NOTES = Notes.package


def _note_has(state: PhoneState, title: str, needle: str) -> bool:
    for (body,) in state.rows(NOTES, "SELECT body FROM notes WHERE title = ? COLLATE NOCASE", (title,)):
        if needle.lower().replace(",", "") in body.lower().replace(",", ""):
            return True
    return False


class NoteAccountTotal(StateTask):
    """Read an account's total in Expenses (clicking 'Pro Expense' first, often), then note it down."""

    name = "multi.note_account_total"
    app = Expenses.package

    def setup(self) -> str:
        self.account = "Pro Expense" if self.rng.random() < 0.5 else self.pick(ACCOUNTS)
        (cents,) = self.one(
            "SELECT COALESCE(SUM(x.amount_cents), 0) FROM expenses x JOIN accounts a ON a.id = x.account_id "
            "WHERE a.name = ?",
            (self.account,),
        ) or (0,)
        self.total = money(cents)
        self.title = f"{self.account} total"
        self.may_add("notes", package=NOTES)
        return f"Find the total of the '{self.account}' account in Expenses and save it in a new note titled '{self.title}'."

    def done(self) -> bool:
        return _note_has(self.state, self.title, self.total.lstrip("$"))

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Expenses"),
            tap(self.account, rid="account_row", contains=True),
            open_app("Notes"),
            tap("New note"),
            type_into("note_title", self.title),
            type_into("note_body", self.total),
            tap(rid="action_save"),
        ]


class NoteContactPhone(StateTask):
    name = "multi.note_contact_phone"
    app = Contacts.package

    def setup(self) -> str:
        _, first, last, self.phone = self.pick(
            self.rows("SELECT id, first, last, phone FROM contacts ORDER BY id")
        )
        self.full = full_name(first, last)
        self.title = f"Call {first}"
        self.may_add("notes", package=NOTES)
        return (
            f"Look up {self.full}'s phone number in Contacts and save it in a new note titled '{self.title}'."
        )

    def done(self) -> bool:
        return _note_has(self.state, self.title, self.phone)

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *search_in("Contacts", self.full),
            tap(self.full, rid="contact_row", contains=True),
            open_app("Notes"),
            tap("New note"),
            type_into("note_title", self.title),
            type_into("note_body", self.phone),
            tap(rid="action_save"),
        ]


class FavouriteQuickestRecipe(StateTask):
    """Compare recipes, then act: favourite the quickest recipe of a cuisine."""

    name = "multi.favourite_quickest_recipe"
    app = Recipes.package

    def setup(self) -> str:
        (self.cuisine,) = self.pick(self.rows("SELECT DISTINCT cuisine FROM recipes ORDER BY cuisine"))
        rows = self.rows(
            "SELECT id, name, minutes FROM recipes WHERE cuisine = ? ORDER BY minutes, id", (self.cuisine,)
        )
        self.rid, self.recipe, minutes = rows[0]
        # Ties would make the instruction ambiguous: make the quickest strictly quickest.
        for other_id, _, other_minutes in rows[1:]:
            if other_minutes <= minutes:
                self.execute("UPDATE recipes SET minutes = ? WHERE id = ?", (minutes + 5, other_id))
        self.execute("UPDATE recipes SET favourite = 0 WHERE cuisine = ?", (self.cuisine,))
        self.may_edit("recipes", self.rid, "favourite")
        return f"Add the quickest {self.cuisine} recipe to your favourites."

    def done(self) -> bool:
        favs = self.state.rows(
            Recipes.package, "SELECT id FROM recipes WHERE cuisine = ? AND favourite = 1", (self.cuisine,)
        )
        return favs == [(self.rid,)]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *search_in("Recipes", self.cuisine),
            tap(self.recipe, rid="recipe_row", contains=True),
            tap("Add to favourites"),
        ]
