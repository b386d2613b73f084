"""The in-process site plumbing shared by the web sites and the phone apps: requests, responses, a tiny router,
escaping and seeded SQLite state.

A site is a Python object that answers ``Request -> Response``. The env serves it through Playwright request
routing (:mod:`gui_envs.browser.routing`), so no HTTP server or port is involved, and each env's state is its own
in-memory SQLite database.

State is seeded: :func:`template_db` builds a site's database for a seed once per process and caches it;
:meth:`SiteState.restore` copies it into the live connection with SQLite's backup API (well under a
millisecond for these sizes), which is how a warm ``reset`` restores the app state.
"""

from __future__ import annotations

import html
import json
import logging
import re
import sqlite3
import threading
import urllib.parse
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np

logger = logging.getLogger(__name__)

#: Each site's origin lives under this pseudo top-level domain; nothing outside it is ever fetched.
DOMAIN = "guigym.test"


def origin(host: str) -> str:
    """``"shop"`` -> ``"http://shop.guigym.test"``."""
    return f"http://{host}.{DOMAIN}"


def html_escape(value: Any) -> str:
    """HTML-escape ``value`` (quotes too), so user input never becomes markup."""
    return html.escape(str(value), quote=True)


#: A search query is cut to this many characters. SQLite refuses a ``LIKE`` pattern over 50,000 bytes ("LIKE or
#: GLOB pattern too complex": 16,384 emoji typed into the shop's search made a 500 page); 1,000 characters are at
#: most 4,002 bytes once escaped, and longer than any name in the bundled sites and apps, so a longer query finds
#: nothing either way.
MAX_QUERY_CHARS = 1000
#: The SQL of a literal "contains" test: ``column`` + this, with :func:`like_contains` as the parameter.
LIKE_LITERAL = "LIKE ? ESCAPE '\\'"


def search_query(raw: str) -> str:
    """What a search box's text searches for: NULs dropped (SQLite's ``LIKE`` stops reading a pattern at a NUL,
    so ``"x\\0y"`` would search for ``"x"``) and cut to :data:`MAX_QUERY_CHARS`."""
    return raw.replace("\0", "")[:MAX_QUERY_CHARS]


def like_contains(query: str) -> str:
    """The :data:`LIKE_LITERAL` pattern of fields that contain ``query`` as text: ``%`` and ``_`` match themselves.

    >>> like_contains("50%_off")
    '%50\\\\%\\\\_off%'
    """
    literal = search_query(query).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{literal}%"


@dataclass
class Request:
    """One HTTP request as the site sees it.

    Attributes:
        method: ``GET`` or ``POST``.
        path: the URL path, such as ``/product/3``.
        query: query-string parameters (last value wins).
        form: url-encoded form fields of a POST (last value wins; ``form_lists`` keeps every value).
        form_lists: every value of each form field.
    """

    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    form: dict[str, str] = field(default_factory=dict)
    form_lists: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_url(cls, method: str, url: str, body: bytes | None = None) -> Request:
        parts = urllib.parse.urlsplit(url)
        query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        lists = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True) if body else {}
        return cls(
            method=method.upper(),
            path=parts.path or "/",
            query=query,
            form={k: v[-1] for k, v in lists.items()},
            form_lists=lists,
        )

    def arg(self, name: str, default: str = "") -> str:
        """A form field (POST) or query parameter, stripped."""
        return (self.form.get(name) or self.query.get(name) or default).strip()


@dataclass
class Response:
    """What a site returns: status, headers and a body (str is encoded as UTF-8).

    ``error`` is never sent to the browser: it names the handler bug behind a 500 page, so the env can
    report it in ``info["server_errors"]``.
    """

    status: int = 200
    body: str | bytes = ""
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/html; charset=utf-8"})
    error: str | None = None

    @classmethod
    def server_error(cls, where: str, exc: BaseException) -> Response:
        """The 500 page for a handler bug; the page shows the exception type only, ``error`` the detail."""
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        return cls(
            status=500,
            body=f"<!doctype html><title>Server error</title><h1>Server error</h1><p>{html_escape(type(exc).__name__)}</p>",
            error=f"{where}: {type(exc).__name__}: {detail}",
        )

    @classmethod
    def redirect(cls, location: str) -> Response:
        """A 303 See Other, the right answer to a form POST (the browser then GETs ``location``)."""
        return cls(status=303, body="", headers={"location": location})

    @classmethod
    def not_found(cls, what: str = "page") -> Response:
        return cls(status=404, body=f"<!doctype html><title>Not found</title><h1>No such {html_escape(what)}</h1>")


Handler = Callable[..., Response]


class Router:
    """Maps ``(method, path pattern)`` to handlers; ``<name>`` in a pattern captures a path segment.

    >>> r = Router()
    >>> @r.get("/item/<id>")
    ... def item(site, db, req, id): return Response(body=id)
    >>> r.match("GET", "/item/7")[1]
    {'id': '7'}
    """

    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        regex = "^" + re.sub(r"<(\w+)>", r"(?P<\1>[^/]+)", pattern) + "/?$"
        self._routes.append((method, re.compile(regex), handler))

    def get(self, pattern: str) -> Callable[[Handler], Handler]:
        return self._decorator("GET", pattern)

    def post(self, pattern: str) -> Callable[[Handler], Handler]:
        return self._decorator("POST", pattern)

    def _decorator(self, method: str, pattern: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            self.add(method, pattern, fn)
            return fn

        return register

    def match(self, method: str, path: str) -> tuple[Handler, dict[str, str]] | None:
        for m, regex, handler in self._routes:
            found = regex.match(path)
            if m == method and found:
                return handler, found.groupdict()
        return None


class Site:
    """Base class of a bundled site. Subclasses set ``host``/``title``/``router`` and write ``schema``/``seed``.

    Attributes:
        host: the sub-domain, so the origin is ``http://<host>.guigym.test``.
        title: shown in the header bar.
        router: the site's routes; handlers are called ``handler(site, db, request, **captures)``. Every
            subclass that does not set one gets its own empty router (:meth:`__init_subclass__`), so routes
            registered on one site never answer on another.
        nav: header links ``(label, path)``.
    """

    host: str = ""
    title: str = ""
    router: ClassVar[Router] = Router()
    nav: tuple[tuple[str, str], ...] = ()
    schema: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A router inherited from the parent would be shared: ``@Child.router.get`` would add the route to the
        # parent and every sibling too.
        if "router" not in cls.__dict__:
            cls.router = Router()

    @property
    def origin(self) -> str:
        return origin(self.host)

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        """Fill a fresh database (``schema`` already applied) with seeded content."""
        raise NotImplementedError

    def handle(self, db: sqlite3.Connection, request: Request) -> Response:
        """Answer one request; unknown paths are 404, bad input 400, handler bugs 500; never raises.

        Bad input is what a handler rejects while reading the request: a malformed or unknown id
        (``ValueError``, ``LookupError``) or a number too large for SQLite (``OverflowError``, such as a
        25-digit product id or quantity). Any other exception is a bug in the handler: it becomes a 500 page
        whose :attr:`Response.error` says what failed, and is logged.
        """
        found = self.router.match(request.method, request.path)
        if found is None:
            return Response.not_found()
        handler, captures = found
        try:
            with db:  # one transaction per request: a failing handler leaves the state untouched
                return handler(self, db, request, **captures)
        except (ValueError, LookupError, OverflowError) as exc:
            return Response(status=400, body=f"<!doctype html><title>Bad request</title><p>{html_escape(exc)}</p>")
        except Exception as exc:  # noqa: BLE001 - any other handler failure is a 500 page, never a hang
            logger.exception("%s: handler failed on %s %s", self.host, request.method, request.path)
            return Response.server_error(f"{self.host} {request.method} {request.path}", exc)

    def serve(self, db: sqlite3.Connection, request: Request) -> Response:
        """:meth:`handle`, with redirects followed server-side.

        Playwright cannot fulfil a routed request with a redirect, so a POST's 303 is resolved here: the
        target page is rendered directly and a one-line script sets the address bar to the redirect target
        (``history.replaceState``), which is what the browser shows after a real Post/Redirect/Get.
        """
        response = self.handle(db, request)
        location = None
        for _ in range(5):
            if response.status not in (301, 302, 303, 307) or "location" not in response.headers:
                break
            location = urllib.parse.urljoin(self.origin + request.path, response.headers["location"])
            request = Request.from_url("GET", location)
            response = self.handle(db, request)
        if location is not None and isinstance(response.body, str):
            script = f"<script>history.replaceState(null, '', {json.dumps(location)});</script>"
            response.body = response.body.replace("<head>", "<head>" + script, 1)
        return response


# ----- seeded state ---------------------------------------------------------------------------------------


def row_by_id(
    db: sqlite3.Connection, table: str, row_id: str | int, what: str, live_only: bool = False
) -> sqlite3.Row:
    """The row of ``table`` whose ``id`` is ``row_id`` (a URL capture), for a handler to show or change.

    Args:
        db: The site's database.
        table: The table to read (a name from the site's own schema, never from the request).
        row_id: The id; one that is not a number raises ``ValueError``.
        what: What a row is, for the error (``"listing"``).
        live_only: Skip rows marked ``deleted``.

    Raises:
        LookupError: No such row; :meth:`Site.handle` turns it (and the ``ValueError``) into a 400 page.
    """
    live = " AND deleted = 0" if live_only else ""
    row = db.execute(f"SELECT * FROM {table} WHERE id = ?{live}", (int(row_id),)).fetchone()
    if row is None:
        raise LookupError(f"no {what} {row_id}")
    return row


_TEMPLATES: OrderedDict[tuple[str, int], sqlite3.Connection] = OrderedDict()
_TEMPLATES_LOCK = threading.Lock()
_MAX_TEMPLATES = 32


def template_db(site: Site, seed: int) -> sqlite3.Connection:
    """The seeded database of ``site`` for ``seed``, built once per process and cached (LRU of 32)."""
    key = (site.host, int(seed))
    with _TEMPLATES_LOCK:
        db = _TEMPLATES.get(key)
        if db is not None:
            _TEMPLATES.move_to_end(key)
            return db
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript(site.schema)
    with db:
        site.seed(db, np.random.default_rng([int(seed), _stable_hash(site.host)]))
    with _TEMPLATES_LOCK:
        _TEMPLATES[key] = db
        while len(_TEMPLATES) > _MAX_TEMPLATES:
            _TEMPLATES.popitem(last=False)
    return db


def _stable_hash(text: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(text))


class Table(NamedTuple):
    """A table's column names and its rows as a multiset (row order is not state)."""

    columns: tuple[str, ...]
    rows: Counter[tuple[Any, ...]]

    def project(self, columns: Iterable[str]) -> Counter[tuple[Any, ...]]:
        """The rows cut down to ``columns``, in that order, as a multiset."""
        pick = [self.columns.index(c) for c in columns]
        out: Counter[tuple[Any, ...]] = Counter()
        for row, n in self.rows.items():
            out[tuple(row[i] for i in pick)] += n
        return out


class SiteState:
    """The live database of one site in one env.

    The connection is shared between the env's thread (task setup and evaluation) and the browser thread
    (request handlers); they never run at the same time because the env waits for every browser call.
    """

    def __init__(self, site: Site) -> None:
        self.site = site
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.seed: int | None = None

    def restore(self, seed: int) -> None:
        """Replace the live state by the seeded template (SQLite backup API: a page copy, no re-seeding)."""
        template_db(self.site, seed).backup(self.db)
        self.seed = int(seed)

    def handle(self, request: Request) -> Response:
        return self.site.serve(self.db, request)

    def query(self, sql: str, params: Iterable[Any] | Mapping[str, Any] = ()) -> list[sqlite3.Row]:
        return list(self.db.execute(sql, params))

    def one(self, sql: str, params: Iterable[Any] | Mapping[str, Any] = ()) -> sqlite3.Row | None:
        return self.db.execute(sql, params).fetchone()

    def table(self, name: str) -> Table:
        """One table of the database: its column names and its rows as a multiset."""
        columns = tuple(r[1] for r in self.db.execute(f"PRAGMA table_info({name})"))
        return Table(columns, Counter(tuple(row) for row in self.db.execute(f"SELECT * FROM {name}")))

    def tables(self) -> dict[str, Table]:
        """Every table of the database by name (what a judge compares with the state its task set up)."""
        names = [r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return {name: self.table(name) for name in names}

    def close(self) -> None:
        self.db.close()
