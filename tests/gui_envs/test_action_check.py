"""The executors' argument check: wrong types, absurd numbers and over-long text are errors, never raises."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from gui_envs.action_check import MAX_COORD, MAX_TYPE_CHARS, argument_error, checked_action
from gui_envs.actions import Action
from tests.gui_envs.crash_strategies import hostile_actions


@pytest.mark.parametrize(
    ("action", "expect"),
    [
        (Action(type="type", text=5), "text must be a string"),  # type: ignore[arg-type]
        (Action(type="navigate", target="url", url=5), "url must be a string"),  # type: ignore[arg-type]
        (Action(type="stop", answer=5), "answer must be a string"),  # type: ignore[arg-type]
        (Action.click(MAX_COORD * 2, 1), "not a point on the screen"),
        (Action(type="swipe", point=(1, 1), end_point=(1e308, 0)), "end_point"),
        (Action.type_text("x" * (MAX_TYPE_CHARS + 1)), f"at most {MAX_TYPE_CHARS}"),
    ],
)
def test_argument_error_names_the_problem(action: Action, expect: str) -> None:
    assert expect in (argument_error(action) or "")


@pytest.mark.parametrize(
    "action",
    [
        Action.click(MAX_COORD, 0),
        Action.type_text("x" * MAX_TYPE_CHARS),
        Action.scroll("down", 1e300),  # executors clamp the amount; it is a number, so not an error
        Action.stop(answer="42"),
    ],
)
def test_argument_error_accepts_valid_actions(action: Action) -> None:
    assert argument_error(action) is None


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "click", "point": [10**400, 5]},
        {"type": "wait", "duration": 10**400},
        {"type": "scroll", "direction": "down", "amount": 10**400},
        '{"type": "click", "point": [1e400, 5]}',
        {"type": "navigate", "target": "url", "url": 5},
        {"type": "stop", "answer": 5},
        {"type": "type", "text": 5},
    ],
)
def test_checked_action_turns_hostile_input_into_an_error(raw: Any) -> None:
    parsed, error = checked_action(raw)
    assert parsed is None and error and error.startswith("malformed action")


@settings(max_examples=300, deadline=None)
@given(hostile_actions(1280, 720))
def test_checked_action_never_raises(raw: Any) -> None:
    parsed, error = checked_action(raw)
    assert (parsed is None) == bool(error)  # exactly one of an action and a reason
    if parsed is not None:
        assert argument_error(parsed) is None
