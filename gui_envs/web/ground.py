"""``GuiWebGround-v0``: one-step grounding on pages of the bundled sites."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Hashable
from types import MappingProxyType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from gui_envs.browser import observation
from gui_envs.browser.observation import PageView
from gui_envs.browser.prefetch import Build, ResetPreparer
from gui_envs.browser.site import SiteState
from gui_envs.schema.action_space import ActionSpace
from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import SEED, guarded_reset, guarded_step
from gui_envs.schema.upcoming import Upcoming
from gui_envs.tasks.grounding import BANNER_PX, box_action_space, box_point, draw_instruction_banner, pick
from gui_envs.web import describe as referring
from gui_envs.web.env import PreparedWebEnv, site_routes
from gui_envs.web.tasks import SITES

#: Pages drawn per reset at most: a few pages have no describable target, and the draw moves on to another.
ATTEMPTS = 20
#: Salt of a reset's page generator, ``default_rng([page seed, PAGE_SALT])`` (site content uses the seed alone).
PAGE_SALT = 11


def page_paths(state: SiteState) -> list[str]:
    """Pages of a seeded site that grounding episodes are drawn from."""
    q = state.query
    host = state.site.host
    if host == "shop":
        ids = [r[0] for r in q("SELECT id FROM products ORDER BY id")]
        cats = [r[0] for r in q("SELECT DISTINCT category FROM products ORDER BY 1")]
        return [
            "/",
            "/cart",
            "/checkout",
            *(f"/?category={c}" for c in cats),
            *(f"/product/{i}" for i in ids[::4]),
        ]
    if host == "forum":
        subs = [r[0] for r in q("SELECT name FROM subforums ORDER BY 1")]
        posts = [r[0] for r in q("SELECT id FROM posts ORDER BY id")]
        return ["/", "/user/alex", *(f"/f/{s}" for s in subs), *(f"/post/{i}" for i in posts[::4])]
    ids = [r[0] for r in q("SELECT id FROM listings ORDER BY id")]
    return ["/", "/post", "/my-ads", *(f"/listing/{i}" for i in ids[::4])]


def describe(el: dict[str, Any]) -> str:
    """The exact-text referring expression of ``describe="text"``: ``the "Add to cart" button``."""
    text, role = el["text"], el["role"]
    if el["tag"] == "a":
        return f'the link "{text}"'
    if el["tag"] == "button" or role == "button":
        return f'the "{text}" button'
    if el["tag"] in ("input", "textarea", "select") and role not in ("radio", "checkbox"):
        return f'the "{text}" field'
    if el["tag"] == "label" or role in ("radio", "checkbox"):
        return f'the "{text}" option'
    return f'the "{text}" element'


def inside_viewport(view: PageView, viewport: tuple[int, int], top: int) -> list[dict[str, Any]]:
    """Visible clickable elements of ``view`` wholly inside the ``viewport`` (pixels) and below ``top`` (pixels: the
    banner in box mode), at least 16 square pixels, in DOM order: the candidate targets."""
    width, height = viewport
    out = []
    for el in view.visible:
        x0, y0, x1, y1 = el["bbox"]
        inside = x0 >= 0 and y0 >= top and x1 <= width and y1 <= height and (x1 - x0) * (y1 - y0) >= 16
        if el["clickable"] and inside:
            out.append(el)
    return out


def build_page(seed: int, attempt: int, states: dict[str, SiteState]) -> tuple[np.random.Generator, str]:
    """Restore the three sites to page seed ``seed`` and draw the URL of draw ``attempt`` (0-based) of that seed.

    The page generator replays the draws of the attempts before (two integers each: site, then page), so attempt
    ``k`` on a fresh copy of the sites gives the page and the generator that the ``k``-th retry of one copy gives.
    Returns the generator (the target and the description are drawn from it next) and the URL.
    """
    for state in states.values():
        state.restore(seed)
    rng = np.random.default_rng([seed, PAGE_SALT])
    hosts = sorted(states)
    url = ""
    for _ in range(attempt + 1):
        state = states[hosts[int(rng.integers(len(hosts)))]]
        paths = page_paths(state)
        url = state.site.origin + paths[int(rng.integers(len(paths)))]
    return rng, url


def observe_page(
    page: Any, observe: Callable[[Any], tuple[PageView, bytes]], viewport: tuple[int, int], top: int, contexts: bool
) -> tuple[PageView, bytes, dict[str, list[str]] | None, np.ndarray | None]:
    """The start page's view, image, structural descriptions (when ``contexts``; see :func:`structure_described`)
    and decoded frame (:func:`~gui_envs.browser.observation.observe_decoded`). Runs in the browser thread, so a page
    prepared in the background is described and decoded there, without a further browser call, and the members of
    a group copy the descriptions instead of computing them again."""
    view, image, frame = observation.observe_decoded(page, observe, viewport)
    if not contexts:
        return view, image, None, frame
    ids = [el["id"] for el in inside_viewport(view, viewport, top)]
    facts = page.evaluate(referring.CONTEXT_JS, ids)
    return view, image, structure_described(view, facts, viewport, top), frame


def structure_described(
    view: PageView, contexts: dict[str, Any], viewport: tuple[int, int], top: int
) -> dict[str, list[str]]:
    """``describe="structure"``: the candidates (:func:`inside_viewport`) with at least one description that fits
    no other candidate, given their layout facts (``contexts``: :data:`~gui_envs.web.describe.CONTEXT_JS`, by id)."""
    inside = inside_viewport(view, viewport, top)
    candidates = [el for el in inside if el["id"] in contexts and referring.targetable(el, contexts[el["id"]])]
    described = referring.describe_page(candidates, contexts, viewport)
    return {i: texts for i, texts in described.items() if texts}


class GuiWebGroundEnv(PreparedWebEnv):
    """One-step GUI grounding: "click <description>" on a seeded page of the bundled sites.

    **Episode**: ``reset`` loads a page drawn from the three sites (content seeded by the reset seed) and picks
    a visible clickable element; one ``step`` ends the episode (``terminated=True``).

    **Instruction**: with ``describe="structure"`` (default) the target is described the way ScreenSpot
    describes it, by function, position or paraphrase, never by quoting its visible text: "click the button
    that puts "Orchid Pro Webcam" in the shopping basket", "click the name of the second product", "click the
    box for where the parcel should be delivered", "click the third link of the menu at the top of the page"
    (see :mod:`gui_envs.web.describe`; only descriptions that fit exactly one candidate on the page are used).
    With ``describe="text"`` (the v0 behaviour before this option) it quotes the target's visible text, which
    is unique on the page: ``click the "Add to cart" button``; a string matcher over ``elements`` solves that
    form (see ``benchmarks/ground_baselines.py``).

    **Observation** (``action_type="text"``, default): ``Dict`` with ``screenshot`` ``Box(0, 255, (H, W, 3),
    uint8)``, ``elements`` (JSON ``Text``, as in ``GuiWeb-v0``), ``url`` and ``instruction`` (``Text``).
    With ``action_type="box"`` the observation is only the screenshot ``Box(0, 255, (H, W, 3), uint8)`` with
    the instruction drawn in a ``BANNER_PX``-pixel banner at its top (so image-only policies such as SB3's
    ``CnnPolicy`` can train); targets never lie under the banner.

    **Action**: ``action_type="text"``: Action JSON / GUI-R1 JSON (or an ``Action``) whose point or element
    is the click target; ``action_type="box"``: ``Box(low=[0, 0], high=[W - 1, H - 1], (2,), float32)``, the
    click point (x, y) in screenshot pixels.

    **Reward**: 1.0 if the click point lies inside the target's bbox, else 0.0 (binary, as in grounding
    benchmarks). ``privileged()["target_bbox"]`` = ``[x0, y0, x1, y1]`` pixels (never in ``info``; see
    :mod:`gui_envs.schema.privileged`), so ``SweetSpotReward``-style shaping can wrap the env. The click is judged
    on the screenshot only and is not performed in the browser unless ``perform_click=True`` (then
    ``info["url"]`` shows where it led).

    **Resets**: the page is drawn from ``default_rng([page seed, 11])`` (page seed: ``options["seed"]``, else drawn
    from the env's generator); the three sites are restored to the page seed, and a page without a describable
    target is followed by another draw (at most 20). The page seed the next ``reset()`` without a seed will draw
    is guessed from a copy of the env's generator, and its first page is prepared while the agent acts, in a second
    browser context with its own copy of the sites (the :class:`~gui_envs.browser.prefetch.ResetPreparer` the env
    holds: state restore, navigation, observation and the layout facts the description needs), so that reset only
    swaps it in. A named reset that was announced (:meth:`announce`,
    :mod:`gui_envs.schema.upcoming`: GRPO's rollouts and ``GroupEnv`` do) is prepared the same way instead of the guess.
    Any other reset, and a further draw after a page without a target, is built the same way in the foreground:
    the same seed gives the same episode either way. The agent's clicks (``perform_click=True``) reach only the
    page of its episode; a start page has no history behind it.

    Version history: v0, initial release; ``describe`` added (default ``"structure"``; ``"text"`` keeps the
    exact-text instructions).

    Args:
        action_type: ``"text"`` or ``"box"``.
        perform_click: also execute the click in the browser (costs one page action).
        describe: ``"structure"`` (function / position / paraphrase) or ``"text"`` (quote the visible text).
        **kwargs: :class:`~gui_envs.web.env.WebEnvBase` options (viewport, headless, ...).
    """

    def __init__(
        self, action_type: str = "text", perform_click: bool = False, describe: str = "structure", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if action_type not in ("text", "box"):
            raise ValueError(f"action_type must be 'text' or 'box', got {action_type!r}")
        if describe not in ("structure", "text"):
            raise ValueError(f"describe must be 'structure' or 'text', got {describe!r}")
        self.action_type, self.perform_click, self.describe = action_type, perform_click, describe
        # The description's layout facts are taken where the page is observed: in the background when prepared.
        top = BANNER_PX if action_type == "box" else 0
        observe = functools.partial(
            observe_page, observe=self._page_observer(), viewport=self.viewport, top=top, contexts=describe == "structure"
        )
        # Two copies of the sites: the episode's, and the next one's, prepared while the agent acts. A click judged
        # on the screenshot alone needs no page of its own when the start was observed elsewhere (acts_on_page).
        owners = tuple({host: SiteState(site) for host, site in SITES.items()} for _ in range(2))
        self._resets = ResetPreparer(self, self._browser, owners, site_routes, observe, perform_click)  # type: ignore[arg-type]
        width, height = self.viewport
        if action_type == "box":
            self.observation_space = spaces.Box(0, 255, (height, width, 3), np.uint8)
            self.action_space = box_action_space(width, height)
        else:
            self.observation_space = spaces.Dict(self._base_spaces())
            self.action_space = ActionSpace(self.viewport)
        self.target: dict[str, Any] | None = None
        self.instruction = ""

    reset_options = MappingProxyType({"seed": SEED})

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self._resets.use(seed, options)
        super().reset(seed=seed)
        # Drawn even when options name the seed: the generator then stays where it was before prefetching existed.
        page_seed = int((options or {}).get("seed", self.np_random.integers(2**31 - 1)))
        self.target = None
        for attempt in range(ATTEMPTS):
            # Attempt 0 of the guessed seed is the page prepared in the background; the rest build in the foreground.
            rng, (view, image, structured, frame) = self._resets.swap_in(
                (page_seed, attempt), functools.partial(build_page, page_seed, attempt)
            )
            self._absorb(view, image, frame)
            described = structured if self.describe == "structure" else self._text_described()
            if described:
                break
        else:  # pragma: no cover - every bundled site has clickable text
            raise RuntimeError(f"no grounding target found on {ATTEMPTS} pages")
        ids = sorted(described, key=int)
        self.target = self._view.by_id(ids[int(rng.integers(len(ids)))])
        assert self.target is not None
        self.instruction = f"click {pick(described[self.target['id']], rng)}"
        # The next reset() without a seed draws its page seed from a copy of this generator: prepare its first page.
        guess = int(copy.deepcopy(self.np_random).integers(2**31 - 1))
        self._resets.prepare_next((guess, 0), functools.partial(build_page, guess, 0))
        return self._observe(), self._info(None, None)

    def _announced(self, upcoming: Upcoming) -> tuple[Hashable, Build]:
        """The first page of the page seed ``reset(seed=upcoming.seed, options=upcoming.options)`` will draw: the
        options' seed, else the first draw of the generator that seed gives (of a copy of the env's, without one)."""
        page_seed = (upcoming.options or {}).get("seed")
        if page_seed is None:
            rng = seeding.np_random(upcoming.seed)[0] if upcoming.seed is not None else copy.deepcopy(self.np_random)
            page_seed = rng.integers(2**31 - 1)
        return (int(page_seed), 0), functools.partial(build_page, int(page_seed), 0)

    def _inside(self) -> list[dict[str, Any]]:
        """Visible clickable elements wholly inside the viewport (below the banner in box mode), in DOM order."""
        return inside_viewport(self._view, self.viewport, BANNER_PX if self.action_type == "box" else 0)

    def _text_described(self) -> dict[str, list[str]]:
        """``describe="text"``: elements whose text is unique on the page, described by that text."""
        visible = [el for el in self._view.visible if el["clickable"] and el["text"].strip()]
        counts: dict[str, int] = {}
        for el in visible:
            counts[el["text"].lower()] = counts.get(el["text"].lower(), 0) + 1
        return {
            el["id"]: [describe(el)]
            for el in self._inside()
            if el["text"].strip() and counts[el["text"].lower()] == 1 and len(el["text"]) <= 60
        }

    @guarded_step
    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.target is None:
            raise ResetNeededError("call reset() before step()")
        error = None
        point: tuple[float, float] | None = None
        if self.action_type == "box":
            point, error = box_point(action)
        else:
            parsed, error = coerce_action(action)
            if parsed is not None and parsed.point is not None:
                point = parsed.point
            elif parsed is not None and parsed.element_id is not None:
                el = self._view.by_id(parsed.element_id)
                if el is None:
                    error = f"no element with id {parsed.element_id!r}"
                else:
                    point = ((el["bbox"][0] + el["bbox"][2]) / 2, (el["bbox"][1] + el["bbox"][3]) / 2)
            elif parsed is not None:
                error = f"grounding needs a click with a point or element_id, got {parsed.type}"
        hit = False
        if point is not None:
            x0, y0, x1, y1 = self.target["bbox"]
            hit = x0 <= point[0] <= x1 and y0 <= point[1] <= y1
            if self.perform_click:
                error = self._act(Action.click(*point), self._view.url) or error
        return self._observe(), 1.0 if hit else 0.0, True, False, self._info(error, hit)

    def oracle_action(self) -> Any:
        """The centre of the target's bbox (a ``(2,)`` array in box mode, else an ``Action``)."""
        if self.target is None:
            raise ResetNeededError("call reset() first")
        x0, y0, x1, y1 = self.target["bbox"]
        cx, cy = float(round((x0 + x1) / 2)), float(round((y0 + y1) / 2))
        return np.array([cx, cy], np.float32) if self.action_type == "box" else Action.click(cx, cy)

    def _observe(self) -> Any:
        if self.action_type == "box":
            return draw_instruction_banner(self._frame, self.instruction)
        return self._base_obs(self.instruction)

    def privileged(self) -> dict[str, Any]:
        """``target_bbox`` (pixels) and ``target_element`` (see :mod:`gui_envs.schema.privileged`)."""
        if self.target is None:
            raise ResetNeededError("call reset() first")
        return {
            "target_bbox": observation.clip_bbox(self.target["bbox"], self.viewport),
            "target_element": {k: self.target[k] for k in ("id", "role", "text")},
        }

    def _info(self, error: str | None, hit: bool | None) -> dict[str, Any]:
        assert self.target is not None
        return {
            "instruction": self.instruction,
            "success": bool(hit),
            "score": 1.0 if hit else 0.0,
            "action_error": error,
            "blocked_requests": self._browser.take_blocked(),
            "url": self._view.url,
            "task": "ground",
        }
