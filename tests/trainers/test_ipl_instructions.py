"""MobileIPL instruction evolution (seed 003, sec. 3.2): the rule-based Q&A of Levels I-III by hand, the LLM hook,
and the warm-up samples they become."""

from __future__ import annotations

from typing import Any

import pytest

from gui_envs.schema.actions import Action
from trainers.ipl_instructions import QA, Screen, element_name, evolve, load_hook, role_word, rule_based_qa

# The Settings home page as the simulated phone lists it (screenshot pixels on a 360 x 800 screen), cut down.
TITLE = {"text": "Settings", "role": "TextView", "bbox": [18, 39, 354, 65], "clickable": False,
         "resource_id": "com.guigym.settings:id/title"}  # fmt: skip
TILE = {"text": "Network & internet, Wi-Fi, airplane mode", "role": "LinearLayout", "bbox": [12, 152, 348, 208],
        "clickable": True, "resource_id": "com.guigym.settings:id/dashboard_tile"}  # fmt: skip
LABEL = {"text": "Network & internet", "role": "TextView", "bbox": [18, 160, 342, 181], "clickable": False}
CLOCK = {
    "text": "12:00",
    "role": "TextView",
    "bbox": [14, 4, 49, 20],
    "resource_id": "com.android.systemui:id/clock",
}
NEXT = [{"text": "Network & internet", "role": "TextView", "bbox": [62, 39, 354, 65], "resource_id": "x:id/title"},
        {"text": "Wi-Fi", "role": "Switch", "bbox": [12, 88, 348, 144], "clickable": True}]  # fmt: skip
SCREEN = Screen([TITLE, TILE, LABEL, CLOCK], (360, 800), "Turn on Wi-Fi.", tapped=TILE, next_elements=NEXT)
# TILE on 0-1000: x 12/360 -> 33, 348/360 -> 967; y 152/800 -> 190, 208/800 -> 260
BOX = "<|box_start|>(33,190),(967,260)<|box_end|>"


def test_names_and_role_words() -> None:
    assert element_name(TILE) == "Network & internet"
    assert element_name({"text": "", "content_desc": "Navigate up"}) == "Navigate up"
    assert [role_word(e) for e in (TILE, LABEL, NEXT[1], {"role": "ImageButton"}, {"role": "EditText"})] == [
        "item", "label", "switch", "button", "text field"]  # fmt: skip


def test_the_three_levels_by_hand() -> None:
    got = [(qa.level, qa.kind, qa.question, qa.answer) for qa in rule_based_qa(SCREEN)]
    assert got == [
        (1, "grounding", "Where is 'Network & internet' on the screen?", BOX),
        (1, "reference", f"What is at {BOX}?", "the 'Network & internet' item"),
        # the status-bar clock is not the app's; the tile and its label share a name: listed once
        (1, "description", "Describe the page.", "The page shows 'Settings', 'Network & internet'."),
        (2, "caption", "What does the 'Network & internet' item do?",
         "The 'Network & internet' item: tapping it opens Network & internet."),
        # the label lies inside the tile's box: the widget relationship the paper's Level II teaches
        (2, "relation", "Can the text 'Network & internet' be tapped?",
         "It is a label inside the 'Network & internet' item; tap the item."),
        (3, "structure", "How is this page organised?",
         "A title 'Settings' at the top, then 1 tappable element: 'Network & internet'."),
        # the next recorded screen's title says where the tap led
        (3, "navigation", "What happens after tapping 'Network & internet'?", "The 'Network & internet' page opens."),
    ]  # fmt: skip
    assert [qa.kind for qa in rule_based_qa(SCREEN, levels=(2,))] == ["caption", "relation"]


def test_evolve_filters_levels_deduplicates_and_takes_a_hook() -> None:
    twice = evolve([SCREEN, SCREEN], levels=(1,))
    assert [qa.kind for qa in twice] == [
        "grounding",
        "reference",
        "description",
    ]  # the second screen adds nothing

    def llm(screen: Screen) -> list[QA]:  # what an LLM hook returns: its own Q&A, any level
        return [
            QA(3, "faq", f"What is {screen.instruction}", "a settings task"),
            QA(1, "grounding", "q", "a"),
        ]

    assert [(qa.level, qa.kind) for qa in evolve([SCREEN], levels=(3,), hook=llm)] == [(3, "faq")]
    with pytest.raises(ValueError, match="levels"):
        evolve([SCREEN], levels=(4,))
    assert load_hook("trainers.ipl_instructions:rule_based_qa") is rule_based_qa
    with pytest.raises(ValueError, match="module:function"):
        load_hook("rule_based_qa")


def test_warm_up_samples_mix_the_evolved_questions() -> None:
    import numpy as np

    from trainers.ipl import TreeJob, coat_sft_samples, evolution_samples

    class Chat:
        supports_images = False

        def prompt_text(self, messages: list[dict[str, Any]]) -> str:
            return "|".join(str(m["content"]) for m in messages)

    shot = np.zeros((800, 360, 3), np.uint8)
    job = TreeJob({"screenshot": shot, "instruction": "Turn on Wi-Fi."}, "Turn on Wi-Fi.", ["open app Settings"],
                  Action("click", point=(180.0, 180.0)), TILE["bbox"], "'Network & internet'",
                  [TITLE, TILE, LABEL, CLOCK], NEXT)  # fmt: skip
    qa = evolution_samples([job, job], Chat(), [1, 2, 3])
    assert len(qa) == 7  # the seven Q&A above, once although the screen was recorded twice
    assert qa[0].prompt == "Where is 'Network & internet' on the screen?" and qa[0].answer == BOX
    coat = coat_sft_samples([job], Chat(), "compact")
    assert [s.answer for s in coat] == ["The screen shows the current app.", "Next: click 'Network & internet'.",
                                        "click 'Network & internet'", BOX]  # fmt: skip
    # the decision's prompt carries the task and the history, never the answer
    assert (
        "step 1: open app Settings" in coat[2].prompt and "click 'Network & internet'" not in coat[1].prompt
    )
