"""``UiAutomator2Backend``: a real Android device or emulator through `uiautomator2`_.

.. _uiautomator2: https://github.com/openatx/uiautomator2

Pointing it at a device::

    # an emulator (its serial is emulator-<console port>, usually emulator-5554)
    emulator -avd Pixel_8_API_34 -no-window -no-snapshot &
    adb wait-for-device && adb devices            # lists emulator-5554
    python -m uiautomator2 init                   # once: installs the uiautomator server on the device

    # a phone over Wi-Fi (Developer options > Wireless debugging, or `adb tcpip 5555` over USB first)
    adb connect 192.168.1.7:5555                  # the serial is then "192.168.1.7:5555"

    env = gym.make("GuiAndroid-v0", backend="uiautomator2", serial="emulator-5554",
                   instruction="Open the Clock app and add an alarm for 7:30")

Errors: every failure of adb or the on-device uiautomator server (device offline, server crashed, HTTP
errors, a call past ``timeout_s``) becomes one :class:`~gui_envs.android.backend.DeviceError` naming the
serial. Reads (screenshot, hierarchy, app_current, window_size) are retried ``retries`` times, reconnecting
between tries; inputs (taps, swipes, keys, typing, app starts) are not, since repeating a tap that may have
landed is not safe.

Arguments are bounded before they reach the device: touch points are clamped to the screen (a non-finite one
is a :class:`~gui_envs.android.backend.DeviceActionError`), press and swipe durations to
:data:`MAX_TOUCH_S` seconds, and text is sent in chunks of :data:`SEND_CHUNK` characters, each call under its
own time limit, so long text cannot overrun one call's time-out.

This path is tested against a replay fake (recorded hierarchy XML and images), not against a device: CI has
no emulator.
"""

from __future__ import annotations

import math
import shutil
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from gui_envs.android.backend import (
    KEYS,
    DeviceActionError,
    DeviceBackend,
    DeviceError,
    DeviceTimeoutError,
    resize_rgb,
)
from gui_envs.android.hierarchy import HierarchyParseError, parse_hierarchy

T = TypeVar("T")

#: Characters per ``send_keys`` call: each call has the full time limit, so long text stays in bounds.
SEND_CHUNK = 1000
#: Longest touch (long press or swipe), in seconds.
MAX_TOUCH_S = 5.0


#: Where the adb server listens; a device can only be connected through a running server.
ADB_SERVER = ("127.0.0.1", 5037)


def adb_server_running(timeout_s: float = 0.5) -> bool:
    """Whether an adb server answers on :data:`ADB_SERVER`."""
    try:
        with socket.create_connection(ADB_SERVER, timeout=timeout_s):
            return True
    except OSError:
        return False


def preflight(serial: str) -> None:
    """Fail in well under a second, with a fix, when ``serial`` cannot be reached (instead of uiautomator2's
    retries, about 10 s).

    Raises:
        DeviceError: adb is not installed and no adb server runs, or the server lists other devices only
            (a ``host:port`` serial is let through: uiautomator2 runs ``adb connect`` for it).
    """
    if not adb_server_running():
        if shutil.which("adb") is None:
            raise DeviceError(
                serial,
                "not connected: adb is not installed and no adb server is running. Install the Android "
                "platform-tools (`apt-get install adb`), start an emulator (`emulator -avd NAME -no-window`) "
                "or `adb connect HOST:PORT`, then check `adb devices`",
            )
        return  # adb is there but idle: uiautomator2 starts the server and finds USB devices itself
    try:
        import adbutils

        listed = [d.serial for d in adbutils.AdbClient(socket_timeout=3).device_list()]
    except Exception:  # noqa: BLE001 - no adbutils, or an odd server: leave the verdict to uiautomator2
        return
    if serial not in listed and ":" not in serial:
        have = ", ".join(listed) if listed else "none"
        raise DeviceError(
            serial,
            f"not connected (adb lists: {have}). Start the emulator or plug the phone in, check `adb devices`, "
            "and pass one of the listed serials",
        )


def _connect(serial: str) -> Any:
    try:
        import uiautomator2
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("the uiautomator2 backend needs `pip install 'guigym[android]'`") from exc
    preflight(serial)
    return uiautomator2.connect(serial)


class UiAutomator2Backend(DeviceBackend):
    """A device or emulator driven by uiautomator2. Coordinates are device pixels.

    Args:
        serial: the adb serial (``emulator-5554``, ``192.168.1.7:5555``, a USB serial).
        timeout_s: time limit of one device call in seconds (a call past it raises :class:`DeviceError`).
        retries: extra attempts for reads after a failure (with a reconnect in between).
        app_labels: ``{label: package}`` for ``open_app`` by name (devices only list packages).
        connect: ``serial -> device`` factory; defaults to ``uiautomator2.connect`` (tests pass a fake).

    Raises:
        DeviceError: when the first connection fails.
    """

    def __init__(
        self,
        serial: str,
        timeout_s: float = 20.0,
        retries: int = 2,
        app_labels: dict[str, str] | None = None,
        connect: Callable[[str], Any] | None = None,
    ) -> None:
        self.serial = str(serial)
        self.timeout_s, self.retries = float(timeout_s), int(retries)
        self.app_labels = dict(app_labels or {})
        self._connect = connect or _connect
        self._device: Any = None
        self._size: tuple[int, int] | None = None
        self._device = self._run(lambda: self._connect(self.serial), "connect")

    # ----- plumbing ------------------------------------------------------------------------------------------
    def _run(self, fn: Callable[[], T], what: str) -> T:
        """Run ``fn`` with the time limit; any failure becomes a :class:`DeviceError` naming the serial."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised below as a DeviceError
                box["error"] = exc

        # A daemon thread per call: a hung adb call cannot block the caller or interpreter exit.
        thread = threading.Thread(target=target, name=f"u2-{self.serial}", daemon=True)
        thread.start()
        thread.join(self.timeout_s)
        if thread.is_alive():
            raise DeviceTimeoutError(self.serial, f"{what} timed out after {self.timeout_s:.0f} s")
        if "error" in box:
            exc = box["error"]
            if isinstance(exc, DeviceError):
                raise exc
            detail = str(exc).splitlines()[0] if str(exc) else ""
            raise DeviceError(self.serial, f"{what} failed: {type(exc).__name__}: {detail}") from exc
        return box["value"]

    def _read(self, fn: Callable[[Any], T], what: str) -> T:
        """A read, retried with a reconnect between tries."""
        last: DeviceError | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(0.2 * attempt, 1.0))
                try:
                    self._device = self._run(lambda: self._connect(self.serial), "reconnect")
                except DeviceError as exc:
                    last = exc
                    continue
            try:
                return self._run(lambda: fn(self._device), what)
            except DeviceError as exc:
                last = exc
        assert last is not None
        raise DeviceError(self.serial, f"{what} failed after {self.retries + 1} tries: {last}") from last

    def _input(self, fn: Callable[[Any], T], what: str) -> T:
        """An input: tried once (repeating a tap that may have landed is not safe)."""
        return self._run(lambda: fn(self._device), what)

    # ----- reads -----------------------------------------------------------------------------------------------
    def screenshot(self, scale: float = 1.0) -> np.ndarray:
        def grab(d: Any) -> np.ndarray:
            image = d.screenshot(format="pillow")  # uiautomator2 fetches a JPEG (quality 80) from the device
            if image is None:
                raise RuntimeError("the device returned no screenshot")
            return np.asarray(image.convert("RGB"))

        return resize_rgb(self._read(grab, "screenshot"), scale)

    def hierarchy(self) -> str:
        def dump(d: Any) -> str:
            xml = d.dump_hierarchy(compressed=False)
            if not isinstance(xml, str) or "<hierarchy" not in xml:
                raise RuntimeError("the hierarchy dump is empty")
            return xml

        return self._read(dump, "hierarchy dump")

    def app_current(self) -> tuple[str, str]:
        info = self._read(lambda d: d.app_current(), "app_current")
        return str(info.get("package", "")), str(info.get("activity", ""))

    def window_size(self) -> tuple[int, int]:
        w, h = self._read(lambda d: d.window_size(), "window_size")
        return int(w), int(h)

    def installed_apps(self) -> dict[str, str]:
        """``app_labels`` plus every third-party package (by package name); empty when the list fails."""
        try:
            packages = self._read(lambda d: d.app_list(), "app_list")
        except DeviceError:
            packages = []
        return {**{p: p for p in packages}, **self.app_labels}

    # ----- inputs ----------------------------------------------------------------------------------------------
    def click(self, x: float, y: float) -> None:
        px, py = self._on_screen(x, y)
        self._input(lambda d: d.click(px, py), "click")

    def long_click(self, x: float, y: float, duration: float = 0.8) -> None:
        px, py = self._on_screen(x, y)
        hold = _touch_s(duration)
        self._input(lambda d: d.long_click(px, py, hold), "long click")

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration: float = 0.3) -> None:
        pts = [*self._on_screen(x1, y1), *self._on_screen(x2, y2)]
        span = _touch_s(duration)
        self._input(lambda d: d.swipe(*pts, duration=span), "swipe")

    def _on_screen(self, x: float, y: float) -> tuple[int, int]:
        """Device pixels rounded and clamped to the screen; a non-finite point is the caller's mistake."""
        if not (math.isfinite(x) and math.isfinite(y)):
            raise DeviceActionError(self.serial, f"a touch point must be finite, got ({x}, {y})")
        if self._size is None:
            self._size = self.window_size()
        width, height = self._size
        return min(max(round(x), 0), width - 1), min(max(round(y), 0), height - 1)

    def send_keys(self, text: str, clear: bool = False) -> bool:
        # uiautomator2 types into whatever has focus and says nothing when nothing does; check first.
        try:
            focused = any(el.focused and el.editable for el in parse_hierarchy(self.hierarchy()))
        except HierarchyParseError:
            focused = True  # an unparsable dump should not block typing
        if not focused:
            return False
        for start in range(0, max(len(text), 1), SEND_CHUNK):
            chunk, first = text[start : start + SEND_CHUNK], start == 0
            self._input(lambda d, c=chunk, f=first: d.send_keys(c, clear=clear and f), "send_keys")
        return True

    def press(self, key: str) -> None:
        if key not in KEYS:
            raise ValueError(f"unknown key {key!r}; the keys are {KEYS}")
        self._input(lambda d: d.press(key), f"press {key}")

    def app_start(self, package: str) -> None:
        self._input(lambda d: d.app_start(package, wait=True), f"app_start {package}")

    def close(self) -> None:
        """uiautomator2 holds no process on this side; dropping the device object is enough."""
        self._device = None


def _touch_s(duration: float) -> float:
    """A touch duration in seconds, within ``[0, MAX_TOUCH_S]`` (a non-finite one is the default 0.3 s)."""
    return min(max(float(duration), 0.0), MAX_TOUCH_S) if math.isfinite(duration) else 0.3
