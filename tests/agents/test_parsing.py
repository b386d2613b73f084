"""Output parsers: never raise, and every action the formatters write parses back to the same action."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.parsing import (
    NORM_1,
    NORM_1000,
    PIXELS,
    CoordinateFrame,
    CoordinateFrameError,
    coat_action,
    format_box,
    format_coat,
    format_gui_r1,
    format_gui_r1_in_frame,
    parse_box,
    parse_coat_decision,
    parse_gui_r1,
)
from gui_envs.schema.actions import DIRECTIONS, Action

coord = st.floats(min_value=0, max_value=4000, allow_nan=False, allow_infinity=False)
sizes = st.tuples(st.integers(16, 4000), st.integers(16, 4000))
words = st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), min_size=1, max_size=20)
# Names the CoaT formatter writes bare (no quotes): trimmed and without trailing punctuation or quotes.
bare = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 _+-]{0,15}[A-Za-z0-9]", fullmatch=True)
keys = st.sampled_from(["enter", "Enter", "tab", "ctrl+a", "space", "pgdn", "escape"])

coat_actions = st.one_of(
    st.builds(lambda x, y: Action("click", point=(x, y)), coord, coord),
    st.builds(lambda x, y: Action("long_press", point=(x, y)), coord, coord),
    st.builds(lambda d: Action("scroll", direction=d), st.sampled_from(DIRECTIONS)),
    st.builds(lambda t: Action("type", text=t), st.text(max_size=40)),
    st.builds(lambda k: Action("press", key=k), keys),
    st.builds(lambda t: Action("navigate", target=t), st.sampled_from(["back", "home"])),
    st.builds(lambda a: Action("open_app", app=a), bare),
    st.just(Action("wait")),
    st.builds(lambda a: Action("stop", answer=a), st.none() | words),
)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    for result in (
        parse_gui_r1(text, NORM_1000, (100, 200)),
        parse_gui_r1(text, NORM_1000, None),
        coat_action(text, text, NORM_1000, (100, 200)),
    ):
        assert result.ok or result.error is not None
    decision = parse_coat_decision(text)
    assert decision.ok or decision.error is not None
    box = parse_box(text, NORM_1000, (100, 200))
    assert box.ok or box.error is not None


@given(st.one_of(st.none(), st.integers(), st.binary(), st.lists(st.integers())))
def test_non_text_never_raises(value: object) -> None:
    assert parse_coat_decision(value).error is not None
    assert parse_box(value).error is not None
    assert not parse_gui_r1(value).ok


@settings(max_examples=200, deadline=None)
@given(coat_actions, sizes)
def test_coat_formatter_round_trips(action: Action, size: tuple[int, int]) -> None:
    decision, grounding = format_coat(action, NORM_1000, size)
    back = coat_action(decision, grounding, NORM_1000, size)
    assert back.ok, (decision, grounding, back.error)
    (got,) = back.actions
    if action.point is None:
        assert got == action
    else:
        # The 0-1000 integer frame rounds to half a frame unit: width / 1000 / 2 pixels per axis.
        assert got.type == action.type
        assert abs(got.point[0] - action.point[0]) <= size[0] / 2000 + 1e-9
        assert abs(got.point[1] - action.point[1]) <= size[1] / 2000 + 1e-9


@settings(max_examples=100, deadline=None)
@given(coat_actions)
def test_coat_formatter_round_trips_exactly_in_pixels(action: Action) -> None:
    decision, grounding = format_coat(action, PIXELS)
    assert coat_action(decision, grounding, PIXELS).actions == (action,)


@settings(max_examples=200, deadline=None)
@given(
    st.builds(lambda x, y: Action("click", point=(x, y)), coord, coord),
    sizes,
    st.sampled_from([NORM_1, NORM_1000]),
)
def test_gui_r1_in_a_normalised_frame_round_trips(
    action: Action, size: tuple[int, int], frame: CoordinateFrame
) -> None:
    import json

    entry = format_gui_r1_in_frame(action, frame, size)
    back = parse_gui_r1(f"<answer>{json.dumps([entry])}</answer>", frame, size)
    assert back.ok
    tol = 0.5 / 1000 if frame.integer else 1e-9
    assert math.isclose(back.action.point[0], action.point[0], abs_tol=tol * size[0] + 1e-6)
    assert math.isclose(back.action.point[1], action.point[1], abs_tol=tol * size[1] + 1e-6)


def test_gui_r1_pixels_delegates_to_the_shared_parser() -> None:
    action = Action.type_text("hello")
    assert parse_gui_r1(format_gui_r1(action, think="x")).actions == (action,)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click Search", ("click", "Search")),
        ("Action: click the cart icon.", ("click", "the cart icon")),
        ("tap 'OK'", ("click", "OK")),
        ("I should scroll down to see more.", Action.scroll("down")),
        ('type "new york"', Action.type_text("new york")),
        ("type “milk”", Action.type_text("milk")),
        ("press Back", Action.navigate("back")),
        ("press home", Action.navigate("home")),
        ("press Enter", Action.press("Enter")),
        ("stop", Action.stop()),
        ('The task is complete. stop "42"', Action.stop(answer="42")),
        ("Thought: the list is long.\nAction: scroll up", Action.scroll("up")),
    ],
)
def test_coat_decisions(text: str, expected: object) -> None:
    decision = parse_coat_decision(text)
    assert decision.ok, decision.error
    if isinstance(expected, Action):
        assert decision.action == expected
    else:
        assert (decision.action_type, decision.target) == expected
        assert decision.needs_grounding


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty"),
        ("hmm, not sure", "unknown_action"),
        ("scroll", "missing_argument"),
        ("press", "missing_argument"),
    ],
)
def test_coat_errors_are_structured(text: str, code: str) -> None:
    assert parse_coat_decision(text).error.code == code


def test_grounding_box_on_the_1000_scale_converts_to_pixels() -> None:
    box = parse_box("<|box_start|>(100,200),(300,400)<|box_end|>", NORM_1000, (1080, 2400))
    assert box.box == pytest.approx((108.0, 480.0, 324.0, 960.0))
    assert box.center == pytest.approx((216.0, 720.0))
    # Corners in the wrong order are reordered; a bare point is a zero-size box; [x1,y1,x2,y2] works.
    assert parse_box("(300,400),(100,200)", PIXELS).box == (100, 200, 300, 400)
    assert parse_box("(5, 6)", PIXELS).box == (5, 6, 5, 6)
    assert parse_box("[1, 2, 3, 4]", PIXELS).box == (1, 2, 3, 4)
    assert parse_box("(1,2),(3,4)", NORM_1000).error.code == "no_screen_size"
    assert parse_box("no box here", NORM_1000, (10, 10)).error.code == "no_box"
    assert (
        format_box((108, 480, 324, 960), NORM_1000, (1080, 2400))
        == "<|box_start|>(100,200),(300,400)<|box_end|>"
    )


def test_coat_click_lands_at_the_box_centre() -> None:
    result = coat_action("click Search", "<|box_start|>(0,0),(500,500)<|box_end|>", NORM_1000, (200, 100))
    assert result.actions == (Action.click(50.0, 25.0),)
    assert coat_action("click Search", "nothing", NORM_1000, (200, 100)).error.code == "no_box"


def test_coordinate_frames() -> None:
    assert NORM_1000.to_pixels((500, 250), (1920, 1080)) == (960.0, 270.0)
    assert NORM_1000.from_pixels((960, 270), (1920, 1080)) == (500.0, 250.0)
    assert NORM_1.to_pixels((0.5, 0.5), (100, 50)) == (50.0, 25.0)
    assert PIXELS.to_pixels((3, 4), None) == (3.0, 4.0)
    with pytest.raises(CoordinateFrameError, match="screen_size"):
        NORM_1000.to_pixels((1, 2), None)
    with pytest.raises(ValueError):
        CoordinateFrame(0)
    assert (
        parse_gui_r1('[{"action": "click", "point": [500, 500]}]', NORM_1000, None).error.code
        == "no_screen_size"
    )


@pytest.mark.parametrize(
    "text",
    [
        "*" * 99_999,  # "[ *]*" then "\**" in the line-verb pattern: 3,000 stars took 4.7 s
        "<|box_start|>" * 7_692,  # a lazy <|box_start|>(.*?)<|box_end|> from every opener: quadratic
        "action" + " " * 99_990,
        "action" + " *" * 49_990,
        "(1" + " " * 99_990,
        "(1," * 33_333,
        "[1," * 33_333,
    ],
    ids=["stars", "box-start", "action-blanks", "action-stars", "pair-blanks", "pairs", "list-prefix"],
)
def test_parsers_are_linear_on_adversarial_text(text: str) -> None:
    for parse in (
        lambda t: parse_gui_r1(t, NORM_1000, (100, 200)),
        parse_coat_decision,
        lambda t: parse_box(t, NORM_1000, (100, 200)),
        lambda t: coat_action(t, t, NORM_1000, (100, 200)),
    ):
        start = time.process_time()  # CPU time: other processes on a loaded machine do not count
        result = parse(text)
        assert time.process_time() - start < 1.0
        assert result.error is not None


def test_text_over_the_cap_is_refused() -> None:
    text = "click the button " * 10_000
    assert parse_coat_decision(text).error.code == "too_long"
    assert parse_box("(1, 2) " * 20_000).error.code == "too_long"
    assert parse_gui_r1("{" * 1_000_000).error.code == "too_long"
    # Markdown around the decision still parses with the linear pattern.
    assert parse_coat_decision("**Action:** click the cart icon").target == "the cart icon"
    assert parse_box("<|box_start|>(1,2),(3,4)<|box_end|>", PIXELS).box == (1.0, 2.0, 3.0, 4.0)
