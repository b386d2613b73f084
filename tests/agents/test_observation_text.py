"""The text rendering reads GuiWeb / GuiAndroid's ``elements``, which travel as JSON text, and plain lists."""

from __future__ import annotations

import json

from agents.prompts.observation import element_list, render_observation_text

ELEMENTS = [{"id": "4", "role": "button", "text": "Add to cart", "bbox": [10, 20, 110, 40], "clickable": True}]


def test_json_and_list_elements_render_the_same() -> None:
    as_json = render_observation_text({"elements": json.dumps(ELEMENTS), "url": "http://shop/"})
    as_list = render_observation_text({"elements": ELEMENTS, "url": "http://shop/"})
    assert as_json == as_list == "Location: http://shop/\nElements:\n[4] button 'Add to cart' bbox=(10, 20, 110, 40)"


def test_unparseable_elements_render_nothing() -> None:
    assert element_list("{not json") == [] and element_list(None) == []
