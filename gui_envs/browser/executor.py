"""Execute one :class:`~gui_envs.schema.actions.Action` on a Playwright page (in the browser thread).

Agent mistakes never raise: :func:`execute` returns an error string (``None`` on success) that the env puts in
``info["action_error"]`` with a penalty. Browser faults (timeouts, crashes) do raise; the session maps them.

Semantics, all coordinates in screenshot pixels:

* pointer actions (``click``, ``double_click``, ``right_click``, ``hover``, ``long_press``) hit ``point``, or
  ``element_id``'s bbox in the observation the agent saw (clipped to the viewport): its centre, or where another
  element covers the centre, the visible point of the bbox nearest to it, as a user clicks the part of a button
  that shows (:data:`VISIBLE_POINT_JS`; a fully covered element is hit at its centre); points outside the
  viewport are rejected;
* ``type`` with a target clicks it and replaces its content (a ``<select>`` chooses the option whose text or
  value matches); without a target it types into the focused element. Up to :data:`KEYED_CHARS` characters
  are typed key by key; longer text is inserted as an IME would (one ``input`` event, bounded time: 8 KB takes
  milliseconds, not the 10 s call time-out), with a trailing newline pressed as Enter. At most
  :data:`~gui_envs.schema.actions.MAX_TYPED_TEXT` characters (the ``Action`` refuses more);
* ``scroll`` turns the mouse wheel at ``point`` (default: viewport centre) by ``amount`` pixels, default 80%
  of the viewport, at most :data:`~gui_envs.schema.actions.MAX_SCROLL_AMOUNT`;
* ``press`` takes names such as ``enter``, ``tab``, ``ctrl+a``;
* ``navigate`` goes ``back``/``forward``, ``home`` (the task's start page) or to a ``url`` of one of the
  env's own origins; any other origin is rejected;
* ``wait`` sleeps ``duration`` seconds (at most 5); ``stop`` is handled by the env; ``swipe`` drags from a
  point in the viewport; an end point outside it is clamped to the viewport's edge (the finger leaves the
  screen there).

Arguments of the wrong type or magnitude never get here: an :class:`~gui_envs.schema.actions.Action` checks its own
fields (types, finite coordinates within :data:`~gui_envs.schema.actions.MAX_COORDINATE`, text length), and
:func:`~gui_envs.schema.actions.coerce_action` turns anything else into an action error.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable, Collection
from typing import Any

from gui_envs.browser.observation import PageView
from gui_envs.browser.session import BrowserTimeoutError
from gui_envs.schema.actions import MAX_SCROLL_AMOUNT, Action

MAX_WAIT_S = 5.0
#: Text up to this many characters is typed key by key (key events, Enter presses); longer text is inserted.
KEYED_CHARS = 64
_KEYS = {
    "enter": "Enter",
    "return": "Enter",
    "tab": "Tab",
    "escape": "Escape",
    "esc": "Escape",
    "backspace": "Backspace",
    "delete": "Delete",
    "space": " ",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "home": "Home",
    "end": "End",
    "ctrl": "Control",
    "control": "Control",
    "shift": "Shift",
    "alt": "Alt",
    "meta": "Meta",
    "cmd": "Meta",
}

#: Where to hit element ``id`` inside its clipped bbox ``[x0, y0, x1, y1]``: the centre when the element (or a
#: label of it) is on top there, else the nearest of a 12 x 12 grid of points where it is; ``null`` when it is
#: covered everywhere or gone. MiniWoB's click-test-2 draws its two buttons where they may overlap: at the
#: centre of ONE, TWO took the click that the agent meant for ONE.
VISIBLE_POINT_JS = r"""
([id, x0, y0, x1, y1]) => {
  const el = document.querySelector('[data-guigym-id="' + CSS.escape(id) + '"]');
  if (!el) return null;
  const mine = (x, y) => { const h = document.elementFromPoint(x, y);
    return !!h && (el.contains(h) || h.control === el || el.control === h); };
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  if (mine(cx, cy)) return [cx, cy];
  const n = 12, points = [];
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++)
    points.push([x0 + (x1 - x0) * (i + 0.5) / n, y0 + (y1 - y0) * (j + 0.5) / n]);
  points.sort((a, b) => Math.hypot(a[0] - cx, a[1] - cy) - Math.hypot(b[0] - cx, b[1] - cy));
  for (const [x, y] of points) if (mine(x, y)) return [x, y];
  return null;
}
"""

# Marks a document that is about to be replaced, so the env knows to wait for the next load.
# It also keeps the browser's own timer and frame functions as ``__guigymSetTimeout`` / ``__guigymFrame``: it runs
# before any page script, and before a virtual clock (Playwright's ``page.clock``) replaces them, so guigym's
# waits below still run in real time while the page's own time stands still.
NAV_FLAG_SCRIPT = (
    "window.__guigymSetTimeout = window.setTimeout.bind(window);"
    "window.__guigymFrame = window.requestAnimationFrame.bind(window);"
    "addEventListener('beforeunload', () => { window.__guigymLeaving = true; });"
    "addEventListener('submit', (e) => { setTimeout(() => {"
    " if (!e.defaultPrevented) window.__guigymLeaving = true; }, 0); });"
)
# Asks whether the document is being replaced (see NAV_FLAG_SCRIPT): "leaving", else the document's
# readyState, so a page that has already loaded needs no second round trip to wait for its load event.
LEAVING_JS = (
    "() => new Promise(r => (window.__guigymSetTimeout || setTimeout)("
    "() => r(window.__guigymLeaving === true ? 'leaving' : document.readyState), 0))"
)
# Two real frames (see NAV_FLAG_SCRIPT), so a screenshot shows what the last input changed.
TWO_FRAMES_JS = (
    "() => new Promise(r => { const f = window.__guigymFrame || requestAnimationFrame; f(() => f(r)); })"
)


def key_name(key: str) -> str:
    """``"ctrl+a"`` -> ``"Control+a"``: Playwright's spelling of a key chord."""
    parts = [p.strip() for p in key.replace(" ", "").split("+") if p.strip()]
    out = []
    for p in parts:
        low = p.lower()
        if low in _KEYS:
            out.append(_KEYS[low])
        elif len(p) == 1:
            out.append(p)
        elif low.startswith("f") and low[1:].isdigit():
            out.append(low.upper())
        else:
            out.append(p[:1].upper() + p[1:])
    return "+".join(out)


def same_origin(url: str, origins: Collection[str]) -> bool:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" in origins


def execute(
    page: Any,
    action: Action,
    view: PageView,
    viewport: tuple[int, int],
    origins: Collection[str],
    home_url: str,
) -> str | None:
    """Perform ``action``; return ``None`` or a one-line explanation of why it was a no-op."""
    width, height = viewport
    point = None
    if action.element_id is not None:
        el = view.by_id(action.element_id)
        if el is None or not el["visible"]:
            return f"no element with id {action.element_id!r} in the current observation"
        box = [max(el["bbox"][0], 0), max(el["bbox"][1], 0), min(el["bbox"][2], width), min(el["bbox"][3], height)]
        point = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        if action.type != "scroll":  # the wheel scrolls what is under it, whichever element that is
            point = tuple(page.evaluate(VISIBLE_POINT_JS, [action.element_id, *box]) or point)
    elif action.point is not None:
        point = action.point
    if point is not None and not (0 <= point[0] < width and 0 <= point[1] < height):
        return f"point ({point[0]:.0f}, {point[1]:.0f}) is outside the {width}x{height} viewport"
    mouse = page.mouse
    t = action.type
    if t == "click":
        mouse.click(*point)
    elif t == "double_click":
        mouse.dblclick(*point)
    elif t == "right_click":
        mouse.click(*point, button="right")
    elif t == "hover":
        mouse.move(*point)
    elif t == "long_press":
        mouse.move(*point)
        mouse.down()
        page.wait_for_timeout(1000 * min(action.duration or 0.8, MAX_WAIT_S))
        mouse.up()
    elif t == "type":
        return _type(page, action, point)
    elif t == "scroll":
        amount = (
            min(action.amount, MAX_SCROLL_AMOUNT)
            if action.amount is not None
            else 0.8 * (height if action.direction in ("up", "down") else width)
        )
        dx, dy = {"up": (0, -amount), "down": (0, amount), "left": (-amount, 0), "right": (amount, 0)}[
            action.direction or "down"
        ]
        mouse.move(*(point or (width / 2, height / 2)))
        mouse.wheel(dx, dy)
        # Wheel scrolling lands on the next frame; wait for two so the screenshot shows it.
        page.evaluate(TWO_FRAMES_JS)
    elif t == "swipe":
        assert action.point is not None  # the Action validator guarantees it
        end = action.end_point
        if end is None:
            dist = 0.4 * height
            dx, dy = {"up": (0, -dist), "down": (0, dist), "left": (-dist, 0), "right": (dist, 0)}[
                action.direction or "up"
            ]
            end = (action.point[0] + dx, action.point[1] + dy)
        # A drag to 1e308 made Chromium interpolate to an absurd point and stop answering.
        end = (min(max(end[0], 0.0), width - 1.0), min(max(end[1], 0.0), height - 1.0))
        mouse.move(*action.point)
        mouse.down()
        mouse.move(*end, steps=8)
        mouse.up()
    elif t == "press":
        try:
            page.keyboard.press(key_name(action.key or ""))
        except Exception as exc:  # noqa: BLE001 - unknown key names are the agent's mistake
            if "Unknown key" in str(exc):
                return f"unknown key {action.key!r}"
            raise
    elif t == "navigate":
        return _navigate(page, action, origins, home_url)
    elif t == "wait":
        page.wait_for_timeout(1000 * min(action.duration if action.duration is not None else 1.0, MAX_WAIT_S))
    elif t == "open_app":
        return "open_app does not apply to web environments; use navigate(target='url')"
    return None


def _type(page: Any, action: Action, point: tuple[float, float] | None) -> str | None:
    text = action.text or ""
    if point is not None:
        info = page.evaluate(
            """([x, y]) => { const el = document.elementFromPoint(x, y);
                 if (!el) return null; const t = el.closest('select') || el;
                 return {tag: t.tagName.toLowerCase(), editable: t.isContentEditable ||
                   ['input', 'textarea'].includes(t.tagName.toLowerCase())}; }""",
            list(point),
        )
        if info is None:
            return "nothing to type into at that point"
        if info["tag"] == "select":
            chosen = page.evaluate(
                """([x, y, want]) => { const s = document.elementFromPoint(x, y).closest('select');
                     const w = want.trim().toLowerCase();
                     const o = [...s.options].find(o => o.text.trim().toLowerCase() === w ||
                                                        o.value.toLowerCase() === w);
                     if (!o) return false; s.value = o.value;
                     s.dispatchEvent(new Event('input', {bubbles: true}));
                     s.dispatchEvent(new Event('change', {bubbles: true})); return true; }""",
                [point[0], point[1], text],
            )
            return None if chosen else f"the list has no option {text!r}"
        if not info["editable"]:
            return "the target is not a text field"
        page.mouse.click(*point)
        page.keyboard.press("Control+a")
        page.keyboard.press("Delete")
    elif not page.evaluate(
        "() => { const a = document.activeElement; return !!a && (a.isContentEditable || "
        "['input', 'textarea'].includes(a.tagName.toLowerCase())); }"
    ):
        return "no text field has focus; click one first or give element_id"
    if len(text) <= KEYED_CHARS:
        page.keyboard.type(text)
        return None
    # Key by key costs a round trip per character (8 KB overran the call time-out and the browser was
    # declared dead); one insertion is bounded. A trailing newline keeps its meaning: press Enter.
    body, enter = (text[:-1], True) if text.endswith("\n") else (text, False)
    page.keyboard.insert_text(body)
    if enter:
        page.keyboard.press("Enter")
    return None


def _navigate(page: Any, action: Action, origins: Collection[str], home_url: str) -> str | None:
    if action.target == "back":
        page.go_back(wait_until="load")
    elif action.target == "forward":
        page.go_forward(wait_until="load")
    elif action.target == "home":
        page.goto(home_url, wait_until="load")
    else:
        url = action.url or ""
        if url.startswith("/"):
            parts = urllib.parse.urlsplit(page.url)
            url = f"{parts.scheme}://{parts.netloc}{url}"
        if not same_origin(url, origins):
            return f"navigation to {url!r} is blocked: only {', '.join(sorted(origins))} are reachable"
        page.goto(url, wait_until="load")
    return None


def settle(page: Any, timeout_ms: float, blocked_documents: Callable[[], int], blocked_before: int) -> None:
    """Wait until a navigation the action started (if any) has loaded.

    Every document runs :data:`NAV_FLAG_SCRIPT`; while the flag is set the old document is being replaced, so
    this waits for the next ``load`` event. A navigation the router blocked (another origin) never loads: the
    ``blocked_documents()`` counter moving past ``blocked_before`` tells the wait to stop and clears the flag.
    Read ``blocked_before`` before the action runs: the router can refuse its navigation before this is called.

    When the old document's context is already destroyed (a navigation to another origin swaps the renderer
    process), the new document may not exist yet and ``wait_for_load_state`` would answer for the old one, so
    this keeps asking until a document answers that is not leaving.

    Args:
        page: The Playwright page the action ran on (call from its browser thread).
        timeout_ms: How long the navigation may take, in milliseconds.
        blocked_documents: Reads the router's count of refused document requests.
        blocked_before: That count as it stood before the action.

    Raises:
        BrowserTimeoutError: The page was still leaving after ``timeout_ms``.
    """
    from playwright.sync_api import Error as PlaywrightError

    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            # A form submission starts its navigation from a task queued by the click, so let queued tasks
            # run (one zero-delay timer) before asking whether the document is being replaced.
            state = page.evaluate(LEAVING_JS)
        except PlaywrightError as exc:
            if "context was destroyed" not in str(exc) and "navigat" not in str(exc):
                raise
            context_gone = True
        else:
            if state == "complete":
                return
            if state != "leaving":
                page.wait_for_load_state("load", timeout=timeout_ms)
                return
            if blocked_documents() != blocked_before:
                page.evaluate("() => { window.__guigymLeaving = false; }")
                return
            context_gone = False
        if time.monotonic() > deadline:
            raise BrowserTimeoutError(f"the page did not finish navigating within {timeout_ms / 1000:.0f} s")
        if context_gone:
            # The new document may already be loading; its load event can come before a waiter would see
            # it, so ask again shortly rather than wait for the event.
            page.wait_for_timeout(5)
            continue
        try:
            page.wait_for_event("load", timeout=100)
            page.wait_for_load_state("load", timeout=timeout_ms)
            return
        except PlaywrightError:
            pass
