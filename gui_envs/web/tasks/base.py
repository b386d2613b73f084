"""The web family's task base: :class:`WebTask` over one site's state, and the web oracle's plan steps.

Templates subclass one of the three judges of the task core (:mod:`gui_envs.tasks.base`), each mixed with
:class:`WebTask`:

* :class:`StateTask`: success is :meth:`~gui_envs.tasks.base.StateTask.done`: the template's
  :meth:`StateTask.goal`, a predicate over the site's database and/or the current URL
  (:attr:`WebTask.where`), and no side effect (every table the task did not ask to change is
  as the setup left it);
* :class:`AnswerTask`: ``stop(answer=...)`` judged by :func:`~gui_envs.tasks.judging.answers_match`;
* :class:`InfeasibleTask`: each template's :meth:`~gui_envs.tasks.base.InfeasibleTask.looked` reads the pages
  visited (:meth:`WebTask.visited_here`). No bundled template is infeasible on every seed: six state templates
  mix in :class:`~gui_envs.tasks.base.CanBeInfeasible` instead, and on a seed-drawn half of their seeds the
  product, size, post, forum, ad or category they name is not in the site's data (issue 36); their looks follow
  :mod:`gui_envs.tasks.looking`.

Oracle plans are lists of :class:`~gui_envs.tasks.base.PlanStep`; each step looks at the current
:class:`PageView` and returns the concrete :class:`Action` to take (resolving "the link whose text is X" to an
element id at run time, and scrolling first when the target is off-screen).
"""

from __future__ import annotations

import re
import urllib.parse
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

from gui_envs.browser.observation import PageView
from gui_envs.browser.site import SiteState, origin
from gui_envs.schema.actions import Action
from gui_envs.tasks import base as core
from gui_envs.tasks.base import Do, OracleError, PlanStep

#: Every web task template by name; filled by subclassing.
TASKS: dict[str, type[core.Task]] = {}


class WebTask(core.Task):
    """Base class of every web task template: a task on one bundled site.

    Class attributes (besides :class:`~gui_envs.tasks.base.Task`'s):
        site: the site host it runs on (``shop``, ``forum``, ``classifieds``).
        difficulty: rough number of oracle steps (1 = one action).

    ``state`` is the site's :class:`~gui_envs.browser.site.SiteState`; :meth:`setup` may also set
    ``start_path`` (default ``/``). ``visited`` holds URLs.
    """

    registry = TASKS
    site: ClassVar[str] = ""
    difficulty: ClassVar[int] = 1
    state: SiteState

    def __init__(self, state: SiteState, rng: Any) -> None:
        self.start_path = "/"
        self.home = origin(self.site)
        super().__init__(state, rng)

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return self.state.query(sql, params)

    def one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.state.one(sql, params)

    @property
    def where(self) -> str:
        """The URL the page shows now: the last entry of :attr:`visited` (``""`` before the first)."""
        return self.visited[-1] if self.visited else ""

    def visited_here(self) -> list[str]:
        """The visited URLs on this task's site, in order (read them with :func:`path_of` / :func:`query_of`)."""
        return [u for u in self.visited if u == self.home or u.startswith(self.home + "/")]


Rows = list[tuple[Any, ...]]


class StateTask(WebTask, core.StateTask):
    """Success is :meth:`done` over the database and :attr:`where` (the URL); see the core's rule.

    A template writes :meth:`goal`; :meth:`done` adds the side-effect rule. A judge that only asks whether the
    goal holds pays an agent that does not know which item the task is about: add every product to the cart
    until the right one is in it, upvote post after post. So every table of the site's database is compared
    with a snapshot taken right after :meth:`setup`:

    * tables outside :attr:`changes` must end as they were (a task that asks for no change, such as a search,
      fails once the agent changed anything);
    * the tables in :attr:`changes` are the goal's to judge, and every goal asks for the exact change the task
      names, through :meth:`diff` (one more cart row, vote or favourite than asked is a different change).

    An undone side effect is no side effect: the state at the step is what counts, so an agent that removes
    the extra item again can still pass. Page views are not state; "open X" goals use :meth:`opened_first`.
    """

    #: The tables the task asks to change; the goal judges their change, every other table must stay as it was.
    changes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, state: SiteState, rng: Any) -> None:
        super().__init__(state, rng)
        self.snapshot = state.tables()

    def goal(self) -> bool:
        """Whether what the task asked for holds (exactly: see the class docstring)."""
        raise NotImplementedError

    def done(self) -> bool:
        return not self.side_effects() and self.goal()

    def side_effects(self) -> list[str]:
        """The tables outside :attr:`changes` whose rows differ from the setup's snapshot."""
        now = self.state.tables()
        return [t for t in sorted(set(now) | set(self.snapshot)) if t not in self.changes and now.get(t) != self.snapshot.get(t)]

    def diff(self, table: str, *columns: str) -> tuple[Rows, Rows]:
        """``(added, removed)``: the rows of ``table`` (only ``columns``) that are new since the setup's
        snapshot, and the ones that are gone, each sorted. An updated row is one of each: after product 7 went
        into an empty cart, ``diff("cart", "product_id", "qty") == ([(7, 1)], [])``.
        """
        after = self.state.table(table).project(columns)
        before = self.snapshot[table].project(columns) if table in self.snapshot else Counter()
        return sorted((after - before).elements(), key=_row_key), sorted((before - after).elements(), key=_row_key)

    def opened_first(self, kind: str, item: Any) -> bool:
        """Whether the page of ``item`` (``kind`` + ``item``: ``"/product/" + "7"``) is open and no page of another
        item of that kind (nor a page under one, ``/post/4/edit``) was opened in the episode.

        Opening a page changes nothing, so "open X" has no side effect to compare; what a sweep does instead is
        open item after item until one is the target. Under this rule it passes only when its first item page
        was the target: a blind guess. An agent that opened a wrong item first fails the episode, which is the
        price of a judge that a sweep cannot pass.
        """
        want = str(item)
        for path in map(path_of, self.visited_here()):
            if path.startswith(kind) and path[len(kind) :].split("/")[0] != want:
                return False
        return path_of(self.where) == kind + want


class AnswerTask(WebTask, core.AnswerTask):
    """Information retrieval: ``stop(answer=...)`` matching :attr:`reference_answer` scores 1."""


class InfeasibleTask(WebTask, core.InfeasibleTask):
    """The request cannot be fulfilled: :meth:`looked` (the page that shows it, from :meth:`visited_here`) and
    ``stop(status="infeasible")`` pass."""


def _row_key(row: tuple[Any, ...]) -> list[tuple[bool, str, Any]]:
    # Rows sort as Python sorts them (ids in numeric order), with NULLs and mixed types kept comparable.
    return [(v is None, type(v).__name__, v) for v in row]


def path_of(url: str) -> str:
    """The path of ``url`` without a trailing slash (``"/post/3"``), for judging which page is open.

    >>> path_of("http://forum/post/3/?sort=top")
    '/post/3'
    """
    return urllib.parse.urlsplit(url).path.rstrip("/")


def query_of(url: str) -> dict[str, str]:
    """The query arguments of ``url`` (the last value of a repeated one), for judging filters and searches.

    >>> query_of("http://shop/?q=tea&sort=rating")
    {'q': 'tea', 'sort': 'rating'}
    """
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


# ----- oracle plan steps ---------------------------------------------------------------------------------

Finder = Callable[[PageView], dict[str, Any] | None]


def reach(el: dict[str, Any], viewport: tuple[int, int]) -> Action | None:
    """A scroll that brings ``el`` into the viewport, or ``None`` when it is already inside."""
    _, height = viewport
    _, y0, _, y1 = el["bbox"]
    if y0 >= 0 and y1 <= height:
        return None
    centre = (y0 + y1) / 2
    delta = centre - height / 2
    return Action.scroll("down" if delta > 0 else "up", amount=float(round(abs(delta))))


class Target(PlanStep):
    """Act on the element ``finder`` locates: click it, or type ``text`` into it."""

    def __init__(self, finder: Finder, what: str, text: str | None = None, kind: str = "click") -> None:
        self.finder, self.what, self.text, self.kind = finder, what, text, kind

    def __call__(self, view: PageView, viewport: tuple[int, int]) -> tuple[Action, bool]:
        el = self.finder(view)
        if el is None:
            raise OracleError(f"oracle could not find {self.what} on {view.url}")
        scroll = reach(el, viewport)
        if scroll is not None:
            return scroll, False
        if self.kind == "type":
            return Action.type_text(self.text or "", element_id=el["id"]), True
        return Action(self.kind, element_id=el["id"]), True


class Stop(PlanStep):
    """``stop`` with an answer or a status."""

    def __init__(self, answer: str | None = None, status: str = "success") -> None:
        self.answer, self.status = answer, status

    def __call__(self, view: PageView, viewport: tuple[int, int]) -> tuple[Action, bool]:
        return Action.stop(answer=self.answer, status=self.status), True


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def find(text: str, tag: str | None = None, after: str | None = None, contains: bool = False) -> Finder:
    """Find the first clickable element whose text equals ``text`` (case-insensitive).

    Args:
        text: the element text.
        tag: restrict to this tag (``a``, ``button``, ``label``, ``input``...).
        after: only consider elements after the first element whose text equals this (DOM order), for
            "the Remove button of item X".
        contains: match when the element text contains ``text``.
    """
    want, anchor = _norm(text), _norm(after) if after else None

    def finder(view: PageView) -> dict[str, Any] | None:
        seen_anchor = anchor is None
        for el in view.elements:
            t = _norm(el["text"])
            if not seen_anchor:
                seen_anchor = t == anchor
                continue
            if not el["clickable"] or (tag and el["tag"] != tag):
                continue
            if t == want or (contains and want in t):
                return el
        return None

    return finder


def click(text: str, tag: str | None = None, after: str | None = None, contains: bool = False) -> Target:
    """Click the element :func:`find` locates."""
    where = f" after {after!r}" if after else ""
    return Target(find(text, tag, after, contains), f"{tag or 'element'} {text!r}{where}")


def fill(label: str, text: str, after: str | None = None) -> Target:
    """Type ``text`` into the field labelled ``label`` (replacing its content)."""
    finder = find(label, after=after)

    def field(view: PageView) -> dict[str, Any] | None:
        el = finder(view)
        return el if el is not None and el["tag"] in ("input", "textarea", "select") else _field(view, label)

    return Target(field, f"field {label!r}", text=text, kind="type")


def _field(view: PageView, label: str) -> dict[str, Any] | None:
    want = _norm(label)
    for el in view.elements:
        if el["tag"] in ("input", "textarea", "select") and _norm(el["text"]) == want:
            return el
    return None


def press(key: str) -> Do:
    return Do(Action.press(key))


def search(label: str, query: str) -> list[PlanStep]:
    """Type ``query`` into the search field and press enter."""
    return [fill(label, query), press("enter")]
