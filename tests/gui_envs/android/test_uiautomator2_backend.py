"""UiAutomator2Backend against a replay fake: reads, inputs, errors with the serial, retries, timeouts."""

from __future__ import annotations

import numpy as np
import pytest

from gui_envs.android.backend import DeviceError
from gui_envs.android.env import GuiAndroidEnv
from gui_envs.android.hierarchy import parse_hierarchy
from gui_envs.android.uiautomator2_backend import UiAutomator2Backend
from gui_envs.schema.actions import Action
from tests.gui_envs.android.conftest import FIXTURES
from tests.gui_envs.android.fake_u2 import DeviceGone, ReplayDevice, recorded_frames

SERIAL = "emulator-5554"


@pytest.fixture()
def device() -> ReplayDevice:
    return ReplayDevice(SERIAL, recorded_frames(FIXTURES))


def backend_for(device: ReplayDevice, **kwargs: object) -> UiAutomator2Backend:
    def connect(serial: str) -> ReplayDevice:
        if not device.connected:
            raise DeviceGone(f"device '{serial}' not found")
        return device

    return UiAutomator2Backend(SERIAL, connect=connect, **kwargs)  # type: ignore[arg-type]


def test_reads_replay_the_recording(device: ReplayDevice) -> None:
    b = backend_for(device)
    assert b.window_size() == (1080, 2400)
    assert b.app_current() == ("com.google.android.deskclock", "com.android.deskclock.DeskClock")
    shot = b.screenshot()
    assert shot.shape == (2400, 1080, 3) and shot.dtype == np.uint8
    assert b.screenshot(scale=1 / 3).shape == (800, 360, 3)
    elements = parse_hierarchy(b.hierarchy())
    assert any(el.content_desc == "Add alarm" for el in elements)


def test_inputs_reach_the_device_in_device_pixels(device: ReplayDevice) -> None:
    b = backend_for(device)
    b.click(900.4, 545.6)
    b.long_click(10, 20, 1.0)
    b.swipe(540, 1800, 540, 600, 0.3)
    b.press("back")
    b.app_start("com.android.settings")
    assert device.calls == [
        ("click", 900, 546),
        ("long_click", 10, 20, 1.0),
        ("swipe", 540, 1800, 540, 600, 0.3),
        ("press", "back"),
        ("app_start", "com.android.settings"),
    ]
    with pytest.raises(ValueError, match="unknown key"):
        b.press("volume_up")


def test_send_keys_needs_a_focused_field(device: ReplayDevice) -> None:
    b = backend_for(device)
    assert b.send_keys("hello") is False  # nothing is focused in the recording
    assert not any(c[0] == "send_keys" for c in device.calls)
    xml, image = device.frames[0]
    device.frames[0] = (
        xml.replace(
            'class="android.widget.TextView" package="com.google.android.deskclock" content-desc="" '
            'checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false"',
            'class="android.widget.EditText" package="com.google.android.deskclock" content-desc="" '
            'checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true"',
            1,
        ),
        image,
    )
    assert b.send_keys("Gym", clear=True) is True
    assert device.calls[-1] == ("send_keys", "Gym", True)


def test_disconnect_raises_device_error_with_the_serial(device: ReplayDevice) -> None:
    b = backend_for(device, retries=1)
    device.connected = False
    for call in (b.hierarchy, b.screenshot, b.app_current, lambda: b.click(1, 2)):
        with pytest.raises(DeviceError, match=SERIAL) as info:
            call()
        assert info.value.serial == SERIAL


def test_connect_failure_names_the_serial(device: ReplayDevice) -> None:
    device.connected = False
    with pytest.raises(DeviceError, match=f"device {SERIAL}: connect failed"):
        backend_for(device)


def test_reads_are_retried_but_taps_are_not(device: ReplayDevice) -> None:
    b = backend_for(device, retries=2)
    device.fail_reads = 2  # two flaky answers, then the server is back
    assert "<hierarchy" in b.hierarchy()
    clicks_before = len(device.calls)

    def flaky_click(x: int, y: int) -> None:
        device.calls.append(("click", x, y))
        raise ConnectionResetError("uiautomator server closed the connection")

    device.click = flaky_click  # type: ignore[method-assign]
    with pytest.raises(DeviceError, match=f"{SERIAL}.*click failed"):
        b.click(5, 5)
    assert len(device.calls) == clicks_before + 1  # tried exactly once


def test_a_hung_call_times_out(device: ReplayDevice) -> None:
    b = backend_for(device, timeout_s=0.3, retries=0)
    device.hang_s = 1.0
    with pytest.raises(DeviceError, match=f"{SERIAL}.*timed out"):
        b.hierarchy()
    device.hang_s = 0.0


def test_env_on_the_device_backend(device: ReplayDevice) -> None:
    """The env drives a device: screenshot pixels map to device pixels; tasks cannot be judged there."""
    env = GuiAndroidEnv(backend=backend_for(device), instruction="Turn off the 7:30 AM alarm")
    obs, info = env.reset(seed=0)
    assert obs["screenshot"].shape == (800, 360, 3)
    assert obs["app"] == "com.google.android.deskclock" and obs["instruction"].startswith("Turn off")
    assert info["task"] is None and env.privileged()["target_bbox"] is None
    switch = next(el for el in parse_hierarchy(device.frames[0][0]) if el.role == "Switch")
    x0, y0, x1, y1 = (v / 3 for v in switch.bbox)
    _, reward, terminated, _, info = env.step(Action.click((x0 + x1) / 2, (y0 + y1) / 2))
    assert device.calls[-1][0] == "click" and abs(device.calls[-1][1] - switch.center[0]) <= 2
    assert info["action_error"] is None and not terminated and reward == 0.0
    _, reward, terminated, _, info = env.step(Action.stop())
    assert terminated and reward == 0.0 and info["success"] is False
    env.close()
