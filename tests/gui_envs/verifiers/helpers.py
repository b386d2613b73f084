"""Hand-built trajectory views for the verifier tests (no browser needed)."""

from __future__ import annotations

from typing import Any

from gui_envs.verifiers.api import TrajectoryView, view_from_records

PRODUCT = "Crunchy Almonds"
OTHER = "Spicy Pretzels"


def wishlist_view(item: str = PRODUCT, click: bool = True) -> TrajectoryView:
    """Open a product, click 'Add to Wish List' (an ``<a>``), end with ``item`` in the wishlist."""
    elements = [
        {"id": "1", "text": PRODUCT, "tag": "a", "bbox": [0, 0, 100, 20], "clickable": True},
        {"id": "2", "text": "Add to Wish List", "tag": "a", "bbox": [0, 40, 100, 60], "clickable": True},
    ]
    actions: list[dict[str, Any]] = [{"type": "click", "element_id": "1"}]
    if click:
        actions.append({"type": "click", "point": [50, 50]})
    records = [
        {"facts": {"shop.wishlist": []}, "elements": elements, "location": "http://shop.guigym.test/"},
        {"facts": {"shop.wishlist": []}, "elements": elements, "location": "http://shop.guigym.test/product/3"},
    ]
    records.append({"facts": {"shop.wishlist": [item] if click else []}, "elements": [], "location": "http://shop.guigym.test/wishlist"})
    return view_from_records("Add it to the wishlist", actions, records[: len(actions) + 1])


def fn(call: str) -> str:
    """A one-step label function in the paper's shape around ``call``."""
    return f"from Function_APIs import *\ndef verify_function(trajectory):\n    if not {call}:\n        return False\n    return True\nresult = verify_function(trajectory)\n"


SEARCH = fn("validate_type_action(trajectory, 'Crunchy Almonds', target_text_field='Search')")
CATEGORY = fn("validate_click_action(trajectory, 'Snacks')")
PRODUCT_CLICK = fn("validate_click_action(trajectory, 'Crunchy Almonds')")
ADD = fn("validate_click_or_hover_action(trajectory, 'click', 'A', 'Add to Wish List')")
IN_WISHLIST = fn("validate_item_in_wishlist(trajectory, 'Crunchy Almonds')")


def two_path_view(route: str) -> TrajectoryView:
    """shop.add_to_wishlist solved by search (``route="search"``) or by the Snacks category (``"browse"``)."""
    home = [
        {"id": "s", "text": "Search", "tag": "input", "type": "search", "bbox": [0, 0, 200, 20], "clickable": True},
        {"id": "c", "text": "Snacks", "tag": "a", "bbox": [0, 30, 100, 50], "clickable": True},
    ]
    listing = [{"id": "p", "text": PRODUCT + " $4.99", "tag": "a", "bbox": [0, 0, 100, 20], "clickable": True}]
    product = [{"id": "w", "text": "Add to Wish List", "tag": "a", "bbox": [0, 0, 100, 20], "clickable": True}]
    if route == "search":
        actions = [{"type": "click", "element_id": "s"}, {"type": "type", "text": PRODUCT}, {"type": "press", "key": "enter"}]
        screens = [home, home, home]
    else:
        actions, screens = [{"type": "click", "element_id": "c"}], [home]
    actions += [{"type": "click", "element_id": "p"}, {"type": "click", "element_id": "w"}]
    screens += [listing, product, []]
    empty, done = {"shop.wishlist": []}, {"shop.wishlist": [PRODUCT]}
    records = [{"facts": empty, "elements": s, "location": f"u{i}"} for i, s in enumerate(screens)]
    records[-1]["facts"] = done
    return view_from_records("Add Crunchy Almonds to the wishlist", actions, records)
