"""The phone family's task base: :class:`AndroidTask` over the apps' databases, and the phone oracle's steps.

Templates subclass one of the three judges of the task core (:mod:`gui_envs.tasks.base`), each mixed with
:class:`AndroidTask`:

* :class:`StateTask`: success is :meth:`~gui_envs.tasks.base.StateTask.done`, a predicate over the apps' SQLite
  state (and the foreground app), read from :attr:`AndroidTask.state`;
* :class:`AnswerTask`: ``stop(answer=...)`` judged by :func:`~gui_envs.tasks.judging.answers_match`;
* :class:`InfeasibleTask`: the request cannot be done (CORE, Fig. 7); :meth:`InfeasibleTask.looked` reads the
  app's ``searches`` table, so an agent that gives up without searching fails. No bundled template is
  infeasible on every seed: those that name a contact, expense, note, recipe or switch mix in
  :class:`MaybeMissing`, which removes it from the app on a seed-drawn half (issue 36).

Oracle plans are lists of :class:`~gui_envs.tasks.base.PlanStep`. Each step looks at the current
:class:`PhoneView` (the element list parsed from the hierarchy) and returns a concrete
:class:`~gui_envs.schema.actions.Action` in screenshot pixels, scrolling first when its target is not on screen.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from gui_envs.android.hierarchy import UIElement
from gui_envs.browser.site import SiteState
from gui_envs.schema.actions import Action
from gui_envs.tasks import base as core
from gui_envs.tasks.base import Do, OracleError, PlanStep
from gui_envs.tasks.looking import norm as _norm
from gui_envs.tasks.looking import searched_for

#: Every phone task template by name; filled by subclassing.
TASKS: dict[str, type[core.Task]] = {}


@dataclass
class PhoneState:
    """What a judge reads: each app's database and the foreground app (the env keeps it current).

    Attributes:
        apps: live app state by package (``state.db(package)`` gives the SQLite connection).
        package: the foreground package.
        activity: the foreground activity.
    """

    apps: dict[str, SiteState]
    package: str = ""
    activity: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def db(self, package: str) -> sqlite3.Connection:
        return self.apps[package].db

    def rows(self, package: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.db(package).execute(sql, tuple(params))]

    def one(self, package: str, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        row = self.db(package).execute(sql, tuple(params)).fetchone()
        return tuple(row) if row is not None else None


class AndroidTask(core.Task):
    """Base class of every phone-task template: a task on the bundled apps.

    Class attributes (besides :class:`~gui_envs.tasks.base.Task`'s):
        app: the package the task is about.

    ``state`` is the :class:`PhoneState`; ``visited`` holds ``package/activity`` locations.
    """

    registry = TASKS
    app: ClassVar[str] = ""
    state: PhoneState

    def rows(self, sql: str, params: Sequence[Any] = (), package: str | None = None) -> list[tuple[Any, ...]]:
        return self.state.rows(package or self.app, sql, params)

    def one(self, sql: str, params: Sequence[Any] = (), package: str | None = None) -> tuple[Any, ...] | None:
        return self.state.one(package or self.app, sql, params)

    def execute(self, sql: str, params: Sequence[Any] = (), package: str | None = None) -> None:
        """Change the seeded state in :meth:`setup` (one committed statement)."""
        db = self.state.db(package or self.app)
        with db:
            db.execute(sql, tuple(params))


Snapshot = dict[tuple[str, str], tuple[tuple[str, ...], dict[int, tuple[Any, ...]]]]


def snapshot(state: PhoneState) -> Snapshot:
    """Every editable table of every app (:attr:`~gui_envs.android.apps.base.PhoneApp.editable`), as
    ``{(package, table): (column names, {rowid: row})}``."""
    out: Snapshot = {}
    for package, app_state in state.apps.items():
        for table in getattr(app_state.site, "editable", ()):
            cursor = app_state.db.execute(f"SELECT rowid, * FROM {table}")
            columns = tuple(d[0] for d in cursor.description[1:])
            out[(package, table)] = (columns, {int(r[0]): tuple(r)[1:] for r in cursor})
    return out


class StateTask(AndroidTask, core.StateTask):
    """Success is :meth:`done` over the apps' databases and the foreground app, with no side effect.

    A goal predicate alone pays an agent that does the asked thing among others: deleting every contact in
    turn deletes the asked one too. So the judge also compares every app's editable tables (:func:`snapshot`)
    with their state after :meth:`setup`, and passes only when the sole differences are the ones the template
    allowed in its ``setup`` with :meth:`may_edit`, :meth:`may_delete` and :meth:`may_add`: the asked row's
    asked columns, the asked row's removal, the one new row a create task asks for. Anything else (another
    contact deleted, another alarm or setting switched, a second note, a stopwatch started on the way) is a
    side effect, and the episode scores 0 while it lasts. The final state is what counts: a switch flipped and
    flipped back is no change, as on a real phone. A blind sweep that touches every item in turn therefore
    passes only when the first item it touched was the asked one: a blind guess.
    """

    def __init__(self, state: PhoneState, rng: np.random.Generator) -> None:
        self._edits: dict[tuple[str, str, int], frozenset[str]] = {}
        self._deletes: set[tuple[str, str, int]] = set()
        self._adds: dict[tuple[str, str], int] = {}
        super().__init__(state, rng)
        self.before = snapshot(state)

    # ----- what setup() allows -------------------------------------------------------------------------------
    def may_edit(self, table: str, row: int, *columns: str, package: str | None = None) -> None:
        """Allow ``columns`` of the row with this rowid in ``table`` (of :attr:`app` unless ``package``) to
        change."""
        key = (package or self.app, table, int(row))
        self._edits[key] = self._edits.get(key, frozenset()) | frozenset(columns)

    def may_delete(self, table: str, row: int, package: str | None = None) -> None:
        """Allow the row with this rowid to be deleted."""
        self._deletes.add((package or self.app, table, int(row)))

    def may_add(self, table: str, count: int = 1, package: str | None = None) -> None:
        """Allow up to ``count`` new rows in ``table``."""
        key = (package or self.app, table)
        self._adds[key] = self._adds.get(key, 0) + count

    def rowid(self, table: str, where: str, params: Sequence[Any] = (), package: str | None = None) -> int:
        """The rowid of the one row of ``table`` where ``where`` holds (tables keyed by text, like settings)."""
        row = self.one(f"SELECT rowid FROM {table} WHERE {where}", params, package)
        if row is None:
            raise LookupError(f"{self.name}: no row of {table} where {where} {tuple(params)}")
        return int(row[0])

    # ----- the judge -----------------------------------------------------------------------------------------
    def side_effects(self) -> list[str]:
        """Every change since :meth:`setup` that the template did not allow, described (empty: none)."""
        found: list[str] = []
        now = snapshot(self.state)
        for (package, table), (columns, before) in self.before.items():
            after = now[(package, table)][1]
            added = 0
            for rid in sorted(before.keys() | after.keys()):
                old, new = before.get(rid), after.get(rid)
                if old == new:
                    continue
                where = f"{package.rsplit('.', 1)[-1]}.{table} row {rid}"
                if old is None:
                    added += 1
                elif new is None:
                    if (package, table, rid) not in self._deletes:
                        found.append(f"{where} deleted")
                else:
                    changed = {c for c, a, b in zip(columns, old, new, strict=True) if a != b}
                    if not changed <= self._edits.get((package, table, rid), frozenset()):
                        found.append(f"{where} changed {sorted(changed)}")
            if added > self._adds.get((package, table), 0):
                found.append(f"{package.rsplit('.', 1)[-1]}.{table}: {added} new rows")
        return found

    def evaluate(self, stop: Action | None) -> float:
        if stop is not None and stop.status != "success":
            return 0.0
        # done() first: the comparison of every table only runs once the goal holds.
        return 1.0 if self.done() and not self.side_effects() else 0.0

    def is_done(self) -> bool:
        return self.done() and not self.side_effects()


class AnswerTask(AndroidTask, core.AnswerTask):
    """Information retrieval: ``stop(answer=...)`` matching :attr:`reference_answer` scores 1."""

    def pick_by_answer(self, rows: Sequence[Any], answer: Callable[[Any], str]) -> Any:
        """A seeded row of ``rows``, drawn so that its answer is uniform over their distinct answers.

        Drawing the row uniformly pays a prior: an answer that several rows share (four servings on three
        recipes) would be the reference more often than ``1 / #candidates``, and repeating it would beat a
        blind guess. With :meth:`candidates` equal to the distinct answers of ``rows``, no constant answer then
        passes more often than the audit's chance.
        """
        answers = list(dict.fromkeys(answer(r) for r in rows))
        want = self.pick(answers)
        return self.pick([r for r in rows if answer(r) == want])


class InfeasibleTask(AndroidTask, core.InfeasibleTask):
    """The request cannot be fulfilled. Passing needs both the search and ``stop(status="infeasible")``.

    Attributes set by :meth:`setup`: ``missing``, the thing that does not exist; the judge looks for a
    search for it with no results in the ``searches`` table of :attr:`search_app` (default: :attr:`app`).
    """

    missing: str = ""
    search_app: str | None = None

    def alternatives(self) -> list[str]:
        """The other things this template could have asked for on this seed (its pool, the asked one aside)."""
        return []

    def looked(self) -> bool:
        """Whether the agent searched for :attr:`missing`, and only for it, and saw no results.

        A look counts when it would have found the thing had it been there, so its empty result proves the
        thing is not: the query must be the name (:func:`~gui_envs.tasks.looking.searched_for`, the rule the web
        judges use too). Three looks that do not depend on the request never count:

        * a query holding more than the name, such as the whole instruction pasted into the search field: the
          app would find nothing for it even if the thing existed;
        * a fragment or a single word ("ing", "recipe"): a prober types it on every task, and it passes
          wherever it happens to sit in the name;
        * a sweep of the template's pool: a search for one of :meth:`alternatives` (and not for the asked
          thing) voids the episode's looks, so searching every name the template could ask about never passes.
        """
        return saw_missing(self.state, self.search_app or self.app, self.missing, self.alternatives())


def saw_missing(state: PhoneState, package: str, name: str, pool: Sequence[str]) -> bool:
    """Whether the searches logged by ``package`` looked for ``name`` and came back empty, with no sweep of
    ``pool`` (:func:`~gui_envs.tasks.looking.searched_for`): the phone's look, shared by every infeasible judge."""
    searches = state.rows(package, "SELECT query, results FROM searches")
    # Every search counts for the sweep; only one that came back empty saw that the thing is missing.
    empty = [query for query, results in searches if results == 0]
    return searched_for([q for q, _ in searches], name, pool) and searched_for(empty, name, pool)


class MaybeMissing(core.CanBeInfeasible):
    """A phone state template whose named thing is not in its app on a seed-drawn half of the seeds (issue 36).

    ``setup`` names the thing (:attr:`missing`, searchable by that name in :attr:`app`), then calls
    :meth:`keep_or_drop` with its row, which the infeasible seeds delete. The look is a search for the name that
    found nothing (:func:`saw_missing`); :meth:`alternatives` is the pool the name was drawn from. The phone's
    start screen is the home screen, which shows no app's data, so it reads the same either way.
    """

    missing: str = ""

    def alternatives(self) -> list[str]:
        """The names this template could have asked for on this seed (its pool)."""
        return []

    def keep_or_drop(self, table: str, row: int) -> bool:
        """Draw feasibility (:meth:`draw_feasible`); on an infeasible seed delete ``row`` of ``table`` (of the
        task's app). Returns whether the seed is feasible."""
        if not self.draw_feasible():
            self.execute(f"DELETE FROM {table} WHERE id = ?", (row,))  # type: ignore[attr-defined]
        return self.feasible

    def looked(self) -> bool:
        return saw_missing(self.state, self.app, self.missing, self.alternatives())  # type: ignore[attr-defined]


# ----- oracle plan steps ---------------------------------------------------------------------------------

Finder = Callable[[list[UIElement]], UIElement | None]


@dataclass
class PhoneView:
    """What a phone plan step reads: the screen's elements (device pixels) and ``scale``, screenshot pixels per
    device pixel."""

    elements: list[UIElement]
    scale: float


def find(
    text: str | None = None,
    rid: str | None = None,
    role: str | None = None,
    contains: bool = False,
    package: str | None = None,
) -> Finder:
    """A finder for the first element matching every given criterion.

    Args:
        text: the element's label (text, else content description, else its descendants' text), compared
            case-insensitively; exact unless ``contains``.
        rid: the resource-id's suffix after ``:id/``.
        role: the short class name (``Button``, ``EditText``...).
        contains: match labels that contain ``text``.
        package: restrict to one package (the keyboard and the status bar are other packages).
    """
    want = _norm(text) if text is not None else None

    def finder(elements: list[UIElement]) -> UIElement | None:
        for el in elements:
            if rid is not None and not el.resource_id.endswith(f":id/{rid}"):
                continue
            if role is not None and el.role != role:
                continue
            if package is not None and el.package != package:
                continue
            if want is not None:
                label = _norm(el.label)
                if not (label == want or (contains and want in label)):
                    continue
            return el
        return None

    return finder


def _point(el: UIElement, scale: float, fx: float = 0.5) -> tuple[float, float]:
    x0, y0, x1, y1 = el.bbox
    return (round((x0 + fx * (x1 - x0)) * scale, 1), round((y0 + y1) / 2 * scale, 1))


class Target(PlanStep):
    """Act on the element ``finder`` locates: ``click``, ``long_press``, or ``type`` ``text`` into it.

    When the element is not on screen the step scrolls down (at most ``max_scrolls`` times) and asks again.
    ``fx`` places a click along the element's width (0: left edge, 1: right edge), for seek bars.
    """

    def __init__(
        self,
        finder: Finder,
        what: str,
        kind: str = "click",
        text: str | None = None,
        fx: float = 0.5,
        max_scrolls: int = 4,
    ) -> None:
        self.finder, self.what, self.kind, self.text, self.fx = finder, what, kind, text, fx
        self.max_scrolls, self._scrolls = max_scrolls, 0

    def target(self, view: PhoneView) -> UIElement | None:
        """The element this step acts on, when it is on screen (for the privileged ``target_bbox``)."""
        return self.finder(view.elements)

    def __call__(self, view: PhoneView, screen: tuple[int, int]) -> tuple[Action, bool]:
        el = self.finder(view.elements)
        if el is None:
            if self._scrolls < self.max_scrolls:
                self._scrolls += 1
                return Action.scroll("down"), False
            raise OracleError(f"oracle could not find {self.what} on screen")
        point = _point(el, view.scale, self.fx)
        if self.kind == "type":
            return Action("type", text=self.text or "", point=point), True
        if self.kind == "long_press":
            return Action("long_press", point=point, duration=0.8), True
        return Action("click", point=point), True


def tap(
    text: str | None = None, rid: str | None = None, role: str | None = None, contains: bool = False
) -> Target:
    """Click the element :func:`find` locates (in the foreground app, not the keyboard)."""
    what = " ".join(f"{k}={v!r}" for k, v in (("text", text), ("rid", rid), ("role", role)) if v is not None)
    return Target(find(text, rid, role, contains), what or "element")


def type_into(hint_or_rid: str, text: str, by: str = "rid") -> Target:
    """Type ``text`` into the edit field with this resource id (``by="rid"``) or label (``by="text"``)."""
    finder = (
        find(rid=hint_or_rid, role="EditText") if by == "rid" else find(text=hint_or_rid, role="EditText")
    )
    return Target(finder, f"field {hint_or_rid!r}", kind="type", text=text)


def long_press(text: str, role: str | None = None) -> Target:
    return Target(find(text, role=role), f"element {text!r}", kind="long_press")


def open_app(label: str) -> Do:
    return Do(Action("open_app", app=label))


def press_enter() -> Do:
    return Do(Action.press("enter"))


def back() -> Do:
    return Do(Action.navigate("back"))


def stop(answer: str | None = None, status: str = "success") -> Do:
    return Do(Action.stop(answer=answer, status=status))


def search(query: str) -> list[PlanStep]:
    """Type ``query`` into the screen's search box (every app's is ``search_box``) and press enter."""
    return [type_into("search_box", query), press_enter()]


def search_in(app_label: str, query: str) -> list[PlanStep]:
    """Open the app labelled ``app_label`` and :func:`search` it for ``query``."""
    return [open_app(app_label), *search(query)]


def search_then_give_up(app_label: str, missing: str) -> list[PlanStep]:
    """The plan of an :class:`InfeasibleTask`: search the app for ``missing``, see no results, stop as infeasible.

    The search is what the judge reads (:meth:`InfeasibleTask.looked`), so it cannot be skipped.
    """
    return [*search_in(app_label, missing), stop(status="infeasible")]
