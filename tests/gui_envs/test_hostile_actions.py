"""Hostile agent input reaches no executor: ``coerce_action`` turns it into an error, and never raises.

The crash reproductions of issue 9 (a click at ``10**400``, ``url=5``, ``answer=5``, ``text=5``, a swipe to
``1e308``) at the action layer; ``tests/gui_envs/web|android/test_crash_proof.py`` drive them through the envs.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from gui_envs.schema.actions import MAX_COORDINATE, MAX_TYPED_TEXT, Action, coerce_action
from tests.gui_envs.crash_strategies import hostile_actions


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "click", "point": [10**400, 5]},
        {"type": "click", "point": [MAX_COORDINATE * 2, 5]},
        {"type": "swipe", "point": [1, 1], "end_point": [1e308, 0]},
        {"type": "wait", "duration": 10**400},
        {"type": "scroll", "direction": "down", "amount": 10**400},
        '{"type": "click", "point": [1e400, 5]}',
        {"type": "navigate", "target": "url", "url": 5},
        {"type": "stop", "answer": 5},
        {"type": "type", "text": 5},
        {"type": "type", "text": "x" * (MAX_TYPED_TEXT + 1)},
    ],
)
def test_hostile_input_is_an_error(raw: Any) -> None:
    parsed, error = coerce_action(raw)
    assert parsed is None and error


def test_limits_themselves_are_valid() -> None:
    assert coerce_action(Action.click(MAX_COORDINATE, 0))[0] is not None
    assert coerce_action(Action.type_text("x" * MAX_TYPED_TEXT))[0] is not None


@settings(max_examples=300, deadline=None)
@given(hostile_actions(1280, 720))
def test_coerce_action_never_raises_on_hostile_actions(raw: Any) -> None:
    parsed, error = coerce_action(raw)
    assert (parsed is None) == bool(error)  # exactly one of an action and a reason
