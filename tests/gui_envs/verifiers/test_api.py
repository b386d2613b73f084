"""The label-function API directly (no sandbox): the matching rule, action descriptions, match steps."""

from __future__ import annotations

from gui_envs.verifiers import api
from gui_envs.verifiers.api import matches, normalise, view_from_records
from tests.gui_envs.verifiers.helpers import PRODUCT, two_path_view, wishlist_view


def test_matching_rule() -> None:
    assert normalise("  Add\u00a0to   \u201cWish\u201d List ") == 'add to "wish" list'
    assert matches("add to wish list", "Add to Wish List")
    assert matches("Almonds", "Crunchy Almonds | $4.99")
    assert not matches("4", "42") and not matches("Almond", "Almonds")
    assert matches("$4.99", "Crunchy Almonds | $4.99")
    assert matches("", "") and not matches("", "x")


def test_point_targets_the_smallest_clickable_element_and_type_uses_the_focus() -> None:
    view = two_path_view("search")
    assert (view.steps[0].text, view.steps[0].tag) == ("Search", "input")
    assert (view.steps[1].action, view.steps[1].text, view.steps[1].typed_text) == ("type", "Search", PRODUCT)
    # wishlist_view clicks by point (50, 50): inside the 'Add to Wish List' box only.
    assert wishlist_view().steps[1].text == "Add to Wish List"


def test_match_steps_and_order_within_a_function() -> None:
    view = wishlist_view()
    api.start_log()
    assert api.validate_click_action(view, "Add to Wish List")
    assert api.validate_item_in_wishlist(view, PRODUCT)
    assert [c[2] for c in api.CALL_LOG] == [(1,), (1,)]  # the fact holds after step 1
    api.start_log()
    assert api.validate_item_in_wishlist(view, PRODUCT)
    assert not api.validate_click_action(view, PRODUCT)  # step 0 comes before the fact's step 1
    api.start_log()
    assert not api.validate_item_in_wishlist(wishlist_view(click=False), PRODUCT)


def test_missing_final_record_uses_the_last_one() -> None:
    view = view_from_records("x", [{"type": "stop", "answer": "42"}], [{"facts": {"a": ["b"]}, "location": "u"}])
    assert len(view.states) == 2 and view.states[1] == {"a": ("b",)} and view.stop_page_url == "u"
    api.start_log()
    assert api.validate_stop_action(view, "42") and not api.validate_stop_action(view, "4")
