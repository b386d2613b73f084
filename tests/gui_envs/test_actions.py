"""The Action schema: validation, JSON and GUI-R1 round trips, and a parser that never raises."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gui_envs.actions import (
    DIRECTIONS,
    Action,
    InvalidActionError,
    format_gui_r1,
    parse_action_text,
)

coord = st.floats(min_value=0, max_value=4000, allow_nan=False, allow_infinity=False)
points = st.tuples(coord, coord)
texts = st.text(max_size=40)
nonempty = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != "")
element_ids = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)


def _pointer(kind: str) -> st.SearchStrategy[Action]:
    return st.one_of(
        st.builds(lambda p: Action(kind, point=p), points),
        st.builds(lambda e: Action(kind, element_id=e), element_ids),
    )


valid_actions = st.one_of(
    *[_pointer(k) for k in ("click", "double_click", "long_press", "right_click", "hover")],
    st.builds(lambda t, e: Action("type", text=t, element_id=e), texts, st.none() | element_ids),
    st.builds(
        lambda d, a: Action("scroll", direction=d, amount=a),
        st.sampled_from(DIRECTIONS),
        st.none() | st.floats(0, 5000),
    ),
    st.builds(lambda p, q: Action("swipe", point=p, end_point=q), points, points),
    st.builds(lambda p, d: Action("swipe", point=p, direction=d), points, st.sampled_from(DIRECTIONS)),
    st.builds(
        lambda k: Action("press", key=k),
        nonempty.filter(lambda s: s.lower() not in ("back", "home")),
    ),
    st.builds(lambda a: Action("open_app", app=a), nonempty),
    st.builds(lambda t: Action("navigate", target=t), st.sampled_from(["back", "forward", "home"])),
    st.builds(lambda u: Action("navigate", target="url", url=u), nonempty),
    st.builds(lambda d: Action("wait", duration=d), st.none() | st.floats(0, 60)),
    st.builds(
        lambda a, s: Action("stop", answer=a, status=s),
        st.none() | texts,
        st.sampled_from(["success", "infeasible", "failure"]),
    ),
)


@settings(max_examples=300, deadline=None)
@given(valid_actions)
def test_every_valid_action_round_trips_through_json_and_gui_r1(action: Action) -> None:
    assert Action.from_json(action.to_json()) == action
    assert Action.from_dict(json.loads(json.dumps(action.to_dict()))) == action
    parsed = parse_action_text(format_gui_r1(action, think="because"))
    assert parsed.ok, parsed.error
    assert parsed.action == action
    assert parsed.think == "because"


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


@pytest.mark.parametrize(
    "kwargs",
    [
        {"type": "teleport"},
        {"type": "click"},
        {"type": "click", "point": (1, 2), "text": "x"},
        {"type": "type"},
        {"type": "scroll", "direction": "sideways"},
        {"type": "press", "key": "back"},
        {"type": "navigate", "target": "url"},
        {"type": "stop", "status": "maybe"},
        {"type": "click", "point": (1, float("inf"))},
        {"type": "click", "point": (1, 2, 3)},
        {"type": "wait", "duration": -1},
    ],
)
def test_invalid_actions_raise_a_named_error(kwargs: dict) -> None:
    with pytest.raises(InvalidActionError):
        Action(**kwargs)
