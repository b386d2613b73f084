"""Judges that cannot be gamed (issue 9): answer matching, web infeasible rule, blind policies score 0."""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from benchmarks.judge_attacks import blind_policies
from benchmarks.judge_attacks.blind_sweep import FormBrowser
from gui_envs.schema.actions import Action
from gui_envs.tasks.base import AnswerTask, CanBeInfeasible, InfeasibleTask, StateTask
from gui_envs.tasks.judging import NUMERIC_TOLERANCE, answers_match
from gui_envs.web.env import GuiWebEnv
from gui_envs.web.sites.classifieds import SELLERS
from gui_envs.web.tasks import TASKS as WEB_TASKS
from tests.gui_envs.judge_suite import check_template


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        # numeric: currency, thousands separators, unit words where the reference has one, tolerance
        ("$1,204.50", "1204.5", True),
        ("1204.50 dollars", "$1,204.50", True),
        ("12", "12 hours", True),
        ("12 h", "12 hours", True),
        ("520 calories", "520 kcal", True),
        ("12 minutes", "12 hours", False),
        ("12 hours", "12", False),
        ("12.00001", "12", False),  # 10 tolerances away
        (f"{12 + NUMERIC_TOLERANCE / 2}", "12", True),
        ("42", "420", False),
        # never the first number of the answer
        ("It has 420 calories.", "420 calories", False),
        ("3 or 4", "3", False),
        ("How many Snacks products cost less than $3.00? Answer with a number.", "3", False),
        # text: case, whitespace and punctuation, never a substring, never "reference plus 20 characters"
        ("  acme RED-scarf. ", "Acme Red Scarf", True),
        ("the acme red scarf", "Acme Red Scarf", False),
        ("maria_k or tom.b", "tom.b", False),
        ("", "x", False),
        ("...", "x", False),
        # lists: set equality, separators , ; & and "and"
        ("Fair and Good", "Good, Fair", True),
        ("fair; good", "Good & Fair", True),
        ("Good, Fair, New", "Good, Fair", False),
        ("New, Like new, Good, Fair", "Good", False),
    ],
)
def test_answers_match(answer: str, reference: str, expected: bool) -> None:
    assert answers_match(answer, reference) is expected


def test_condition_of_listing_every_condition_fails() -> None:
    # Regression: "New, Like new, Good, Fair" used to pass classifieds.condition_of on every seed.
    for seed in range(60):
        task = blind_policies.build_task("web", "classifieds.condition_of", seed)
        assert blind_policies.judge(task, Action.stop(answer="New, Like new, Good, Fair")) == 0.0


def test_echoing_the_question_fails_count_under_price() -> None:
    # Regression: echoing the instruction passed shop.count_under_price on 11/60 seeds (its first number).
    for seed in range(60):
        task = blind_policies.build_task("web", "shop.count_under_price", seed)
        assert blind_policies.judge(task, Action.stop(answer=task.instruction)) == 0.0


def test_seller_names_score_a_blind_guess() -> None:
    # Regression: three seller names passed classifieds.seller_of on 38/60 seeds; one guess deserves 1/6.
    three, wins = ", ".join(SELLERS[:3]), {s: 0 for s in SELLERS}
    for seed in range(60):
        task = blind_policies.build_task("web", "classifieds.seller_of", seed)
        assert blind_policies.judge(task, Action.stop(answer=three)) == 0.0
        assert blind_policies.judge(task, Action.stop(answer=f"{SELLERS[0]} {SELLERS[1]}")) == 0.0
        for s in SELLERS:
            wins[s] += int(blind_policies.judge(task, Action.stop(answer=s)))
    assert sum(wins.values()) == 60  # exactly one seller is right on every seed


@pytest.mark.parametrize("name", blind_policies.templates("web"))
def test_blind_policies_score_nothing_but_chance(name: str) -> None:
    check_template("web", name)


def _seed_where(name: str, feasible: bool) -> int:
    return next(s for s in range(200) if blind_policies.build_task("web", name, s).feasible is feasible)


def test_a_missing_product_needs_a_search_for_its_name() -> None:
    # Issue 36: a search for the whole instruction passed shop.add_named_product on 200/200 seeds.
    name = "shop.add_to_cart"
    task = blind_policies.build_task("web", name, _seed_where(name, False))
    stop, home, wanted = Action.stop(status="infeasible"), task.visited[0], task.p["name"]
    assert not task.query("SELECT 1 FROM products WHERE name = ?", (wanted,))  # gone from the catalogue
    assert blind_policies.judge(task, stop) == 0.0
    for query in (task.instruction, wanted.split()[0][:-1], wanted.split()[-1][:-1]):  # instruction, fragments
        task.visited.append(f"{home}?q={urllib.parse.quote(query)}")
        assert blind_policies.judge(task, stop) == 0.0, query
    task.visited.append(f"{home}?q={urllib.parse.quote(wanted)}")
    assert blind_policies.judge(task, stop) == 1.0
    assert blind_policies.judge(task, Action.stop()) == 0.0  # looked, but claimed success
    other = next(n for n in task.pool if not set(n.lower().split()) & set(wanted.lower().split()))
    task.visited.append(f"{home}?q={urllib.parse.quote(other)}")  # a search through the pool: a sweep
    assert blind_policies.judge(task, stop) == 0.0


def test_a_feasible_seed_fails_an_infeasible_stop_after_the_same_look() -> None:
    name = "shop.add_to_cart"
    task = blind_policies.build_task("web", name, _seed_where(name, True))
    task.visited.append(f"{task.visited[0]}?q={urllib.parse.quote(task.p['name'])}")
    assert blind_policies.judge(task, Action.stop(status="infeasible")) == 0.0


@pytest.mark.parametrize(("name", "kind"), [("forum.delete_post", "/post/"), ("classifieds.edit_price", "/listing/"),
                                            ("shop.add_with_options", "/product/")])  # fmt: skip
def test_an_id_sweep_is_no_look(name: str, kind: str) -> None:
    # Issue 36: /post/1 ... /post/29 then stop(infeasible) passed forum.delete_named_post on 157/200 seeds.
    task = blind_policies.build_task("web", name, _seed_where(name, False))
    home = task.visited[0].split("/", 3)[:3]
    task.visited += ["/".join(home) + f"{kind}{i}" for i in range(1, 49)]
    assert blind_policies.judge(task, Action.stop(status="infeasible")) == 0.0


def test_names_keep_the_verdict_to_themselves() -> None:
    # Every agent reads info["task"]: "shop.infeasible_size" told it the verdict before it looked. Class names
    # never reach an agent, but a web template's stays as honest as its name.
    for family in blind_policies.FAMILIES:
        for name in blind_policies.templates_of(family):
            assert not any(word in name for word in blind_policies.VERDICT_WORDS), (family, name)
    for cls in WEB_TASKS.values():
        assert not any(word in cls.__name__.lower() for word in ("infeasible", "missing", "nosuch", "impossible")), cls


@pytest.mark.parametrize("name", blind_policies.templates_of("web", (InfeasibleTask, CanBeInfeasible)))
def test_infeasible_stop_at_step_one_fails_in_the_env(web_env: GuiWebEnv, name: str) -> None:
    # Regression: stop(status="infeasible") at step 1 passed every web infeasible template.
    for seed in (0, 1):
        web_env.reset(options={"task": name, "seed": seed})
        _, reward, terminated, _, info = web_env.step(Action.stop(status="infeasible"))
        assert terminated and reward == 0.0 and not info["success"], (name, seed)


# ----- answer generators: no constant answer beats a blind guess (issue 23) ------------------------------------
#: Enough seeds that a prior shows ("4" passed shop.wishlist_count on 47/200 against a chance of 0.02), few
#: enough that every answer template is measured in about ten seconds.
CONSTANT_SEEDS = range(200)
ANSWER_TEMPLATES = blind_policies.templates_of("web", (AnswerTask,))


def fair_most(n: int, p: float, k: int, alpha: float = 0.01) -> int:
    """The most seeds out of ``n`` that one of ``k`` answers may pass by sampling noise alone, when each passes
    each seed with probability at most ``p``: the smallest count ``c`` with ``k * P(Binomial(n, p) >= c) <= alpha``.

    Even a generator that draws uniformly over its candidates has some answer above ``p`` on a finite sample,
    and further above it the more candidates there are (the largest of 49 counts, not one count); "chance plus
    two standard errors" would fail a fair 49-way draw about half the time. A generator with a prior still fails:
    wishlist_count's 47/200 against ``p = 0.02`` is far beyond ``c = 13``.
    """
    tail = 1.0
    for c in range(n + 1):
        if k * tail <= alpha:
            return c
        tail -= math.comb(n, c) * p**c * (1 - p) ** (n - c)
    return n + 1


@pytest.fixture(scope="module")
def constants() -> dict[str, tuple[str, int, float, int]]:
    """Per answer template: the best constant answer, the seeds it passes, the mean chance, and how many
    distinct answers were right on some seed. The same measure as :func:`blind_policies.best_constant`, faster:
    the seeds in the outer loop build each seed's databases once for all templates, and each task is built once
    (an answer judge reads the stop and the reference only, never the databases the next build restores)."""
    tasks: dict[str, list[AnswerTask]] = {name: [] for name in ANSWER_TEMPLATES}
    chances = dict.fromkeys(ANSWER_TEMPLATES, 0.0)
    for seed in CONSTANT_SEEDS:
        for name in ANSWER_TEMPLATES:
            task = blind_policies.build_task("web", name, seed)
            assert type(task).evaluate is AnswerTask.evaluate, name  # else it must be judged before the next build
            tasks[name].append(task)
            chances[name] += blind_policies.chance(task) / len(CONSTANT_SEEDS)
    out = {}
    for name in ANSWER_TEMPLATES:
        pool = list(dict.fromkeys(str(t.reference_answer) for t in tasks[name]))
        wins = {a: sum(blind_policies.judge(t, Action.stop(answer=a)) >= 1.0 for t in tasks[name]) for a in pool}
        best = max(pool, key=lambda a: wins[a])
        out[name] = (best, wins[best], chances[name], len(pool))
    return out


@pytest.mark.parametrize("name", ANSWER_TEMPLATES)
def test_no_constant_answer_beats_a_blind_guess(constants: dict[str, tuple[str, int, float, int]], name: str) -> None:
    best, wins, chance, answers = constants[name]
    n = len(CONSTANT_SEEDS)
    assert wins <= fair_most(n, chance, answers), (name, best, wins / n, chance)


def test_the_constant_measure_is_the_audits() -> None:
    seeds = range(12)
    for name in ("shop.colour_count", "classifieds.seller_of"):
        best, rate = blind_policies.best_constant("web", name, seeds)
        wins = sum(blind_policies.judge(blind_policies.build_task("web", name, s), Action.stop(answer=best)) >= 1.0 for s in seeds)
        assert rate == wins / len(seeds) and rate > 0


def test_fair_most_catches_a_prior_and_passes_noise() -> None:
    assert fair_most(200, 0.02, 5) < 47  # wishlist_count's "4" before its count was drawn uniformly
    assert fair_most(200, 0.2, 5) < 105  # colour_count's "3"
    rng = np.random.default_rng(0)
    for k in (2, 4, 13, 49, 300):  # uniform draws: the largest count stays within the bound
        counts = np.bincount(rng.integers(k, size=200), minlength=k)
        assert counts.max() <= fair_most(200, 1 / k, k), k


# ----- state judges: a side effect fails the episode (issue 23) ------------------------------------------------
class Episode:
    """One scripted episode of a web state template, without a browser: each request goes to the site's own
    handlers (:class:`~benchmarks.judge_attacks.blind_sweep.FormBrowser`: the form a click submits, the page a
    typed URL opens, redirects followed), the location after it is recorded as the env records it, and the judge
    is asked after it as the env asks after each step. The episode ends when the judge passes; a script that
    never makes it pass ends with ``stop(status="success")``."""

    def __init__(self, name: str, seed: int) -> None:
        self.task = blind_policies.build_task("web", name, seed)
        state, _, _ = blind_policies.site_of("web", self.task)
        self.browser = FormBrowser(state, lambda _path: None)
        self.ended = False

    def get(self, path: str) -> None:
        self._step("GET", path, None)

    def post(self, path: str, **form: Any) -> None:
        self._step("POST", path, {k: str(v) for k, v in form.items()})

    def _step(self, method: str, path: str, form: dict[str, str] | None) -> None:
        if not self.ended:
            self.browser.request(method, path, form)
            # The browser reports the path it ended on; a page that did not redirect keeps its query (a search).
            asked = urllib.parse.urlsplit(path)
            shown = path if self.browser.path == asked.path else self.browser.path
            self.task.visited.append(self.task.state.site.origin + shown)
            self.ended = bool(self.task.finished(self.task.evaluate(None)))

    @property
    def passed(self) -> bool:
        return self.ended or self.task.evaluate(Action.stop()) >= 1.0


Touch = Callable[[Episode, Any], object]


def ids(sql: str) -> Callable[[Any], list[Any]]:
    return lambda task: [r[0] for r in task.query(sql)]


def row(task: Any, sql: str, key: Any) -> Any:
    return task.one(sql, (key,))


def edit_ad(e: Episode, lid: Any, **change: Any) -> None:
    ad = row(e.task, "SELECT * FROM listings WHERE id=?", lid)
    e.post(f"/listing/{lid}/edit", **{"title": ad["title"], "price": ad["price"], "description": ad["description"], **change})


def vote(direction: str) -> Touch:
    return lambda e, i: e.post(f"/post/{i}/vote", dir=direction)


PRODUCTS, POSTS = ids("SELECT id FROM products ORDER BY id"), ids("SELECT id FROM posts WHERE deleted=0 ORDER BY id")
SUBFORUMS = ids("SELECT name FROM subforums ORDER BY name")
MY_POSTS = ids("SELECT id FROM posts WHERE author='alex' AND deleted=0 ORDER BY id")
LISTINGS = ids("SELECT id FROM listings WHERE deleted=0 ORDER BY id")
MY_ADS = ids("SELECT id FROM listings WHERE mine=1 AND deleted=0 ORDER BY id")
FAVOURITE = "/listing/{}/favourite"

#: The templates about one item of many: (the items in id order, act on one item, the task's item). Doing the
#: task is acting on its item; a sweep acts on every item in turn.
ITEM_TASKS: dict[str, tuple[Callable[[Any], list[Any]], Touch, Callable[[Any], Any]]] = {
    "shop.open_product": (PRODUCTS, lambda e, i: e.get(f"/product/{i}"), lambda t: t.p["id"]),
    "shop.add_to_wishlist": (PRODUCTS, lambda e, i: e.post("/wishlist/add", product_id=i), lambda t: t.p["id"]),
    "shop.remove_from_wishlist": (
        ids("SELECT product_id FROM wishlist ORDER BY product_id"),
        lambda e, i: e.post("/wishlist/remove", product_id=i),
        lambda t: t.p["id"],
    ),
    "shop.add_to_cart": (PRODUCTS, lambda e, i: e.post("/cart/add", product_id=i, qty=1), lambda t: t.p["id"]),
    "shop.add_to_cart_qty": (
        PRODUCTS, lambda e, i: e.post("/cart/add", product_id=i, qty=e.task.qty), lambda t: t.p["id"]
    ),
    "shop.add_with_options": (
        PRODUCTS,
        lambda e, i: e.post("/cart/add", product_id=i, qty=1, colour=e.task.colour, size=e.task.size),
        lambda t: t.p["id"],
    ),
    "shop.remove_from_cart": (
        ids("SELECT id FROM cart ORDER BY id"),
        lambda e, i: e.post("/cart/remove", item_id=i),
        lambda t: row(t, "SELECT id FROM cart WHERE product_id=?", t.p["id"])[0],
    ),
    "shop.wishlist_to_cart": (
        PRODUCTS,
        lambda e, i: (e.post("/wishlist/remove", product_id=i), e.post("/cart/add", product_id=i, qty=1)),
        lambda t: t.p["id"],
    ),
    "shop.cancel_order": (ids("SELECT id FROM orders ORDER BY id"), lambda e, i: e.post(f"/orders/{i}/cancel"), lambda t: t.oid),
    "forum.open_subforum": (SUBFORUMS, lambda e, s: e.get(f"/f/{s}"), lambda t: t.sub),
    "forum.open_post": (POSTS, lambda e, i: e.get(f"/post/{i}"), lambda t: t.p["id"]),
    "forum.open_author_profile": (
        ids("SELECT name FROM users ORDER BY name"), lambda e, u: e.get(f"/user/{u}"), lambda t: t.p["author"]
    ),
    "forum.upvote": (POSTS, vote("up"), lambda t: t.p["id"]),
    "forum.downvote": (POSTS, vote("down"), lambda t: t.p["id"]),
    "forum.remove_upvote": (POSTS, vote("up"), lambda t: t.p["id"]),
    "forum.comment": (POSTS, lambda e, i: e.post(f"/post/{i}/comment", body=e.task.text), lambda t: t.p["id"]),
    "forum.comment_and_upvote": (
        POSTS,
        lambda e, i: (vote("up")(e, i), e.post(f"/post/{i}/comment", body=e.task.text)),
        lambda t: t.p["id"],
    ),
    "forum.edit_title": (
        MY_POSTS,
        lambda e, i: e.post(f"/post/{i}/edit", title=e.task.new, body=row(e.task, "SELECT body FROM posts WHERE id=?", i)[0]),
        lambda t: t.p["id"],
    ),
    "forum.delete_post": (MY_POSTS, lambda e, i: e.post(f"/post/{i}/delete"), lambda t: t.p["id"]),
    "forum.subscribe": (SUBFORUMS, lambda e, s: e.post(f"/f/{s}/subscribe"), lambda t: t.sub),
    "forum.unsubscribe": (
        ids("SELECT subforum FROM subscriptions ORDER BY 1"), lambda e, s: e.post(f"/f/{s}/subscribe"), lambda t: t.sub
    ),
    "classifieds.open_listing": (LISTINGS, lambda e, i: e.get(f"/listing/{i}"), lambda t: t.l["id"]),
    "classifieds.favourite": (
        ids("SELECT id FROM listings WHERE mine=0 AND deleted=0 ORDER BY id"),
        lambda e, i: e.post(FAVOURITE.format(i)),
        lambda t: t.l["id"],
    ),
    "classifieds.unfavourite": (
        ids("SELECT listing_id FROM favourites ORDER BY 1"), lambda e, i: e.post(FAVOURITE.format(i)), lambda t: t.l["id"]
    ),
    "classifieds.favourite_cheapest": (LISTINGS, lambda e, i: e.post(FAVOURITE.format(i)), lambda t: t.l["id"]),
    "classifieds.delete_ad": (MY_ADS, lambda e, i: e.post(f"/listing/{i}/delete"), lambda t: t.l["id"]),
    "classifieds.edit_price": (MY_ADS, lambda e, i: edit_ad(e, i, price=e.task.price), lambda t: t.l["id"]),
    "classifieds.edit_title": (MY_ADS, lambda e, i: edit_ad(e, i, title=e.task.new), lambda t: t.l["id"]),
}


def checkout(e: Episode, shipping: str) -> None:
    e.post("/checkout", name=e.task.who, address=e.task.address, shipping=shipping)


def post_ad(e: Episode, description: str) -> None:
    t = e.task
    e.post("/post", title=t.title, price=t.price, category=t.category, location=t.location, description=description)


#: The other state templates: what doing the task sends.
OTHER_TASKS: dict[str, Callable[[Episode], object]] = {
    "shop.open_wishlist": lambda e: e.get("/wishlist"),
    "shop.search": lambda e: e.get("/?" + urllib.parse.urlencode({"q": e.task.q})),
    "shop.browse_sorted": lambda e: e.get("/?" + urllib.parse.urlencode({"category": e.task.category, "sort": e.task.sort})),
    "shop.update_cart_qty": lambda e: e.post(
        "/cart/update", item_id=row(e.task, "SELECT id FROM cart WHERE product_id=?", e.task.p["id"])[0], qty=e.task.qty
    ),
    "shop.buy": lambda e: (e.post("/cart/add", product_id=e.task.p["id"], qty=e.task.qty), checkout(e, e.task.shipping)),
    "shop.buy_two": lambda e: (
        e.post("/cart/add", product_id=e.task.a["id"], qty=1),
        e.post("/cart/add", product_id=e.task.b["id"], qty=1),
        checkout(e, "express"),
    ),
    "forum.create_post": lambda e: e.post(f"/f/{e.task.sub}/new", title=e.task.title, body=e.task.body),
    "forum.edit_bio": lambda e: e.post("/user/alex/bio", bio=e.task.bio),
    "forum.upvote_all_by_user": lambda e: [vote("up")(e, i) for i in e.task.ids],
    "classifieds.post_ad": lambda e: post_ad(e, "Collect any weekend"),
    "classifieds.post_then_favourite": lambda e: (post_ad(e, "Bought last year."), e.post(FAVOURITE.format(e.task.fav["id"]))),
    "classifieds.filter": lambda e: e.get("/?" + urllib.parse.urlencode({"category": e.task.category, "location": e.task.location})),
    "classifieds.search": lambda e: e.get("/?" + urllib.parse.urlencode({"q": e.task.q})),
    "classifieds.sort_category": lambda e: e.get("/?" + urllib.parse.urlencode({"category": e.task.category, "sort": e.task.sort})),
}


def unrelated_change(e: Episode) -> None:
    """A change to an item the task is not about (the other templates have no row of items to sweep)."""
    t = e.task
    if t.site == "shop":
        e.post("/wishlist/add", product_id=1)
    elif t.site == "forum":  # a post the task does not vote on
        e.post(f"/post/{row(t, 'SELECT MIN(id) FROM posts WHERE author != ?', getattr(t, 'user', ''))[0]}/vote", dir="down")
    else:  # an ad the task does not favourite
        fav = getattr(t, "fav", None)
        e.post(FAVOURITE.format(row(t, "SELECT MIN(id) FROM listings WHERE id != ?", fav["id"] if fav else 0)[0]))


def do_task(e: Episode, name: str) -> None:
    if name in ITEM_TASKS:
        _, touch, target = ITEM_TASKS[name]
        touch(e, target(e.task))
    else:
        OTHER_TASKS[name](e)


def touch_another(e: Episode, name: str) -> None:
    """Act, as the task asks, on one item the task is not about (or make an unrelated change)."""
    if name not in ITEM_TASKS:
        unrelated_change(e)
        return
    items, touch, target = ITEM_TASKS[name]
    touch(e, next(i for i in items(e.task) if i != target(e.task)))


STATE_TEMPLATES = blind_policies.templates_of("web", (StateTask,))


def test_every_state_template_has_a_script() -> None:
    assert sorted(ITEM_TASKS.keys() | OTHER_TASKS.keys()) == STATE_TEMPLATES
    assert not ITEM_TASKS.keys() & OTHER_TASKS.keys()


def feasible_seeds(name: str, seeds: range) -> list[int]:
    """``seeds`` where ``name`` can be done (all of them for a template that is never infeasible)."""
    return [s for s in seeds if getattr(blind_policies.build_task("web", name, s), "feasible", True)]


@pytest.mark.parametrize("name", STATE_TEMPLATES)
def test_the_task_alone_passes_and_one_more_item_fails(name: str) -> None:
    for seed in feasible_seeds(name, range(8))[:3]:
        alone = Episode(name, seed)
        do_task(alone, name)
        assert alone.passed, (name, seed, alone.task.instruction, alone.task.side_effects())
        extra = Episode(name, seed)
        touch_another(extra, name)
        do_task(extra, name)
        assert not extra.passed, (name, seed, extra.task.instruction)


def test_an_undone_side_effect_is_no_side_effect() -> None:
    e = Episode("shop.add_to_cart", feasible_seeds("shop.add_to_cart", range(10))[0])
    other = next(i for i in PRODUCTS(e.task) if i != e.task.p["id"])
    e.post("/cart/add", product_id=other, qty=1)
    e.post("/cart/remove", item_id=row(e.task, "SELECT id FROM cart WHERE product_id=?", other)[0])
    e.post("/cart/add", product_id=e.task.p["id"], qty=1)
    assert e.passed


#: A sweep acts on this many items at most (the second round's sweep touched about 14).
SWEEP_ITEMS = 12


@pytest.mark.parametrize("name", sorted(ITEM_TASKS))
def test_a_sweep_passes_only_when_its_first_item_is_the_target(name: str) -> None:
    items_of, touch, target_of = ITEM_TASKS[name]
    wins, chance, seeds = 0, 0.0, feasible_seeds(name, range(20))[:10]
    for seed in seeds:
        e = Episode(name, seed)
        items, target = items_of(e.task), target_of(e.task)
        assert target in items and len(items) >= 2, (name, seed)
        for item in items[:SWEEP_ITEMS]:
            touch(e, item)
        assert e.passed == (items[0] == target), (name, seed, items[:3], target)
        wins += e.passed
        chance += 1 / len(items) / len(seeds)
    assert wins / len(seeds) <= chance + blind_policies.binomial_slack(chance, len(seeds)) + 1e-9, (name, wins, chance)
