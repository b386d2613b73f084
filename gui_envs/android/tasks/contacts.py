"""Contacts tasks: create, edit, star and delete contacts, read their details, and people who are not there."""

from __future__ import annotations

from gui_envs.android.apps.contacts import FIRST_NAMES, LAST_NAMES, Contacts, full_name
from gui_envs.android.tasks.base import (
    AnswerTask,
    MaybeMissing,
    PlanStep,
    StateTask,
    open_app,
    search_in,
    search_then_give_up,
    stop,
    tap,
    type_into,
)

CONTACTS = Contacts.package


def _contacts(task: StateTask | AnswerTask) -> list[tuple[int, str, str, str, str]]:
    return task.rows("SELECT id, first, last, phone, email FROM contacts ORDER BY id")  # type: ignore[return-value]


def _pick(task: StateTask | AnswerTask) -> tuple[int, str, str, str, str]:
    return task.pick(_contacts(task))


def _phone(task: StateTask | AnswerTask) -> str:
    return f"+1 555-{int(task.rng.integers(100, 1000)):03d}-{int(task.rng.integers(0, 10000)):04d}"


def _open(name: str) -> list[PlanStep]:
    return [*search_in("Contacts", name), tap(name, rid="contact_row", contains=True)]


class CreateContact(StateTask):
    name = "contacts.create_contact"
    app = CONTACTS

    def setup(self) -> str:
        taken = {f for (f,) in self.rows("SELECT first FROM contacts")}
        self.first = self.pick([f for f in FIRST_NAMES if f not in taken])
        self.last = self.pick(LAST_NAMES)
        self.phone = _phone(self)
        self.may_add("contacts")
        return f"Create a contact named {self.first} {self.last} with the phone number {self.phone}."

    def done(self) -> bool:
        return (
            self.state.one(
                CONTACTS,
                "SELECT 1 FROM contacts WHERE first = ? COLLATE NOCASE AND last = ? COLLATE NOCASE AND phone = ?",
                (self.first, self.last, self.phone),
            )
            is not None
        )

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Contacts"),
            tap("Create contact"),
            type_into("first_name", self.first),
            type_into("last_name", self.last),
            type_into("phone", self.phone),
            tap(rid="action_save"),
        ]


class EditPhone(MaybeMissing, StateTask):
    """Feasible on about half the seeds: on the others the person is not in Contacts (issue 36)."""

    name = "contacts.edit_phone"
    app = CONTACTS

    def setup(self) -> str:
        self.cid, first, last, _, _ = self.pick(
            [c for c in _contacts(self) if full_name(c[1], c[2]) in self._unique_names()]
        )
        self.full = self.missing = full_name(first, last)
        self.phone = _phone(self)
        if self.keep_or_drop("contacts", self.cid):
            self.may_edit("contacts", self.cid, "phone")
        return f"Change {self.full}'s phone number to {self.phone}."

    def _unique_names(self) -> list[str]:
        # The search matches inside names: a name another contact's name holds would never come back empty.
        names = [full_name(c[1], c[2]) for c in _contacts(self)]
        return [n for n in names if sum(n.lower() in m.lower() for m in names) == 1]

    def alternatives(self) -> list[str]:
        return self._unique_names()

    def done(self) -> bool:
        return self.state.one(CONTACTS, "SELECT phone FROM contacts WHERE id = ?", (self.cid,)) == (self.phone,)

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return search_then_give_up("Contacts", self.full)
        return _open(self.full) + [tap("Edit"), type_into("phone", self.phone), tap(rid="action_save")]


class DeleteContact(StateTask):
    name = "contacts.delete_contact"
    app = CONTACTS

    def setup(self) -> str:
        self.cid, first, last, _, _ = _pick(self)
        self.full = full_name(first, last)
        self.may_delete("contacts", self.cid)
        return f"Delete the contact {self.full}."

    def done(self) -> bool:
        # Other contacts deleted on the way are side effects (StateTask.side_effects).
        return self.state.one(CONTACTS, "SELECT 1 FROM contacts WHERE id = ?", (self.cid,)) is None

    def oracle_plan(self) -> list[PlanStep]:
        return _open(self.full) + [tap("Delete")]


class StarContact(StateTask):
    name = "contacts.add_favourite"
    app = CONTACTS

    def setup(self) -> str:
        self.cid, first, last, _, _ = _pick(self)
        self.full = full_name(first, last)
        self.execute("UPDATE contacts SET starred = 0 WHERE id = ?", (self.cid,))
        self.may_edit("contacts", self.cid, "starred")
        return f"Add {self.full} to your favourite contacts."

    def done(self) -> bool:
        return self.state.one(CONTACTS, "SELECT starred FROM contacts WHERE id = ?", (self.cid,)) == (1,)

    def oracle_plan(self) -> list[PlanStep]:
        return _open(self.full) + [tap("Add to favourites")]


class PhoneNumber(AnswerTask):
    name = "contacts.phone_number"
    app = CONTACTS

    def setup(self) -> str:
        _, first, last, phone, _ = self.pick_by_answer(_contacts(self), lambda r: r[3])
        self.full = full_name(first, last)
        self.reference_answer = phone
        return f"What is {self.full}'s phone number?"

    def candidates(self) -> list[str]:
        return [r[0] for r in self.rows("SELECT DISTINCT phone FROM contacts")]

    def oracle_plan(self) -> list[PlanStep]:
        return _open(self.full) + [stop(answer=self.reference_answer)]


class EmailAddress(AnswerTask):
    name = "contacts.email_address"
    app = CONTACTS

    def setup(self) -> str:
        _, first, last, _, email = self.pick_by_answer(_contacts(self), lambda r: r[4])
        self.full = full_name(first, last)
        self.reference_answer = email
        return f"What is {self.full}'s email address?"

    def candidates(self) -> list[str]:
        return [r[0] for r in self.rows("SELECT DISTINCT email FROM contacts")]

    def oracle_plan(self) -> list[PlanStep]:
        return _open(self.full) + [stop(answer=self.reference_answer)]
