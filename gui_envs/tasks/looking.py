"""The one rule of "the agent looked" behind every infeasible verdict, web and phone alike.

A task is infeasible on a seed when the thing it names (a product, a post, a size, a forum, a recipe, an app) is
not in the app's data; only looking can tell (DESIGN.md, "Feasibility"). A ``stop(status="infeasible")`` passes
only after a look that would have found the thing had it been there, so its empty result proves it is not:

* **a search for the name** (:func:`searched_for`): the query is the name itself (:func:`is_the_name`); the
  whole instruction pasted into the search field finds nothing even when the thing exists, and a fragment or a
  single word ("recipe", "ing") that a prober types on every task passes wherever it happens to sit in a name,
  so neither counts;
* **the place it would be** (:func:`opened`): its list, its category, the page that shows its options; an
  episode that opened more than :data:`SWEEP_LIMIT` pages of that kind swept them blindly, so it does not count.

A search for another name of the template's pool (and not for the asked one) voids the episode's looks:
searching every name the template could ask about is a sweep too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: The most distinct item pages of one kind (``/post/<id>``, ``/product/<id>``) an episode may open and still
#: have looked: an agent that opened a wrong item or two first still looked; one that opened every id swept.
SWEEP_LIMIT = 3


def norm(text: str) -> str:
    """``text`` lower-cased with runs of white space made one space (how names are compared)."""
    return re.sub(r"\s+", " ", str(text)).strip().lower()


def is_the_name(query: str, name: str) -> bool:
    """Whether ``query`` is ``name`` (case and spacing aside), the only query that looks for it.

    >>> is_the_name(" beef  wellington ", "Beef Wellington"), is_the_name("Wellington", "Beef Wellington")
    (True, False)
    >>> is_the_name("open the recipe for beef wellington", "Beef Wellington")
    False
    """
    return bool(norm(name)) and norm(query) == norm(name)


def searched_for(queries: Iterable[str], name: str, others: Iterable[str] = ()) -> bool:
    """Whether one of ``queries`` (the episode's searches, in order) was ``name``, and none was another name of
    ``others`` (the template's pool): see the module docstring."""
    queries = list(queries)
    rivals = [o for o in others if norm(o) != norm(name)]
    if any(is_the_name(query, o) for query in queries for o in rivals):
        return False
    return any(is_the_name(query, name) for query in queries)


def opened(paths: Iterable[str], place: str, kind: str | None = None) -> bool:
    """Whether the episode showed ``place`` (a path such as ``/product/7`` or ``/user/me``), and, when ``kind``
    is given (``/product/``), showed at most :data:`SWEEP_LIMIT` distinct pages under ``kind``.

    >>> opened(["", "/product/7"], "/product/7", "/product/")
    True
    >>> opened([f"/product/{i}" for i in range(1, 30)], "/product/7", "/product/")
    False
    """
    paths = list(paths)
    if kind is not None:
        items = {p[len(kind) :].split("/")[0] for p in paths if p.startswith(kind)}
        if len(items) > SWEEP_LIMIT:
            return False
    return place in paths


__all__ = ["SWEEP_LIMIT", "is_the_name", "norm", "opened", "searched_for"]
