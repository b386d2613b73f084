"""The next episode's start page, prepared in a second browser context while the agent acts.

A warm reset that loads its start page pays a navigation, an element extraction and a screenshot (260 ms p50 on
two busy cores, issue 11). :class:`PagePair` keeps two contexts of one browser, each with its own routing table,
:class:`~gui_envs.browser.routing.NetLog` and app state (``Side.owner``, e.g. the sites' databases): the *active*
side the agent acts in, and the *spare* side, where the owner's guess at the next episode is prepared in three
short background steps queued between the agent's calls (leave the page of the episode played there and clear
the cookies; restore the state, build the episode and load its start page; observe it). A reset to the guessed episode swaps the sides and hands over the
observation taken in the background; any other reset brings the spare side to that episode in the foreground.

On a :class:`~gui_envs.browser.shared.SharedBrowser` both sides are contexts of the shared browser, opened through
the env's :class:`~gui_envs.browser.shared.ContextSession`, which closes both when the env closes.

Isolation: the contexts share no cookies, storage or history; the agent's actions reach the active page only; a
prepared page's history holds its start page alone (``location.replace``, then CDP's
``Page.resetNavigationHistory``: the page is reused, as a new one costs a renderer process). Neither the next
episode nor an earlier one can be reached or read before its reset.
"""

from __future__ import annotations

import copy
import functools
import weakref
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gui_envs.browser.page import HermeticBrowser, Session
from gui_envs.browser.routing import NetLog, RouteTable, install_routing
from gui_envs.browser.session import SessionHandles
from gui_envs.schema.lifecycle import check_reset_options, is_closed
from gui_envs.schema.upcoming import Upcoming, UpcomingResets

#: ``build(owner) -> (payload, start URL)``: restore the side's state and build the episode on it.
Build = Callable[[Any], tuple[Any, str]]
#: ``observe(page) -> what the owner keeps of the start page``, handed back by :meth:`PagePair.swap`:
#: ``(view, image bytes)`` for ``GuiWebEnv``; the grounding env adds what its description of the page needs.
Observe = Callable[[Any], Any]

#: Background steps of one preparation: open a page, build and load, observe.
_STEPS = 3


@dataclass
class Side:
    """One context, what it serves, and the episode prepared on it.

    Only the browser thread touches it, except ``owner`` and ``net``, which the env reads while the side is active.
    """

    owner: Any
    routes: RouteTable
    net: NetLog = field(default_factory=NetLog)
    context: Any = None
    page: Any = None
    key: Hashable = None
    build: Build | None = None
    payload: Any = None
    url: str = ""
    observed: Any = None
    done: int = 0
    cdp: Any = None


class PagePair:
    """The active side and the spare one (see the module docstring).

    Args:
        owners: the two sides' app states (each side serves and is judged on its own copy).
        routes: ``owner -> route table`` (origin -> handler over that owner's state).
        observe: how a page is observed (runs in the browser thread; must not hold the env); what it returns is
            the second half of :meth:`swap`'s result.
    """

    def __init__(self, owners: tuple[Any, Any], routes: Callable[[Any], RouteTable], observe: Observe) -> None:
        self.sides = [Side(owner, routes(owner)) for owner in owners]
        self.routes_of = routes
        self.observe = observe
        self._generation = 0
        #: ``(key, observed)`` of every start the last reset swapped in, in order (what a group member hands on).
        self.played: list[tuple[Hashable, Any]] = []
        #: Starts observed elsewhere for this reset, by key (:meth:`ResetPreparer.share_starts`).
        self.offered: dict[Hashable, Any] = {}

    @property
    def active(self) -> Side:
        """The side the agent acts in."""
        return self.sides[0]

    def install(self, h: SessionHandles, shared: RouteTable | None = None) -> None:
        """The session's setup (browser thread): the active side's routing on the session's own context. The spare
        side's context is opened by its first preparation; whatever was prepared before a relaunch is gone.
        ``shared``: origins both sides serve with the same handler (where a side has its own, its own wins)."""
        for side in self.sides:
            side.routes.update({o: fn for o, fn in (shared or {}).items() if o not in side.routes})
        install_routing(h, self.active.routes, self.active.net)
        self.active.context, self.active.page = h.context, h.page
        self.active.cdp = h.context.new_cdp_session(h.page)
        spare = self.sides[1]
        spare.context = spare.page = spare.key = None
        spare.done = 0

    def prepare(self, session: Session, key: Hashable, build: Build) -> None:
        """Prepare episode ``key`` on the spare side in the background (env thread; returns at once)."""
        self._generation += 1
        self._submit(weakref.ref(session), self._generation, key, build)

    def swap(self, h: SessionHandles | None, key: Hashable, build: Build, page: bool = True) -> tuple[Any, Any]:
        """The reset (browser thread): bring the spare side to episode ``key`` (nothing left to do when it is the one
        prepared), make it the active one, and return its payload and observation.

        A start :attr:`offered` for ``key`` (observed on another copy of the same env) is not observed again: the
        side is still built and its page loaded, so the agent acts on a page of its own; with ``page=False`` (an
        owner that never acts on the page) only the payload is built, and the side's page is left as it was; that
        needs no browser, so ``h`` may then be ``None`` (called from the env's thread, with no session to race).
        """
        self._generation += 1  # background steps still queued are for a side that is about to change
        spare = self.sides[1]
        if spare.key != key:  # not the guess: from the start, as the guessed page may have set cookies
            spare.key, spare.build, spare.observed, spare.done = key, build, None, 0
        offered = self.offered.pop(key, None)
        if offered is not None and spare.done < _STEPS:
            if page:
                while spare.done < _STEPS - 1:
                    self._advance(h, spare)
            else:
                spare.payload, spare.url = build(spare.owner)
            # The group's copies must not share mutable state: each gets its own copy of the observation.
            spare.observed, spare.done = copy.deepcopy(offered), _STEPS
        while spare.done < _STEPS:
            self._advance(h, spare)
        self.sides.reverse()
        if h is not None:
            h.context, h.page = spare.context, spare.page
        spare.key = None  # used up: the agent changes it from now on
        assert spare.observed is not None
        self.played.append((key, spare.observed))
        return spare.payload, spare.observed

    # ----- internals -------------------------------------------------------------------------------------
    def _submit(self, session: weakref.ref[Session], generation: int, key: Hashable, build: Build) -> None:
        live = session()
        if live is not None:  # a weak reference: queued work must not keep a dropped env's browser alive
            live.submit(functools.partial(self._background, session=session, generation=generation, key=key, build=build))

    def _background(
        self, h: SessionHandles, session: weakref.ref[Session], generation: int, key: Hashable, build: Build
    ) -> None:
        """One preparation step, then the next one queued behind whatever the agent asked meanwhile."""
        if generation != self._generation:
            return
        spare = self.sides[1]
        if spare.key != key:
            spare.key, spare.build, spare.observed, spare.done = key, build, None, 0
        if spare.done >= _STEPS:  # asked again for the episode already prepared (an announcement repeated)
            return
        self._advance(h, spare)
        if spare.done < _STEPS:
            self._submit(session, generation, key, build)

    def _advance(self, h: SessionHandles, side: Side) -> None:
        if side.done == 0:
            if side.context is None:
                side.context = h.new_context()
                install_routing(h, side.routes, side.net, context=side.context)
                side.page = h.new_page(side.context)
                side.cdp = side.context.new_cdp_session(side.page)
            else:
                # Stop the scripts of the episode played here before its state is restored under them.
                side.page.goto("about:blank")
                side.context.clear_cookies()
        elif side.done == 1:
            assert side.build is not None
            # What the start page's load blocks or breaks is the new episode's to report, nothing earlier.
            side.net.blocked.clear()
            side.net.server_errors.clear()
            side.payload, side.url = side.build(side.owner)
            with side.page.expect_navigation(wait_until="load"):
                side.page.evaluate("u => location.replace(u)", side.url)
            # "back" must reach neither about:blank nor the pages of an episode played here before.
            side.cdp.send("Page.resetNavigationHistory")
        else:
            side.observed = self.observe(side.page)
        side.done += 1


class ResetPreparer:
    """The prepared resets of an env on a :class:`~gui_envs.browser.page.HermeticBrowser`, an object the env holds:
    the episode plays on the active side of a :class:`PagePair`, and the one the next ``reset()`` without a seed
    will draw is prepared on the spare side while the agent acts, so that the reset only swaps it in.

    A caller that names every episode (``reset(seed=...)`` or an ``options`` seed: GRPO's rollouts, ``GroupEnv``,
    evaluation loops) cannot be guessed, but it can say what comes: :meth:`announce` (:mod:`gui_envs.schema.upcoming`).
    While an announced reset is pending, it is the one prepared, whatever the last resets were. Without an
    announcement, after two named resets in a row nothing is prepared until a reset without one: those callers pay
    no background work. A first seeded reset, as in ``reset(seed=s)`` then ``reset()`` (Gymnasium's and SB3's
    pattern), still prepares.

    Args:
        env: the env (held weakly); its ``_announced(upcoming) -> (key, build)`` says which episode an announced
            reset plays, and its ``reset_options`` which options a reset takes.
        browser: the env's browser.
        owners: the two copies of the app state (the episode's, and the next one's).
        routes: ``owner -> route table``.
        observe: how a start page is observed (runs in the browser thread; must not hold the env).
        acts_on_page: whether the agent acts on the page (an env whose episode is judged on its screenshot alone
            does not).
    """

    def __init__(
        self,
        env: Any,
        browser: HermeticBrowser,
        owners: tuple[Any, Any],
        routes: Callable[[Any], RouteTable],
        observe: Observe,
        acts_on_page: bool = True,
    ) -> None:
        self._env = weakref.ref(env)  # the env holds this object: no cycle, so dropping the env closes its browser
        self.browser = browser
        self.pair = PagePair(owners, routes, observe)
        self.upcoming = UpcomingResets()
        self.acts_on_page = acts_on_page
        #: Prepare the next episode while the agent acts; a group member that takes its starts from another copy
        #: (:meth:`share_starts`) turns it off, as that copy prepares them.
        self.prepare_ahead = True
        #: Whether each of the last two resets named its episode.
        self.named = (False, False)

    def use(self, seed: int | None, options: dict[str, Any] | None) -> None:
        """A reset begins (before it draws): note whether it named its episode and use up its announcement."""
        named = seed is not None or (options or {}).get("seed") is not None
        self.named = (self.named[1], named)
        self.upcoming.use(seed, options)
        self.pair.played = []

    def share_starts(self, source: Any) -> None:
        """Offer the env's next reset the starts env ``source`` swapped in at its last reset: where that reset plays
        the same episode, its start is built and loaded here but not observed again (and, for an env that never
        acts on its page, not loaded either). ``source`` must be another copy made by ``gym.make`` with the same
        arguments; anything else is ignored. ``GroupEnv`` does so for its members, which reset to one task and
        seed. The episode is the one the reset's own arguments give."""
        env = self._env()
        # Only a copy made the same way (gym.make with equal arguments: its spec) observes a start the same way.
        spec = getattr(env, "spec", None)
        if type(source) is type(env) and source is not env and spec is not None and source.spec == spec:
            self.pair.offered = dict(source._resets.pair.played)

    def announce(self, resets: Iterable[int | Upcoming | None]) -> None:
        """Tell the env its next resets, in order (replacing any earlier announcement; see
        :mod:`gui_envs.schema.upcoming`); the first is prepared from now on. Raises what the reset itself would
        raise for options it does not take or an unknown task name."""
        env = self._env()
        plan = [Upcoming.of(r) for r in resets]
        for upcoming in plan:
            check_reset_options(env, upcoming.options)
            env._announced(upcoming)
        self.upcoming.replace(plan)
        session = self.browser.session
        if plan and self.prepare_ahead and session is not None and session.alive and not is_closed(env):
            self.pair.prepare(session, *env._announced(plan[0]))

    @property
    def states(self) -> Any:
        """This episode's app state: the active side's owner (the sites' live state by host, for the web)."""
        return self.pair.active.owner

    def route_table(self) -> RouteTable:
        """The active side's routes."""
        return self.pair.routes_of(self.states)

    def ensure_session(self) -> Session:
        """The live session; opens one (first reset, or after a crash), with both sides' routing."""
        # The env's table (a subclass may add origins); both sides serve what it adds, the owner's origins each
        # from its own state.
        route_table = self._env()._route_table
        setup = functools.partial(self.pair.install, shared=route_table())
        return self.browser.ensure(route_table, setup)

    def swap_in(self, key: Hashable, build: Build) -> tuple[Any, Any]:
        """Make episode ``key`` the active one (a swap when it is the one prepared, else built in the foreground);
        returns its payload and what was observed of its start page."""
        swap = functools.partial(self.pair.swap, key=key, build=build, page=self.acts_on_page)
        if not self.acts_on_page and key in self.pair.offered and self.browser.session is None:
            # A copy that never acts on its page, handed its start: no browser to open (a context costs a renderer).
            payload, observed = swap(None)
        else:
            payload, observed = self.ensure_session().call(swap)
        self.browser.net = self.pair.active.net
        return payload, observed

    def prepare_next(self, key: Hashable, build: Build) -> None:
        """Prepare the next announced reset's episode on the spare side while the agent acts (returns at once), else
        the guess ``key`` (what the next ``reset()`` without a seed draws); nothing for a caller that named its last
        two episodes and announced none (see the class docstring)."""
        self.pair.offered = {}  # the reset is over (this runs at its end): what was offered was for it alone
        upcoming = self.upcoming.next()
        if not self.prepare_ahead:
            return
        if upcoming is not None:
            key, build = self._env()._announced(upcoming)
        elif all(self.named):
            return
        self.pair.prepare(self.ensure_session(), key, build)
