"""Each Site subclass owns its router: a route added on one site never answers on another."""

from __future__ import annotations

from gui_envs.browser.site import Request, Response, Router, Site


def test_subclasses_without_a_router_get_their_own() -> None:
    class First(Site):
        host = "first"

    class Second(Site):
        host = "second"

    @First.router.get("/only-first")
    def only_first(site: Site, db: object, req: Request) -> Response:
        return Response(body="first")

    assert First.router is not Second.router and First.router is not Site.router
    assert First.router.match("GET", "/only-first") is not None
    # Before the fix all three shared Site's one Router, so Second (and Site) answered this route too.
    assert Second.router.match("GET", "/only-first") is None
    assert Site.router.match("GET", "/only-first") is None


def test_a_router_set_in_the_class_body_is_kept() -> None:
    own = Router()

    class Third(Site):
        router = own

    class Fourth(Third):
        pass

    assert Third.router is own and Fourth.router is not own


def test_site_state_reads_tables_as_multisets_and_projects_columns() -> None:
    from collections import Counter

    from gui_envs.browser.site import SiteState

    class Cart(Site):
        host = "cart"

    state = SiteState(Cart())
    state.db.executescript(
        "CREATE TABLE cart (product_id INTEGER, qty INTEGER, note TEXT);"
        "INSERT INTO cart VALUES (7, 1, 'a'), (7, 1, 'b'), (3, 2, 'a');"
        "CREATE TABLE votes (post_id INTEGER);"
    )
    tables = state.tables()
    assert sorted(tables) == ["cart", "votes"] and tables["votes"].rows == Counter()
    cart = tables["cart"]
    assert cart.columns == ("product_id", "qty", "note")
    # Two (7, 1) rows differ in their note; cut down to (product_id, qty) they are one row counted twice.
    assert cart.project(["product_id", "qty"]) == Counter({(7, 1): 2, (3, 2): 1})
    assert cart.project(["qty"]) == Counter({(1,): 2, (2,): 1})
    assert state.table("cart") == cart
    state.close()
