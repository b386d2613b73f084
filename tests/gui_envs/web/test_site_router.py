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
