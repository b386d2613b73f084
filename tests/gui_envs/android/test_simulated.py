"""The simulated phone as a device: back stack, home, keyboard, touch, app state, a browser that dies (speed: benchmarks/android_speed.py)."""

from __future__ import annotations

import psutil
import pytest

from gui_envs.android.backend import DeviceError
from gui_envs.android.env import GuiAndroidEnv
from gui_envs.android.hierarchy import UIElement, parse_hierarchy
from gui_envs.android.simulated import LAUNCHER_PACKAGE, SimulatedPhone
from gui_envs.schema.actions import Action


@pytest.fixture()
def phone(android_env: GuiAndroidEnv) -> SimulatedPhone:
    android_env.reset(options={"task": "launcher.open_app", "seed": 0})
    return android_env.backend  # type: ignore[return-value]


def elements(phone: SimulatedPhone) -> list[UIElement]:
    return parse_hierarchy(phone.hierarchy())


def find(phone: SimulatedPhone, label: str) -> UIElement:
    for el in elements(phone):
        if el.label == label or el.label.startswith(label + ","):
            return el
    raise AssertionError(f"{label!r} not on screen: {[e.label for e in elements(phone)]}")


def test_home_screen_and_screen_size(phone: SimulatedPhone) -> None:
    assert phone.window_size() == (1080, 2400)
    assert phone.app_current() == (LAUNCHER_PACKAGE, LAUNCHER_PACKAGE + ".LauncherActivity")
    assert phone.screenshot().shape == (2400, 1080, 3)
    assert phone.screenshot(1 / 3).shape == (800, 360, 3)
    search = find(phone, "Search apps, web and more")
    assert search.role == "EditText" and search.package == LAUNCHER_PACKAGE


def test_back_stack_and_home(phone: SimulatedPhone) -> None:
    phone.click(*find(phone, "Expenses").center)
    assert phone.app_current()[0] == "com.guigym.expenses"
    phone.click(*find(phone, "Pro Expense").center)
    assert phone.app_current()[1].endswith(".ExpenseListActivity")
    phone.click(*find(phone, "Add expense").center)
    assert len(phone.back_stack) == 4
    phone.press("back")
    assert phone.app_current()[1].endswith(".ExpenseListActivity")
    phone.press("back")
    phone.press("back")
    assert phone.app_current()[0] == LAUNCHER_PACKAGE
    phone.press("back")  # back on the home screen stays there
    assert phone.app_current()[0] == LAUNCHER_PACKAGE
    phone.app_start("com.guigym.notes")
    phone.press("home")
    assert phone.back_stack == [phone.apps[LAUNCHER_PACKAGE].origin + "/"]
    with pytest.raises(DeviceError, match="not installed"):
        phone.app_start("com.example.missing")


def test_keyboard_appears_types_and_back_closes_it(phone: SimulatedPhone) -> None:
    assert phone.send_keys("x") is False  # nothing focused
    phone.click(*find(phone, "Search apps, web and more").center)
    keys = [el for el in elements(phone) if el.package == "com.google.android.inputmethod.latin"]
    assert keys and min(k.bbox[1] for k in keys) >= 2400 - 846
    # Tapping soft keys types, as on a phone.
    for letter in "clo":
        phone.click(*find(phone, letter).center)
    assert find(phone, "clo").editable
    assert phone.send_keys("ck") is True
    assert find(phone, "clock").focused
    shown = [el.label for el in elements(phone) if el.resource_id.endswith(":id/app_icon")]
    assert shown == ["Clock"]  # the grid filters as you type
    phone.press("back")  # closes the keyboard first
    assert not any(el.package == "com.google.android.inputmethod.latin" for el in elements(phone))
    assert phone.app_current()[0] == LAUNCHER_PACKAGE
    phone.click(*find(phone, "clock").center)
    phone.press("enter")
    assert phone.states[LAUNCHER_PACKAGE].query("SELECT query, results FROM searches")[-1][:] == ("clock", 1)


def test_swipe_scrolls_and_drags_seek_bars(phone: SimulatedPhone) -> None:
    phone.app_start("com.guigym.recipes")
    first = elements(phone)
    rows = [el for el in first if el.resource_id.endswith(":id/recipe_row")]
    phone.swipe(540, 2000, 540, 900, 0.3)  # finger up: the list scrolls down
    after = [el for el in elements(phone) if el.resource_id.endswith(":id/recipe_row")]
    assert after[-1].label != rows[-1].label or after[0].bbox[1] < rows[0].bbox[1]
    phone.app_start("com.guigym.settings")
    phone.click(*find(phone, "Display").center)
    bar = next(el for el in elements(phone) if el.role == "SeekBar")
    phone.swipe(bar.bbox[0] + 20, bar.center[1], bar.bbox[2] - 2, bar.center[1], 0.3)
    level = phone.states["com.guigym.settings"].one("SELECT value FROM settings WHERE key = 'brightness'")[0]
    assert level >= 95


def test_long_press_opens_the_row_menu(phone: SimulatedPhone) -> None:
    phone.app_start("com.guigym.notes")
    phone.click(*find(phone, "To-do").center)
    item = next(el for el in elements(phone) if el.role == "CheckBox")
    assert item.long_clickable
    phone.long_click(*item.center, duration=0.8)
    assert find(phone, "Delete task").role == "Button"


def test_a_killed_browser_raises_device_error_and_reset_relaunches() -> None:
    env = GuiAndroidEnv(tasks=["settings.wifi"])
    try:
        env.reset(seed=0)
        phone: SimulatedPhone = env.backend  # type: ignore[assignment]
        pid = phone.browser_pid
        assert pid is not None
        browser = psutil.Process(pid)  # one handle: the process may be reaped before a second could be made
        browser.kill()
        browser.wait(10)
        with pytest.raises(DeviceError, match="simulated-phone"):
            for _ in range(3):  # the death may be noticed one call late
                env.step(Action("open_app", app="Settings"))
        obs, _ = env.reset(seed=0)
        assert obs["app"] == LAUNCHER_PACKAGE and phone.browser_pid != pid
        _, _, _, _, info = env.step(Action("open_app", app="Settings"))
        assert info["action_error"] is None
    finally:
        env.close()


def test_dark_theme_is_system_wide(phone: SimulatedPhone) -> None:
    phone.app_start("com.guigym.notes")
    light = phone.screenshot(1 / 3).mean()
    state = phone.states["com.guigym.settings"]
    with state.db:
        state.db.execute("UPDATE settings SET value = 1 WHERE key = 'dark_mode'")
    phone.app_start("com.guigym.notes")
    assert phone.dark_theme and phone.screenshot(1 / 3).mean() < light - 60
