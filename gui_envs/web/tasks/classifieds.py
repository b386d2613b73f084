"""Classifieds task templates (CORE's Classifieds site: listings, filters, ads, favourites)."""

from __future__ import annotations

from typing import Any

from gui_envs.web.sites.classifieds import CATEGORIES, CONDITIONS, LOCATIONS
from gui_envs.web.tasks.base import (
    AnswerTask,
    InfeasibleTask,
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


class ClassifiedsTask(WebTask):
    site = "classifieds"

    def listing(self, where: str = "1=1", params: tuple[Any, ...] = ()) -> Any:
        return self.pick(
            self.query(f"SELECT * FROM listings WHERE deleted=0 AND {where} ORDER BY id", params)
        )

    def is_favourite(self, lid: int) -> bool:
        return self.one("SELECT 1 FROM favourites WHERE listing_id=?", (lid,)) is not None


def open_listing(title: str) -> list[PlanStep]:
    """Search for the listing's title and open it."""
    return [*search("Keyword", title), click(title, tag="a")]


class OpenListing(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.open_listing", 3

    def setup(self) -> str:
        self.l = self.listing()
        return f"Open the ad '{self.l['title']}'."

    def done(self) -> bool:
        return path_of(self.where) == f"/listing/{self.l['id']}"

    def oracle_plan(self) -> list[PlanStep]:
        return open_listing(self.l["title"])


class Favourite(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.favourite", 4

    def setup(self) -> str:
        self.l = self.listing("mine = 0")
        return f"Save the ad '{self.l['title']}' to my favourites."

    def done(self) -> bool:
        return self.is_favourite(self.l["id"])

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_listing(self.l["title"]), click("Add to favourites", tag="button")]


class Unfavourite(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.unfavourite", 3

    def setup(self) -> str:
        rows = self.query("SELECT * FROM listings WHERE mine=0 ORDER BY id")
        picks = [rows[int(i)] for i in self.rng.choice(len(rows), size=3, replace=False)]
        for r in picks:
            self.state.db.execute("INSERT INTO favourites VALUES (?)", (r["id"],))
        self.state.db.commit()
        self.l, self.keep = picks[0], [r["id"] for r in picks[1:]]
        return f"Remove '{self.l['title']}' from my favourites; keep the others."

    def done(self) -> bool:
        return not self.is_favourite(self.l["id"]) and all(self.is_favourite(k) for k in self.keep)

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Favourites", tag="a"),
            click(self.l["title"], tag="a"),
            click("Remove from favourites"),
        ]


class PostAd(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.post_ad", 8

    def setup(self) -> str:
        self.category, self.title = self.pick(NEW_ADS)
        self.price = int(self.rng.integers(5, 80)) * 5
        self.location = str(self.pick(LOCATIONS))
        return (
            f"Post an ad in {self.category} titled '{self.title}' for ${self.price}, located in {self.location}, "
            f"with the description 'Collect any weekend'."
        )

    def done(self) -> bool:
        row = self.one("SELECT * FROM listings WHERE mine=1 AND deleted=0 AND title=?", (self.title,))
        return (
            row is not None
            and (row["category"], row["price"], row["location"]) == (self.category, self.price, self.location)
            and row["description"].strip() == "Collect any weekend"
        )

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Post an ad", tag="a"),
            fill("Title", self.title),
            fill("Price", str(self.price)),
            click(self.category, tag="label"),
            click(self.location, tag="label"),
            fill("Description", "Collect any weekend"),
            click("Publish ad", tag="button"),
        ]


class EditPrice(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.edit_price", 5

    def setup(self) -> str:
        self.l = self.listing("mine = 1")
        self.price = max(1, int(self.l["price"] * 0.8))
        return f"Lower the price of my ad '{self.l['title']}' to ${self.price}."

    def done(self) -> bool:
        row = self.one("SELECT price FROM listings WHERE id=? AND deleted=0", (self.l["id"],))
        return row is not None and row[0] == self.price

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("My ads", tag="a"),
            click(self.l["title"], tag="a"),
            click("Edit ad", tag="a"),
            fill("Price", str(self.price)),
            click("Save ad", tag="button"),
        ]


class EditTitle(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.edit_title", 5

    def setup(self) -> str:
        self.l = self.listing("mine = 1")
        self.new = f"{self.l['title']} - reduced"
        return f"Rename my ad '{self.l['title']}' to '{self.new}'."

    def done(self) -> bool:
        # A deleted ad has no row here: it was not renamed (and must not raise from step).
        row = self.one("SELECT title FROM listings WHERE id=? AND deleted=0", (self.l["id"],))
        return row is not None and row[0] == self.new

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

    def setup(self) -> str:
        self.l = self.listing("mine = 1")
        self.others = [
            r[0] for r in self.query("SELECT id FROM listings WHERE deleted=0 AND id != ?", (self.l["id"],))
        ]
        return f"Delete my ad '{self.l['title']}'."

    def done(self) -> bool:
        alive = [r[0] for r in self.query("SELECT id FROM listings WHERE deleted=0")]
        return alive == self.others

    def oracle_plan(self) -> list[PlanStep]:
        return [click("My ads", tag="a"), click(self.l["title"], tag="a"), click("Delete ad", tag="button")]


class Filter(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.filter", 2

    def setup(self) -> str:
        self.category, self.location = str(self.pick(list(CATEGORIES))), str(self.pick(LOCATIONS))
        return f"Show only {self.category} listings in {self.location}."

    def done(self) -> bool:
        q = query_of(self.where)
        return q.get("category") == self.category and q.get("location") == self.location and not q.get("q")

    def oracle_plan(self) -> list[PlanStep]:
        return [click(self.category, tag="a"), click(self.location, tag="a")]


class SearchKeyword(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.search", 2

    def setup(self) -> str:
        self.q = str(self.listing()["title"]).split(" ")[-1]
        return f"Search the listings for '{self.q}'."

    def done(self) -> bool:
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

    def done(self) -> bool:
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
        self.l = self.listing("mine = 0")
        self.reference_answer = self.l["seller"]
        return f"Who is selling '{self.l['title']}'? Answer with the seller's name."

    def candidates(self) -> list[str]:
        return [r[0] for r in self.query("SELECT DISTINCT seller FROM listings WHERE mine=0 AND deleted=0")]

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
        n = self.one(
            "SELECT COUNT(*) FROM listings WHERE deleted=0 AND category=? AND location=?",
            (self.category, self.location),
        )[0]
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
        n = int(self.rng.integers(0, 5))
        for lid in self.rng.choice(40, size=n, replace=False):
            self.state.db.execute("INSERT INTO favourites VALUES (?)", (int(lid) + 1,))
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
        total = self.one("SELECT SUM(price) FROM listings WHERE mine=1 AND deleted=0")[0]
        self.reference_answer = f"${total}"
        return "What is the total asking price of all my ads together, in dollars?"

    def candidates(self) -> list[str]:
        everything = self.one("SELECT SUM(price) FROM listings WHERE deleted=0")[0]
        return [f"${k}" for k in range(everything + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [click("My ads", tag="a"), Stop(self.reference_answer)]


class FavouriteCheapest(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.favourite_cheapest", 6

    def setup(self) -> str:
        self.category = str(self.pick(list(CATEGORIES)))
        self.l = self.one(
            "SELECT * FROM listings WHERE deleted=0 AND category=? ORDER BY price, id", (self.category,)
        )
        return f"Add the cheapest ad in {self.category} to my favourites."

    def done(self) -> bool:
        return [r[0] for r in self.query("SELECT listing_id FROM favourites")] == [self.l["id"]]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click(self.category, tag="a"),
            click("Cheapest first", tag="a"),
            click(self.l["title"], tag="a"),
            click("Add to favourites", tag="button"),
        ]


class PostAndFavourite(ClassifiedsTask, StateTask):
    name, difficulty = "classifieds.post_then_favourite", 12

    def setup(self) -> str:
        self.category, self.title = self.pick(NEW_ADS)
        self.price = int(self.rng.integers(5, 80)) * 5
        self.location = str(self.pick(LOCATIONS))
        self.fav = self.listing("mine = 0")
        return (
            f"Post an ad in {self.category} titled '{self.title}' for ${self.price} in {self.location} "
            f"(any description), then save the ad '{self.fav['title']}' to my favourites."
        )

    def done(self) -> bool:
        row = self.one("SELECT * FROM listings WHERE mine=1 AND deleted=0 AND title=?", (self.title,))
        ok = row is not None and (row["category"], row["price"], row["location"]) == (
            self.category,
            self.price,
            self.location,
        )
        return ok and self.is_favourite(self.fav["id"])

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


class EditListingPrice(ClassifiedsTask, InfeasibleTask):
    name, difficulty = "classifieds.edit_listing_price", 4

    def setup(self) -> str:
        self.l = self.listing("mine = 0")
        return f"Change the price of the ad '{self.l['title']}' (posted by {self.l['seller']}) to $1."

    def looked(self) -> bool:
        """The ad's page (no edit link for another seller's ad) or its edit address ("not allowed")."""
        here = f"/listing/{self.l['id']}"
        return any(p in (here, here + "/edit") for p in map(path_of, self.visited_here()))

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_listing(self.l["title"]), Stop(status="infeasible")]


class PostInCategory(ClassifiedsTask, InfeasibleTask):
    name, difficulty = "classifieds.post_in_category", 2

    def setup(self) -> str:
        return f"Post an ad in the {self.pick(['Boats', 'Pets', 'Real estate'])} category."

    def looked(self) -> bool:
        """The ad form, whose category choices lack the one asked for."""
        return "/post" in map(path_of, self.visited_here())

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Post an ad", tag="a"), Stop(status="infeasible")]
