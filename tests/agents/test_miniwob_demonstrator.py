"""The scripted MiniWoB demonstrator: its plan per instruction wording on hand-written pages, and its success
on the learning suite's ten tasks in Chromium from the observation alone."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents.miniwob_demonstrator import MiniWoBDemonstrator, first_action, next_action
from gui_envs.schema.actions import Action
from gui_envs.web.miniwob_suite import INSTRUCTION_SUITE

#: The learning suite of issue 37.
SUITE = INSTRUCTION_SUITE
#: Seeds no benchmark range uses (the benchmark trains and evaluates below 500,000).
TEST_SEEDS = range(900_000, 900_030)


def el(
    id: str, tag: str, text: str = "", *, value: str = "", type: str = "", role: str = "", bbox: Any = None
) -> dict[str, Any]:
    """One element as ``parse_elements`` gives it (bbox: x0, y0, x1, y1 in pixels)."""
    return {
        "id": id,
        "tag": tag,
        "role": role or ("button" if tag == "button" else tag),
        "text": text,
        "value": value,
        "bbox": bbox or [0, 10 * int(id), 40, 10 * int(id) + 8],
        "clickable": tag in ("button", "input", "a", "li", "label"),
        "type": type,
    }


def obs(instruction: str, elements: list[dict[str, Any]]) -> dict[str, Any]:
    return {"instruction": instruction, "elements": json.dumps(elements)}


# ----- each instruction template, on hand-written pages (no browser) -----------------------------------


def test_click_button_named_and_quoted() -> None:
    page = [el("0", "button", "ONE", bbox=[0, 0, 40, 40]), el("1", "button", "TWO", bbox=[100, 0, 140, 40])]
    assert first_action("Click button ONE.", page) == Action.click_element("0")
    assert first_action("Click button TWO.", page) == Action.click_element("1")
    # click-button compares labels exactly: "ok" is not "Ok"; of two equal labels the first is taken.
    page = [
        el("0", "button", "Ok"),
        el("1", "input", type="text"),
        el("2", "button", "ok"),
        el("3", "button", "ok"),
    ]
    assert first_action('Click on the "ok" button.', page) == Action.click_element("2")
    assert first_action('Click on the "Ok" button.', page) == Action.click_element("0")


def test_covered_button_is_clicked_where_it_shows() -> None:
    # click-test-2 seed 900009: TWO (later in the page, so drawn on top) covers ONE's centre.
    page = [
        el("0", "button", "ONE", bbox=[86, 116, 126, 156]),
        el("1", "button", "TWO", bbox=[105, 119, 145, 159]),
    ]
    action = first_action("Click button ONE.", page)
    assert action is not None and action.type == "click" and action.element_id is None
    x, y = action.point
    assert 86 < x < 105 and 116 < y < 156  # on ONE, off TWO
    assert first_action("Click button TWO.", page) == Action.click_element("1")


def test_click_link_tab_dialog_focus() -> None:
    page = [
        el("0", "div", "Lorem laoreet condimentum ipsum"),
        el("1", "span", "laoreet"),
        el("2", "span", "condimentum"),
    ]
    assert first_action('Click on the link "condimentum".', page) == Action.click_element("2")
    tabs = []
    for n in (1, 2, 3):
        tabs += [
            el(str(2 * n - 2), "li", f"Tab #{n}", role="tab"),
            el(str(2 * n - 1), "a", f"Tab #{n}", role="presentation"),
        ]
    assert first_action("Click on Tab #2.", tabs) == Action.click_element(
        "3"
    )  # the a, which click-tab listens on
    dialog = [el("0", "div", "Close text CancelOK", role="dialog", bbox=[0, 0, 200, 200])]
    dialog += [
        el("1", "button", "Close"),
        el("2", "p", "text"),
        el("3", "button", "Cancel"),
        el("4", "button", "OK"),
    ]
    assert first_action('Click the button in the dialog box labeled "OK".', dialog) == Action.click_element(
        "4"
    )
    assert first_action('Click the button in the dialog box labeled "x".', dialog) == Action.click_element(
        "1"
    )
    fields = [el(str(i), "input", type="text") for i in range(3)]
    assert first_action("Focus into the 3rd input textbox.", fields) == Action.click_element("2")
    assert first_action("Focus into the 1st input textbox.", fields) == Action.click_element("0")


def test_enter_text_types_then_submits() -> None:
    instruction = 'Enter "Vanda" into the text field and press Submit.'
    page = [el("0", "input", type="text"), el("1", "button", "Submit")]
    assert next_action(instruction, page) == Action.type_text("Vanda", element_id="0")
    # Either the page (the field's value) or the history says the text is in.
    typed = [el("0", "input", value="Vanda", type="text"), el("1", "button", "Submit")]
    assert next_action(instruction, typed) == Action.click_element("1")
    assert next_action(
        instruction, page, [Action.type_text("Vanda", element_id="0")]
    ) == Action.click_element("1")


def test_login_types_both_then_logs_in() -> None:
    instruction = 'Enter the username "kasie" and the password "tsdvP" into the text fields and press login.'
    page = [
        el("0", "label", "Username"),
        el("1", "input", type="text"),
        el("2", "label", "Password"),
        el("3", "input", type="password"),
        el("4", "button", "Login"),
    ]
    history: list[Action] = []
    for _ in range(3):
        history.append(next_action(instruction, page, history))
    assert history == [
        Action.type_text("kasie", element_id="1"),
        Action.type_text("tsdvP", element_id="3"),
        Action.click_element("4"),
    ]


def test_checkboxes_follow_the_page_ticks() -> None:
    def page(ticked: set[str]) -> list[dict[str, Any]]:
        out = []
        for i, name in enumerate(["qxm", "PJ4", "mqU4O"]):
            out += [
                el(str(2 * i), "label", name),
                el(str(2 * i + 1), "input", name, type="checkbox", value="checked" if name in ticked else ""),
            ]
        return out + [el("6", "button", "Submit")]

    instruction = "Select qxm, mqU4O and click Submit."
    assert next_action(instruction, page(set())) == Action.click_element("1")
    assert next_action(instruction, page({"qxm"})) == Action.click_element("5")
    assert next_action(instruction, page({"qxm", "mqU4O", "PJ4"})) == Action.click_element("3")  # untick
    assert next_action(instruction, page({"qxm", "mqU4O"})) == Action.click_element("6")
    assert first_action("Select nothing and click Submit.", page(set())) == Action.click_element("6")


def test_button_sequence_reads_the_history() -> None:
    agent = MiniWoBDemonstrator()
    page = obs(
        "Click button ONE, then click button TWO.",
        [el("0", "button", "ONE", bbox=[0, 0, 40, 40]), el("1", "button", "TWO", bbox=[100, 0, 140, 40])],
    )
    assert [o.action for o in [agent.act(page), agent.act(page)]] == [
        Action.click_element("0"),
        Action.click_element("1"),
    ]
    agent.reset()
    assert agent.act(page).action == Action.click_element("0")
    # Stateless: each slot's history comes with the call, as Action JSON (a failed step's placeholder skipped).
    outs = agent.act_batch(
        [page, page], histories=[[], ["invalid action", Action.click_element("0").to_json()]]
    )
    assert [o.action for o in outs] == [Action.click_element("0"), Action.click_element("1")]


def test_unsupported_instruction_or_missing_element_never_raises() -> None:
    agent = MiniWoBDemonstrator()
    page = [el("0", "button", "ONE")]
    for instruction in ("Drag the circle to the square.", "Click button THREE.", "Click on Tab #4.", ""):
        out = agent.act(obs(instruction, page))
        assert out.action is None and out.parse_error.startswith("unsupported: ")
        assert first_action(instruction, page) is None
    out = agent.act({"instruction": "Click button ONE.", "elements": "not json"})
    assert out.action is None and out.parse_error.startswith("unsupported: ")
    out = agent.act_batch([obs("Select abc and click Submit.", [el("0", "button", "Submit")])])[0]
    assert out.action is None and "abc" in out.parse_error


# ----- the real pages in Chromium ----------------------------------------------------------------------


@pytest.mark.parametrize("task", SUITE)
def test_demonstrator_solves_every_seed(miniwob_task_envs: Any, task: str) -> None:
    from agents.episode import ListWorkers, play

    env = miniwob_task_envs(task)
    agent = MiniWoBDemonstrator()
    failed = []
    for seed in TEST_SEEDS:
        # play() hands the agent observations and histories only (act_batch); the env's info never reaches it.
        (traj,) = play(ListWorkers([env]), agent, [seed], max_steps=12, record_privileged=False)
        if not traj.success:
            failed.append((seed, traj.instruction, [s.action_error for s in traj.steps]))
    assert not failed, f"{task}: {len(failed)}/{len(TEST_SEEDS)} seeds failed: {failed[:3]}"


def test_act_sees_the_observation_only(miniwob_task_envs: Any) -> None:
    """The stateful path: ``act`` gets the observation dict and nothing else, and finishes multi-step tasks."""
    agent = MiniWoBDemonstrator()
    for task in ("login-user", "click-button-sequence", "click-checkboxes"):
        env = miniwob_task_envs(task)
        for seed in TEST_SEEDS[:3]:
            observation, _ = env.reset(seed=seed)
            agent.reset()
            for _ in range(12):
                out = agent.act(dict(observation))
                assert out.action is not None, out.parse_error
                observation, _, terminated, truncated, info = env.step(out.action)
                if terminated or truncated:
                    break
            assert info["success"], (task, seed)
