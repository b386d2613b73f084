"""The shop's search box: any query gives a normal results page (issue 23: 16,384 emoji gave a 500 page)."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from gui_envs.android.apps import default_apps
from gui_envs.browser.site import MAX_QUERY_CHARS, Request, SiteState
from gui_envs.web.tasks import SITES


@pytest.fixture(scope="module")
def shop() -> SiteState:
    state = SiteState(SITES["shop"])
    state.restore(0)
    return state


def search(shop: SiteState, q: str) -> tuple[int, str, int]:
    """Status, body and the page's product count for the query ``q``, sent as the search form sends it."""
    response = shop.handle(Request.from_url("GET", "/?" + urllib.parse.urlencode({"q": q})))
    body = response.body if isinstance(response.body, str) else response.body.decode()
    found = re.search(r"(\d+) products", body)
    assert response.error is None, response.error
    return response.status, body, int(found.group(1)) if found else -1


@pytest.mark.parametrize(
    "q",
    ["\U0001f600" * 16_384, "%" * 30_000, "_" * 30_000, "\\" * 30_000, "a" * 100_000, "%_\\'\"" * 5_000, "\x00" * 20_000 + "\U0001f600"],
    ids=["16384-emoji", "percent", "underscore", "backslash", "100k-letters", "mixed-specials", "nul-plus-letter"],
)
def test_any_query_gives_a_results_page(shop: SiteState, q: str) -> None:
    status, body, count = search(shop, q)
    assert (status, count) == (200, 0) and "No products match." in body


def test_wildcards_match_themselves_and_plain_search_still_works(shop: SiteState) -> None:
    names = [r["name"] for r in shop.query("SELECT name FROM products")]
    word = names[0].split()[-1]
    assert search(shop, word)[2] == sum(word.lower() in n.lower() for n in names) > 0
    assert search(shop, word.upper())[2] == search(shop, word)[2]  # case-insensitive, as before
    assert search(shop, "%")[2] == 0 and search(shop, "_")[2] == 0  # no product name holds them
    assert search(shop, word[:1] + "%" + word[2:])[2] == 0  # "%" is not a wildcard any more
    assert search(shop, word + "\x00zzz")[2] == search(shop, word + "zzz")[2] == 0  # a NUL does not end the query


def test_a_long_query_is_cut_where_it_cannot_change_the_results(shop: SiteState) -> None:
    longest = max(len(r[0]) for r in shop.query("SELECT name FROM products UNION SELECT category FROM products"))
    assert longest < MAX_QUERY_CHARS  # a cut query still cannot be found in any field
    name = shop.one("SELECT name FROM products")[0]  # type: ignore[index]
    status, body, count = search(shop, name + " " + "x" * 50_000)
    assert (status, count) == (200, 0)
    assert len(body) < 100_000  # the echoed query and every link hold the cut query, not 50 kB each


def _searches() -> list[tuple[object, str]]:
    """Every search box of the bundled sites and apps: (site, the path its form sends ``q`` to)."""
    apps = {app.package.rsplit(".", 1)[-1]: app for app in default_apps()}
    boxes: list[tuple[object, str]] = [(SITES["shop"], "/"), (SITES["classifieds"], "/"), (apps["clock"], "/cities")]
    boxes += [(app, "/search") for name, app in sorted(apps.items()) if name != "clock"]
    return boxes


@pytest.mark.parametrize(("site", "path"), _searches(), ids=lambda v: getattr(v, "name", None) or str(v))
def test_every_search_box_survives_any_query(site: object, path: str) -> None:
    """The same rule in every site and app (one helper, :func:`gui_envs.browser.site.like_contains`)."""
    state = SiteState(site)  # type: ignore[arg-type]
    state.restore(0)
    for q in ["\U0001f600" * 16_384, "%" * 30_000, "_\\%" * 10_000, "\x00" * 100]:
        response = state.handle(Request.from_url("GET", path + "?" + urllib.parse.urlencode({"q": q})))
        assert (response.status, response.error) == (200, None), (path, q[:10], response.error)
