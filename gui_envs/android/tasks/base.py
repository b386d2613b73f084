"""The phone family's task base: :class:`AndroidTask` over the apps' databases, and the phone oracle's steps.

Templates subclass one of the three judges of the task core (:mod:`gui_envs.tasks.base`), each mixed with
:class:`AndroidTask`:

* :class:`StateTask`: success is :meth:`~gui_envs.tasks.base.StateTask.done`, a predicate over the apps' SQLite
  state (and the foreground app), read from :attr:`AndroidTask.state`;
* :class:`AnswerTask`: ``stop(answer=...)`` judged by :func:`~gui_envs.tasks.judging.answers_match`;
* :class:`InfeasibleTask`: the request cannot be done (CORE, Fig. 7); :meth:`InfeasibleTask.looked` reads the
  app's ``searches`` table, so an agent that gives up without searching fails.

Oracle plans are lists of :class:`~gui_envs.tasks.base.PlanStep`. Each step looks at the current
:class:`PhoneView` (the element list parsed from the hierarchy) and returns a concrete
:class:`~gui_envs.actions.Action` in screenshot pixels, scrolling first when its target is not on screen.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gui_envs.actions import Action
from gui_envs.android.hierarchy import UIElement
from gui_envs.browser.site import SiteState
from gui_envs.tasks import base as core
from gui_envs.tasks.base import Do, OracleError, PlanStep

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


class StateTask(AndroidTask, core.StateTask):
    """Success is :meth:`done` over the apps' databases and the foreground app; see the core's rule."""


class AnswerTask(AndroidTask, core.AnswerTask):
    """Information retrieval: ``stop(answer=...)`` matching :attr:`reference_answer` scores 1."""


class InfeasibleTask(AndroidTask, core.InfeasibleTask):
    """The request cannot be fulfilled. Passing needs both the search and ``stop(status="infeasible")``.

    Attributes set by :meth:`setup`: ``missing``, the thing that does not exist; the judge looks for a
    search for it with no results in the ``searches`` table of :attr:`search_app` (default: :attr:`app`).
    """

    missing: str = ""
    search_app: str | None = None

    def looked(self) -> bool:
        """Whether the agent searched for :attr:`missing` and saw no results."""
        want = _norm(self.missing)
        for query, results in self.state.rows(self.search_app or self.app, "SELECT query, results FROM searches"):
            q = _norm(query)
            if results == 0 and len(q) >= 3 and (q in want or want in q):
                return True
        return False


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


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
