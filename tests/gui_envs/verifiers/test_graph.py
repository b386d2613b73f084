"""The strategy graph (seed 002, section 3.2): classify, expand, acyclicity, JSON, drawing."""

from __future__ import annotations

import random
from pathlib import Path

from gui_envs.verifiers.graph import GraphCycleError, StrategyGraph, code_key
from tests.gui_envs.verifiers.helpers import (
    ADD,
    CATEGORY,
    IN_WISHLIST,
    PRODUCT_CLICK,
    SEARCH,
    fn,
    two_path_view,
)


def test_two_paths_expand_from_one_to_two() -> None:
    graph = StrategyGraph.linear([SEARCH, PRODUCT_CLICK, ADD, IN_WISHLIST], task="shop.add_to_wishlist")
    assert StrategyGraph.average_path_count([graph]) == 1.0
    assert graph.classify(two_path_view("search")).label == "fully"
    browse = two_path_view("browse")
    before = graph.classify(browse)
    assert before.label == "partially"
    assert before.best_fraction == 0.0  # the only path starts with the search the browser never made
    assert graph.expand(two_path_view("search"), [SEARCH, PRODUCT_CLICK, ADD, IN_WISHLIST]) == []  # passes already
    graph.expand(browse, [CATEGORY, PRODUCT_CLICK, ADD, IN_WISHLIST])
    assert len(graph.codes) == 5  # three vertices shared
    assert StrategyGraph.average_path_count([graph]) == 2.0
    after = graph.classify(browse)
    assert after.label == "fully" and after.best_fraction == 1.0
    assert graph.classify(two_path_view("search")).label == "fully"


def test_order_matters() -> None:
    # Adding to the wishlist before opening the product: the pair passes, but not in order.
    graph = StrategyGraph.linear([ADD, PRODUCT_CLICK])
    result = graph.classify(two_path_view("search"))
    assert result.label == "partially" and result.best_fraction == 0.5
    assert graph.classify(two_path_view("search")).passed == {0: True, 1: True}


def test_failed_when_nothing_passes() -> None:
    graph = StrategyGraph.linear([fn("validate_click_action(trajectory, 'Checkout')")])
    assert graph.classify(two_path_view("browse")).label == "failed"


def test_normalised_code_identity() -> None:
    a = fn("validate_click_action(trajectory, 'Snacks')")
    b = a.replace("    if not", "    # a comment\n    if not").replace("'Snacks'", '"Snacks"')
    assert code_key(a) == code_key(b)
    assert code_key(a) != code_key(fn("validate_click_action(trajectory, 'Drinks')"))


def _acyclic(graph: StrategyGraph) -> bool:
    indeg = {v: 0 for v in graph.codes}
    for _, v in graph.edges:
        indeg[v] += 1
    ready = [v for v, d in indeg.items() if d == 0]
    seen = 0
    while ready:
        u = ready.pop()
        seen += 1
        for a, b in graph.edges:
            if a == u:
                indeg[b] -= 1
                if indeg[b] == 0:
                    ready.append(b)
    return seen == len(graph.codes)


def test_expand_never_creates_a_cycle() -> None:
    """Property test: random orders of a pool of functions, merged one after another, keep a DAG."""
    pool = [fn(f"validate_click_action(trajectory, 'b{i}')") for i in range(6)]
    rng = random.Random(0)
    for _ in range(200):
        graph = StrategyGraph.linear(rng.sample(pool, rng.randint(1, 6)))
        for _ in range(rng.randint(1, 5)):
            graph.expand(None, [rng.choice(pool) for _ in range(rng.randint(1, 8))])
            assert _acyclic(graph)
            assert all(p for p in graph.paths())


def test_a_cycle_edge_is_refused() -> None:
    graph = StrategyGraph.linear([CATEGORY, ADD])
    try:
        graph.add_edge(1, 0)
    except GraphCycleError:
        pass
    else:
        raise AssertionError("a back edge was accepted")


def test_json_round_trip_and_drawing(tmp_path: Path) -> None:
    graph = StrategyGraph.linear([SEARCH, PRODUCT_CLICK, ADD, IN_WISHLIST], task="t")
    graph.expand(None, [CATEGORY, PRODUCT_CLICK, ADD, IN_WISHLIST])
    graph.save(tmp_path / "g.json")
    again = StrategyGraph.load(tmp_path / "g.json")
    assert again.to_json() == graph.to_json() and again.codes == graph.codes
    png = graph.draw(tmp_path / "g.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
