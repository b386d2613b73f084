"""The Action schema: validation, JSON and GUI-R1 round trips, and ``coerce_action``, the env's reader, which
never raises. (The model-output parser is tested in ``tests/agents/test_parse_action_text.py``.)"""

from __future__ import annotations

import json
import math
from dataclasses import fields

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gui_envs.schema.actions import (
    ACTION_TYPES,
    DIRECTIONS,
    MAX_ANSWER_CHARS,
    MAX_COORDINATE,
    MAX_DURATION_S,
    MAX_NAME_CHARS,
    MAX_OUTPUT_CHARS,
    MAX_SCROLL_AMOUNT,
    MAX_TYPED_TEXT,
    MAX_URL_CHARS,
    Action,
    InvalidActionError,
    NotAnActionError,
    actions_from_json,
    coerce_action,
)

_FIELD_NAMES = [f.name for f in fields(Action) if f.name != "type"]

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
    assert actions_from_json(json.loads(json.dumps([action.to_gui_r1()]))) == (action,)
    assert coerce_action(json.dumps(action.to_gui_r1())) == (action, None)


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


# ----- text in env.step: JSON only ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"type": "click", "point": [12, 40]}', Action.click(12, 40)),
        ('[{"action": "click", "point": [12, 40], "input_text": ""}]', Action.click(12, 40)),
        ('{"action": "press_back", "point": [-100, -100], "input_text": ""}', Action.navigate("back")),
        (b'{"type": "press", "key": "enter"}', Action.press("enter")),
    ],
)
def test_coerce_action_reads_action_json(text: str | bytes, expected: Action) -> None:
    assert coerce_action(text) == (expected, None)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('<answer>[{"action": "click", "point": [1, 2]}]</answer>', "invalid_json"),  # model output: agents parse it
        ("I will click the button", "invalid_json"),
        ("[1," * 30_000, "invalid_json"),
        ("[" * 99_999, "invalid_json"),  # nesting deeper than the decoder's recursion limit
        ("{" * (MAX_OUTPUT_CHARS + 1), "too_long"),
        ("[]", "not_an_action"),
        ('[{"foo": 1}]', "not_an_action"),
        ("[3]", "not_an_action"),
    ],
    ids=["answer-tags", "prose", "list-prefix", "deep", "too-long", "empty-list", "no-type", "not-object"],
)
def test_text_that_is_not_action_json_is_an_error_result(text: str, code: str) -> None:
    action, error = coerce_action(text)
    assert action is None and error.startswith(f"malformed action ({code})"), error
    if code == "invalid_json":
        assert "agents.parsing.parse_action_text" in error  # the message names the fix


def test_not_an_action_is_an_invalid_action() -> None:
    with pytest.raises(InvalidActionError):
        actions_from_json([])
    with pytest.raises(NotAnActionError, match="neither"):
        actions_from_json({"x": 1})
    with pytest.raises(InvalidActionError, match="unknown GUI-R1 action"):
        actions_from_json({"action": "fly"})


def test_coerce_action_reproductions_from_issue_9() -> None:
    # Huge ints were an OverflowError out of a function that promises never to raise.
    action, error = coerce_action({"type": "click", "point": [10**400, 0]})
    assert action is None and "finite" in error
    # numpy scalars are coordinates like any other number.
    action, error = coerce_action({"type": "click", "point": [np.int64(3), np.float32(4.5)]})
    assert error is None and action == Action.click(3, 4.5)
    assert coerce_action(np.array([7, 8], np.int64), allow_point=True)[0] == Action.click(7, 8)
    assert coerce_action({"type": "scroll", "direction": "down", "amount": np.int32(40)})[0].amount == 40.0
    # Bytes are not a point: b"ab" used to become (97, 98).
    action, error = coerce_action({"type": "click", "point": b"ab"})
    assert action is None and "two numbers" in error
    assert coerce_action(b"ab", allow_point=True)[0] is None
    # Fields of the wrong type are a clean error result, not an AttributeError later in step.
    for data, field_name in [
        ({"type": "navigate", "target": "url", "url": 5}, "url"),
        ({"type": "stop", "answer": 5}, "answer"),
        ({"type": "type", "text": 5}, "text"),
        ({"type": "press", "key": ["enter"]}, "key"),
    ]:
        action, error = coerce_action(data)
        assert action is None and f"{field_name} must be a string" in error


def test_sentinel_valued_point_round_trips_through_gui_r1() -> None:
    for action in (Action.click(-100, -100), Action("type", text="x", point=(-100, -100))):
        entry = action.to_gui_r1()
        assert entry["point"] == [-100, -100] and entry["has_point"] is True
        assert Action.from_gui_r1(entry) == action
        assert actions_from_json([entry]) == (action,)
    # A model's sentinel without the marker still means "no point", as GUI-R1 writes it.
    assert Action.from_gui_r1({"action": "type", "point": [-100, -100], "input_text": "x"}).point is None
    assert "has_point" not in Action.click(-100, -99).to_gui_r1()
    with pytest.raises(InvalidActionError, match="has_point"):
        Action.from_gui_r1({"action": "click", "point": [1, 2], "has_point": "yes"})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"type": "click", "point": (MAX_COORDINATE + 1, 0)},
        {"type": "click", "point": (0, -MAX_COORDINATE - 1)},
        {"type": "swipe", "point": (1, 2), "end_point": (1e308, 0)},
        {"type": "type", "text": "x" * (MAX_TYPED_TEXT + 1)},
        {"type": "stop", "answer": "x" * (MAX_ANSWER_CHARS + 1)},
        {"type": "navigate", "target": "url", "url": "x" * (MAX_URL_CHARS + 1)},
        {"type": "press", "key": "k" * (MAX_NAME_CHARS + 1)},
        {"type": "scroll", "direction": "down", "amount": MAX_SCROLL_AMOUNT + 1},
        {"type": "wait", "duration": MAX_DURATION_S + 1},
        {"type": "click", "point": (True, 2)},
        {"type": "click", "point": "12"},
        {"type": "click", "point": {1, 2}},
        {"type": "click", "element_id": True},
        {"type": 3},
    ],
)
def test_out_of_range_arguments_are_invalid(kwargs: dict) -> None:
    with pytest.raises(InvalidActionError):
        Action(**kwargs)


def test_arguments_at_their_bounds_are_valid() -> None:
    assert Action.click(-MAX_COORDINATE, MAX_COORDINATE).point == (-MAX_COORDINATE, MAX_COORDINATE)
    assert len(Action.type_text("x" * MAX_TYPED_TEXT).text) == MAX_TYPED_TEXT
    assert Action("wait", duration=MAX_DURATION_S).duration == MAX_DURATION_S
    assert Action.click_element(7).element_id == "7"  # type: ignore[arg-type]


class _Hostile:
    """An object whose protocol methods raise, as a buggy agent's custom action type might."""

    def __len__(self) -> int:
        raise RuntimeError("len")

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("iter")


def _object_vector(items: list) -> np.ndarray:
    # Filled element by element: np.array(items) would try to broadcast nested arrays together.
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        out[i] = item
    return out


_numbers = st.one_of(
    st.integers(),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(),
    st.builds(np.int64, st.integers(-(2**63), 2**63 - 1)),
    st.builds(np.float32, st.floats(width=32)),
    st.builds(np.float64, st.floats()),
)
_junk_leaf = st.one_of(
    st.none(),
    st.booleans(),
    _numbers,
    st.text(max_size=8),
    st.binary(max_size=4),
    st.sampled_from([*ACTION_TYPES, "point", "url", "back", "down", "enter"]),
    st.just(_Hostile()),
)
_junk = st.recursive(
    _junk_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.sampled_from(["type", *_FIELD_NAMES, "bogus"]), inner, max_size=4),
        st.builds(_object_vector, st.lists(inner, max_size=2)),
    ),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(_junk, st.booleans())
def test_coerce_action_never_raises_on_junk(junk: object, allow_point: bool) -> None:
    action, error = coerce_action(junk, allow_point=allow_point)
    assert (action is None) != (error is None)
    if action is not None:
        assert isinstance(action, Action)
        # Whatever came through is inside the documented bounds and survives a JSON round trip.
        for point in (action.point, action.end_point):
            assert point is None or all(math.isfinite(v) and abs(v) <= MAX_COORDINATE for v in point)
        assert Action.from_json(action.to_json()) == action
    else:
        assert isinstance(error, str) and error
