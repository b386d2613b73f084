"""How a phone action runs on a device: the shared action schema mapped onto the
:class:`~gui_envs.android.backend.DeviceBackend` calls (tap, long press, swipe, keys, app start).

The phone's counterpart of :mod:`gui_envs.browser.executor`. Agent points are screenshot pixels; the backend works
in device pixels (device = screenshot / ``scale``).
"""

from __future__ import annotations

import difflib
import time

from gui_envs.android.backend import DeviceBackend
from gui_envs.android.hierarchy import UIElement
from gui_envs.schema.actions import POINTER_TYPES, Action


def find(elements: list[UIElement], element_id: str) -> UIElement | None:
    """The element with id ``element_id``, or ``None``."""
    return next((el for el in elements if el.id == element_id), None)


def device_point(
    action: Action, elements: list[UIElement], scale: float, screen: tuple[int, int]
) -> tuple[tuple[float, float] | None, str | None]:
    """The action's target in device pixels (``point`` is in screenshot pixels = device x ``scale``), or an error."""
    if action.element_id is not None:
        el = find(elements, action.element_id)
        if el is None:
            return None, f"no element with id {action.element_id!r} on the current screen"
        return el.center, None
    if action.point is None:
        return None, None
    x, y = action.point
    width, height = screen
    if not (0 <= x < width and 0 <= y < height):
        return None, f"point ({x:.0f}, {y:.0f}) is outside the {width}x{height} screenshot"
    return (x / scale, y / scale), None


def element_at(elements: list[UIElement], x: float, y: float) -> UIElement | None:
    """The smallest element whose bbox holds the device-pixel point ``(x, y)`` (the one a tap hits)."""
    hits = [el for el in elements if el.bbox[0] <= x < el.bbox[2] and el.bbox[1] <= y < el.bbox[3]]
    return min(hits, key=lambda el: (el.bbox[2] - el.bbox[0]) * (el.bbox[3] - el.bbox[1]), default=None)


def execute(
    backend: DeviceBackend, action: Action, elements: list[UIElement], scale: float, screen: tuple[int, int]
) -> str | None:
    """Perform ``action`` (not a ``stop``) on the device; return why it was a no-op, or ``None``.

    ``elements`` are the screen the agent saw (device pixels); ``screen`` is the screenshot's (width, height)
    in pixels, ``scale`` screenshot pixels per device pixel.
    """
    b = backend
    point, error = device_point(action, elements, scale, screen)
    if error is not None:
        return error
    t = action.type
    dw, dh = b.window_size()
    if t in POINTER_TYPES:
        assert point is not None  # the Action validator guarantees a point or an element
        if t == "click":
            b.click(*point)
        elif t == "double_click":
            b.click(*point)
            b.click(*point)
        elif t == "long_press":
            b.long_click(*point, duration=action.duration if action.duration is not None else 0.8)
        else:
            return f"{t} does not exist on a touch screen; use click or long_press"
    elif t == "type":
        if point is not None:
            target = element_at(elements, *point)
            if target is None or not target.editable:
                return "the target is not a text field; type needs an EditText (or no target: the focused field)"
            b.click(*point)
            if not b.send_keys(action.text or "", clear=True):
                return "the text field did not take focus"
        elif not b.send_keys(action.text or ""):
            return "no text field has focus; click one first or give a point / element_id"
    elif t == "scroll":
        cx, cy = point if point is not None else (dw / 2, dh / 2)
        amount = action.amount / scale if action.amount is not None else 0.5 * dh
        dx, dy = {"up": (0, -amount), "down": (0, amount), "left": (-amount, 0), "right": (amount, 0)}[
            action.direction or "down"
        ]
        # Scrolling the view down is a finger moving up: start below the centre, end above it.
        b.swipe(cx + dx / 2, cy + dy / 2, cx - dx / 2, cy - dy / 2, 0.3)
    elif t == "swipe":
        assert action.point is not None
        x1, y1 = action.point[0] / scale, action.point[1] / scale
        if action.end_point is not None:
            x2, y2 = action.end_point[0] / scale, action.end_point[1] / scale
        else:
            dist = 0.4 * dh
            ddx, ddy = {"up": (0, -dist), "down": (0, dist), "left": (-dist, 0), "right": (dist, 0)}[
                action.direction or "up"
            ]
            x2, y2 = x1 + ddx, y1 + ddy
        b.swipe(x1, y1, x2, y2, action.duration if action.duration is not None else 0.3)
    elif t == "press":
        key = (action.key or "").lower()
        if key not in ("enter", "return"):
            return f"the phone has no key {action.key!r}; press 'enter', or navigate back/home"
        b.press("enter")
    elif t == "navigate":
        if action.target not in ("back", "home"):
            return f"navigate({action.target!r}) does not apply to a phone; use back or home"
        b.press(action.target)
    elif t == "open_app":
        package, error = resolve_app(backend, action.app or "")
        if error is not None:
            return error
        assert package is not None
        b.app_start(package)
    elif t == "wait":
        if not hasattr(backend, "restore"):  # the simulated phone's clock stands still; waiting changes nothing
            time.sleep(min(action.duration if action.duration is not None else 1.0, 5.0))
    return None


def resolve_app(backend: DeviceBackend, name: str) -> tuple[str | None, str | None]:
    """``open_app`` by name: an app's label, package, or alias (case-insensitive) -> its package."""
    apps = backend.installed_apps()
    want = name.strip().lower()
    by_name = {label.lower(): pkg for label, pkg in apps.items()}
    by_name.update({pkg.lower(): pkg for pkg in apps.values()})
    for pkg, app in getattr(backend, "apps", {}).items():
        for alias in getattr(app, "aliases", ()):
            by_name.setdefault(alias.lower(), pkg)
    if want in by_name:
        return by_name[want], None
    if not apps and "." in want:  # a device that does not list its apps: trust a package name
        return name.strip(), None
    close = difflib.get_close_matches(want, list(by_name), n=3, cutoff=0.75)
    if len(close) >= 1 and difflib.SequenceMatcher(None, want, close[0]).ratio() >= 0.85:
        return by_name[close[0]], None
    return None, f"no app named {name!r}; installed: {', '.join(sorted(apps))}"
