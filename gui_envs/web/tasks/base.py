"""The task API: a template with seeded parameters, a judge that reads app state, and an oracle plan.

A task is a small subclass of one of three bases:

* :class:`StateTask`: success is a predicate over the site's database and/or the current URL
  (``done``). The episode ends as soon as it holds (or when the agent stops; then it is judged as is).
* :class:`AnswerTask`: information retrieval; success means ``stop(answer=...)`` with the reference answer
  (``reference_answer``), judged by :func:`answers_match`.
* :class:`InfeasibleTask`: the request cannot be done on the site. As on the phone, only looking first (each
  template's :meth:`InfeasibleTask.looked`, judged from the pages visited) and then ``stop(status="infeasible")``
  passes, so an agent that gives up at once fails.

Oracle plans are lists of :class:`PlanStep`; each step looks at the current :class:`PageView` and returns the
concrete :class:`Action` to take (resolving "the link whose text is X" to an element id at run time, and
scrolling first when the target is off-screen).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from gui_envs.actions import Action
from gui_envs.browser.observation import PageView
from gui_envs.browser.site import SiteState, origin

#: Every task template by name; filled by subclassing.
TASKS: dict[str, type[WebTask]] = {}


class WebTask:
    """Base class of every task template.

    Class attributes:
        name: unique template name (``shop.add_to_wishlist``).
        site: the site host it runs on (``shop``, ``forum``, ``classifieds``).
        difficulty: rough number of oracle steps (1 = one action).
        requires_stop: the episode only ends on ``stop`` (answers, infeasible tasks).

    Instance attributes set by :meth:`setup`: ``instruction``, ``start_path`` and, for answer tasks,
    ``reference_answer``. ``visited`` lists the URL the page showed after the reset and after each step (the env
    appends them), for judges that need to know where the agent looked.
    """

    name: ClassVar[str] = ""
    site: ClassVar[str] = ""
    difficulty: ClassVar[int] = 1
    requires_stop: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            if cls.name in TASKS and TASKS[cls.name] is not cls:
                raise ValueError(f"two task templates are named {cls.name!r}")
            TASKS[cls.name] = cls

    def __init__(self, state: SiteState, rng: np.random.Generator) -> None:
        self.state = state
        self.rng = rng
        self.start_path = "/"
        self.reference_answer: str | None = None
        self.visited: list[str] = []
        self.instruction = self.setup()

    # ----- what subclasses write ---------------------------------------------------------------------------
    def setup(self) -> str:
        """Draw the parameters (``self.rng``), change the seeded state if needed, return the instruction."""
        raise NotImplementedError

    def evaluate(self, url: str, stop: Action | None) -> float:
        """Score in [0, 1] from app state, the final ``url`` and the ``stop`` action (``None`` if no stop)."""
        raise NotImplementedError

    def oracle_plan(self) -> list[PlanStep]:
        """The steps that solve the task from :attr:`start_path`."""
        raise NotImplementedError

    # ----- helpers -------------------------------------------------------------------------------------------
    def is_done(self, url: str) -> bool:
        """Whether the episode should end without a ``stop`` (state tasks that succeeded)."""
        return False

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return self.state.query(sql, params)

    def one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.state.one(sql, params)

    def pick(self, rows: list[Any]) -> Any:
        """A seeded choice from ``rows``."""
        if not rows:
            raise LookupError(f"{self.name}: nothing to choose from in the seeded state")
        return rows[int(self.rng.integers(len(rows)))]


class StateTask(WebTask):
    """Success is :meth:`done` over the database and URL; a ``stop`` that says infeasible scores 0."""

    def done(self, url: str) -> bool:
        raise NotImplementedError

    def evaluate(self, url: str, stop: Action | None) -> float:
        if stop is not None and stop.status != "success":
            return 0.0
        return 1.0 if self.done(url) else 0.0

    def is_done(self, url: str) -> bool:
        return self.done(url)


class AnswerTask(WebTask):
    """Information retrieval: ``stop(answer=...)`` matching :attr:`reference_answer` scores 1."""

    requires_stop = True

    def evaluate(self, url: str, stop: Action | None) -> float:
        if stop is None or stop.status != "success" or self.reference_answer is None:
            return 0.0
        return 1.0 if answers_match(stop.answer or "", self.reference_answer) else 0.0

    def candidates(self) -> list[str]:
        """Every answer this template could have on this seed's data, the reference among them.

        What a blind guesser picks from (all conditions, all seller names, every count from 0 up to the most
        the site could show): the judge audit (:mod:`gui_envs.judge_audit`) checks that exactly one of them
        passes and that listing them all at once does not. Privileged: it contains the reference.
        """
        raise NotImplementedError


class InfeasibleTask(WebTask):
    """The request cannot be fulfilled. Passing needs both :meth:`looked` and ``stop(status="infeasible")``.

    The phone's rule (:class:`gui_envs.android.tasks.base.InfeasibleTask`): a judge that paid for giving up at
    once would teach an agent to give up on everything, so the agent must first have opened the page that shows
    the request cannot be done (the search with no results, the product's sizes, the post's missing delete
    button). Each template says which page in :meth:`looked`, from :attr:`visited`.
    """

    requires_stop = True

    def looked(self) -> bool:
        """Whether the agent opened the page that shows the request cannot be done (reads :attr:`visited`)."""
        raise NotImplementedError

    def evaluate(self, url: str, stop: Action | None) -> float:
        if stop is None or stop.status != "infeasible":
            return 0.0
        return 1.0 if self.looked() else 0.0

    def visited_here(self) -> list[str]:
        """The visited URLs on this task's site, in order (read them with :func:`path_of` / :func:`query_of`)."""
        home = origin(self.site)
        return [u for u in self.visited if u == home or u.startswith(home + "/")]


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


#: Numeric answers must equal a numeric reference within this absolute tolerance (in the reference's unit).
#: It only absorbs float formatting ("12.5" vs "$12.50"); every numeric reference has at most two decimals, so
#: a different amount never passes.
NUMERIC_TOLERANCE = 1e-6

# Unit words a numeric answer may carry, by canonical unit: an answer may drop the reference's unit or spell
# it another way ("12 h" for "12 hours"), but never give a different one or a unit the reference lacks.
_UNITS = {
    "hour": ("hour", "hours", "h", "hr", "hrs"),
    "minute": ("minute", "minutes", "min", "mins"),
    "calorie": ("calorie", "calories", "cal", "kcal"),
    "serving": ("serving", "servings"),
    "percent": ("percent", "%"),
}
_UNIT_OF = {word: unit for unit, words in _UNITS.items() for word in words}
_QUANTITY = re.compile(r"(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+))(?:\s*(?P<unit>%)|\s+(?P<word>[a-z]+))?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# The currency is never what is asked: "$12", "12 dollars" and "12" are the same amount.
_CURRENCY = re.compile(r"[$\u20ac\u00a3]|\b(?:dollars?|usd)\b")
_LIST_SEPARATOR = re.compile(r"\s*(?:[;,&]|\band\b)\s*")


def _quantity(text: str) -> tuple[float, str | None] | None:
    """``(value, canonical unit or None)`` when ``text`` is one number with at most a known unit word."""
    text = _THOUSANDS.sub("", _CURRENCY.sub(" ", text.lower()))
    text = re.sub(r"\s+", " ", text).strip(" .!?;:'\"")
    found = _QUANTITY.fullmatch(text)
    if found is None:
        return None
    word = found.group("unit") or found.group("word")
    if word is not None and word not in _UNIT_OF:
        return None
    return float(found.group("num")), _UNIT_OF.get(word) if word else None


def answer_key(text: str) -> str:
    """The normalised text an answer is compared by: lower-case letters and digits only.

    >>> answer_key("  Tom.B! "), answer_key("Like-new")
    ('tomb', 'likenew')
    """
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _items(text: str) -> set[str]:
    return {answer_key(part) for part in _LIST_SEPARATOR.split(_THOUSANDS.sub("", text.lower()))} - {""}


def answers_match(answer: str, reference: str) -> bool:
    """Whether a ``stop`` answer matches the reference: the one judge of every web and phone answer task.

    Three rules, chosen by the reference, and nothing looser (no substring, no "first number in the answer"):

    * **numeric** reference (one number, optionally with a currency sign, thousands separators or a unit word,
      e.g. ``"$1,204.50"``, ``"12 hours"``): the answer must be one number equal to it within
      :data:`NUMERIC_TOLERANCE`; it may drop the currency and the unit, or spell the unit another way
      (``"12 h"``), but not carry any other word;
    * **text**: equal after :func:`answer_key` (case, whitespace and punctuation ignored);
    * **list** (a reference with ``,`` / ``;`` / ``&`` / ``and`` between items): the same set of items, in any
      order, with any of those separators. A reference of one item is matched by one item only, so listing
      every option never passes.

    >>> answers_match("420", "420 calories"), answers_match("It has 420 calories.", "420 calories")
    (True, False)
    >>> answers_match("12.5", "$12.50"), answers_match("12 minutes", "12 hours"), answers_match("42", "420")
    (True, False, False)
    >>> answers_match("the acme red scarf", "Acme Red Scarf"), answers_match("", "x")
    (False, False)
    >>> answers_match("Fair and Good", "good, fair"), answers_match("New, Like new, Good, Fair", "Good")
    (True, False)
    """
    answer, reference = str(answer), str(reference)
    key = answer_key(answer)
    if not key:
        return False
    ref_quantity = _quantity(reference)
    if ref_quantity is not None:
        got = _quantity(answer)
        return (
            got is not None
            and abs(got[0] - ref_quantity[0]) <= NUMERIC_TOLERANCE
            and got[1] in (None, ref_quantity[1])
        )
    if key == answer_key(reference):
        return True
    ref_items = _items(reference)
    return len(ref_items) > 1 and _items(answer) == ref_items


# ----- oracle plan steps ---------------------------------------------------------------------------------

Finder = Callable[[PageView], dict[str, Any] | None]


class PlanStep:
    """One oracle step: ``step(view, viewport) -> (action, advance)``.

    ``advance`` is False when the step had to scroll first; the same step is then asked again.
    """

    def __call__(self, view: PageView, viewport: tuple[int, int]) -> tuple[Action, bool]:
        raise NotImplementedError


class OracleError(LookupError):
    """The oracle plan could not find its target on the page: a bug in a task template or a site."""


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


class Do(PlanStep):
    """A fixed action (press a key, navigate)."""

    def __init__(self, action: Action) -> None:
        self.action = action

    def __call__(self, view: PageView, viewport: tuple[int, int]) -> tuple[Action, bool]:
        return self.action, True


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
