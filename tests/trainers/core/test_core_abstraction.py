"""CORE's semantic code abstraction and extrapolation on hand-built trajectories (no browser, no model)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from gui_envs.schema.actions import Action
from gui_envs.schema.trajectory import Step, Trajectory
from gui_envs.verifiers.api import view_of
from trainers.core import abstraction, extrapolation
from trainers.core.abstraction import (
    SynthesisRecord,
    describe,
    key_steps,
    llm_synthesise,
    rule_key_steps,
    semantic_descriptions,
    synthesis_metrics,
)
from trainers.core.extrapolation import (
    INVALID,
    explore_failure,
    judge_intent,
    refine_intent,
    state_change_intent,
)

SEARCH = {
    "id": "3",
    "text": "Search",
    "tag": "input",
    "role": "textbox",
    "bbox": [0, 0, 100, 20],
    "clickable": True,
}
LINK = {
    "id": "7",
    "text": "Crunchy Almonds",
    "tag": "a",
    "role": "link",
    "bbox": [0, 40, 100, 60],
    "clickable": True,
}
WISH = {
    "id": "9",
    "text": "Add to Wish List",
    "tag": "button",
    "role": "button",
    "bbox": [0, 80, 100, 100],
    "clickable": True,
}


def _traj(wishlist_after: bool = True) -> Trajectory:
    """Search, open the product, scroll (noise), add to the wishlist, stop: five steps on the shop."""
    empty, full = {"shop.wishlist": []}, {"shop.wishlist": ["Crunchy Almonds"]}
    final = full if wishlist_after else empty
    steps = [
        (Action.type_text("Crunchy Almonds", element_id="3"), "http://shop/", [SEARCH], empty),
        (Action.click_element("7"), "http://shop/search?q=Crunchy+Almonds", [SEARCH, LINK], empty),
        (Action.from_dict({"type": "scroll", "direction": "down"}), "http://shop/product/4", [WISH], empty),
        (Action.click_element("9"), "http://shop/product/4", [WISH], empty),
        (Action.stop(), "http://shop/product/4", [WISH], final),
    ]
    traj = Trajectory(
        "Add the Crunchy Almonds to the wishlist.",
        env_id="GuiWeb-Shop-v0",
        task="shop.add_to_wishlist",
        seed=1,
    )
    for action, url, elements, facts in steps:
        record = {"facts": facts, "elements": elements, "location": url}
        traj.steps.append(Step(action=action, privileged={"verifier_record": record}))
    traj.metadata["final_privileged"] = {
        "verifier_record": {"facts": final, "elements": [WISH], "location": "http://shop/product/4"}
    }
    traj.success = wishlist_after
    return traj


def test_doctests() -> None:
    for module in (abstraction, extrapolation):
        assert doctest.testmod(module).failed == 0


def test_semantic_descriptions_use_the_acted_on_element() -> None:
    assert semantic_descriptions(_traj()) == [
        "Type 'Crunchy Almonds' into the field 'Search'",
        "Click the link 'Crunchy Almonds'",
        "Scroll the page",
        "Click the button 'Add to Wish List'",
        "Stop and report the task as success",
    ]
    step = view_of(_traj()).steps[3]
    assert describe(step, "phone") == "Tap the button 'Add to Wish List'"


def test_rule_key_steps_keep_type_and_the_state_change() -> None:
    # The click on "Add to Wish List" (step 3) changed the wishlist; the scroll, the link and a plain stop did not.
    assert rule_key_steps(_traj()) == [0, 3]
    assert key_steps(_traj()) == [0, 3]


def test_llm_key_steps_map_lines_back_and_fall_back() -> None:
    prompts = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return "1. Type 'Crunchy Almonds' into the field 'Search'\n2. Click the button 'Add to Wish List'"

    assert key_steps(_traj(), llm) == [0, 3]
    assert (
        "Objective: Add the Crunchy Almonds to the wishlist." in prompts[0]
        and "3. Scroll the page" in prompts[0]
    )
    assert key_steps(_traj(), lambda p: "nothing useful") == [0, 3]


GOOD = (
    "```python\nfrom Function_APIs import *\ndef verify_function(trajectory):\n"
    "    if not validate_click_action(trajectory, 'Add to Wish List'):\n        return False\n    return True\n```"
)
WRONG = GOOD.replace("Add to Wish List", "Checkout")
UNSAFE = "```python\nimport os\ndef verify_function(trajectory):\n    return True\n```"


def test_llm_synthesis_retries_in_the_sandbox_and_reports_osr_ftsr_esp() -> None:
    replies = iter([GOOD, WRONG, UNSAFE, GOOD] + [WRONG] * 5)
    records = llm_synthesise(_traj(), [3, 3, 3], lambda p: next(replies), max_attempts=5)
    assert [r.first_success for r in records] == [1, 3, None]
    assert [r.attempts for r in records] == [1, 3, 5]
    assert "returned False" in records[1].errors[0] and "Rejected" in records[1].errors[1]
    # OSR = 2/3 synthesised within 5; FTSR = 1/3 on the first try; ESP = (1 + 3) / 2.
    assert synthesis_metrics(records) == {"osr": 2 / 3, "ftsr": 1 / 3, "esp": 2.0, "syntheses": 3}
    assert synthesis_metrics([]) == {"osr": 0.0, "ftsr": 0.0, "esp": 0.0, "syntheses": 0}
    assert isinstance(records[0], SynthesisRecord) and "validate_click_action" in (records[0].code or "")


@pytest.mark.parametrize(
    ("candidate", "expected"),
    [
        ("New task intent: Add the Crunchy Almonds to the cart.", "Add the Crunchy Almonds to the cart"),
        ("Set an alarm for 07:30", "Set an alarm for 07:30"),
        ("Compare the prices", INVALID),
        ("The user browsed the shop", INVALID),
        ("Do not add anything", INVALID),
        ("Cancel the order 3", INVALID),
        ("", INVALID),
    ],
)
def test_refine_intent_rules(candidate: str, expected: str) -> None:
    assert refine_intent(candidate) == expected


def test_failure_gets_the_intent_of_its_final_state_change() -> None:
    assert state_change_intent(_traj()) == "Add Crunchy Almonds to the wishlist"
    assert state_change_intent(_traj(wishlist_after=False)) == INVALID
    failed = _traj()
    failed.instruction, failed.success = "Add the Walnuts to the cart.", False
    new, relabelled = explore_failure(failed, "web|shop.add_to_cart|1")
    assert new.instruction == relabelled.instruction == "Add Crunchy Almonds to the wishlist"
    assert relabelled.success and relabelled.metadata["relabelled_from"] == "Add the Walnuts to the cart."
    assert any("shop.wishlist" in f for f in new.functions) and new.origin == "failure"
    assert explore_failure(_traj(wishlist_after=False), "x") is None  # nothing changed: no intent


def test_llm_intent_and_judge() -> None:
    failed = _traj()
    failed.success = False

    def llm(prompt: str) -> str:
        if prompt.startswith("Below is a trajectory"):
            return "The agent added almonds to the wishlist"
        if prompt.startswith("You are given a candidate"):
            return "Add the Crunchy Almonds to the wishlist"
        if prompt.startswith("You will be provided"):
            return "1. Click the button 'Add to Wish List'"
        return GOOD  # label-function synthesis

    new, _ = explore_failure(failed, "p", llm=llm, judge=lambda p: "Intent 2")
    assert new.instruction == "Add the Crunchy Almonds to the wishlist" and new.judge == "new"
    assert len(new.functions) == 1 and "Add to Wish List" in new.functions[0]
    assert judge_intent(failed, "a", "b", lambda p: "Cannot decide") == "undecided"


def test_cli_refuses_to_overwrite_a_finished_run_and_checks_the_config(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from guigym.cli import app

    (tmp_path / "run" / "iter_00").mkdir(parents=True)
    (tmp_path / "run" / "iter_00" / "state.json").write_text("{}")
    config = Path(__file__).resolve().parents[3] / "configs" / "core_tiny.yaml"
    # An existing folder as the model: the config's runs/ model is absent in a fresh clone, and a missing model is
    # refused before the trainer looks at output_dir.
    base = ["train", "core", "-c", str(config), "--set", f"output_dir={tmp_path / 'run'}", "--set", f"model={tmp_path}"]
    finished = CliRunner().invoke(app, base)
    assert finished.exit_code == 2 and "--resume" in finished.output
    bad = CliRunner().invoke(app, [*base, "--set", "scripted_samples=5"])
    assert bad.exit_code == 2 and "scripted_samples" in bad.output


def test_rule_path_ties_functions_to_key_steps_and_their_descriptions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The default (no LLM) path runs section 3.1.1 and 3.1.2: the type (step 0) and the wishlist click (step 3) are
    # the rule's key steps, so their functions carry those steps' descriptions; the wishlist fact is app state.
    records = abstraction.rule_synthesise(_traj())
    assert [(r.step, r.description) for r in records if r.step >= 0] == [
        (0, "Type 'Crunchy Almonds' into the field 'Search'"),
        (3, "Click the button 'Add to Wish List'"),
    ]
    assert [r.step for r in records if "validate_fact" in (r.code or "")] == [-1]
    assert all(r.code for r in records)
    # A narrower key-step choice (only the click) drops the type step's function: no function for a non-key step.
    monkeypatch.setattr(abstraction, "rule_key_steps", lambda trajectory: [3])
    narrowed = abstraction.rule_synthesise(_traj())
    assert [r.step for r in narrowed if r.step >= 0] == [3]
    assert not any("validate_type_action" in (r.code or "") for r in narrowed)
