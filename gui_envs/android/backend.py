"""The device-backend interface: everything an agent can do to a phone, in device pixels.

Two backends implement it: :class:`~gui_envs.android.uiautomator2_backend.UiAutomator2Backend` (a real
device or emulator through uiautomator2) and :class:`~gui_envs.android.simulated.SimulatedPhone` (bundled
apps rendered by Chromium). The env talks only to this interface, so a task that runs on one runs on the other.

Pixels: every coordinate here is a **device pixel** (the phone's physical resolution, for example
1080 x 2400), origin top-left. Converting from the env's screenshot pixels is the env's job.
"""

from __future__ import annotations

import abc

import numpy as np

#: Keys :meth:`DeviceBackend.press` accepts.
KEYS: tuple[str, ...] = ("back", "home", "enter")


class DeviceError(RuntimeError):
    """The device (or simulated phone) failed: disconnected, the uiautomator server died, a call timed out.

    The message always names the device serial, so logs of many parallel envs say which phone failed.

    Attributes:
        serial: the device serial (``emulator-5554``, ``192.168.1.7:5555``, ``simulated``).
    """

    def __init__(self, serial: str, message: str) -> None:
        super().__init__(f"device {serial}: {message}")
        self.serial = serial


class DeviceTimeoutError(DeviceError):
    """One device call exceeded its time limit. The device may still be usable; the env reports the action as
    failed (``info["action_error"]``) instead of raising."""


class DeviceActionError(DeviceError):
    """The device refused one input (its arguments, not the device, were at fault). The device is still
    usable; the env reports the action as failed (``info["action_error"]``) instead of raising."""


class DeviceBackend(abc.ABC):
    """What an agent can do to a phone. All coordinates are device pixels; durations are seconds.

    Attributes:
        serial: the device's name in error messages.
    """

    serial: str = "unknown"

    @abc.abstractmethod
    def screenshot(self, scale: float = 1.0) -> np.ndarray:
        """The screen as RGB.

        Args:
            scale: output size relative to the device resolution (1.0: ``(H, W, 3)`` at device pixels).
                Backends that can render smaller directly (the simulated phone) do so; others resize.

        Returns:
            ``(round(H * scale), round(W * scale), 3)`` uint8 array.
        """

    @abc.abstractmethod
    def hierarchy(self) -> str:
        """The view hierarchy as uiautomator XML (``<hierarchy><node .../></hierarchy>``), bounds in device pixels."""

    @abc.abstractmethod
    def click(self, x: float, y: float) -> None:
        """Tap at ``(x, y)`` device pixels."""

    @abc.abstractmethod
    def long_click(self, x: float, y: float, duration: float = 0.8) -> None:
        """Touch and hold at ``(x, y)`` device pixels for ``duration`` seconds."""

    @abc.abstractmethod
    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration: float = 0.3) -> None:
        """Drag a finger from ``(x1, y1)`` to ``(x2, y2)`` (device pixels) over ``duration`` seconds.

        As on a phone, content follows the finger: swiping up scrolls a list down.
        """

    @abc.abstractmethod
    def send_keys(self, text: str, clear: bool = False) -> bool:
        """Type ``text`` into the focused text field.

        Args:
            text: the text to type.
            clear: empty the field first.

        Returns:
            False when no text field has focus (nothing was typed).
        """

    @abc.abstractmethod
    def press(self, key: str) -> None:
        """Press a system key: one of :data:`KEYS` (``back``, ``home``, ``enter``)."""

    @abc.abstractmethod
    def app_start(self, package: str) -> None:
        """Launch ``package``'s main activity (bringing it to the front with a fresh back stack)."""

    @abc.abstractmethod
    def app_current(self) -> tuple[str, str]:
        """The foreground ``(package, activity)``."""

    @abc.abstractmethod
    def window_size(self) -> tuple[int, int]:
        """The screen's ``(width, height)`` in device pixels."""

    def installed_apps(self) -> dict[str, str]:
        """Launchable apps as ``{label: package}``, for ``open_app`` by name. Empty when unknown."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook: backends without resources need not override it
        """Release the connection (idempotent)."""

    def __enter__(self) -> DeviceBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resize_rgb(image: np.ndarray, scale: float) -> np.ndarray:
    """Resize an RGB array by ``scale`` (bilinear); returns the input unchanged when ``scale == 1``."""
    if scale == 1.0:
        return image
    from PIL import Image

    height, width = image.shape[:2]
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return np.asarray(Image.fromarray(image).resize(size, Image.BILINEAR))
