"""The web family's task base: :class:`WebTask` over one site's state, and the web oracle's plan steps.

Templates subclass one of the three judges of the task core (:mod:`gui_envs.tasks.base`), each mixed with
:class:`WebTask`:

* :class:`StateTask`: success is :meth:`~gui_envs.tasks.base.StateTask.done`, a predicate over the site's
  database and/or the current URL (:attr:`~gui_envs.tasks.base.Task.where`);
* :class:`AnswerTask`: ``stop(answer=...)`` judged by :func:`~gui_envs.tasks.judging.answers_match`;
* :class:`InfeasibleTask`: each template's :meth:`~gui_envs.tasks.base.InfeasibleTask.looked` reads the pages
  visited (:meth:`WebTask.visited_here`).

Oracle plans are lists of :class:`~gui_envs.tasks.base.PlanStep`; each step looks at the current
:class:`PageView` and returns the concrete :class:`Action` to take (resolving "the link whose text is X" to an
element id at run time, and scrolling first when the target is off-screen).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from typing import Any, ClassVar

from gui_envs.actions import Action
from gui_envs.browser.observation import PageView
from gui_envs.browser.site import SiteState, origin
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
        super().__init__(state, rng)

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return self.state.query(sql, params)

    def one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.state.one(sql, params)

    def visited_here(self) -> list[str]:
        """The visited URLs on this task's site, in order (read them with :func:`path_of` / :func:`query_of`)."""
        home = origin(self.site)
        return [u for u in self.visited if u == home or u.startswith(home + "/")]


class StateTask(WebTask, core.StateTask):
    """Success is :meth:`done` over the database and :attr:`where` (the URL); see the core's rule."""


class AnswerTask(WebTask, core.AnswerTask):
    """Information retrieval: ``stop(answer=...)`` matching :attr:`reference_answer` scores 1."""


class InfeasibleTask(WebTask, core.InfeasibleTask):
    """The request cannot be fulfilled: :meth:`looked` (the page that shows it, from :meth:`visited_here`) and
    ``stop(status="infeasible")`` pass."""


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
