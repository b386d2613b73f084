"""Shop task templates (CORE's Shopping site: wishlist, cart, checkout, nutrition facts)."""

from __future__ import annotations

from typing import Any

from gui_envs.tasks.base import CanBeInfeasible
from gui_envs.tasks.looking import opened, searched_for
from gui_envs.web.sites.shop import COLOURS, PER_PAGE, SHIPPING, SORTS, money
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

FIRST_NAMES = ("Ada Park", "Ben Ortiz", "Chen Li", "Dana Moss", "Eli Novak", "Farah Khan")
STREETS = ("12 Oak Street", "7 Harbour Road", "301 Pine Avenue", "48 Mill Lane", "9 Station Square")


class ShopTask(WebTask):
    site = "shop"

    def product(self, where: str = "1=1", params: tuple[Any, ...] = ()) -> Any:
        return self.pick(self.query(f"SELECT * FROM products WHERE {where} ORDER BY id", params))

    def searches(self) -> list[str]:
        """The catalogue searches of the episode (the ``q`` of every catalogue page shown), in order."""
        return [query_of(u).get("q", "") for u in self.visited_here() if path_of(u) == ""]

    def add_to_cart_db(self, pid: int, qty: int = 1) -> None:
        self.state.db.execute(
            "INSERT INTO cart(product_id, qty, colour, size) VALUES (?,?,'','')", (pid, qty)
        )
        self.state.db.commit()


def open_product(name: str) -> list[PlanStep]:
    """Search the catalogue for ``name`` and open its page."""
    return [*search("Search", name), click(name, tag="a")]


def wishlist_change(task: StateTask) -> tuple[list[Any], list[Any]]:
    """``(added, removed)`` product ids of the wishlist since the setup."""
    added, removed = task.diff("wishlist", "product_id")
    return [a[0] for a in added], [r[0] for r in removed]


def cart_change(task: StateTask) -> tuple[list[Any], list[Any]]:
    """``(added, removed)`` cart lines ``(product_id, qty, colour, size)`` since the setup (a changed quantity
    is one of each)."""
    return task.diff("cart", "product_id", "qty", "colour", "size")


class OpenProduct(ShopTask, StateTask):
    name, difficulty = "shop.open_product", 3

    def setup(self) -> str:
        self.p = self.product()
        return f"Open the product page of the {self.p['name']}."

    def goal(self) -> bool:
        return self.opened_first("/product/", self.p["id"])

    def oracle_plan(self) -> list[PlanStep]:
        return open_product(self.p["name"])


class OpenWishlist(ShopTask, StateTask):
    name, difficulty = "shop.open_wishlist", 1

    def setup(self) -> str:
        return "Go to the wishlist page."

    def goal(self) -> bool:
        return path_of(self.where) == "/wishlist"

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Wishlist", tag="a")]


class SearchFor(ShopTask, StateTask):
    name, difficulty = "shop.search", 2

    def setup(self) -> str:
        self.q = str(self.product()["name"]).split(" ")[-1]
        return f"Search the shop for '{self.q}'."

    def goal(self) -> bool:
        query = query_of(self.where)
        return query.get("q", "").strip().lower() == self.q.lower()

    def oracle_plan(self) -> list[PlanStep]:
        return search("Search", self.q)


class BrowseSorted(ShopTask, StateTask):
    name, difficulty = "shop.browse_sorted", 2

    def setup(self) -> str:
        self.category = str(self.pick(self.query("SELECT DISTINCT category FROM products ORDER BY 1"))[0])
        self.sort, self.sort_label = self.pick(
            [
                ("price_asc", "Price: low to high"),
                ("price_desc", "Price: high to low"),
                ("rating", "Best rated"),
            ]
        )
        return f"Show the {self.category} category sorted by '{self.sort_label}'."

    def goal(self) -> bool:
        query = query_of(self.where)
        return (
            query.get("category") == self.category and query.get("sort") == self.sort and not query.get("q")
        )

    def oracle_plan(self) -> list[PlanStep]:
        return [click(self.category, tag="a"), click(self.sort_label, tag="a")]


class AddToWishlist(ShopTask, StateTask):
    name, difficulty = "shop.add_to_wishlist", 4
    changes = ("wishlist",)

    def setup(self) -> str:
        self.p = self.product()
        return f"Add the {self.p['name']} to my wishlist."

    def goal(self) -> bool:
        return wishlist_change(self) == ([self.p["id"]], [])

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), click("Add to wishlist", tag="button")]


class RemoveFromWishlist(ShopTask, StateTask):
    name, difficulty = "shop.remove_from_wishlist", 2
    changes = ("wishlist",)

    def setup(self) -> str:
        rows = self.query("SELECT id, name FROM products ORDER BY id")
        picks = [rows[int(i)] for i in self.rng.choice(len(rows), size=3, replace=False)]
        for n, row in enumerate(picks):
            self.state.db.execute("INSERT INTO wishlist VALUES (?, ?)", (row["id"], n))
        self.state.db.commit()
        self.p = picks[int(self.rng.integers(3))]
        return f"Remove the {self.p['name']} from my wishlist, keep the other items."

    def goal(self) -> bool:
        return wishlist_change(self) == ([], [self.p["id"]])

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Wishlist", tag="a"), click("Remove", tag="button", after=self.p["name"])]


class WishlistCount(ShopTask, AnswerTask):
    name, difficulty = "shop.wishlist_count", 2

    def setup(self) -> str:
        # The count is drawn first, uniformly over candidates(): "4" must not pass more often than any other guess.
        ids = [r[0] for r in self.query("SELECT id FROM products ORDER BY id")]
        n = int(self.rng.integers(len(ids) + 1))
        for i, pid in enumerate(self.rng.choice(ids, size=n, replace=False)):
            self.state.db.execute("INSERT INTO wishlist VALUES (?, ?)", (int(pid), i))
        self.state.db.commit()
        self.reference_answer = str(n)
        return "How many items are in my wishlist? Answer with a number."

    def candidates(self) -> list[str]:
        return [str(n) for n in range(self.one("SELECT COUNT(*) FROM products")[0] + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Wishlist", tag="a"), Stop(self.reference_answer)]


class AddToCart(ShopTask, CanBeInfeasible, StateTask):
    """Feasible on about half the seeds: on the others the product is not in the catalogue (issue 36)."""

    name, difficulty = "shop.add_to_cart", 4
    changes = ("cart",)

    def setup(self) -> str:
        self.p = self.product_or_none("category IN ('Snacks', 'Drinks')")
        return f"Put one {self.p['name']} in the cart."

    def goal(self) -> bool:
        return cart_change(self) == ([(self.p["id"], 1, "", "")], [])

    def product_or_none(self, where: str) -> Any:
        """A product of ``where`` to name; on an infeasible seed (:meth:`CanBeInfeasible.draw_feasible`) it is
        removed from the catalogue. Sets :attr:`pool`, the names it was drawn from.

        The start screen is the catalogue's first page with its product count, so both must read the same either
        way: the pool leaves out the products that page shows (it lists the first :data:`PER_PAGE` by name), and
        a second product of the pool is removed on a feasible seed. Products in the wishlist, cart or an order
        stay out of the pool, so no other page loses a row.
        """
        first = {r[0] for r in self.query(f"SELECT id FROM products ORDER BY {SORTS['name'][1]} LIMIT {PER_PAGE}")}
        used = "SELECT product_id FROM wishlist UNION SELECT product_id FROM cart UNION SELECT product_id FROM order_items"
        rows = self.query(f"SELECT * FROM products WHERE {where} AND id NOT IN ({used}) ORDER BY id")
        pool = [r for r in rows if r["id"] not in first]
        self.pool = [r["name"] for r in pool]
        p = self.pick(pool)
        decoy = self.pick([r for r in pool if r["id"] != p["id"]])
        gone = decoy if self.draw_feasible() else p
        self.state.db.execute("DELETE FROM products WHERE id=?", (gone["id"],))
        self.state.db.commit()
        return p

    def looked(self) -> bool:
        """A catalogue search for the product's name (or a run of its words), no sweep of the pool."""
        return searched_for(self.searches(), self.p["name"], self.pool)

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return [*search("Search", self.p["name"]), Stop(status="infeasible")]
        return [*open_product(self.p["name"]), click("Add to cart", tag="button")]


class AddToCartQty(ShopTask, StateTask):
    name, difficulty = "shop.add_to_cart_qty", 5
    changes = ("cart",)

    def setup(self) -> str:
        self.p = self.product("category IN ('Snacks', 'Drinks')")
        self.qty = int(self.rng.integers(2, 7))
        return f"Add {self.qty} units of the {self.p['name']} to the cart."

    def goal(self) -> bool:
        return cart_change(self) == ([(self.p["id"], self.qty, "", "")], [])

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *open_product(self.p["name"]),
            fill("Quantity", str(self.qty)),
            click("Add to cart", tag="button"),
        ]


class AddWithOptions(ShopTask, CanBeInfeasible, StateTask):
    """Feasible on about half the seeds: on the others the product is not offered in the size (issue 36)."""

    name, difficulty = "shop.add_with_options", 6
    changes = ("cart",)

    def setup(self) -> str:
        self.p = self.product("category = 'Clothing'")
        self.colour = str(self.pick(self.p["colours"].split(",")))
        sizes = self.p["sizes"].split(",")
        self.size = str(self.pick(sizes))
        if not self.draw_feasible():  # every seeded garment has 2 to 4 sizes, so one is left
            left = ",".join(z for z in sizes if z != self.size)
            self.state.db.execute("UPDATE products SET sizes=? WHERE id=?", (left, self.p["id"]))
            self.state.db.commit()
        return f"Add the {self.p['name']} in colour {self.colour}, size {self.size}, to the cart."

    def goal(self) -> bool:
        return cart_change(self) == ([(self.p["id"], 1, self.colour, self.size)], [])

    def looked(self) -> bool:
        """The product's page, where its sizes are listed (a sweep of product pages does not count)."""
        return opened(map(path_of, self.visited_here()), f"/product/{self.p['id']}", "/product/")

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return [*open_product(self.p["name"]), Stop(status="infeasible")]
        return [
            *open_product(self.p["name"]),
            click(self.colour, tag="label"),
            click(self.size, tag="label"),
            click("Add to cart", tag="button"),
        ]


class RemoveFromCart(ShopTask, StateTask):
    name, difficulty = "shop.remove_from_cart", 2
    changes = ("cart",)

    def setup(self) -> str:
        rows = self.query("SELECT id, name FROM products WHERE category='Snacks' ORDER BY id")
        picks = [rows[int(i)] for i in self.rng.choice(len(rows), size=3, replace=False)]
        for row in picks:
            self.add_to_cart_db(row["id"])
        self.p = picks[int(self.rng.integers(3))]
        self.start_path = "/cart"
        return f"Remove the {self.p['name']} from the cart."

    def goal(self) -> bool:
        return cart_change(self) == ([], [(self.p["id"], 1, "", "")])

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Remove", tag="button", after=self.p["name"])]


class UpdateCartQty(ShopTask, StateTask):
    name, difficulty = "shop.update_cart_qty", 3
    changes = ("cart",)

    def setup(self) -> str:
        self.p = self.product("category='Drinks'")
        self.add_to_cart_db(self.p["id"])
        self.qty = int(self.rng.integers(2, 9))
        return f"Change the quantity of {self.p['name']} in my cart to {self.qty}."

    def goal(self) -> bool:
        return cart_change(self) == ([(self.p["id"], self.qty, "", "")], [(self.p["id"], 1, "", "")])

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Cart", tag="a"),
            fill(f"Quantity of {self.p['name']}", str(self.qty)),
            click("Update", tag="button", after=f"Quantity of {self.p['name']}"),
        ]


class MoveWishlistToCart(ShopTask, StateTask):
    name, difficulty = "shop.wishlist_to_cart", 6
    changes = ("cart", "wishlist")

    def setup(self) -> str:
        self.p = self.product("category IN ('Snacks', 'Drinks')")
        self.state.db.execute("INSERT INTO wishlist VALUES (?, 0)", (self.p["id"],))
        self.state.db.commit()
        return (
            f"Move the {self.p['name']} from my wishlist to my cart (it should no longer be in the wishlist)."
        )

    def goal(self) -> bool:
        pid = self.p["id"]
        return cart_change(self) == ([(pid, 1, "", "")], []) and wishlist_change(self) == ([], [pid])

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Wishlist", tag="a"),
            click(self.p["name"], tag="a"),
            click("Remove from wishlist", tag="button"),
            click("Add to cart", tag="button"),
        ]


def placed_order(task: StateTask) -> tuple[Any, list[tuple[Any, ...]]] | None:
    """The one order placed since the setup and its lines ``(product_id, qty)``, when the episode placed exactly
    one order and changed no other (the cart a checkout empties is back as it was)."""
    added, removed = task.diff("orders", "id")
    items, gone = task.diff("order_items", "order_id", "product_id", "qty")
    if removed or gone or len(added) != 1:
        return None
    order = task.one("SELECT * FROM orders WHERE id=?", (added[0][0],))
    if order["status"] != "placed" or any(i[0] != order["id"] for i in items):
        return None
    return order, sorted((i[1], i[2]) for i in items)


def placed_as_asked(task: StateTask, lines: list[tuple[Any, int]], who: str, address: str, shipping: str) -> bool:
    """Exactly one order was placed (:func:`placed_order`), with exactly ``lines`` ``(product_id, qty)``, for
    ``who`` at ``address`` (case-insensitive) with ``shipping``."""
    placed = placed_order(task)
    if placed is None:
        return False
    order, items = placed
    return (
        items == sorted(lines)
        and order["name"].lower() == who.lower()
        and order["address"].lower() == address.lower()
        and order["shipping"] == shipping
    )


def checkout_steps(name: str, address: str, shipping: str) -> list[PlanStep]:
    return [
        click("Cart", tag="a"),
        click("Checkout", tag="a"),
        fill("Full name", name),
        fill("Address", address),
        click(SHIPPING[shipping][0], tag="label", contains=True),
        click("Place order", tag="button"),
    ]


class Checkout(ShopTask, StateTask):
    name, difficulty = "shop.buy", 12
    changes = ("orders", "order_items")

    def setup(self) -> str:
        self.p = self.product("category IN ('Snacks', 'Drinks', 'Electronics')")
        self.who, self.address = str(self.pick(FIRST_NAMES)), str(self.pick(STREETS))
        self.shipping = str(self.pick(list(SHIPPING)))
        self.qty = int(self.rng.integers(1, 4))
        return (
            f"Buy {self.qty} x {self.p['name']} for {self.who}, shipped to {self.address} with "
            f"{self.shipping} shipping."
        )

    def goal(self) -> bool:
        return placed_as_asked(self, [(self.p["id"], self.qty)], self.who, self.address, self.shipping)

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *open_product(self.p["name"]),
            fill("Quantity", str(self.qty)),
            click("Add to cart", tag="button"),
            *checkout_steps(self.who, self.address, self.shipping)[1:],
        ]


class BuyTwo(ShopTask, StateTask):
    name, difficulty = "shop.buy_two", 16
    changes = ("orders", "order_items")

    def setup(self) -> str:
        rows = self.query("SELECT * FROM products WHERE category IN ('Snacks','Drinks') ORDER BY id")
        i, j = self.rng.choice(len(rows), size=2, replace=False)
        self.a, self.b = rows[int(i)], rows[int(j)]
        self.who, self.address = str(self.pick(FIRST_NAMES)), str(self.pick(STREETS))
        return (
            f"Order one {self.a['name']} and one {self.b['name']} in a single order for {self.who} at "
            f"{self.address}, express shipping."
        )

    def goal(self) -> bool:
        return placed_as_asked(self, [(self.a["id"], 1), (self.b["id"], 1)], self.who, self.address, "express")

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *open_product(self.a["name"]),
            click("Add to cart", tag="button"),
            click("Catalogue", tag="a"),
            *open_product(self.b["name"]),
            click("Add to cart", tag="button"),
            *checkout_steps(self.who, self.address, "express")[1:],
        ]


class CancelOrder(ShopTask, StateTask):
    name, difficulty = "shop.cancel_order", 3
    changes = ("orders",)

    def setup(self) -> str:
        db = self.state.db
        for n in range(3):
            p = self.product()
            cur = db.execute(
                "INSERT INTO orders(status, name, address, shipping, total_cents) VALUES ('placed',?,?,?,?)",
                (FIRST_NAMES[n], STREETS[n], "standard", p["price_cents"]),
            )
            db.execute(
                "INSERT INTO order_items VALUES (?,?,1,'','',?)", (cur.lastrowid, p["id"], p["price_cents"])
            )
        db.commit()
        self.oid = int(self.rng.integers(1, 4))
        return f"Cancel order #{self.oid}; leave my other orders alone."

    def goal(self) -> bool:
        return self.diff("orders", "id", "status") == ([(self.oid, "cancelled")], [(self.oid, "placed")])

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Orders", tag="a"),
            click(f"Order #{self.oid}", tag="a"),
            click("Cancel order", tag="button"),
        ]


class Calories(ShopTask, AnswerTask):
    name, difficulty = "shop.calories", 4

    def setup(self) -> str:
        self.p = self.product("calories IS NOT NULL")
        self.reference_answer = f"{self.p['calories']} calories"
        return f"How many calories per serving does the {self.p['name']} have?"

    def candidates(self) -> list[str]:
        return [f"{r[0]} calories" for r in self.query("SELECT DISTINCT calories FROM products WHERE calories IS NOT NULL")]

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), Stop(self.reference_answer)]


class Price(ShopTask, AnswerTask):
    name, difficulty = "shop.price", 4

    def setup(self) -> str:
        self.p = self.product()
        self.reference_answer = money(self.p["price_cents"])
        return f"What is the price of the {self.p['name']}? Answer like $12.34."

    def candidates(self) -> list[str]:
        return [money(r[0]) for r in self.query("SELECT DISTINCT price_cents FROM products")]

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), Stop(self.reference_answer)]


class Battery(ShopTask, AnswerTask):
    name, difficulty = "shop.battery_life", 4

    def setup(self) -> str:
        self.p = self.product("battery_h IS NOT NULL")
        self.reference_answer = f"{self.p['battery_h']} hours"
        return f"What is the battery life, in hours, of the {self.p['name']}?"

    def candidates(self) -> list[str]:
        return [f"{r[0]} hours" for r in self.query("SELECT DISTINCT battery_h FROM products WHERE battery_h IS NOT NULL")]

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), Stop(self.reference_answer)]


class Cheapest(ShopTask, AnswerTask):
    name, difficulty = "shop.cheapest_in_category", 3

    def setup(self) -> str:
        self.category = str(self.pick(self.query("SELECT DISTINCT category FROM products ORDER BY 1"))[0])
        row = self.one(
            "SELECT name FROM products WHERE category=? ORDER BY price_cents, id LIMIT 1", (self.category,)
        )
        self.reference_answer = row["name"]
        return f"Which product is the cheapest in the {self.category} category? Answer with its name."

    def candidates(self) -> list[str]:
        return [r[0] for r in self.query("SELECT name FROM products WHERE category=?", (self.category,))]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click(self.category, tag="a"),
            click("Price: low to high", tag="a"),
            Stop(self.reference_answer),
        ]


class MoreProtein(ShopTask, AnswerTask):
    name, difficulty = "shop.more_protein", 8

    def setup(self) -> str:
        rows = self.query("SELECT * FROM products WHERE protein IS NOT NULL ORDER BY id")
        while True:
            i, j = self.rng.choice(len(rows), size=2, replace=False)
            self.a, self.b = rows[int(i)], rows[int(j)]
            if self.a["protein"] != self.b["protein"]:
                break
        self.reference_answer = max((self.a, self.b), key=lambda r: r["protein"])["name"]
        return f"Which has more protein per serving: the {self.a['name']} or the {self.b['name']}?"

    def candidates(self) -> list[str]:
        return [self.a["name"], self.b["name"]]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *open_product(self.a["name"]),
            click("Catalogue", tag="a"),
            *open_product(self.b["name"]),
            Stop(self.reference_answer),
        ]


class OrderTotal(ShopTask, AnswerTask):
    name, difficulty = "shop.order_total", 3

    def setup(self) -> str:
        # The total is drawn first, uniformly over candidates(), then an order that adds up to it: totals that
        # several (product, quantity, shipping) make are no likelier than the rest.
        ways = self.orders_by_total()
        total = int(self.pick(sorted(ways)))
        p, qty, shipping = self.pick(ways[total])
        db = self.state.db
        cur = db.execute(
            "INSERT INTO orders(status, name, address, shipping, total_cents) VALUES ('placed',?,?,?,?)",
            (FIRST_NAMES[0], STREETS[0], shipping, total),
        )
        db.execute(
            "INSERT INTO order_items VALUES (?,?,?,'','',?)", (cur.lastrowid, p["id"], qty, p["price_cents"])
        )
        db.commit()
        self.reference_answer = money(total)
        return "What was the total of my most recent order, shipping included?"

    def orders_by_total(self) -> dict[int, list[tuple[Any, int, str]]]:
        """Every one-product order the template places (1-4 units, either shipping), by total in cents."""
        ways: dict[int, list[tuple[Any, int, str]]] = {}
        for p in self.query("SELECT * FROM products ORDER BY id"):
            for qty in range(1, 5):
                for shipping, (_, fee) in SHIPPING.items():
                    ways.setdefault(p["price_cents"] * qty + fee, []).append((p, qty, shipping))
        return ways

    def candidates(self) -> list[str]:
        return [money(total) for total in sorted(self.orders_by_total())]

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Orders", tag="a"), click("Order #1", tag="a"), Stop(self.reference_answer)]


class CountInCategory(ShopTask, AnswerTask):
    name, difficulty = "shop.count_under_price", 3

    def setup(self) -> str:
        self.category = "Snacks" if self.rng.random() < 0.5 else "Drinks"
        prices = self.prices()
        # The count is drawn first, uniformly over candidates(), then the roundest limit that gives it (a whole
        # dollar, else ten cents, between the k-th and the (k+1)-th cheapest price).
        n = int(self.pick(self.candidates()))
        low = prices[n - 1] if n else -1
        high = prices[n] if n < len(prices) else prices[-1] + 100
        self.limit = next(cap for cap in (high // 100 * 100, high // 10 * 10, high) if cap > low)
        assert sum(1 for p in prices if p < self.limit) == n
        self.reference_answer = str(n)
        return f"How many {self.category} products cost less than {money(self.limit)}? Answer with a number."

    def prices(self) -> list[int]:
        return sorted(r[0] for r in self.query("SELECT price_cents FROM products WHERE category=?", (self.category,)))

    def candidates(self) -> list[str]:
        """The counts some price limit gives: none below two products that cost the same."""
        prices = self.prices()
        ends = [0, *(k for k in range(1, len(prices)) if prices[k - 1] < prices[k]), len(prices)]
        return [str(k) for k in dict.fromkeys(ends)]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click(self.category, tag="a"),
            click("Price: low to high", tag="a"),
            Stop(self.reference_answer),
        ]


class ColourOf(ShopTask, AnswerTask):
    name, difficulty = "shop.colour_count", 4

    def setup(self) -> str:
        self.p = self.product("category IN ('Clothing', 'Electronics')")
        # The seeded catalogue offers three colours most often; the count is drawn first, uniformly over
        # candidates(), and the product's colours redrawn to match (its own colour among them).
        n = int(self.pick(self.candidates()))
        others = [c for c in COLOURS if c != self.p["colour"]]
        offered = sorted([self.p["colour"], *self.rng.choice(others, size=n - 1, replace=False).tolist()])
        self.state.db.execute("UPDATE products SET colours=? WHERE id=?", (",".join(offered), self.p["id"]))
        self.state.db.commit()
        self.reference_answer = str(n)
        return f"In how many colours is the {self.p['name']} offered? Answer with a number."

    def candidates(self) -> list[str]:
        """One colour up to every colour the shop has."""
        return [str(k) for k in range(1, len(COLOURS) + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), Stop(self.reference_answer)]
