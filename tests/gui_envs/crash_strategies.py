"""Hypothesis strategies for hostile agents: valid and invalid actions in every form ``step`` accepts.

Shared by the web and phone crash-proof tests. Durations stay under 0.2 s (or are invalid), so a drawn
``wait`` or ``long_press`` cannot make the test slow; everything else ranges from sensible to absurd.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from gui_envs.schema.actions import ACTION_TYPES, MAX_SCROLL_AMOUNT, Action

_HUGE_INT = 10**400  # float(_HUGE_INT) raises OverflowError
_KEYS = ["enter", "tab", "ctrl+a", "backspace", "nosuchkey", "a", "F5", "shift+shift+x", ""]
_DIRECTIONS = ["up", "down", "left", "right"]

# Any JSON-ish value, including the numbers that break naive code.
_junk_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.just(_HUGE_INT),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.lists(st.integers(min_value=-(10**6), max_value=10**6), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
_short_duration = st.one_of(
    st.floats(min_value=0, max_value=0.2), st.just(float("nan")), st.just(-1.0), st.just(_HUGE_INT)
)


def _coord(limit: int, absurd: bool = True) -> st.SearchStrategy[float]:
    """On-screen, off-screen and (with ``absurd``) out-of-range coordinates, in pixels."""
    extremes = [5e5, -5e5, float(limit), 0.0] + ([-1e308, 1e308] if absurd else [])
    return st.one_of(st.floats(min_value=-50, max_value=limit + 50), st.sampled_from(extremes))


def _point(width: int, height: int, absurd: bool = True) -> st.SearchStrategy[tuple[float, float]]:
    return st.tuples(_coord(width, absurd), _coord(height, absurd))


def _valid_actions(width: int, height: int) -> st.SearchStrategy[Action]:
    """Actions that pass the Action validator (an ``Action`` cannot hold an out-of-range field), with
    arguments from sensible to far off-screen; the absurd values travel as dicts and text."""
    point = _point(width, height, absurd=False)
    text = st.one_of(st.text(max_size=40), st.text(alphabet="ab \n", min_size=300, max_size=600))
    element_id = st.one_of(st.integers(0, 60).map(str), st.text(max_size=8))
    return st.one_of(
        st.builds(lambda p, t: Action(type=t, point=p), point, st.sampled_from(["click", "double_click", "hover"])),
        st.builds(Action.click_element, element_id),
        st.builds(lambda t, e: Action.type_text(t or "x", element_id=e), text, st.one_of(st.none(), element_id)),
        st.builds(
            lambda d, a: Action.scroll(d, a),
            st.sampled_from(_DIRECTIONS),
            st.one_of(st.none(), st.floats(min_value=0, max_value=MAX_SCROLL_AMOUNT)),
        ),
        st.builds(lambda p, q: Action(type="swipe", point=p, end_point=q), point, point),
        st.builds(lambda p, d: Action(type="swipe", point=p, direction=d), point, st.sampled_from(_DIRECTIONS)),
        st.builds(Action.press, st.sampled_from(_KEYS).filter(bool)),
        st.sampled_from([Action.navigate("back"), Action.navigate("forward"), Action.navigate("home")]),
        st.builds(
            lambda u: Action.navigate("url", url=u),
            st.one_of(st.text(max_size=30).map(lambda s: "/" + s), st.sampled_from(["https://example.com/", "x"])),
        ),
        st.builds(lambda d: Action(type="wait", duration=d), st.floats(min_value=0, max_value=0.2)),
        st.builds(
            lambda p, d: Action(type="long_press", point=p, duration=d), point, st.floats(min_value=0, max_value=0.2)
        ),
        st.builds(lambda a: Action(type="open_app", app=a), st.sampled_from(["Clock", "Notes", "nope", "com.x.y"])),
        st.builds(lambda a: Action.stop(answer=a), st.one_of(st.none(), st.text(max_size=20))),
    )


def _action_dicts(width: int, height: int) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts shaped like actions, with any field holding any value."""
    field = st.one_of(_junk_value, _point(width, height).map(list))
    return st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(ACTION_TYPES), st.text(max_size=8))},
        optional={
            "point": field,
            "end_point": field,
            "element_id": _junk_value,
            "text": _junk_value,
            "direction": st.one_of(st.sampled_from(_DIRECTIONS), _junk_value),
            "amount": _junk_value,
            "key": _junk_value,
            "target": st.one_of(st.sampled_from(["back", "forward", "home", "url"]), _junk_value),
            "url": _junk_value,
            "duration": _short_duration,
            "answer": _junk_value,
            "status": _junk_value,
            "app": _junk_value,
        },
    )


def _json_text(value: Any) -> str:
    return json.dumps(value, default=str)


def hostile_actions(width: int, height: int) -> st.SearchStrategy[Any]:
    """Anything an agent might hand ``step``: Actions, dicts, JSON text, GUI-R1 text (model output, which the env refuses) and plain junk."""
    dicts = _action_dicts(width, height)
    gui_r1 = st.builds(
        lambda a, p, t: f'<answer>[{{"action": {json.dumps(a)}, "point": {json.dumps(p)}, "input_text": {json.dumps(t)}}}]</answer>',
        st.sampled_from(["click", "type", "scroll", "swipe", "press", "fly"]),
        st.one_of(_point(width, height).map(list), st.just([_HUGE_INT, 1])),
        st.text(max_size=20),
    )
    return st.one_of(
        _valid_actions(width, height),
        dicts,
        dicts.map(_json_text),
        gui_r1,
        _junk_value,
        st.binary(max_size=40),
        st.text(max_size=60),
    )
