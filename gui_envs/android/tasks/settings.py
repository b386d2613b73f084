"""Settings tasks: radios and display switches, brightness, About phone, and settings the phone lacks."""

from __future__ import annotations

from gui_envs.android.apps.settings import OPTIONAL, Settings, device_info
from gui_envs.android.tasks.base import (
    AnswerTask,
    MaybeMissing,
    PhoneState,
    PlanStep,
    StateTask,
    Target,
    find,
    open_app,
    search_in,
    search_then_give_up,
    stop,
    tap,
)

SETTINGS = Settings.package


def _value(state: PhoneState, key: str) -> int:
    row = state.one(SETTINGS, "SELECT value FROM settings WHERE key = ?", (key,))
    return int(row[0]) if row else -1


class _Toggle(StateTask):
    """Flip one switch to the state the instruction asks for (the seeded state is made the opposite)."""

    app = SETTINGS
    key = ""
    title = ""
    page = ""
    words = ("off", "on")

    def setup(self) -> str:
        self.want = int(self.rng.random() < 0.5)
        self.execute("UPDATE settings SET value = ? WHERE key = ?", (1 - self.want, self.key))
        # Every other setting is guarded: switching Wi-Fi when asked for Bluetooth is a side effect.
        self.may_edit("settings", self.rowid("settings", "key = ?", (self.key,)), "value")
        return f"Turn {self.words[self.want]} {self.title}."

    def done(self) -> bool:
        return _value(self.state, self.key) == self.want

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Settings"),
            tap(self.page, rid="dashboard_tile", contains=True),
            tap(self.title, role="Switch"),
        ]


class WifiToggle(_Toggle):
    name = "settings.wifi"
    key, title, page = "wifi", "Wi-Fi", "Network & internet"


class BluetoothToggle(_Toggle):
    name = "settings.bluetooth"
    key, title, page = "bluetooth", "Bluetooth", "Connected devices"


class AirplaneToggle(_Toggle):
    name = "settings.airplane_mode"
    key, title, page = "airplane", "Airplane mode", "Network & internet"


class DarkThemeToggle(_Toggle):
    name = "settings.dark_theme"
    key, title, page = "dark_mode", "Dark theme", "Display"


class AdaptiveBrightnessToggle(_Toggle):
    name = "settings.adaptive_brightness"
    key, title, page = "adaptive", "Adaptive brightness", "Display"


class WifiViaSearch(_Toggle):
    """Reach a setting through the settings search instead of the menus."""

    name = "settings.search_bluetooth"
    key, title, page = "bluetooth", "Bluetooth", "Connected devices"

    def setup(self) -> str:
        super().setup()
        return f"Use the search in Settings to find Bluetooth and turn it {self.words[self.want]}."

    def done(self) -> bool:
        searched = any(
            "bluetooth" in q.lower() for (q,) in self.state.rows(SETTINGS, "SELECT query FROM searches")
        )
        return searched and super().done()

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *search_in("Settings", "Bluetooth"),
            tap("Bluetooth", rid="search_result", contains=True),
            tap("Bluetooth", role="Switch"),
        ]


class Brightness(StateTask):
    name = "settings.brightness"
    app = SETTINGS

    def setup(self) -> str:
        self.level = int(self.rng.choice([0, 25, 50, 75, 100]))
        current = _value(self.state, "brightness")
        if abs(current - self.level) <= 10:
            self.execute("UPDATE settings SET value = ? WHERE key = 'brightness'", ((self.level + 50) % 100,))
        self.may_edit("settings", self.rowid("settings", "key = 'brightness'"), "value")
        words = {0: "the minimum", 100: "the maximum"}.get(self.level, f"about {self.level}%")
        return f"Set the screen brightness to {words}."

    def done(self) -> bool:
        tolerance = 2 if self.level in (0, 100) else 8
        return abs(_value(self.state, "brightness") - self.level) <= tolerance

    def oracle_plan(self) -> list[PlanStep]:
        # Tapping a seek bar moves its thumb there; the ends are tapped just inside the track.
        fx = min(max(self.level / 100, 0.005), 0.995)
        return [
            open_app("Settings"),
            tap("Display", rid="dashboard_tile", contains=True),
            Target(find(role="SeekBar"), "brightness seek bar", fx=fx),
        ]


class AndroidVersion(AnswerTask):
    name = "settings.android_version"
    app = SETTINGS

    def setup(self) -> str:
        device = device_info(self.state.db(SETTINGS))
        if self.rng.random() < 0.5:
            self.reference_answer = device["android_version"]
            return "Which Android version is this phone running?"
        self.reference_answer = device["model"]
        return "What is this phone's device name, as shown in About phone?"

    def candidates(self) -> list[str]:
        # A phone has one version and one name: on this seed's data the answer is one of the two. Both are
        # drawn per seed (apps.settings), so no constant passes more than half of one pool's share.
        device = device_info(self.state.db(SETTINGS))
        return [device["android_version"], device["model"]]

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Settings"),
            tap("About phone", rid="dashboard_tile", contains=True),
            stop(answer=self.reference_answer),
        ]


class TurnOnSetting(MaybeMissing, StateTask):
    """Turn on a switch that some phones lack (NFC, Mobile hotspot, Night light): feasible on about half the
    seeds, on the others this phone has no such switch (issue 36)."""

    name = "settings.turn_on_setting"
    app = SETTINGS

    def setup(self) -> str:
        self.key = str(self.pick(sorted(OPTIONAL)))
        self.missing, self.page = OPTIONAL[self.key]
        row = self.rowid("settings", "key = ?", (self.key,))
        if self.draw_feasible():
            self.may_edit("settings", row, "value")
        else:
            self.execute("DELETE FROM settings WHERE key = ?", (self.key,))
        return f"Turn on {self.missing} in Settings."

    def alternatives(self) -> list[str]:
        return [title for title, _ in OPTIONAL.values()]

    def done(self) -> bool:
        return _value(self.state, self.key) == 1

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return search_then_give_up("Settings", self.missing)
        tile = {"/network": "Network & internet", "/devices": "Connected devices", "/display": "Display"}[self.page]
        return [open_app("Settings"), tap(tile, rid="dashboard_tile", contains=True), tap(self.missing, role="Switch")]
