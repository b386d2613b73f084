"""Classifieds task templates (CORE's Classifieds site: listings, filters, ads, favourites)."""

from __future__ import annotations

from typing import Any

from gui_envs.tasks.base import CanBeInfeasible
from gui_envs.tasks.looking import opened, searched_for
from gui_envs.web.sites.classifieds import CATEGORIES, CONDITIONS, LOCATIONS
from gui_envs.web.tasks.base import (
    AnswerTask,
    PlanStep,
    StateTask,
    Stop,
    WebTask,
    click,
    fill,
    path_of,
    query_of,
    search,
)

NEW_ADS = (
    ("Bikes", "Tandem bike for two"),
    ("Furniture", "Rocking chair in walnut"),
    ("Phones", "Unlocked phone with box"),
    ("Books", "Stack of crime novels"),
    ("Instruments", "Electric bass with amp"),
)

#: The totals classifieds.my_ads_total draws from: about what my seeded bike and book ads add up to.
MY_TOTALS = range(100, 400)

#: The fields of an ad its form sets, and every column of a listing.
AD_COLUMNS = ("title", "category", "price", "location")
LISTING_COLUMNS = ("id", "title", "category", "price", "location", "seller", "condition", "description", "mine", "deleted")


class ClassifiedsTask(WebTask):
    site = "classifieds"

    def listing(self, where: str = "1=1", params: tuple[Any, ...] = ()) -> Any:
        return self.pick(
            self.query(f"SELECT * FROM listings WHERE deleted=0 AND {where} ORDER BY id", params)
        )



def edited(task: StateTask, before: Any, **fields: Any) -> bool:
    """Whether the ad ``before`` (its row at setup) changed in ``fields`` and in nothing else, and no other ad
    changed: the edit form sends every field back, so the others must come back as they were."""
    old = tuple(before[c] for c in LISTING_COLUMNS)
    new = tuple(fields.get(c, before[c]) for c in LISTING_COLUMNS)
    return task.diff("listings", *LISTING_COLUMNS) == ([new], [old])


def open_listing(title: str) -> list[PlanStep]:
    """Search for the listing's title and open it."""
    return [*search("Keyword", title), click(title, tag="a")]


class OpenListing(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.open_listing", 3

    def setup(self) -> str:
        self.l = self.listing()
        return f"Open the ad '{self.l['title']}'."

    def goal(self) -> bool:
        return self.opened_first("/listing/", self.l["id"])

    def oracle_plan(self) -> list[PlanStep]:
        return open_listing(self.l["title"])


class Favourite(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.favourite", 4
    changes = ("favourites",)

    def setup(self) -> str:
        self.l = self.listing("mine = 0")
        return f"Save the ad '{self.l['title']}' to my favourites."

    def goal(self) -> bool:
        return self.diff("favourites", "listing_id") == ([(self.l["id"],)], [])

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_listing(self.l["title"]), click("Add to favourites", tag="button")]


class Unfavourite(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.unfavourite", 3
    changes = ("favourites",)

    def setup(self) -> str:
        rows = self.query("SELECT * FROM listings WHERE mine=0 ORDER BY id")
        picks = [rows[int(i)] for i in self.rng.choice(len(rows), size=3, replace=False)]
        for r in picks:
            self.state.db.execute("INSERT INTO favourites VALUES (?)", (r["id"],))
        self.state.db.commit()
        self.l = picks[0]
        return f"Remove '{self.l['title']}' from my favourites; keep the others."

    def goal(self) -> bool:
        return self.diff("favourites", "listing_id") == ([], [(self.l["id"],)])

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Favourites", tag="a"),
            click(self.l["title"], tag="a"),
            click("Remove from favourites"),
        ]


class PostAd(ClassifiedsTask, CanBeInfeasible, StateTask):
    """Feasible on about half the seeds: on the others the site has no such category (issue 36)."""

    name, difficulty = "classifieds.post_ad", 8
    changes = ("listings",)

    def setup(self) -> str:
        self.category, self.title = self.pick(NEW_ADS)
        self.price = int(self.rng.integers(5, 80)) * 5
        self.location = str(self.pick(LOCATIONS))
        # One category leaves the site with its ads on every seed (the asked one on an infeasible seed, another
        # on a feasible one); the start page is the favourites (none seeded), which shows no category.
        decoy = str(self.pick([c for c in CATEGORIES if c != self.category]))
        gone = decoy if self.draw_feasible() else self.category
        self.state.db.execute("DELETE FROM categories WHERE name=?", (gone,))
        self.state.db.execute("UPDATE listings SET deleted=1 WHERE category=?", (gone,))
        self.state.db.commit()
        self.start_path = "/favourites"
        return (
            f"Post an ad in {self.category} titled '{self.title}' for ${self.price}, located in {self.location}, "
            f"with the description 'Collect any weekend'."
        )

    def goal(self) -> bool:
        new = (self.title, self.category, self.price, self.location, "Collect any weekend", 1, 0)
        return self.diff("listings", *AD_COLUMNS, "description", "mine", "deleted") == ([new], [])

    def looked(self) -> bool:
        """The ad form, whose category choices lack it, or the listings page, which links every category."""
        paths = [path_of(u) for u in self.visited_here()]
        return opened(paths, "/post") or opened(paths, "")

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return [click("Post an ad", tag="a"), Stop(status="infeasible")]
        return [
            click("Post an ad", tag="a"),
            fill("Title", self.title),
            fill("Price", str(self.price)),
            click(self.category, tag="label"),
            click(self.location, tag="label"),
            fill("Description", "Collect any weekend"),
            click("Publish ad", tag="button"),
        ]


class EditPrice(ClassifiedsTask, CanBeInfeasible, StateTask):
    """Feasible on about half the seeds: on the others I have no ad of that title (issue 36)."""

    name, difficulty = "classifieds.edit_price", 5
    changes = ("listings",)

    def setup(self) -> str:
        mine = self.query("SELECT * FROM listings WHERE deleted=0 AND mine=1 ORDER BY id")
        self.l = self.pick(mine)
        self.price = max(1, int(self.l["price"] * 0.8))
        self.pool = [r["title"] for r in mine]
        if not self.draw_feasible():
            self.state.db.execute("UPDATE listings SET deleted=1 WHERE id=?", (self.l["id"],))
            self.state.db.commit()
        # The home page lists every ad, mine among them, so the episode starts on the favourites, which the
        # seeded site has none of: the same page either way.
        self.start_path = "/favourites"
        return f"Lower the price of my ad '{self.l['title']}' to ${self.price}."

    def goal(self) -> bool:
        return edited(self, self.l, price=self.price)

    def looked(self) -> bool:
        """My ads (the list it would be in), or a keyword search for its title (no sweep of my ads' titles)."""
        paths = [path_of(u) for u in self.visited_here()]
        queries = [query_of(u).get("q", "") for u in self.visited_here() if path_of(u) == ""]
        return opened(paths, "/my-ads") or searched_for(queries, self.l["title"], self.pool)

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return [click("My ads", tag="a"), Stop(status="infeasible")]
        return [
            click("My ads", tag="a"),
            click(self.l["title"], tag="a"),
            click("Edit ad", tag="a"),
            fill("Price", str(self.price)),
            click("Save ad", tag="button"),
        ]


class EditTitle(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.edit_title", 5
    changes = ("listings",)

    def setup(self) -> str:
        self.l = self.listing("mine = 1")
        self.new = f"{self.l['title']} - reduced"
        return f"Rename my ad '{self.l['title']}' to '{self.new}'."

    def goal(self) -> bool:
        return edited(self, self.l, title=self.new)

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("My ads", tag="a"),
            click(self.l["title"], tag="a"),
            click("Edit ad", tag="a"),
            fill("Title", self.new),
            click("Save ad", tag="button"),
        ]


class DeleteAd(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.delete_ad", 3
    changes = ("listings",)

    def setup(self) -> str:
        self.l = self.listing("mine = 1")
        return f"Delete my ad '{self.l['title']}'."

    def goal(self) -> bool:
        return self.diff("listings", "id", "deleted") == ([(self.l["id"], 1)], [(self.l["id"], 0)])

    def oracle_plan(self) -> list[PlanStep]:
        return [click("My ads", tag="a"), click(self.l["title"], tag="a"), click("Delete ad", tag="button")]


class Filter(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.filter", 2

    def setup(self) -> str:
        self.category, self.location = str(self.pick(list(CATEGORIES))), str(self.pick(LOCATIONS))
        return f"Show only {self.category} listings in {self.location}."

    def goal(self) -> bool:
        q = query_of(self.where)
        return q.get("category") == self.category and q.get("location") == self.location and not q.get("q")

    def oracle_plan(self) -> list[PlanStep]:
        return [click(self.category, tag="a"), click(self.location, tag="a")]


class SearchKeyword(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.search", 2

    def setup(self) -> str:
        self.q = str(self.listing()["title"]).split(" ")[-1]
        return f"Search the listings for '{self.q}'."

    def goal(self) -> bool:
        return query_of(self.where).get("q", "").strip().lower() == self.q.lower()

    def oracle_plan(self) -> list[PlanStep]:
        return search("Keyword", self.q)


class SortByPrice(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.sort_category", 2

    def setup(self) -> str:
        self.category = str(self.pick(list(CATEGORIES)))
        self.sort, self.label = self.pick(
            [("price_asc", "Cheapest first"), ("price_desc", "Most expensive first")]
        )
        return f"List the {self.category} ads with the '{self.label}' ordering."

    def goal(self) -> bool:
        q = query_of(self.where)
        return q.get("category") == self.category and q.get("sort") == self.sort and not q.get("location")

    def oracle_plan(self) -> list[PlanStep]:
        return [click(self.category, tag="a"), click(self.label, tag="a")]


class PriceOf(ClassifiedsTask, AnswerTask):
    name, difficulty = "classifieds.price_of", 3

    def setup(self) -> str:
        self.l = self.listing()
        self.reference_answer = f"${self.l['price']}"
        return f"How much does '{self.l['title']}' cost? Answer with the dollar amount."

    def candidates(self) -> list[str]:
        return [f"${r[0]}" for r in self.query("SELECT DISTINCT price FROM listings WHERE deleted=0")]

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_listing(self.l["title"]), Stop(self.reference_answer)]


class SellerOf(ClassifiedsTask, AnswerTask):
    name, difficulty = "classifieds.seller_of", 3

    def setup(self) -> str:
        # The seller is drawn first, uniformly over candidates(), then one of their ads: a seller with many ads
        # on this seed is no likelier an answer than one with few.
        seller = self.pick(self.candidates())
        self.l = self.listing("mine = 0 AND seller = ?", (seller,))
        self.reference_answer = self.l["seller"]
        return f"Who is selling '{self.l['title']}'? Answer with the seller's name."

    def candidates(self) -> list[str]:
        return [r[0] for r in self.query("SELECT DISTINCT seller FROM listings WHERE mine=0 AND deleted=0 ORDER BY 1")]

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_listing(self.l["title"]), Stop(self.reference_answer)]


class ConditionOf(ClassifiedsTask, AnswerTask):
    name, difficulty = "classifieds.condition_of", 3

    def setup(self) -> str:
        self.l = self.listing()
        self.reference_answer = self.l["condition"]
        return f"What condition is '{self.l['title']}' in, according to its ad?"

    def candidates(self) -> list[str]:
        return list(CONDITIONS)

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_listing(self.l["title"]), Stop(self.reference_answer)]


class CheapestIn(ClassifiedsTask, AnswerTask):
    name, difficulty = "classifieds.cheapest_in", 4

    def setup(self) -> str:
        # Only places with two ads or more: "the cheapest" of one ad is that ad, and a blind guess would pass.
        pairs = self.query(
            "SELECT category, location FROM listings WHERE deleted=0 GROUP BY 1, 2 HAVING COUNT(*) >= 2 ORDER BY 1, 2"
        )
        self.category, self.location = self.pick(pairs)
        row = self.one(
            "SELECT title FROM listings WHERE deleted=0 AND category=? AND location=? ORDER BY price, id",
            (self.category, self.location),
        )
        self.reference_answer = row[0]
        return f"What is the cheapest {self.category} ad in {self.location}? Answer with its title."

    def candidates(self) -> list[str]:
        return [
            r[0]
            for r in self.query(
                "SELECT title FROM listings WHERE deleted=0 AND category=? AND location=?",
                (self.category, self.location),
            )
        ]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click(self.category, tag="a"),
            click(self.location, tag="a"),
            click("Cheapest first", tag="a"),
            Stop(self.reference_answer),
        ]


class CountIn(ClassifiedsTask, AnswerTask):
    name, difficulty = "classifieds.count_in_location", 3

    def setup(self) -> str:
        self.category, self.location = str(self.pick(list(CATEGORIES))), str(self.pick(LOCATIONS))
        # Seeded locations make 1 or 2 of a category's 8 ads the likeliest count; the count is drawn first,
        # uniformly over candidates(), and just enough of the category's ads moved in or out of the location.
        ads = self.query(
            "SELECT id, location FROM listings WHERE deleted=0 AND category=? ORDER BY id", (self.category,)
        )
        n = int(self.rng.integers(len(ads) + 1))
        here = [a["id"] for a in ads if a["location"] == self.location]
        away = [a["id"] for a in ads if a["location"] != self.location]
        elsewhere = [loc for loc in LOCATIONS if loc != self.location]
        if len(here) < n:
            moves = [(int(i), self.location) for i in self.rng.choice(away, size=n - len(here), replace=False)]
        else:
            moves = [
                (int(i), str(self.pick(elsewhere))) for i in self.rng.choice(here, size=len(here) - n, replace=False)
            ]
        for lid, loc in moves:
            self.state.db.execute("UPDATE listings SET location=? WHERE id=?", (loc, lid))
        self.state.db.commit()
        self.reference_answer = str(n)
        return f"How many {self.category} ads are listed in {self.location}? Answer with a number."

    def candidates(self) -> list[str]:
        n = self.one("SELECT COUNT(*) FROM listings WHERE deleted=0 AND category=?", (self.category,))[0]
        return [str(k) for k in range(n + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [click(self.category, tag="a"), click(self.location, tag="a"), Stop(self.reference_answer)]


class FavouritesCount(ClassifiedsTask, AnswerTask):
    name, difficulty = "classifieds.favourites_count", 2

    def setup(self) -> str:
        # The count is drawn first, uniformly over candidates(): no count is a better blind guess than another.
        ids = [r[0] for r in self.query("SELECT id FROM listings WHERE deleted=0 ORDER BY id")]
        n = int(self.rng.integers(len(ids) + 1))
        for lid in self.rng.choice(ids, size=n, replace=False):
            self.state.db.execute("INSERT INTO favourites VALUES (?)", (int(lid),))
        self.state.db.commit()
        self.reference_answer = str(n)
        return "How many ads have I saved to my favourites? Answer with a number."

    def candidates(self) -> list[str]:
        return [str(k) for k in range(self.one("SELECT COUNT(*) FROM listings WHERE deleted=0")[0] + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Favourites", tag="a"), Stop(self.reference_answer)]


class MyAdsTotal(ClassifiedsTask, AnswerTask):
    name, difficulty = "classifieds.my_ads_total", 2

    def setup(self) -> str:
        # A sum of seeded prices piles up in the middle of its range; the total is drawn first, uniformly over
        # candidates(), and my priciest ad repriced so that my ads add up to it.
        mine = self.query("SELECT id, price FROM listings WHERE mine=1 AND deleted=0 ORDER BY price DESC, id")
        total = int(self.pick(MY_TOTALS))
        rest = sum(r["price"] for r in mine[1:])
        if total - rest < 1:
            raise LookupError(f"{self.name}: my other ads already cost ${rest}")
        self.state.db.execute("UPDATE listings SET price=? WHERE id=?", (total - rest, mine[0]["id"]))
        self.state.db.commit()
        self.reference_answer = f"${total}"
        return "What is the total asking price of all my ads together, in dollars?"

    def candidates(self) -> list[str]:
        return [f"${k}" for k in MY_TOTALS]

    def oracle_plan(self) -> list[PlanStep]:
        return [click("My ads", tag="a"), Stop(self.reference_answer)]


class FavouriteCheapest(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.favourite_cheapest", 6
    changes = ("favourites",)

    def setup(self) -> str:
        self.category = str(self.pick(list(CATEGORIES)))
        self.l = self.one(
            "SELECT * FROM listings WHERE deleted=0 AND category=? ORDER BY price, id", (self.category,)
        )
        return f"Add the cheapest ad in {self.category} to my favourites."

    def goal(self) -> bool:
        return self.diff("favourites", "listing_id") == ([(self.l["id"],)], [])

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click(self.category, tag="a"),
            click("Cheapest first", tag="a"),
            click(self.l["title"], tag="a"),
            click("Add to favourites", tag="button"),
        ]


class PostAndFavourite(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.post_then_favourite", 12
    changes = ("listings", "favourites")

    def setup(self) -> str:
        self.category, self.title = self.pick(NEW_ADS)
        self.price = int(self.rng.integers(5, 80)) * 5
        self.location = str(self.pick(LOCATIONS))
        self.fav = self.listing("mine = 0")
        return (
            f"Post an ad in {self.category} titled '{self.title}' for ${self.price} in {self.location} "
            f"(any description), then save the ad '{self.fav['title']}' to my favourites."
        )

    def goal(self) -> bool:
        # Any description, as the instruction says.
        new = (self.title, self.category, self.price, self.location, 1, 0)
        posted = self.diff("listings", *AD_COLUMNS, "mine", "deleted") == ([new], [])
        return posted and self.diff("favourites", "listing_id") == ([(self.fav["id"],)], [])

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Post an ad", tag="a"),
            fill("Title", self.title),
            fill("Price", str(self.price)),
            click(self.category, tag="label"),
            click(self.location, tag="label"),
            fill("Description", "Bought last year."),
            click("Publish ad", tag="button"),
            click("Listings", tag="a"),
            *open_listing(self.fav["title"]),
            click("Add to favourites", tag="button"),
        ]
