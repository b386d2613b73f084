"""A fake uiautomator2 device that replays recorded hierarchy XML and screenshots.

It answers the slice of ``uiautomator2.Device`` that :class:`UiAutomator2Backend` uses, records every input,
and can be told to disconnect (every call then fails as adb does when the device is gone) or to hang.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PIL import Image


class DeviceGone(Exception):
    """What adbutils raises for a vanished device (``adbutils.AdbError`` in real life)."""


class ReplayDevice:
    """Replays ``frames`` (hierarchy XML, screenshot) in order: each input advances to the next frame."""

    def __init__(
        self, serial: str, frames: list[tuple[str, Image.Image]], size: tuple[int, int] = (1080, 2400)
    ):
        self.serial, self.frames, self.size = serial, frames, size
        self.frame = 0
        self.calls: list[tuple[Any, ...]] = []
        self.connected = True
        self.hang_s = 0.0
        self.fail_reads = 0  # the next N reads fail once each (a flaky uiautomator server)
        self.current = ("com.google.android.deskclock", "com.android.deskclock.DeskClock")

    # ----- faults ---------------------------------------------------------------------------------------------
    def _check(self, read: bool = False) -> None:
        if self.hang_s:
            time.sleep(self.hang_s)
        if not self.connected:
            raise DeviceGone(f"device '{self.serial}' not found")
        if read and self.fail_reads:
            self.fail_reads -= 1
            raise ConnectionResetError("uiautomator server closed the connection")

    def _advance(self, *call: Any) -> None:
        self._check()
        self.calls.append(call)
        self.frame = min(self.frame + 1, len(self.frames) - 1)

    # ----- reads ----------------------------------------------------------------------------------------------
    def dump_hierarchy(self, compressed: bool = False, pretty: bool = False) -> str:
        self._check(read=True)
        return self.frames[self.frame][0]

    def screenshot(self, format: str = "pillow") -> Image.Image:  # noqa: A002 - uiautomator2's name
        self._check(read=True)
        return self.frames[self.frame][1].copy()

    def app_current(self) -> dict[str, Any]:
        self._check(read=True)
        return {"package": self.current[0], "activity": self.current[1], "pid": 4242}

    def window_size(self) -> tuple[int, int]:
        self._check(read=True)
        return self.size

    def app_list(self) -> list[str]:
        self._check(read=True)
        return ["com.google.android.deskclock", "com.android.settings"]

    # ----- inputs ---------------------------------------------------------------------------------------------
    def click(self, x: int, y: int) -> None:
        self._advance("click", x, y)

    def long_click(self, x: int, y: int, duration: float = 0.5) -> None:
        self._advance("long_click", x, y, duration)

    def swipe(self, fx: int, fy: int, tx: int, ty: int, duration: float | None = None) -> None:
        self._advance("swipe", fx, fy, tx, ty, duration)

    def send_keys(self, text: str, clear: bool = False) -> None:
        self._advance("send_keys", text, clear)

    def press(self, key: str) -> None:
        self._advance("press", key)

    def app_start(self, package: str, activity: str | None = None, wait: bool = False) -> None:
        self._advance("app_start", package)
        self.current = (package, ".MainActivity")


def recorded_frames(fixtures: Path) -> list[tuple[str, Image.Image]]:
    """The recorded Clock screen, then the same screen with the first alarm's switch flipped off."""
    xml = (fixtures / "deskclock_alarms.xml").read_text()
    image = Image.open(fixtures / "deskclock_alarms.jpg").convert("RGB")
    flipped = xml.replace(
        'checked="true" clickable="true" enabled="true" focusable="true" focused="false"',
        'checked="false" clickable="true" enabled="true" focusable="true" focused="false"',
        1,
    )
    return [(xml, image), (flipped, image)]
