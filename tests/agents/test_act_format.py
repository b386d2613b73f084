"""The ``act`` format: a text agent's listing of a page and its click / type answers."""

from __future__ import annotations

import json

import pytest

from agents.prompts.act import ActFormat, listed_elements, named_in
from agents.prompts.formats import PromptContext
from gui_envs.schema.actions import Action

LOGIN = {
    "instruction": 'Enter the username "karrie" and the password "AU" into the text fields and press login.',
    "elements": json.dumps(
        [
            {
                "id": "3",
                "tag": "label",
                "role": "label",
                "text": "Username",
                "value": "",
                "bbox": [2, 62, 50, 73],
            },
            {
                "id": "4",
                "tag": "input",
                "role": "text",
                "type": "text",
                "text": "karrie",
                "value": "karrie",
                "bbox": [7, 78, 135, 99],
            },
            {
                "id": "5",
                "tag": "label",
                "role": "label",
                "text": "Password",
                "value": "",
                "bbox": [2, 114, 49, 125],
            },
            {
                "id": "6",
                "tag": "input",
                "role": "password",
                "type": "password",
                "text": "",
                "value": "",
                "bbox": [7, 130, 115, 151],
            },
            {
                "id": "7",
                "tag": "button",
                "role": "button",
                "text": "Login",
                "value": "",
                "bbox": [2, 166, 89, 197],
            },
        ]
    ),
}
TABS = {
    "instruction": "Click on Tab #2.",
    "elements": [
        {"id": "1", "tag": "li", "role": "tab", "text": "Tab #1", "bbox": [6, 57, 48, 82]},
        {"id": "2", "tag": "a", "role": "presentation", "text": "Tab #1", "bbox": [7, 58, 47, 81]},
        {"id": "3", "tag": "li", "role": "tab", "text": "Tab #2", "bbox": [50, 57, 92, 81]},
        {"id": "4", "tag": "a", "role": "presentation", "text": "Tab #2", "bbox": [51, 58, 91, 81]},
    ],
}


def prompt(obs, fmt=None, history=()):
    return (fmt or ActFormat()).messages(PromptContext(obs, obs["instruction"], list(history)))[0]["content"]


def test_listing_shows_fields_labels_values_and_history_by_label():
    typed = Action.type_text("karrie", element_id="4").to_json()
    text = prompt(LOGIN, history=[typed])
    assert text.splitlines() == [
        LOGIN["instruction"],
        'done: type "karrie" into field',
        "A label Username",
        "B field = karrie",  # a field reports its value as its text: shown once, as the value
        "C label Password",
        "D field",
        "E button Login",
    ]


def test_an_inner_element_with_its_parents_text_is_listed_once_and_answers_resolve_to_it():
    assert [e["id"] for e in listed_elements(TABS)] == ["1", "3"]
    fmt = ActFormat()
    assert fmt.answer_text(Action.click_element("4"), TABS) == "click B"  # the inner link of Tab #2
    assert "B* tab Tab #2" in prompt(TABS) and "A tab Tab #1" in prompt(TABS)


# MiniWoB click-checkboxes: each box sits in a <label> with its text; the box's rectangle sticks out of the label's.
CHECKBOXES = {
    "instruction": "Select Idh, vEms71J and click Submit.",
    "elements": [
        {"id": "0", "tag": "label", "role": "label", "text": "XA8FMD", "bbox": [2, 59, 70, 70]},
        {"id": "1", "tag": "input", "type": "checkbox", "text": "XA8FMD", "bbox": [6, 55, 26, 68]},
        {"id": "2", "tag": "label", "role": "label", "text": "Idh", "bbox": [2, 78, 43, 89]},
        {"id": "3", "tag": "input", "type": "checkbox", "text": "Idh", "value": "checked", "bbox": [6, 74, 26, 87]},
        {"id": "4", "tag": "label", "role": "label", "text": "vEms71J", "bbox": [2, 97, 70, 108]},
        {"id": "5", "tag": "input", "type": "checkbox", "text": "vEms71J", "bbox": [6, 93, 26, 106]},
        {"id": "6", "tag": "button", "text": "Submit", "bbox": [2, 120, 97, 151]},
    ],
}


def test_a_checkbox_takes_its_wrapping_labels_line_and_shows_its_state():
    assert prompt(CHECKBOXES).splitlines()[1:] == [
        "[ ] A checkbox XA8FMD",
        "[x] B* checkbox Idh",
        "[ ] C* checkbox vEms71J",
        "D* button Submit",
    ]
    fmt = ActFormat()
    assert fmt.parse("click C", CHECKBOXES)[0] == Action.click_element("5")
    # A demonstration that clicked the label (which ticks the same box) is the box's line.
    assert fmt.answer_text(Action.click_element("4"), CHECKBOXES) == "click C"
    # A label that wraps another box's text, or text beside a box without overlapping it, keeps its own line.
    apart = {**CHECKBOXES, "elements": [{**e, "bbox": [200, 0, 260, 10]} if e["id"] == "2" else e
                                        for e in CHECKBOXES["elements"]]}  # fmt: skip
    assert "label Idh" in prompt(apart) and "[x] C* checkbox Idh" in prompt(apart)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("type B 1", Action.type_text("karrie", element_id="4")),
        ("type D 2", Action.type_text("AU", element_id="6")),
        ('type D "hunter2"', Action.type_text("hunter2", element_id="6")),
        ("click E", Action.click_element("7")),
        ("  click e and more", Action.click_element("7")),
    ],
)
def test_parse_reads_the_answer(answer, expected):
    action, error = ActFormat().parse(answer, LOGIN)
    assert error is None and action == expected


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ("press enter", "no_action"),
        ("click Z", "no_element"),
        ("type B 3", "no_text"),
        ("type B", "no_text"),
        ("", "no_action"),
    ],
)
def test_malformed_answers_are_parse_errors_not_exceptions(answer, code):
    action, error = ActFormat().parse(answer, LOGIN)
    assert action is None and error.code == code


def test_answer_text_round_trips_through_parse():
    fmt = ActFormat()
    for action in (Action.type_text("AU", element_id="6"), Action.click_element("7"),
                   Action.type_text("other", element_id="4")):  # fmt: skip
        assert fmt.parse(fmt.answer_text(action, LOGIN), LOGIN)[0] == action


def test_marks_follow_the_instruction_not_the_page():
    """The mark is computed from the instruction: swap what it names and the mark moves."""
    assert "A* tab Tab #1" in prompt({**TABS, "instruction": "Click on Tab #1."})
    assert named_in("Eget", 'Click on the link "Eget".') and not named_in("eget", 'Click on the link "Eget".')
    assert (
        "*"
        not in ActFormat(mark_matches=False).messages(PromptContext(TABS, TABS["instruction"]))[0]["content"]
    )


def test_shuffled_letters_are_a_fixed_function_of_the_page_and_round_trip():
    """With ``shuffle_letters`` a page always gets the same distinct letters; another instruction on the same
    elements draws others, and every answer reads back as the action it names."""
    fmt = ActFormat(shuffle_letters=True)
    n = len(listed_elements(LOGIN))
    names = fmt.letters(LOGIN, n)
    assert names == fmt.letters(dict(LOGIN), n) and len(set(names)) == n
    assert names != fmt.letters({**LOGIN, "instruction": 'Enter "x".'}, n)
    listing = prompt(LOGIN, fmt).splitlines()[1:]
    assert [line[0] for line in listing] == list(names)
    for action in (Action.type_text("AU", element_id="6"), Action.click_element("7")):
        assert fmt.parse(fmt.answer_text(action, LOGIN), LOGIN)[0] == action
    unused = next(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in names)
    assert fmt.parse(f"click {unused}", LOGIN)[1].code == "no_element"
