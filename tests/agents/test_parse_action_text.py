"""``agents.parsing.parse_action_text``: model output (tags, prose, fences, Python quotes) to actions, never
raising, in time linear in the text (issue 9's adversarial inputs)."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.parsing import format_gui_r1, parse_action_text
from gui_envs.schema.actions import MAX_OUTPUT_CHARS, Action
from tests.gui_envs.test_actions import valid_actions


@settings(max_examples=300, deadline=None)
@given(valid_actions)
def test_every_valid_action_round_trips_through_gui_r1_text(action: Action) -> None:
    parsed = parse_action_text(format_gui_r1(action, think="because"))
    assert parsed.ok, parsed.error
    assert parsed.action == action
    assert parsed.think == "because"


def test_sentinel_valued_point_round_trips_through_gui_r1_text() -> None:
    for action in (Action.click(-100, -100), Action("type", text="x", point=(-100, -100))):
        assert parse_action_text(format_gui_r1(action)).action == action


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    result = parse_action_text(text)
    assert result.ok or result.error is not None


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.text(max_size=5),
        lambda c: (
            st.lists(c) | st.dictionaries(st.sampled_from(["action", "type", "point", "input_text", "x"]), c)
        ),
        max_leaves=10,
    )
)
def test_arbitrary_json_inside_answer_tags_never_raises(payload: object) -> None:
    text = f"<answer>{json.dumps(payload)}</answer>"
    result = parse_action_text(text)
    assert result.ok or result.error is not None


def test_non_string_input_is_a_parse_error() -> None:
    assert parse_action_text(None).error.code == "empty"  # type: ignore[arg-type]
    assert parse_action_text(b"bytes").error is not None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '<think>t</think><answer>[{"action": "click", "point": [12, 40], "input_text": ""}]</answer>',
            Action.click(12, 40),
        ),
        (
            "<answer>[{'action': 'doubleclick', 'point': [5, 6], 'input_text': ''}]</answer>",
            Action("double_click", point=(5, 6)),
        ),
        ('[{"action": "press_back", "point": [-100, -100], "input_text": ""}]', Action.navigate("back")),
        ('{"action": "press_enter", "point": [-100, -100]}', Action.press("enter")),
        ('{"action": "type", "point": [-100, -100], "input_text": "hello"}', Action.type_text("hello")),
        ('{"action": "scroll", "point": [-100, -100], "input_text": "down"}', Action.scroll("down")),
        ('{"action": "complete", "input_text": "4200 calories"}', Action.stop("4200 calories")),
        ('{"action": "hotkey", "input_text": "ctrl+a"}', Action.press("ctrl+a")),
        ('{"action": "open_app", "input_text": "Clock"}', Action("open_app", app="Clock")),
        ('Sure! ```json\n{"type": "click", "element_id": "e7"}\n```', Action.click_element("e7")),
        ('{"action": "click", "point": "(3, 4)"}', Action.click(3, 4)),
    ],
)
def test_parses_common_model_outputs(text: str, expected: Action) -> None:
    result = parse_action_text(text)
    assert result.ok, result.error
    assert result.action == expected


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty"),
        ("<answer>   </answer>", "empty"),
        ("I will click the button", "no_json"),
        ("<answer>[{]</answer>", "invalid_json"),
        ("<answer>[]</answer>", "not_an_action"),
        ('<answer>[{"foo": 1}]</answer>', "not_an_action"),
        ('<answer>[{"action": "fly", "point": [1, 2]}]</answer>', "invalid_action"),
        ('<answer>[{"action": "click", "point": [-100, -100]}]</answer>', "invalid_action"),
        ('{"type": "click", "point": [1, 2], "bogus": 3}', "invalid_action"),
        ('{"type": "click", "point": [NaN, 2]}', "invalid_action"),
    ],
)
def test_malformed_output_gives_a_structured_error(text: str, code: str) -> None:
    result = parse_action_text(text)
    assert not result.ok
    assert result.action is None
    assert result.error is not None and result.error.code == code, result.error


# ----- adversarial inputs (issue 9): linear-time parsing, bounded arguments, coerce_action never raises -----


@pytest.mark.parametrize(
    "text",
    [
        "[1," * 33333,  # 100 KB; a decode attempt at every bracket took 30 s
        "<think>" * 14285,  # a lazy <think>(.*?)</think> rescanned the rest from every tag: 16 s
        "{" * (MAX_OUTPUT_CHARS - 1),  # the 1 MB version took 45 s; over the cap it is refused
        "[x]" * 33333,  # many small spans that are not JSON
        "[{]" * 33333,  # many mismatched closers
        '["' * 49999,  # quotes that open strings
        "<answer>" * 12500,
        "```" * 33333,
    ],
    ids=["list-prefix", "think", "braces", "small-spans", "mismatched", "quotes", "answer", "fences"],
)
def test_parser_is_linear_on_adversarial_text(text: str) -> None:
    # CPU time of this process, so that other processes on a loaded machine do not fail the test.
    start = time.process_time()
    result = parse_action_text(text)
    assert time.process_time() - start < 1.0
    assert not result.ok and result.error is not None


def test_text_over_the_cap_is_an_error_result_not_read() -> None:
    start = time.process_time()
    result = parse_action_text("{" * 1_000_000)
    assert time.process_time() - start < 0.1
    assert result.error is not None and result.error.code == "too_long"
    assert parse_action_text(" " * MAX_OUTPUT_CHARS + '{"type": "wait"}').error.code == "too_long"
    assert parse_action_text(" " * (MAX_OUTPUT_CHARS - 20) + '{"type": "wait"}').ok


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Sure, here [my answer: {"type": "click", "point": [1, 2]}]', Action.click(1, 2)),
        ("I'll click [it's the button] now: {'action': 'click', 'point': [3, 4]}", Action.click(3, 4)),
        ('I see [1, 2} oops; {"type": "press", "key": "enter"}', Action.press("enter")),
        ('{"type": "type", "text": "a ] b } [ {"}', Action.type_text("a ] b } [ {")),
        ('{"type": "type", "text": "say \\"[\\" now"}', Action.type_text('say "[" now')),
    ],
)
def test_scanner_finds_json_after_prose_brackets(text: str, expected: Action) -> None:
    result = parse_action_text(text)
    assert result.ok, result.error
    assert result.action == expected


def test_huge_ints_in_json_are_an_error_result() -> None:
    for digits in (400, 5000):  # 5000 digits is over Python's int-parsing limit (a ValueError inside json)
        result = parse_action_text('{"type": "click", "point": [1' + "0" * digits + ", 2]}")
        assert result.error is not None and result.error.code in ("invalid_action", "invalid_json")
