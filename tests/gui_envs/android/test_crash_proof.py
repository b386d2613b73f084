"""No action crashes a GuiAndroid step on the simulated phone (issue 9, point 4), and the device backend's
own bounds (uiautomator2 against the replay fake).

As on the web: ``step`` returns, the agent's mistake is an ``action_error`` no-op, and the phone's Chromium
lives (same PID, and the next step works).
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gui_envs.android.apps.expenses import Expenses
from gui_envs.android.backend import DeviceActionError
from gui_envs.android.env import GuiAndroidEnv
from gui_envs.android.tasks import TASKS
from gui_envs.android.uiautomator2_backend import SEND_CHUNK, UiAutomator2Backend
from gui_envs.browser.site import Request, Response, SiteState
from gui_envs.schema.actions import MAX_SCROLL_AMOUNT, Action
from tests.gui_envs.android.conftest import FIXTURES
from tests.gui_envs.android.fake_u2 import ReplayDevice, recorded_frames
from tests.gui_envs.crash_strategies import hostile_actions

HUGE_ID = "1234567890123456789012345"


def _still_works(env: GuiAndroidEnv, pid: int | None) -> None:
    assert env.backend.browser_pid == pid  # type: ignore[attr-defined]
    _, _, _, _, info = env.step(Action.navigate("home"))
    assert info["action_error"] is None and info["app"] == "com.guigym.launcher"


def test_huge_numbers_are_a_4xx_page_in_a_phone_app() -> None:
    state = SiteState(Expenses())
    state.restore(0)
    assert state.handle(Request("GET", f"/expense/{HUGE_ID}")).status in (400, 404)
    assert state.handle(Request("GET", f"/account/{HUGE_ID}")).status in (400, 404)
    aid = state.one("SELECT id FROM accounts ORDER BY id")[0]
    form = {"name": "Tea", "amount": HUGE_ID, "category": "Food"}
    assert state.handle(Request("POST", f"/account/{aid}/new", form=form)).status == 400


def test_an_app_bug_is_a_500_page_listed_in_info(android_env: GuiAndroidEnv, monkeypatch: Any) -> None:
    android_env.reset(options={"task": "notes.create_note", "seed": 0})
    pid = android_env.backend.browser_pid  # type: ignore[attr-defined]

    def broken(db: sqlite3.Connection, request: Request) -> Response:
        raise RuntimeError(f"bug on {request.path}")

    notes = android_env.backend.states["com.guigym.notes"]  # type: ignore[attr-defined]
    monkeypatch.setattr(notes.site, "serve", broken)
    start = time.monotonic()
    _, _, _, _, info = android_env.step(Action(type="open_app", app="Notes"))
    assert time.monotonic() - start < 10
    assert info["action_error"] is None
    assert any("RuntimeError: bug on /" in line for line in info["server_errors"])
    monkeypatch.undo()
    _still_works(android_env, pid)
    assert android_env.step(Action.navigate("home"))[4]["server_errors"] == []


def test_8kb_of_typed_text_fits_the_call_time_out(android_env: GuiAndroidEnv) -> None:
    android_env.reset(options={"task": "notes.create_note", "seed": 0})
    pid = android_env.backend.browser_pid  # type: ignore[attr-defined]
    action = android_env.oracle_action()
    for _ in range(10):  # play the oracle up to its first typing step, then type 8 KB instead
        if action.type == "type":
            break
        android_env.step(action)
        action = android_env.oracle_action()
    assert action.type == "type"
    text = ("lorem ipsum " * 700)[:8192]
    start = time.monotonic()
    _, _, _, _, info = android_env.step(Action(type="type", text=text, point=action.point, element_id=action.element_id))
    elapsed = time.monotonic() - start
    assert info["action_error"] is None and elapsed < android_env.backend.timeout_s / 2, elapsed  # type: ignore[attr-defined]
    _still_works(android_env, pid)


@pytest.mark.parametrize(
    ("action", "expect"),
    [
        ({"type": "swipe", "point": [100, 100], "end_point": [1e308, 1e308]}, "end_point"),
        ({"type": "click", "point": [10**400, 5]}, "malformed"),
        ({"type": "navigate", "target": "url", "url": 5}, "url must be a string"),
        ({"type": "stop", "answer": 5}, "answer must be a string"),
        ({"type": "type", "text": 5}, "text must be a string"),
    ],
)
def test_hostile_arguments_are_action_errors(android_env: GuiAndroidEnv, action: Any, expect: str) -> None:
    android_env.reset(options={"task": "notes.read_note", "seed": 0})
    pid = android_env.backend.browser_pid  # type: ignore[attr-defined]
    _, reward, terminated, _, info = android_env.step(action)
    assert expect in (info["action_error"] or ""), info["action_error"]
    assert reward < 0 and not terminated
    _still_works(android_env, pid)


def test_a_swipe_or_scroll_past_the_edge_is_clamped(android_env: GuiAndroidEnv) -> None:
    android_env.reset(options={"task": "contacts.phone_number", "seed": 0})
    pid = android_env.backend.browser_pid  # type: ignore[attr-defined]
    android_env.step(Action(type="open_app", app="Contacts"))
    for action in (
        Action(type="swipe", point=(180, 400), end_point=(9e5, -9e5)),
        Action.scroll("down", MAX_SCROLL_AMOUNT),  # the largest scroll an Action holds; the phone clamps it
        Action(type="long_press", point=(180, 400), duration=0.1),
    ):
        _, _, _, _, info = android_env.step(action)
        assert info["action_error"] is None, (action, info["action_error"])
    _still_works(android_env, pid)


# Every template can be drawn; derandomize keeps the drawn set the same on every run.
_PHONE_TASKS = sorted(TASKS)


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(task=st.sampled_from(_PHONE_TASKS), actions=st.lists(hostile_actions(360, 800), min_size=1, max_size=3))
def test_no_action_escapes_step(android_env: GuiAndroidEnv, task: str, actions: list[Any]) -> None:
    android_env.reset(options={"task": task, "seed": 1})
    pid = android_env.backend.browser_pid  # type: ignore[attr-defined]
    for action in actions:
        _, reward, terminated, truncated, info = android_env.step(action)
        assert isinstance(reward, float) and "action_error" in info
        if terminated or truncated:
            android_env.reset(options={"task": task, "seed": 1})
    _still_works(android_env, pid)
    json.dumps(android_env.step(Action(type="wait", duration=0))[4])


# ----- the device backend's own bounds ----------------------------------------------------------------------


def _u2(device: ReplayDevice) -> UiAutomator2Backend:
    return UiAutomator2Backend("emulator-5554", connect=lambda _s: device)


def test_u2_touches_are_clamped_to_the_screen() -> None:
    device = ReplayDevice("emulator-5554", recorded_frames(FIXTURES))
    b = _u2(device)
    b.click(1e308, -1e308)
    b.swipe(540, 1200, 1e308, 1e308, duration=1e308)
    b.long_click(-5, 5, duration=-1)
    assert device.calls == [
        ("click", 1079, 0),
        ("swipe", 540, 1200, 1079, 2399, 5.0),
        ("long_click", 0, 5, 0.0),
    ]
    with pytest.raises(DeviceActionError, match="finite"):
        b.click(float("nan"), 3)


def test_u2_long_text_is_sent_in_chunks() -> None:
    device = ReplayDevice("emulator-5554", recorded_frames(FIXTURES))
    xml, image = device.frames[0]
    focused = xml.replace(  # the first clickable TextView becomes a focused EditText
        'class="android.widget.TextView" package="com.google.android.deskclock" content-desc="" '
        'checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false"',
        'class="android.widget.EditText" package="com.google.android.deskclock" content-desc="" '
        'checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true"',
        1,
    )
    device.frames = [(focused, image)] * 2
    text = "y" * (2 * SEND_CHUNK + 5)
    assert _u2(device).send_keys(text, clear=True) is True
    sent = [c for c in device.calls if c[0] == "send_keys"]
    assert [len(c[1]) for c in sent] == [SEND_CHUNK, SEND_CHUNK, 5]
    assert [c[2] for c in sent] == [True, False, False]  # only the first chunk clears the field
    assert "".join(c[1] for c in sent) == text
