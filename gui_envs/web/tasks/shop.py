"""Shop task templates (CORE's Shopping site: wishlist, cart, checkout, nutrition facts)."""

from __future__ import annotations

from typing import Any

from gui_envs.web.sites.shop import SHIPPING, money
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

FIRST_NAMES = ("Ada Park", "Ben Ortiz", "Chen Li", "Dana Moss", "Eli Novak", "Farah Khan")
STREETS = ("12 Oak Street", "7 Harbour Road", "301 Pine Avenue", "48 Mill Lane", "9 Station Square")


class ShopTask(WebTask):
    site = "shop"

    def product(self, where: str = "1=1", params: tuple[Any, ...] = ()) -> Any:
        return self.pick(self.query(f"SELECT * FROM products WHERE {where} ORDER BY id", params))

    def add_to_cart_db(self, pid: int, qty: int = 1) -> None:
        self.state.db.execute(
            "INSERT INTO cart(product_id, qty, colour, size) VALUES (?,?,'','')", (pid, qty)
        )
        self.state.db.commit()


def open_product(name: str) -> list[PlanStep]:
    """Search the catalogue for ``name`` and open its page."""
    return [*search("Search", name), click(name, tag="a")]


def in_wishlist(task: WebTask, pid: int) -> bool:
    return task.one("SELECT 1 FROM wishlist WHERE product_id = ?", (pid,)) is not None


def cart_qty(task: WebTask, pid: int) -> int:
    row = task.one("SELECT COALESCE(SUM(qty), 0) FROM cart WHERE product_id = ?", (pid,))
    return int(row[0])


class OpenProduct(ShopTask, StateTask):
    name, difficulty = "shop.open_product", 3

    def setup(self) -> str:
        self.p = self.product()
        return f"Open the product page of the {self.p['name']}."

    def done(self) -> bool:
        return path_of(self.where) == f"/product/{self.p['id']}"

    def oracle_plan(self) -> list[PlanStep]:
        return open_product(self.p["name"])


class OpenWishlist(ShopTask, StateTask):
    name, difficulty = "shop.open_wishlist", 1

    def setup(self) -> str:
        return "Go to the wishlist page."

    def done(self) -> bool:
        return path_of(self.where) == "/wishlist"

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Wishlist", tag="a")]


class SearchFor(ShopTask, StateTask):
    name, difficulty = "shop.search", 2

    def setup(self) -> str:
        self.q = str(self.product()["name"]).split(" ")[-1]
        return f"Search the shop for '{self.q}'."

    def done(self) -> bool:
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

    def done(self) -> bool:
        query = query_of(self.where)
        return (
            query.get("category") == self.category and query.get("sort") == self.sort and not query.get("q")
        )

    def oracle_plan(self) -> list[PlanStep]:
        return [click(self.category, tag="a"), click(self.sort_label, tag="a")]


class AddToWishlist(ShopTask, StateTask):
    name, difficulty = "shop.add_to_wishlist", 4

    def setup(self) -> str:
        self.p = self.product()
        return f"Add the {self.p['name']} to my wishlist."

    def done(self) -> bool:
        return in_wishlist(self, self.p["id"])

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), click("Add to wishlist", tag="button")]


class RemoveFromWishlist(ShopTask, StateTask):
    name, difficulty = "shop.remove_from_wishlist", 2

    def setup(self) -> str:
        rows = self.query("SELECT id, name FROM products ORDER BY id")
        picks = [rows[int(i)] for i in self.rng.choice(len(rows), size=3, replace=False)]
        for n, row in enumerate(picks):
            self.state.db.execute("INSERT INTO wishlist VALUES (?, ?)", (row["id"], n))
        self.state.db.commit()
        self.p = picks[int(self.rng.integers(3))]
        self.others = [r["id"] for r in picks if r["id"] != self.p["id"]]
        return f"Remove the {self.p['name']} from my wishlist, keep the other items."

    def done(self) -> bool:
        return not in_wishlist(self, self.p["id"]) and all(in_wishlist(self, o) for o in self.others)

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Wishlist", tag="a"), click("Remove", tag="button", after=self.p["name"])]


class WishlistCount(ShopTask, AnswerTask):
    name, difficulty = "shop.wishlist_count", 2

    def setup(self) -> str:
        n = int(self.rng.integers(1, 6))
        for i, pid in enumerate(self.rng.choice(48, size=n, replace=False)):
            self.state.db.execute("INSERT INTO wishlist VALUES (?, ?)", (int(pid) + 1, i))
        self.state.db.commit()
        self.reference_answer = str(n)
        return "How many items are in my wishlist? Answer with a number."

    def candidates(self) -> list[str]:
        return [str(n) for n in range(49)]

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Wishlist", tag="a"), Stop(self.reference_answer)]


class AddToCart(ShopTask, StateTask):
    name, difficulty = "shop.add_to_cart", 4

    def setup(self) -> str:
        self.p = self.product("category IN ('Snacks', 'Drinks')")
        return f"Put one {self.p['name']} in the cart."

    def done(self) -> bool:
        return cart_qty(self, self.p["id"]) == 1

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), click("Add to cart", tag="button")]


class AddToCartQty(ShopTask, StateTask):
    name, difficulty = "shop.add_to_cart_qty", 5

    def setup(self) -> str:
        self.p = self.product("category IN ('Snacks', 'Drinks')")
        self.qty = int(self.rng.integers(2, 7))
        return f"Add {self.qty} units of the {self.p['name']} to the cart."

    def done(self) -> bool:
        return cart_qty(self, self.p["id"]) == self.qty

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *open_product(self.p["name"]),
            fill("Quantity", str(self.qty)),
            click("Add to cart", tag="button"),
        ]


class AddWithOptions(ShopTask, StateTask):
    name, difficulty = "shop.add_with_options", 6

    def setup(self) -> str:
        self.p = self.product("category = 'Clothing'")
        self.colour = str(self.pick(self.p["colours"].split(",")))
        self.size = str(self.pick(self.p["sizes"].split(",")))
        return f"Add the {self.p['name']} in colour {self.colour}, size {self.size}, to the cart."

    def done(self) -> bool:
        row = self.one(
            "SELECT SUM(qty) FROM cart WHERE product_id=? AND colour=? AND size=?",
            (self.p["id"], self.colour, self.size),
        )
        return row[0] == 1

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *open_product(self.p["name"]),
            click(self.colour, tag="label"),
            click(self.size, tag="label"),
            click("Add to cart", tag="button"),
        ]


class RemoveFromCart(ShopTask, StateTask):
    name, difficulty = "shop.remove_from_cart", 2

    def setup(self) -> str:
        rows = self.query("SELECT id, name FROM products WHERE category='Snacks' ORDER BY id")
        picks = [rows[int(i)] for i in self.rng.choice(len(rows), size=3, replace=False)]
        for row in picks:
            self.add_to_cart_db(row["id"])
        self.p = picks[int(self.rng.integers(3))]
        self.others = [r["id"] for r in picks if r["id"] != self.p["id"]]
        self.start_path = "/cart"
        return f"Remove the {self.p['name']} from the cart."

    def done(self) -> bool:
        return cart_qty(self, self.p["id"]) == 0 and all(cart_qty(self, o) == 1 for o in self.others)

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Remove", tag="button", after=self.p["name"])]


class UpdateCartQty(ShopTask, StateTask):
    name, difficulty = "shop.update_cart_qty", 3

    def setup(self) -> str:
        self.p = self.product("category='Drinks'")
        self.add_to_cart_db(self.p["id"])
        self.qty = int(self.rng.integers(2, 9))
        return f"Change the quantity of {self.p['name']} in my cart to {self.qty}."

    def done(self) -> bool:
        return cart_qty(self, self.p["id"]) == self.qty

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Cart", tag="a"),
            fill(f"Quantity of {self.p['name']}", str(self.qty)),
            click("Update", tag="button", after=f"Quantity of {self.p['name']}"),
        ]


class MoveWishlistToCart(ShopTask, StateTask):
    name, difficulty = "shop.wishlist_to_cart", 6

    def setup(self) -> str:
        self.p = self.product("category IN ('Snacks', 'Drinks')")
        self.state.db.execute("INSERT INTO wishlist VALUES (?, 0)", (self.p["id"],))
        self.state.db.commit()
        return (
            f"Move the {self.p['name']} from my wishlist to my cart (it should no longer be in the wishlist)."
        )

    def done(self) -> bool:
        return cart_qty(self, self.p["id"]) == 1 and not in_wishlist(self, self.p["id"])

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click("Wishlist", tag="a"),
            click(self.p["name"], tag="a"),
            click("Remove from wishlist", tag="button"),
            click("Add to cart", tag="button"),
        ]


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

    def setup(self) -> str:
        self.p = self.product("category IN ('Snacks', 'Drinks', 'Electronics')")
        self.who, self.address = str(self.pick(FIRST_NAMES)), str(self.pick(STREETS))
        self.shipping = str(self.pick(list(SHIPPING)))
        self.qty = int(self.rng.integers(1, 4))
        return (
            f"Buy {self.qty} x {self.p['name']} for {self.who}, shipped to {self.address} with "
            f"{self.shipping} shipping."
        )

    def done(self) -> bool:
        for order in self.query("SELECT * FROM orders WHERE status='placed'"):
            items = self.query("SELECT product_id, qty FROM order_items WHERE order_id=?", (order["id"],))
            if (
                [(i["product_id"], i["qty"]) for i in items] == [(self.p["id"], self.qty)]
                and order["name"].lower() == self.who.lower()
                and order["address"].lower() == self.address.lower()
                and order["shipping"] == self.shipping
            ):
                return True
        return False

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *open_product(self.p["name"]),
            fill("Quantity", str(self.qty)),
            click("Add to cart", tag="button"),
            *checkout_steps(self.who, self.address, self.shipping)[1:],
        ]


class BuyTwo(ShopTask, StateTask):
    name, difficulty = "shop.buy_two", 16

    def setup(self) -> str:
        rows = self.query("SELECT * FROM products WHERE category IN ('Snacks','Drinks') ORDER BY id")
        i, j = self.rng.choice(len(rows), size=2, replace=False)
        self.a, self.b = rows[int(i)], rows[int(j)]
        self.who, self.address = str(self.pick(FIRST_NAMES)), str(self.pick(STREETS))
        return (
            f"Order one {self.a['name']} and one {self.b['name']} in a single order for {self.who} at "
            f"{self.address}, express shipping."
        )

    def done(self) -> bool:
        for order in self.query("SELECT * FROM orders WHERE status='placed' AND shipping='express'"):
            items = {
                (i["product_id"], i["qty"])
                for i in self.query("SELECT * FROM order_items WHERE order_id=?", (order["id"],))
            }
            if (
                items == {(self.a["id"], 1), (self.b["id"], 1)}
                and order["address"].lower() == self.address.lower()
            ):
                return order["name"].lower() == self.who.lower()
        return False

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

    def done(self) -> bool:
        statuses = {r["id"]: r["status"] for r in self.query("SELECT id, status FROM orders")}
        return all((s == "cancelled") == (i == self.oid) for i, s in statuses.items())

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
        p, qty = self.product(), int(self.rng.integers(1, 5))
        total = p["price_cents"] * qty + (1500 if self.rng.random() < 0.5 else 0)
        db = self.state.db
        cur = db.execute(
            "INSERT INTO orders(status, name, address, shipping, total_cents) VALUES ('placed',?,?,?,?)",
            (FIRST_NAMES[0], STREETS[0], "express" if total > p["price_cents"] * qty else "standard", total),
        )
        db.execute(
            "INSERT INTO order_items VALUES (?,?,?,'','',?)", (cur.lastrowid, p["id"], qty, p["price_cents"])
        )
        db.commit()
        self.reference_answer = money(total)
        return "What was the total of my most recent order, shipping included?"

    def candidates(self) -> list[str]:
        prices = [r[0] for r in self.query("SELECT DISTINCT price_cents FROM products")]
        return sorted({money(p * q + s) for p in prices for q in range(1, 5) for s in (0, 1500)})

    def oracle_plan(self) -> list[PlanStep]:
        return [click("Orders", tag="a"), click("Order #1", tag="a"), Stop(self.reference_answer)]


class CountInCategory(ShopTask, AnswerTask):
    name, difficulty = "shop.count_under_price", 3

    def setup(self) -> str:
        self.category = "Snacks" if self.rng.random() < 0.5 else "Drinks"
        prices = sorted(
            r[0] for r in self.query("SELECT price_cents FROM products WHERE category=?", (self.category,))
        )
        limit = prices[int(self.rng.integers(2, len(prices) - 1))] + 1
        self.limit = (limit + 99) // 100 * 100
        n = sum(1 for p in prices if p < self.limit)
        self.reference_answer = str(n)
        return f"How many {self.category} products cost less than {money(self.limit)}? Answer with a number."

    def candidates(self) -> list[str]:
        n = self.one("SELECT COUNT(*) FROM products WHERE category=?", (self.category,))[0]
        return [str(k) for k in range(n + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            click(self.category, tag="a"),
            click("Price: low to high", tag="a"),
            Stop(self.reference_answer),
        ]


class AddNamedProduct(ShopTask, InfeasibleTask):
    name, difficulty = "shop.add_named_product", 3

    def setup(self) -> str:
        self.wanted = str(self.pick(["Acme Quantum Toaster", "Tidal Hover Skates", "Orchid Time Machine"]))
        return f"Add the {self.wanted} to my cart."

    def looked(self) -> bool:
        """A catalogue search for the product (at least 3 characters of its name) that found nothing."""
        want = self.wanted.lower()
        for url in self.visited_here():
            q = " ".join(query_of(url).get("q", "").lower().split())
            if len(q) >= 3 and (q in want or want in q) and not self.query(
                "SELECT 1 FROM products WHERE name LIKE ? OR category LIKE ?", (f"%{q}%", f"%{q}%")
            ):
                return True
        return False

    def oracle_plan(self) -> list[PlanStep]:
        return [*search("Search", self.wanted), Stop(status="infeasible")]


class BuyInSize(ShopTask, InfeasibleTask):
    name, difficulty = "shop.buy_in_size", 4

    def setup(self) -> str:
        self.p = self.product("category='Clothing'")
        return f"Buy the {self.p['name']} in size XXXL."

    def looked(self) -> bool:
        """The product page, where the sizes are listed."""
        return f"/product/{self.p['id']}" in map(path_of, self.visited_here())

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), Stop(status="infeasible")]


class ColourOf(ShopTask, AnswerTask):
    name, difficulty = "shop.colour_count", 4

    def setup(self) -> str:
        self.p = self.product("category IN ('Clothing', 'Electronics')")
        self.reference_answer = str(len(self.p["colours"].split(",")))
        return f"In how many colours is the {self.p['name']} offered? Answer with a number."

    def candidates(self) -> list[str]:
        most = max(len(r[0].split(",")) for r in self.query("SELECT colours FROM products"))
        return [str(k) for k in range(most + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [*open_product(self.p["name"]), Stop(self.reference_answer)]
