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
