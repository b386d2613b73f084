"""``SimulatedPhone``: the bundled phone apps rendered by Chromium, behind the device-backend interface.

The phone is a Chromium page of 360 x 800 CSS pixels at ``device_scale_factor`` 3, so its screen is
1080 x 2400 device pixels, like a Pixel. It runs on the shared browser plumbing (:mod:`gui_envs.browser`): one
:class:`~gui_envs.browser.page.HermeticBrowser` session whose page is the screen (a worker thread owns Playwright, so
the phone works inside a running asyncio loop and from any thread), and hermetic routing to in-process apps
(each app is a :class:`~gui_envs.android.apps.base.PhoneApp` with its state in its own in-memory SQLite
database).

What makes it a phone rather than a web page:

* **hierarchy**: one ``page.evaluate`` walks the DOM and writes uiautomator XML directly (Android class
  names, ``package``, ``resource-id``, flags, ``bounds`` in device pixels, clipped to the scroll container
  they sit in; off-screen nodes are absent, as on a device). The status bar and the keyboard are windows of
  their own packages.
* **back stack and home**: the phone keeps the activity stack itself. A page reached by a tap is pushed; a
  page already on the stack pops back to it (``clearTop``: saving a form returns to its list). ``back``
  closes the keyboard first, then pops; ``home`` clears the stack to the launcher.
* **soft keyboard**: a focused text field brings up a keyboard drawn in the bottom 846 device pixels; the
  content area shrinks above it. Its keys are real buttons; ``send_keys`` types as an IME would.
* **system settings**: the Settings app's dark theme applies to every app, as on a phone.
* **touch**: a swipe drags seek bars and otherwise scrolls the view under the finger, content following the
  finger; a long press holds for ``duration`` seconds (rows with a long-press menu open it after 0.5 s).
  Touch points are clamped to the screen (a finger cannot leave the glass) and a scroll moves at most
  :data:`~gui_envs.schema.actions.MAX_SCROLL_AMOUNT`, so no argument can stall Chromium.
* **robustness**: an app handler that fails answers a 500 page (listed by :meth:`SimulatedPhone.take_server_errors`);
  a Playwright error that is not a crash is a :class:`~gui_envs.android.backend.DeviceActionError`.
"""

from __future__ import annotations

import io
import logging
import math
import urllib.parse
from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_envs.android.apps import default_apps
from gui_envs.android.apps.base import PhoneApp
from gui_envs.android.backend import KEYS, DeviceActionError, DeviceBackend, DeviceError, DeviceTimeoutError
from gui_envs.browser import executor
from gui_envs.browser.page import HermeticBrowser, Session
from gui_envs.browser.routing import RouteTable
from gui_envs.browser.session import BrowserCrashedError, BrowserTimeoutError, SessionHandles
from gui_envs.browser.shared import SharedBrowser
from gui_envs.browser.site import Request, Response, SiteState
from gui_envs.schema.actions import MAX_SCROLL_AMOUNT

logger = logging.getLogger(__name__)

LAUNCHER_PACKAGE = "com.guigym.launcher"
SETTINGS_PACKAGE = "com.guigym.settings"

# Walks the DOM once and writes uiautomator XML. Elements become nodes when they carry data-class, are
# interactive, are images, or hold text of their own; the rest are transparent (their children move up).
HIERARCHY_JS = r"""
(maxNodes) => {
  const dpr = window.devicePixelRatio, W = innerWidth, H = innerHeight;
  const bodyPkg = document.body ? (document.body.dataset.package || '') : '';
  const focused = document.activeElement;
  const esc = s => String(s).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]/g, '')
      .replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
  const own = el => { let t = ''; for (const n of el.childNodes) if (n.nodeType === 3) t += n.textContent;
      return t.replace(/\s+/g, ' ').trim(); };
  let count = 0;
  const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'HEAD', 'META', 'NOSCRIPT']);
  function describe(el) {
    const tag = el.tagName;
    const dc = el.dataset ? el.dataset.class : undefined;
    const aria = el.getAttribute('aria-label') || '';
    const n = {cls: dc || '', text: '', desc: '', clickable: false, checkable: false, checked: false,
               focusable: false, scrollable: false, long: el.hasAttribute('data-longclick'), password: false,
               selected: el.getAttribute('aria-selected') === 'true', enabled: !el.disabled, leaf: false,
               editable: false, hint: ''};
    if (tag === 'INPUT' || tag === 'TEXTAREA') {
      const type = tag === 'TEXTAREA' ? 'textarea' : el.type;
      if (type === 'hidden') return null;
      n.focusable = true; n.clickable = true; n.leaf = true;
      if (type === 'checkbox' || type === 'radio') {
        n.cls = n.cls || (el.getAttribute('role') === 'switch' ? 'android.widget.Switch' :
            type === 'radio' ? 'android.widget.RadioButton' : 'android.widget.CheckBox');
        n.checkable = true; n.checked = el.checked; n.desc = aria;
      } else if (type === 'range') { n.cls = 'android.widget.SeekBar'; n.text = String(el.value); n.desc = aria; }
      else if (type === 'submit' || type === 'button') { n.cls = 'android.widget.Button'; n.text = el.value; }
      else { n.cls = 'android.widget.EditText'; n.editable = true; n.hint = el.placeholder || '';
             n.text = el.value || n.hint;
             n.password = type === 'password'; }
      return n;
    }
    if (tag === 'LABEL') {
      const inp = el.querySelector('input[type=checkbox],input[type=radio]');
      if (inp) { n.cls = n.cls || (inp.getAttribute('role') === 'switch' ? 'android.widget.Switch' :
            inp.type === 'radio' ? 'android.widget.RadioButton' : 'android.widget.CheckBox');
        n.text = el.textContent.replace(/\s+/g, ' ').trim(); n.checkable = true; n.checked = inp.checked;
        n.desc = aria; n.clickable = true; n.focusable = true; n.leaf = true; return n; }
    }
    const text = own(el);
    if (tag === 'BUTTON' || el.getAttribute('role') === 'button' || el.hasAttribute('data-key')) {
      n.clickable = true; n.focusable = true;
      const inner = el.textContent.replace(/\s+/g, ' ').trim();
      n.cls = n.cls || (inner ? 'android.widget.Button' : 'android.widget.ImageButton');
      n.text = aria && !inner ? '' : inner; n.desc = aria && (!inner || n.cls.endsWith('ImageButton')) ? aria : '';
      if (el.hasAttribute('data-key') && aria) { n.text = ''; n.desc = aria; }
      n.leaf = true; return n;
    }
    if (tag === 'A' && el.hasAttribute('href')) {
      n.clickable = true; n.focusable = true;
      if (!el.firstElementChild) { n.cls = n.cls || 'android.widget.TextView'; n.text = text; n.leaf = true;
        n.desc = aria; if (n.cls.endsWith('ImageButton')) n.text = ''; return n; }
      n.cls = n.cls || 'android.widget.LinearLayout'; n.desc = aria; return n;
    }
    if (tag === 'IMG' || (tag === 'svg' && el.getAttribute('role') === 'img')) {
      n.cls = 'android.widget.ImageView'; n.desc = aria || el.getAttribute('alt') || ''; n.leaf = true; return n;
    }
    if (el.hasAttribute('data-scroll')) { n.scrollable = el.scrollHeight > el.clientHeight + 1; }
    if (dc) { n.text = text; n.desc = aria; return n; }
    if (text) { n.cls = 'android.widget.TextView'; n.text = text; n.desc = aria; return n; }
    return null;
  }
  function inter(a, b) { return [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])]; }
  // Returns the XML of el's nodes (el itself when it is a node, else its children's nodes).
  function visit(el, clip, pkg) {
    if (count >= maxNodes || SKIP.has(el.tagName)) return [];
    if (el.id === 'kbd' && !el.classList.contains('show')) return [];
    const n = describe(el);
    const r = el.getBoundingClientRect();
    const rect = [r.left, r.top, r.right, r.bottom];
    const childClip = el.hasAttribute('data-scroll') ? inter(clip, rect) : clip;
    let kids = [];
    if (n === null || !n.leaf) for (const c of el.children) kids = kids.concat(visit(c, childClip, pkg));
    if (n === null) return kids;
    const box = inter(clip, rect);
    if (box[2] - box[0] < 1 || box[3] - box[1] < 1) return kids;
    count++;
    const b = box.map(v => Math.round(v * dpr));
    const rid = el.dataset && (el.dataset.rid || el.id) ? esc(pkg + ':id/' + (el.dataset.rid || el.id)) : '';
    const open = `<node index="INDEX" text="${esc(n.text)}" resource-id="${rid}" ` +
      `class="${n.cls}" package="${esc(pkg)}" content-desc="${esc(n.desc)}" checkable="${n.checkable}" ` +
      `checked="${n.checked}" clickable="${n.clickable}" enabled="${n.enabled}" focusable="${n.focusable}" ` +
      `focused="${el === focused}" scrollable="${n.scrollable}" long-clickable="${n.long}" password="${n.password}" ` +
      `selected="${n.selected}" ` + (n.editable ? `hint="${esc(n.hint)}" ` : '') +
      `bounds="[${b[0]},${b[1]}][${b[2]},${b[3]}]"`;
    if (!kids.length) return [open + ' />'];
    return [open + '>' + kids.map((k, i) => k.replace('index="INDEX"', `index="${i}"`)).join('') + '</node>'];
  }
  const screen = [0, 0, W, H];
  const windows = [];
  const appKids = [];
  for (const c of document.body ? document.body.children : []) {
    const win = c.dataset ? c.dataset.window : undefined;
    if (win) { const k = visit(c, screen, win); if (k.length) windows.push(k.map(x => x.replace('index="INDEX"', 'index="0"')).join('')); }
    else appKids.push(...visit(c, screen, bodyPkg));
  }
  const B = `bounds="[0,0][${Math.round(W * dpr)},${Math.round(H * dpr)}]"`;
  const root = `<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="${esc(bodyPkg)}" ` +
    `content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" ` +
    `focused="false" scrollable="false" long-clickable="false" password="false" selected="false" ${B}>` +
    appKids.map((k, i) => k.replace('index="INDEX"', `index="${i}"`)).join('') + '</node>';
  return `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">${root}${windows.join('')}</hierarchy>`;
}
"""

_HIDE_KEYBOARD_JS = "() => !!(window.__guigymHideKeyboard && window.__guigymHideKeyboard())"
_FOCUSED_EDITABLE_JS = (
    "() => { const a = document.activeElement; return !!a && (a.tagName === 'TEXTAREA' || (a.tagName === 'INPUT'"
    " && !['checkbox','radio','range','submit','button','hidden'].includes(a.type))); }"
)
_TWO_FRAMES_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
# Which kind of thing is under a point: a seek bar is dragged, anything else scrolls.
_UNDER_JS = (
    "([x, y]) => { const el = document.elementFromPoint(x, y); return el ? (el.type || el.tagName) : ''; }"
)


def dark_theme_on(settings: SiteState | None) -> bool:
    """The system-wide dark theme: the Settings app's ``dark_mode`` (``False`` without a Settings app)."""
    if settings is None:
        return False
    row = settings.one("SELECT value FROM settings WHERE key = 'dark_mode'")
    return bool(row and row[0])


class _ThemedApp:
    """One app's request handler, its pages dressed in the system theme (as a phone renders every app).

    Holds the databases, not the phone, so the browser session keeps no reference to its owner.
    """

    def __init__(self, state: SiteState, settings: SiteState | None) -> None:
        self.state, self.settings = state, settings

    def __call__(self, request: Request) -> Response:
        resp = self.state.handle(request)
        if isinstance(resp.body, str) and dark_theme_on(self.settings):
            resp.body = resp.body.replace("<body ", '<body data-theme="dark" ', 1)
        return resp


class SimulatedPhone(DeviceBackend):
    """A phone made of bundled apps rendered in Chromium; implements :class:`DeviceBackend`.

    Args:
        apps: the installed apps; the first with package :data:`LAUNCHER_PACKAGE` is the home screen
            (default: :func:`gui_envs.android.apps.default_apps`).
        size: screen ``(width, height)`` in device pixels; must be divisible by ``density``.
        density: device pixels per CSS pixel (Chromium's ``device_scale_factor``).
        headless: run Chromium headless.
        timeout_s: time limit of one phone operation in seconds.
        serial: the name used in :class:`DeviceError` messages.
        shared_browser: run the screen as a context of this
            :class:`~gui_envs.browser.shared.SharedBrowser` instead of launching a browser.

    Attributes:
        states: each app's live :class:`~gui_envs.browser.site.SiteState`, by package; task validators
            read these databases.
    """

    def __init__(
        self,
        apps: Sequence[PhoneApp] | None = None,
        size: tuple[int, int] = (1080, 2400),
        density: float = 3.0,
        headless: bool = True,
        timeout_s: float = 10.0,
        serial: str = "simulated-phone",
        shared_browser: SharedBrowser | None = None,
    ) -> None:
        self.apps: dict[str, PhoneApp] = {app.package: app for app in (apps or default_apps())}
        if LAUNCHER_PACKAGE not in self.apps:
            raise ValueError(f"the apps must include the launcher ({LAUNCHER_PACKAGE})")
        width, height = int(size[0]), int(size[1])
        if width % density or height % density:
            raise ValueError(f"size {size} must be divisible by density {density}")
        self.size, self.density = (width, height), float(density)
        self.css_size = (round(width / density), round(height / density))
        self.headless, self.timeout_s, self.serial = headless, float(timeout_s), serial
        self.states: dict[str, SiteState] = {pkg: SiteState(app) for pkg, app in self.apps.items()}
        self._by_origin = {app.origin: pkg for pkg, app in self.apps.items()}
        settings = self.states.get(SETTINGS_PACKAGE)
        self._routes: RouteTable = {
            app.origin: _ThemedApp(self.states[pkg], settings) for pkg, app in self.apps.items()
        }
        self._stack: list[str] = []
        self._url = "about:blank"
        # The session's page is the screen: phone-sized, at the phone's density, with hermetic routing (a
        # context of the shared browser when there is one).
        self._browser = HermeticBrowser(
            self.css_size, headless, self.timeout_s, device_scale_factor=self.density, shared=shared_browser
        )

    # ----- lifecycle ---------------------------------------------------------------------------------------
    def restore(self, seed: int) -> None:
        """Put every app's database back to its seeded state and go to the home screen (a warm reset).

        This is also where a crashed Chromium is relaunched: other calls on a dead phone raise
        :class:`DeviceError`, so a crash is never papered over in the middle of an episode.
        """
        self._ensure()
        for state in self.states.values():
            state.restore(seed)
        self._browser.take_blocked()
        self.press("home")

    @property
    def dark_theme(self) -> bool:
        """The system-wide dark theme (the Settings app's ``dark_mode``); every app renders dark while it is on."""
        return dark_theme_on(self.states.get(SETTINGS_PACKAGE))

    @property
    def browser_pid(self) -> int | None:
        """PID of the phone's Chromium (``None`` before the first call)."""
        return self._browser.browser_pid

    @property
    def _session(self) -> Session | None:
        return self._browser.session

    def close(self) -> None:
        self._browser.close()

    def _ensure(self) -> Session:
        routes = self._routes
        return self._browser.ensure(lambda: routes)

    def take_server_errors(self) -> list[str]:
        """The app handler failures (500 pages) since the last call, one line each; clears the list."""
        return self._browser.take_server_errors()

    def _call(self, fn: Any, what: str) -> Any:
        from playwright.sync_api import Error as PlaywrightError

        session = self._session if self._session is not None else self._ensure()
        if not session.alive:
            raise DeviceError(self.serial, f"{what} failed: the phone's browser is gone; reset() relaunches it")
        try:
            return session.call(fn)
        except BrowserTimeoutError as exc:
            raise DeviceTimeoutError(self.serial, f"{what} timed out: {exc}") from exc
        except BrowserCrashedError as exc:
            raise DeviceError(self.serial, f"{what} failed: {exc}") from exc
        except PlaywrightError as exc:
            # Not a crash (the session maps those to BrowserCrashedError): Playwright refused this call.
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DeviceActionError(self.serial, f"{what} failed: {detail}") from exc

    # ----- reads -------------------------------------------------------------------------------------------
    def screenshot(self, scale: float = 1.0) -> np.ndarray:
        from PIL import Image

        native_css = abs(scale * self.density - 1.0) < 1e-9

        def work(h: SessionHandles) -> bytes:
            return h.page.screenshot(
                type="jpeg",
                quality=90,
                scale="css" if native_css else "device",
                caret="hide",
                animations="disabled",
            )

        data = self._call(work, "screenshot")
        with Image.open(io.BytesIO(data)) as img:
            array = np.asarray(img.convert("RGB"))
        want = (round(self.size[1] * scale), round(self.size[0] * scale))
        if array.shape[:2] != want:
            array = np.asarray(Image.fromarray(array).resize((want[1], want[0]), Image.BILINEAR))
        return array

    def hierarchy(self) -> str:
        return self._call(lambda h: self._stable(h.page, HIERARCHY_JS, 2000), "hierarchy dump")

    def _stable(self, page: Any, script: str, arg: Any = None) -> Any:
        """``page.evaluate`` that survives a navigation a late script started (waits for the new page)."""
        from playwright.sync_api import Error as PlaywrightError

        for attempt in range(3):
            try:
                return page.evaluate(script, arg)
            except PlaywrightError as exc:
                if attempt == 2 or "context was destroyed" not in str(exc):
                    raise
                page.wait_for_load_state("load", timeout=self.timeout_s * 1000)
        raise AssertionError("unreachable")

    def app_current(self) -> tuple[str, str]:
        parts = urllib.parse.urlsplit(self._url)
        pkg = self._by_origin.get(f"{parts.scheme}://{parts.netloc}")
        if pkg is None:
            return ("", "")
        return pkg, self.apps[pkg].activity_for(parts.path or "/")

    def window_size(self) -> tuple[int, int]:
        return self.size

    def installed_apps(self) -> dict[str, str]:
        return {app.label: pkg for pkg, app in self.apps.items() if pkg != LAUNCHER_PACKAGE}

    @property
    def back_stack(self) -> list[str]:
        """The URLs of the activity stack, bottom (the launcher) first."""
        return list(self._stack)

    # ----- input -------------------------------------------------------------------------------------------
    def click(self, x: float, y: float) -> None:
        cx, cy = self._css(x, y)
        self._input(lambda p: p.mouse.click(cx, cy), "click")

    def long_click(self, x: float, y: float, duration: float = 0.8) -> None:
        cx, cy = self._css(x, y)

        def act(p: Any) -> None:
            p.mouse.move(cx, cy)
            p.mouse.down()
            p.wait_for_timeout(1000 * min(max(duration, 0.0), 5.0))
            p.mouse.up()

        self._input(act, "long click")

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration: float = 0.3) -> None:
        (a, b), (c, d) = self._css(x1, y1), self._css(x2, y2)

        def act(p: Any) -> None:
            if p.evaluate(_UNDER_JS, [a, b]) == "range":
                p.mouse.move(a, b)
                p.mouse.down()
                p.mouse.move(c, d, steps=6)
                p.mouse.up()
                return
            p.mouse.move(a, b)
            p.mouse.wheel(a - c, b - d)  # content follows the finger
            p.evaluate(_TWO_FRAMES_JS)

        self._input(act, "swipe")

    def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        """Scroll the view under ``(x, y)`` by ``(dx, dy)`` device pixels (positive ``dy``: further down)."""
        cx, cy = self._css(x, y)

        wx, wy = (min(max(v / self.density, -MAX_SCROLL_AMOUNT), MAX_SCROLL_AMOUNT) for v in (dx, dy))

        def act(p: Any) -> None:
            p.mouse.move(cx, cy)
            p.mouse.wheel(wx, wy)
            p.evaluate(_TWO_FRAMES_JS)

        self._input(act, "scroll")

    def send_keys(self, text: str, clear: bool = False) -> bool:
        def act(p: Any) -> bool:
            if not p.evaluate(_FOCUSED_EDITABLE_JS):
                return False
            if clear:
                p.keyboard.press("Control+a")
                p.keyboard.press("Delete")
            p.keyboard.insert_text(text)
            p.evaluate("() => document.activeElement.dispatchEvent(new Event('input', {bubbles: true}))")
            return True

        return bool(self._input(act, "send_keys"))

    def press(self, key: str) -> None:
        if key not in KEYS:
            raise ValueError(f"unknown key {key!r}; the phone's keys are {KEYS}")
        if key == "home":
            home = self.apps[LAUNCHER_PACKAGE].origin + "/"
            self._stack = []
            self._input(lambda p: p.goto(home, wait_until="load"), "home")
        elif key == "enter":
            self._input(lambda p: p.keyboard.press("Enter"), "enter")
        else:
            self._back()

    def _back(self) -> None:
        def act(h: SessionHandles) -> str:
            p = h.page
            if p.evaluate(_HIDE_KEYBOARD_JS):
                return p.url
            if len(self._stack) > 1:
                self._stack.pop()
                p.goto(self._stack[-1], wait_until="load")
            return p.url

        self._absorb_url(self._call(act, "back"))

    def app_start(self, package: str) -> None:
        if package not in self.apps:
            raise DeviceError(
                self.serial, f"package {package!r} is not installed; installed: {sorted(self.apps)}"
            )
        url = self.apps[package].origin + "/"
        self._stack = [self.apps[LAUNCHER_PACKAGE].origin + "/"]
        self._input(lambda p: p.goto(url, wait_until="load"), f"app_start {package}")

    # ----- helpers -----------------------------------------------------------------------------------------
    def _css(self, x: float, y: float) -> tuple[float, float]:
        """Device pixels -> CSS pixels, clamped to the screen (a touch cannot land off the glass)."""
        if not (math.isfinite(x) and math.isfinite(y)):
            raise DeviceActionError(self.serial, f"a touch point must be finite, got ({x}, {y})")
        width, height = self.css_size
        return (
            min(max(x / self.density, 0.0), width - 1.0),
            min(max(y / self.density, 0.0), height - 1.0),
        )

    def _input(self, act: Any, what: str) -> Any:
        """Run ``act(page)``, wait for any navigation it started, and update the back stack."""
        net = self._browser.net
        blocked_before = net.blocked_documents

        def work(h: SessionHandles) -> tuple[Any, str]:
            page = h.page
            result = act(page)
            executor.settle(page, self.timeout_s * 1000, lambda: net.blocked_documents, blocked_before)
            return result, page.url

        result, url = self._call(work, what)
        self._absorb_url(url)
        return result

    def _absorb_url(self, url: str) -> None:
        """Update the activity stack after the page moved to ``url``."""
        url = url.split("#", 1)[0]
        self._url = url
        launcher = self.apps[LAUNCHER_PACKAGE].origin + "/"
        if url == launcher or not self._stack:
            self._stack = [url] if url == launcher else [launcher, url]
        elif url == self._stack[-1]:
            return
        elif url in self._stack:
            del self._stack[self._stack.index(url) + 1 :]
        else:
            self._stack.append(url)
