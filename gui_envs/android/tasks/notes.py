"""Notes tasks: notes (create, edit, delete, read) and the to-do list (add, check off, delete by long press)."""

from __future__ import annotations

from gui_envs.android.apps.notes import NOTE_POOL, TODO_POOL, Notes
from gui_envs.android.tasks.base import (
    AnswerTask,
    MaybeMissing,
    PlanStep,
    StateTask,
    long_press,
    open_app,
    search_then_give_up,
    stop,
    tap,
    type_into,
)

NOTES = Notes.package
BODIES = (
    "Call the plumber on Monday",
    "Bring snacks for the team",
    "Pick up the dry cleaning",
    "Renew the car insurance",
    "Email the landlord about the heating",
)


class CreateNote(StateTask):
    name = "notes.create_note"
    app = NOTES

    def setup(self) -> str:
        present = {t for (t,) in self.rows("SELECT title FROM notes")}
        self.title = self.pick([t for t, _ in NOTE_POOL if t not in present])
        self.body = self.pick(BODIES)
        self.may_add("notes")
        return f"Create a note titled '{self.title}' that says '{self.body}'."

    def done(self) -> bool:
        return (
            self.state.one(
                NOTES,
                "SELECT 1 FROM notes WHERE title = ? COLLATE NOCASE AND body = ? COLLATE NOCASE",
                (self.title, self.body),
            )
            is not None
        )

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Notes"),
            tap("New note"),
            type_into("note_title", self.title),
            type_into("note_body", self.body),
            tap(rid="action_save"),
        ]


class _OneNote(StateTask):
    app = NOTES

    def choose(self) -> None:
        self.nid, self.title, self.body = self.pick(
            self.rows("SELECT id, title, body FROM notes ORDER BY id")
        )


class DeleteNote(_OneNote):
    name = "notes.delete_note"

    def setup(self) -> str:
        self.choose()
        self.may_delete("notes", self.nid)
        return f"Delete the note '{self.title}'."

    def done(self) -> bool:
        # Other notes deleted on the way are side effects (StateTask.side_effects).
        return self.state.one(NOTES, "SELECT 1 FROM notes WHERE id = ?", (self.nid,)) is None

    def oracle_plan(self) -> list[PlanStep]:
        return [open_app("Notes"), tap(self.title, rid="note_row", contains=True), tap("Delete")]


class EditNote(MaybeMissing, _OneNote):
    """Feasible on about half the seeds: on the others there is no note of that title (issue 36)."""

    name = "notes.edit_note"

    def setup(self) -> str:
        pool = self.alternatives()
        self.nid, self.title, self.body = self.pick(
            [r for r in self.rows("SELECT id, title, body FROM notes ORDER BY id") if r[1] in pool]
        )
        self.missing = self.title
        self.new_body = self.pick(BODIES)
        if self.keep_or_drop("notes", self.nid):
            self.may_edit("notes", self.nid, "body")
        return f"Replace the text of the note '{self.title}' with '{self.new_body}'."

    def alternatives(self) -> list[str]:
        # The app's search matches inside titles and bodies: a title that another note holds would never come
        # back empty, so it is not drawn.
        notes = self.rows("SELECT id, title, body FROM notes")
        return [
            t for i, t, _ in notes
            if not any(t.lower() in f"{u} {b}".lower() for j, u, b in notes if j != i)
        ]  # fmt: skip

    def done(self) -> bool:
        row = self.state.one(NOTES, "SELECT title, body FROM notes WHERE id = ?", (self.nid,))
        return row is not None and row[0] == self.title and row[1].lower() == self.new_body.lower()

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return search_then_give_up("Notes", self.title)
        return [
            open_app("Notes"),
            tap(self.title, rid="note_row", contains=True),
            type_into("note_body", self.new_body),
            tap(rid="action_save"),
        ]


class ReadNote(AnswerTask):
    name = "notes.read_note"
    app = NOTES

    def setup(self) -> str:
        _, self.title, self.reference_answer = self.pick_by_answer(
            self.rows("SELECT id, title, body FROM notes ORDER BY id"), lambda r: r[2]
        )
        return f"What does the note '{self.title}' say?"

    def candidates(self) -> list[str]:
        return [r[0] for r in self.rows("SELECT DISTINCT body FROM notes")]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Notes"),
            tap(self.title, rid="note_row", contains=True),
            stop(answer=self.reference_answer),
        ]


class AddTodo(StateTask):
    name = "notes.add_todo"
    app = NOTES

    def setup(self) -> str:
        present = {t for (t,) in self.rows("SELECT text FROM todos")}
        self.text = self.pick([t for t in TODO_POOL if t not in present])
        self.may_add("todos")
        return f"Add '{self.text}' to my to-do list."

    def done(self) -> bool:
        return (
            self.state.one(NOTES, "SELECT 1 FROM todos WHERE text = ? COLLATE NOCASE AND done = 0", (self.text,))
            is not None
        )

    def oracle_plan(self) -> list[PlanStep]:
        return [open_app("Notes"), tap("To-do", rid="tab_todo"), type_into("new_task", self.text), tap("Add")]


class CheckTodo(StateTask):
    name = "notes.complete_todo"
    app = NOTES

    def setup(self) -> str:
        self.tid, self.text = self.pick(self.rows("SELECT id, text FROM todos ORDER BY id"))
        self.execute("UPDATE todos SET done = 0 WHERE id = ?", (self.tid,))
        self.may_edit("todos", self.tid, "done")
        return f"Mark '{self.text}' as done in my to-do list."

    def done(self) -> bool:
        return self.state.one(NOTES, "SELECT done FROM todos WHERE id = ?", (self.tid,)) == (1,)

    def oracle_plan(self) -> list[PlanStep]:
        return [open_app("Notes"), tap("To-do", rid="tab_todo"), tap(self.text, role="CheckBox")]


class DeleteTodo(StateTask):
    """Deleting a task needs a long press (the row's menu), as in many Android list apps."""

    name = "notes.delete_todo"
    app = NOTES

    def setup(self) -> str:
        self.tid, self.text = self.pick(self.rows("SELECT id, text FROM todos ORDER BY id"))
        self.may_delete("todos", self.tid)
        return f"Delete the task '{self.text}' from my to-do list."

    def done(self) -> bool:
        # Other tasks deleted on the way are side effects (StateTask.side_effects).
        return self.state.one(NOTES, "SELECT 1 FROM todos WHERE id = ?", (self.tid,)) is None

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Notes"),
            tap("To-do", rid="tab_todo"),
            long_press(self.text, role="CheckBox"),
            tap("Delete task"),
        ]
