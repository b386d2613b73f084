"""The side-effect sweep: a blind policy that touches every item it can reach, played without a browser.

A judge that ends the episode as soon as its goal holds, and ignores everything else the agent changed, pays a
policy that does not know which item the task is about: open every item page and press, on each, the buttons
the instruction's words name ("Add to cart", "Upvote"), until the judge says yes. This module plays that policy
against a task object and its seeded app state, with the site's own request handlers
(:meth:`~gui_envs.browser.site.SiteState.handle`) standing in for Chromium: pages are fetched, redirects
followed and forms submitted exactly as a browser would send them, and the task's ``visited`` (and, on the
phone, the foreground app) is kept as the env keeps it. The judge is asked after every request, as the env asks
it after every step.

A judge that cannot be gamed this way passes the sweep only when the first item it touched was the target: a
blind guess among the items it could touch, ``1 / #items`` (see :func:`sweep`).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from gui_envs.browser.site import Request, SiteState
from gui_envs.schema.actions import Action

#: An item page: ``/product/3``, ``/post/12``, ``/contact/4`` (one kind word, one id).
ITEM_PATH = re.compile(r"^/[a-z_]+/\d+$")
#: Words of an instruction that say nothing about which button to press.
_STOPWORDS = frozenset(
    "the a an to my me of in on for and it its from with by as at is be this that your all then".split()
)


@dataclass
class Form:
    """One ``<form>`` of a page: where it goes, its fields (hidden and pre-filled), and its buttons' labels."""

    method: str
    action: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: list[str] = field(default_factory=list)


class _PageParser(HTMLParser):
    """The links and forms of one page (what a blind policy can press)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.forms: list[Form] = []
        self._form: Form | None = None
        self._button: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        elif tag == "form":
            self._form = Form(a.get("method", "get").upper(), a.get("action", ""))
            self.forms.append(self._form)
        elif tag == "input" and self._form is not None:
            kind = a.get("type", "text").lower()
            if kind in ("submit", "button"):
                self._form.buttons.append(a.get("value", ""))
            elif a.get("name") and (kind != "checkbox" or "checked" in a):
                self._form.fields[a["name"]] = a.get("value", "")
        elif tag == "button" and self._form is not None:
            self._button = [a.get("aria-label", "")]

    def handle_data(self, data: str) -> None:
        if self._button is not None:
            self._button.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "button" and self._button is not None and self._form is not None:
            self._form.buttons.append(" ".join(" ".join(self._button).split()))
            self._button = None
        elif tag == "form":
            self._form = None


class FormBrowser:
    """GET pages, follow redirects and submit forms against one site's handlers, recording each location.

    Args:
        state: the site's or app's live state (its handlers answer the requests).
        on_location: called with the path of every page shown (after redirects), as the env appends the URL or
            ``package/activity`` to the task's ``visited``.
    """

    def __init__(self, state: SiteState, on_location: Callable[[str], None]) -> None:
        self.state, self.on_location = state, on_location
        self.path, self.links, self.forms = "/", [], []  # type: ignore[var-annotated]

    def request(self, method: str, url: str, form: dict[str, str] | None = None) -> None:
        body = urllib.parse.urlencode(form).encode() if form else None
        for _ in range(5):  # a POST answers 303; a browser follows a few redirects at most
            parts = urllib.parse.urlsplit(url)
            response = self.state.handle(Request.from_url(method, parts.path + (f"?{parts.query}" if parts.query else ""), body))
            if response.status in (301, 302, 303) and "location" in response.headers:
                url, method, body = urllib.parse.urljoin(url, response.headers["location"]), "GET", None
                continue
            break
        self.path = urllib.parse.urlsplit(url).path or "/"
        page = _PageParser()
        page.feed(response.body.decode("utf-8", "replace") if isinstance(response.body, bytes) else response.body)
        self.links, self.forms = page.links, page.forms
        self.on_location(self.path)

    def get(self, url: str) -> None:
        self.request("GET", url)

    def submit(self, form: Form) -> None:
        action = urllib.parse.urljoin(self.path, form.action or self.path)
        if form.method == "POST":
            self.request("POST", action, form.fields)
        else:
            self.request("GET", action + ("?" + urllib.parse.urlencode(form.fields) if form.fields else ""))


def kind_of(path: str) -> str:
    """An item page's kind: its path less the id (``/product/3`` -> ``/product``)."""
    return path.rsplit("/", 1)[0]


def instruction_words(instruction: str) -> set[str]:
    """The instruction's content words (lower case, 3+ letters, stop words dropped)."""
    return {w for w in re.findall(r"[a-z]{3,}", instruction.lower()) if w not in _STOPWORDS}


def item_pages(browser: FormBrowser, start: str, depth: int = 2) -> list[str]:
    """Every item page (:data:`ITEM_PATH`) reachable from ``start`` within ``depth`` link hops, in the order
    found: the items a blind policy can enumerate without reading what they are."""
    found: list[str] = []
    frontier, seen = [start], {start}
    for _ in range(depth):
        following: list[str] = []
        for page in frontier:
            browser.get(page)
            for href in browser.links:
                path = urllib.parse.urlsplit(urllib.parse.urljoin(page, href)).path
                if not path or path in seen or urllib.parse.urlsplit(href).netloc:
                    continue
                seen.add(path)
                if ITEM_PATH.match(path):
                    found.append(path)
                following.append(path)
        frontier = following[:40]
    return found


def pressable(forms: list[Form], words: set[str]) -> list[Form]:
    """The POST forms whose button labels share a word with the instruction: what the sweep presses."""
    return [f for f in forms if f.method == "POST" and instruction_words(" ".join(f.buttons)) & words]


@dataclass
class SweepResult:
    """One sweep episode: whether the judge passed it, how many items a blind guess chooses among (those of the
    kind of the sweep's first item), and how many items it touched."""

    success: bool
    items: int
    touched: int


def sweep(
    task: Any,
    state: SiteState,
    start: str,
    on_location: Callable[[str], None],
    max_items: int = 15,
) -> SweepResult:
    """Play the side-effect sweep on ``task`` (a state task, freshly built on its seeded state).

    First scouts, without the judge watching (as the attack knew the URL scheme): the item pages reachable from
    ``start``, and of those the ones showing a button the instruction names. Those are the items the sweep can
    touch; where no item shows such a button (an "open X" task) every item page is one. A blind guess picks one
    of them of the right kind, so ``1 / items``, over the items of the kind of the first one the sweep touches,
    is the sweep's chance. Then, from ``start`` again, it opens up to ``max_items``
    of them in order and presses each one's named buttons. The judge (``task.evaluate(None)`` /
    ``task.finished``) is asked after every request, as the env asks it after every step; a sweep that never
    triggers it ends with ``stop(status="success")``, judged as the env judges a stop.
    """
    words = instruction_words(task.instruction)
    scout = FormBrowser(state, lambda _path: None)
    pages = item_pages(scout, start)
    with_buttons = []
    for path in pages:
        scout.get(path)
        if pressable(scout.forms, words):
            with_buttons.append(path)
    touchable = with_buttons or pages
    # A blind guess picks among the items of one kind (the accounts, not the expenses, for "open the account"):
    # the sweep's guess is its first item, so its chance is one over the items of that item's kind.
    items = [p for p in touchable if touchable and kind_of(p) == kind_of(touchable[0])]
    # The scouting only read pages; a fresh start for the judged episode.
    task.visited[:] = task.visited[:1]
    browser = FormBrowser(state, on_location)

    def judged() -> bool:
        return bool(task.finished(task.evaluate(None)))

    browser.get(start)
    if judged():
        return SweepResult(True, len(items), 0)
    for touched, path in enumerate(touchable[:max_items], 1):
        browser.get(path)
        if judged():
            return SweepResult(True, len(items), touched)
        for form in pressable(browser.forms, words):
            browser.submit(form)
            if judged():
                return SweepResult(True, len(items), touched)
            browser.get(path)
    return SweepResult(task.evaluate(Action.stop(status="success")) >= 1.0, len(items), min(len(touchable), max_items))
