"""Expenses tasks: accounts (CORE's "clicked 'Pro Expense'"), add, edit and delete expenses, totals."""

from __future__ import annotations

from gui_envs.android.apps.expenses import ACCOUNTS, CATEGORIES, ITEMS, Expenses, money
from gui_envs.android.tasks.base import (
    AnswerTask,
    MaybeMissing,
    PlanStep,
    StateTask,
    open_app,
    search_then_give_up,
    stop,
    tap,
    type_into,
)

EXPENSES = Expenses.package


def _expenses(task: StateTask | AnswerTask) -> list[tuple[int, str, int, str, str]]:
    return task.rows(  # type: ignore[return-value]
        "SELECT x.id, x.name, x.amount_cents, x.category, a.name FROM expenses x JOIN accounts a ON a.id = x.account_id"
        " ORDER BY x.id"
    )


def _pick_expense(task: StateTask | AnswerTask) -> tuple[int, str, int, str, str]:
    return task.pick(_expenses(task))


def _dollars(cents: int) -> str:
    return f"{cents / 100:.2f}"


class OpenAccount(StateTask):
    """CORE's label function "clicked 'Pro Expense'": open one account's expense list."""

    name = "expenses.open_account"
    app = EXPENSES

    def setup(self) -> str:
        # Uniform over the accounts: a skewed draw ("Pro Expense" on 5 seeds of 8) pays a policy that opens the
        # commonest account without reading the instruction.
        self.account = self.pick(ACCOUNTS)
        (self.account_id,) = self.one("SELECT id FROM accounts WHERE name = ?", (self.account,)) or (None,)
        self.opened_other = False
        return f"Open the '{self.account}' account in Expenses."

    def done(self) -> bool:
        """The asked account is open, and no other account was opened in the episode.

        Opening an account changes nothing but ``last_account``, so there is no side effect to compare; what a
        sweep does instead is open account after account until one is the asked one. The env asks this judge
        after every step and a tap opens one account, so every account opened is seen here; once another was
        opened the episode cannot pass, and a sweep passes only when its first account was the asked one (a
        blind guess). An agent that opened a wrong account first fails, the price of a judge a sweep cannot pass.
        """
        row = self.state.one(EXPENSES, "SELECT value FROM prefs WHERE key = 'last_account'")
        opened = str(row[0]) if row is not None else None
        if opened is not None and opened != str(self.account_id) and self.state.package == EXPENSES:
            self.opened_other = True
        return opened == str(self.account_id) and self.state.package == EXPENSES and not self.opened_other

    def oracle_plan(self) -> list[PlanStep]:
        return [open_app("Expenses"), tap(self.account, rid="account_row", contains=True)]


class AddExpense(StateTask):
    name = "expenses.add_expense"
    app = EXPENSES

    def setup(self) -> str:
        self.account = self.pick(ACCOUNTS)
        self.category = self.pick(CATEGORIES)
        self.item = self.pick(ITEMS[self.category])
        self.cents = int(self.rng.integers(2, 300)) * 100 + int(self.rng.choice([0, 50, 75]))
        self.may_add("expenses")
        return (
            f"In Expenses, add '{self.item}' costing {money(self.cents)} to the '{self.account}' account "
            f"under {self.category}."
        )

    def done(self) -> bool:
        row = self.state.one(
            EXPENSES,
            "SELECT 1 FROM expenses x JOIN accounts a ON a.id = x.account_id WHERE a.name = ? AND x.name = ? "
            "COLLATE NOCASE AND x.amount_cents = ? AND x.category = ?",
            (self.account, self.item, self.cents, self.category),
        )
        return row is not None

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Expenses"),
            tap(self.account, rid="account_row", contains=True),
            tap("Add expense"),
            type_into("name", self.item),
            type_into("amount", f"{self.cents / 100:.2f}"),
            tap(self.category, role="RadioButton"),
            tap(rid="action_save"),
        ]


class DeleteExpense(MaybeMissing, StateTask):
    """Feasible on about half the seeds: on the others the expense is not in the account (issue 36)."""

    name = "expenses.delete_expense"
    app = EXPENSES

    def setup(self) -> str:
        self.xid, self.item, _, _, self.account = self.pick([x for x in _expenses(self) if x[1] in self.alternatives()])
        self.missing = self.item
        if self.keep_or_drop("expenses", self.xid):
            self.may_delete("expenses", self.xid)
        return f"Delete the '{self.item}' expense from the '{self.account}' account."

    def alternatives(self) -> list[str]:
        # The app's search matches inside names: a name held by another expense ("Books" in "Notebooks", or a
        # second "Coffee") would never come back empty, so it is not drawn.
        names = [n for (n,) in self.rows("SELECT name FROM expenses")]
        return [n for n in names if sum(n.lower() in m.lower() for m in names) == 1]

    def done(self) -> bool:
        # Other expenses deleted on the way are side effects (StateTask.side_effects).
        return self.state.one(EXPENSES, "SELECT 1 FROM expenses WHERE id = ?", (self.xid,)) is None

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return search_then_give_up("Expenses", self.item)
        return [
            open_app("Expenses"),
            tap(self.account, rid="account_row", contains=True),
            tap(self.item, rid="expense_row", contains=True),
            tap("Delete"),
        ]


class EditExpenseAmount(StateTask):
    name = "expenses.edit_amount"
    app = EXPENSES

    def setup(self) -> str:
        self.xid, self.item, cents, _, self.account = _pick_expense(self)
        self.cents = cents + int(self.rng.integers(1, 50)) * 100
        self.may_edit("expenses", self.xid, "amount_cents")
        return f"Change the amount of '{self.item}' in the '{self.account}' account to {money(self.cents)}."

    def done(self) -> bool:
        return self.state.one(EXPENSES, "SELECT amount_cents FROM expenses WHERE id = ?", (self.xid,)) == (
            self.cents,
        )

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Expenses"),
            tap(self.account, rid="account_row", contains=True),
            tap(self.item, rid="expense_row", contains=True),
            type_into("amount", f"{self.cents / 100:.2f}"),
            tap(rid="action_save"),
        ]


class AccountTotal(AnswerTask):
    name = "expenses.account_total"
    app = EXPENSES

    def setup(self) -> str:
        self.account, total = self.pick_by_answer(self._totals(), lambda r: r[1])
        self.reference_answer = total
        return f"What is the total of the '{self.account}' account in Expenses? Answer in dollars."

    def _totals(self) -> list[tuple[str, str]]:
        rows = self.rows(
            "SELECT a.name, COALESCE(SUM(x.amount_cents), 0) FROM accounts a LEFT JOIN expenses x "
            "ON a.id = x.account_id GROUP BY a.id ORDER BY a.id"
        )
        return [(name, _dollars(cents)) for name, cents in rows]

    def candidates(self) -> list[str]:
        # The template's one parameter is the account: a blind guesser picks one account's total.
        return [total for _, total in self._totals()]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Expenses"),
            tap(self.account, rid="account_row", contains=True),
            stop(answer=f"${self.reference_answer}"),
        ]


class ExpenseAmount(AnswerTask):
    name = "expenses.expense_amount"
    app = EXPENSES

    def setup(self) -> str:
        _, self.item, cents, _, self.account = self.pick_by_answer(_expenses(self), lambda r: _dollars(r[2]))
        self.reference_answer = _dollars(cents)
        return f"How much was '{self.item}' in the '{self.account}' account? Answer in dollars."

    def candidates(self) -> list[str]:
        return list(dict.fromkeys(_dollars(r[2]) for r in _expenses(self)))

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Expenses"),
            tap(self.account, rid="account_row", contains=True),
            stop(answer=self.reference_answer),
        ]
