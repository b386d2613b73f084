"""GuiAndroidGround-v0's instructions: structural by default (a string matcher fails), exact labels on request."""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_envs  # noqa: F401
from gui_envs.android.ground import structural_descriptions
from gui_envs.android.hierarchy import parse_hierarchy
from tests.gui_envs.android.conftest import needs_chromium
from tests.oracle_helpers import string_matcher_hits


@needs_chromium
def test_string_matching_does_not_solve_the_default_instructions() -> None:
    """Regression: ``Tap the "<unique label>" ...`` is solved by matching the label in ``elements``."""
    seeds = range(6)
    for describe, check in (("structure", lambda h: h <= 1), ("text", lambda h: h == len(seeds))):
        env = gym.make("GuiAndroidGround-v0", describe=describe)
        try:
            assert check(string_matcher_hits(env, seeds)), describe
            env.reset(seed=0)
            _, reward, *_ = env.step(env.unwrapped.oracle_action())
            assert reward == 1.0
        finally:
            env.close()
    with pytest.raises(ValueError, match="describe"):
        gym.make("GuiAndroidGround-v0", describe="label")


def _node(cls: str, rid: str, text: str, bounds: str) -> str:
    return (
        f'<node index="0" text="{text}" resource-id="com.guigym.notes:id/{rid}" class="android.widget.{cls}" '
        f'package="com.guigym.notes" content-desc="" checkable="false" checked="false" clickable="true" '
        f'enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" '
        f'password="false" selected="false" bounds="{bounds}" />'
    )


def test_structural_descriptions_by_position_and_function() -> None:
    xml = (
        '<hierarchy rotation="0">'
        + _node("LinearLayout", "note_row", "Book club", "[0,300][1080,460]")
        + _node("LinearLayout", "note_row", "Groceries", "[0,460][1080,620]")
        + _node("ImageButton", "fab", "New note", "[860,2160][1030,2330]")
        + "</hierarchy>"
    )
    elements = parse_hierarchy(xml)
    out = structural_descriptions(elements, (1080, 2400))
    assert "the second note in the list" in out["1"] and "the first note in the list" in out["0"]
    assert "the round floating button at the bottom right" in out["2"]
    assert not any("Groceries" in d or "New note" in d for texts in out.values() for d in texts)
