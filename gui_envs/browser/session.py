"""One Chromium, driven from one dedicated worker thread.

Playwright's sync API refuses to run inside a running asyncio loop (Jupyter) and is bound to the thread that
started it (greenlet errors otherwise). :class:`BrowserSession` sidesteps both: it owns a worker thread that
starts Playwright and Chromium *inside that thread* and runs every browser call there. Callers, from any
thread and inside any event loop, submit callables and wait on a future.

Faults map to two outcomes:

* a call that exceeds its time limit raises :class:`BrowserTimeoutError`, which the env turns into
  ``info["action_error"]`` (the browser is still usable);
* a browser that crashed, was killed or stopped answering raises :class:`BrowserCrashedError`. The session is
  then dead; the owner closes it and starts a new :class:`BrowserSession` (the envs do so on the next ``reset``).

``close()`` (also run by a ``weakref.finalize`` when the session is garbage collected or the interpreter
exits) closes the browser, stops the Playwright driver and then SIGKILLs any process of the browser tree
that is still alive, so no Chromium outlives its session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

try:
    import playwright.sync_api  # noqa: F401 - checked here so a missing extra is named before any env is built
    import psutil
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f"the browser envs (GuiWeb-*, GuiAndroid-* on the simulated phone, MiniWoB) need {exc.name}: "
        "pip install 'guigym[web]' (then a Chromium: see README's set-up)"
    ) from exc

from gui_envs.browser.chromium import find_chromium, launch_args
from gui_envs.schema.errors import EnvCrashedError

T = TypeVar("T")
logger = logging.getLogger(__name__)

# One raster thread and no partial raster: with several threads, or tiles re-rastered in part, Chromium's
# antialiased edges (rounded corners, icon sprites) came out a level apart between two loads of one page on a
# loaded machine (click-dialog: 1 reset in 3 under 8 busy processes; 0 in 16 with these flags), so one seed
# did not give one screenshot.
#: Flags on top of :func:`launch_args`: deterministic scrolling and no GPU process on headless machines, and one raster.
SESSION_FLAGS: tuple[str, ...] = (
    "--disable-smooth-scrolling",
    "--disable-gpu",
    "--hide-scrollbars",
    "--num-raster-threads=1",
    "--disable-partial-raster",
)

#: Extra seconds the caller waits beyond a call's own Playwright timeout before declaring the browser hung.
_GRACE_S = 10.0

# Starting Playwright's driver is serialised so that the driver process can be identified by diffing this
# process's children before and after the start.
_START_LOCK = threading.Lock()


class BrowserCrashedError(EnvCrashedError):
    """The browser crashed, was killed or stopped answering. Call ``env.reset()`` to relaunch it."""


class BrowserTimeoutError(TimeoutError):
    """A browser call exceeded its time limit. The browser is still usable."""


@dataclass
class SessionHandles:
    """The Playwright objects that live in the worker thread. Only callables run by the session touch them.

    Attributes:
        playwright: the sync ``Playwright`` object.
        browser: the ``Browser``.
        context: the ``BrowserContext`` the page is in (routing is installed here).
        page: the one ``Page``.
        extra: room for per-env objects (for example a CDP session).
        on_page_crash: the crash listener every page of the session carries.
        spare: a page opened ahead of time (:meth:`prepare_page`) that the next :meth:`fresh_page` returns.
        stale: pages :meth:`fresh_page` replaced, closed by the next :meth:`prepare_page`.
        context_options: what :meth:`new_context` opens a context with (viewport, device scale, timeouts).
        contexts: every context :meth:`new_context` opened (on a shared browser, what its owner closes).
    """

    playwright: Any
    browser: Any
    context: Any
    page: Any
    extra: dict[str, Any] = field(default_factory=dict)
    on_page_crash: Callable[[Any], None] | None = None
    spare: Any = None
    stale: list[Any] = field(default_factory=list)
    context_options: dict[str, Any] = field(default_factory=dict)
    contexts: list[Any] = field(default_factory=list)

    def new_context(self) -> Any:
        """Open another context of this browser, set up like :attr:`context` but without its routing: its
        cookies, storage and history are its own (:mod:`gui_envs.browser.prefetch` prepares pages there)."""
        options = dict(self.context_options)
        timeout_ms = options.pop("timeout_ms", None)
        context = self.browser.new_context(**options)
        if timeout_ms is not None:
            context.set_default_timeout(timeout_ms)
            context.set_default_navigation_timeout(timeout_ms)
        self.contexts.append(context)
        return context

    def new_page(self, context: Any = None) -> Any:
        """A new page in ``context`` (default :attr:`context`) carrying the session's crash listener."""
        page = (context if context is not None else self.context).new_page()
        if self.on_page_crash is not None:
            page.on("crash", self.on_page_crash)
        return page

    def fresh_page(self) -> Any:
        """Replace ``page`` with a new page in the same context (the :attr:`spare` one when it is ready).

        A new page has an empty history, so ``back`` cannot reach a page of an earlier episode. Routing and
        init scripts live on the context and carry over. The old page is closed now, or by the next
        :meth:`prepare_page` when a spare page was used (closing takes a browser round trip).
        """
        spare, self.spare = self.spare, None
        old, self.page = self.page, spare if spare is not None else self.new_page()
        if spare is None:
            old.close()
        else:  # whoever prepared the spare prepares the next one, and closes this then
            self.stale.append(old)
        return self.page

    def prepare_page(self, url: str | None = None) -> None:
        """Open the page the next :meth:`fresh_page` returns, at ``url`` when given, and close stale pages.

        Opening a page at the next episode's origin starts its renderer process ahead of time, so a warm reset
        only navigates within it. Run it in the background (:meth:`BrowserSession.submit`) while the agent acts.
        """
        for page in self.stale:
            page.close()
        self.stale.clear()
        if self.spare is None:
            page = self.new_page()
            if url is not None:
                # Replacing the first history entry (as the reset does after it), so "back" never reaches it.
                with page.expect_navigation(wait_until="load"):
                    page.evaluate("u => location.replace(u)", url)
            self.spare = page


@dataclass
class _Processes:
    """PIDs of the Playwright driver and the browser tree, for the kill-on-close guarantee."""

    driver: int | None = None
    browser: int | None = None
    # psutil.Process objects remember their start time, so a recycled PID is never killed by mistake.
    tree: dict[int, psutil.Process] = field(default_factory=dict)


def open_context(
    playwright: Any,
    browser: Any,
    viewport: tuple[int, int],
    device_scale_factor: float,
    call_timeout_s: float,
    on_page_crash: Callable[[Any], None],
) -> SessionHandles:
    """Handles of a new browser context with one page on ``browser`` (run in the thread that owns ``playwright``).

    Contexts are isolated like separate browsers (cookies, storage, routing) but share the browser's
    processes, so N envs on one browser cost N renderers, not N browsers. The context is opened by
    :meth:`SessionHandles.new_context`, like every further one (the prepared-reset context of
    :mod:`gui_envs.browser.prefetch`).
    """
    width, height = viewport
    handles = SessionHandles(
        playwright=playwright,
        browser=browser,
        context=None,
        page=None,
        on_page_crash=on_page_crash,
        context_options={
            "viewport": {"width": width, "height": height},
            "device_scale_factor": device_scale_factor,
            "service_workers": "block",
            "timeout_ms": call_timeout_s * 1000,
        },
    )
    handles.context = handles.new_context()
    handles.page = handles.new_page()
    return handles


class _Worker:
    """The state the worker thread owns. It never references the :class:`BrowserSession`, so an unused
    session (and the env holding it) can be garbage collected while the thread still runs."""

    def __init__(
        self,
        setup: Callable[[SessionHandles], None] | None,
        viewport: tuple[int, int],
        headless: bool,
        call_timeout_s: float,
        extra_args: tuple[str, ...],
        device_scale_factor: float = 1.0,
        lanes: bool = False,
    ) -> None:
        self.setup, self.viewport, self.headless = setup, viewport, headless
        self.device_scale_factor = device_scale_factor
        self.call_timeout_s, self.extra_args = call_timeout_s, extra_args
        self.lanes = lanes
        self.procs = _Processes()
        self.handles: SessionHandles | None = None
        self.dead_reason: str | None = None
        #: Wakes :meth:`_serve` when a caller queued a call (set only while it runs; any thread may call it).
        self.wake: Callable[[], None] | None = None
        #: The most lanes whose calls were in progress at once (0 until a call ran with lanes): how much they overlapped.
        self.most_at_once = 0

    def run(self, q: queue.Queue[Any]) -> None:
        while True:
            item = q.get()
            kind = item[0]
            if kind == "start":
                try:
                    self.launch()
                    item[1].set_result(None)
                except BaseException as exc:
                    item[1].set_exception(exc)
            elif kind == "call" and self.lanes and _can_interleave(self.handles):
                later = self.serve(item, q)
                if later:  # a stop queued while calls ran: done after them
                    q.put(later[0])
            elif kind == "call":
                _, fn, future, _lane = item
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(fn(self.handles))
                except BaseException as exc:
                    future.set_exception(exc)
            elif kind == "stop":
                self.teardown()
                item[1].set_result(None)
                return

    def serve(self, first: tuple[Any, ...], q: queue.Queue[Any]) -> list[tuple[Any, ...]]:
        """Run ``first`` and every call queued while it runs, the calls of different lanes interleaved (see
        :class:`BrowserSession`'s ``lanes``); returns when no call is left, with the non-call items it took."""
        taken: list[tuple[Any, ...]] = []
        assert self.handles is not None
        try:
            return self.handles.playwright._sync(self._serve(first, q, taken))
        except BaseException as exc:  # noqa: BLE001 - the driver connection broke: every pending call fails with it
            self.mark_dead(str(exc).splitlines()[0] if str(exc) else "the browser connection broke")
            for item in taken:
                future = item[2]
                if not future.done():
                    future.set_exception(exc)
            return []

    async def _serve(
        self, first: tuple[Any, ...], q: queue.Queue[Any], taken: list[tuple[Any, ...]]
    ) -> list[tuple[Any, ...]]:
        """The event loop's side of :meth:`serve`. Each call runs in a greenlet of its own, as Playwright runs the
        sync API's event handlers: where it waits for the browser it switches to the loop, and the loop goes on
        with the other calls. Python code between two browser calls is never interleaved with another call's."""
        import greenlet

        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        pending: list[tuple[Any, ...]] = []  # calls not started yet, in the order they were queued
        busy: set[Hashable] = set()
        later: list[tuple[Any, ...]] = []

        def take(item: tuple[Any, ...]) -> None:
            taken.append(item)
            (pending if item[0] == "call" else later).append(item)

        def start(item: tuple[Any, ...]) -> None:
            _, fn, future, lane = item
            if not future.set_running_or_notify_cancel():
                return
            busy.add(lane)
            self.most_at_once = max(self.most_at_once, len(busy))

            def body() -> None:
                try:
                    future.set_result(fn(self.handles))
                except BaseException as exc:
                    future.set_exception(exc)
                finally:
                    busy.discard(lane)
                    try:
                        wake.set()
                    except RuntimeError:  # the loop closed under a call left waiting (the session is stopping)
                        pass

            greenlet.greenlet(body).switch()  # runs until its first wait for the browser, or to its end

        def start_what_may_run() -> None:
            """Start each pending call whose lane is free and has no earlier call pending. A call of lane ``None``
            (the session's own: opening a context, reading the browser) is a barrier, as it was without lanes: it
            starts once every call queued before it has ended, and every call queued after it waits for it."""
            held: set[Hashable] = set()
            for item in list(pending):
                lane = item[3]
                if None in busy or (lane is None and (busy or held)):
                    return
                if lane not in busy and lane not in held:
                    pending.remove(item)
                    start(item)  # may end at once (no browser call): then its lane is free again
                    if lane is None:
                        return
                held.add(lane)

        def wake_threadsafe() -> None:
            try:
                loop.call_soon_threadsafe(wake.set)
            except RuntimeError:  # the loop closed (the session is stopping): nothing left to wake
                pass

        take(first)
        self.wake = wake_threadsafe  # set before the queue is read: a call queued after that read wakes the loop
        try:
            while True:
                wake.clear()
                while True:
                    try:
                        take(q.get_nowait())
                    except queue.Empty:
                        break
                start_what_may_run()
                if not busy and not pending:
                    return later
                if not wake.is_set():  # set already: a call just started has ended, and its lane may go on
                    await wake.wait()
        finally:
            self.wake = None

    def launch(self) -> None:
        from playwright.sync_api import sync_playwright

        with _START_LOCK:
            me = psutil.Process()
            before = {p.pid for p in me.children()}
            pw = sync_playwright().start()
            new = [p for p in me.children() if p.pid not in before]
        self.procs.driver = new[0].pid if new else None
        if new:
            self.procs.tree[new[0].pid] = new[0]
        browser = pw.chromium.launch(
            executable_path=find_chromium(),
            args=launch_args(SESSION_FLAGS + tuple(self.extra_args)),
            headless=self.headless,
        )
        browser.on("disconnected", lambda _b: self.mark_dead("the browser disconnected"))
        self.refresh_tree()

        def on_page_crash(_page: Any) -> None:
            self.mark_dead("the page's renderer crashed")

        self.handles = open_context(
            pw, browser, self.viewport, self.device_scale_factor, self.call_timeout_s, on_page_crash
        )
        self.refresh_tree()
        if self.setup is not None:
            self.setup(self.handles)

    def teardown(self) -> None:
        handles, self.handles = self.handles, None
        if handles is None:
            return
        for closer in (handles.browser.close, handles.playwright.stop):
            try:
                closer()
            except BaseException:  # noqa: BLE001 - best effort; the PIDs are killed afterwards anyway
                pass

    def refresh_tree(self) -> None:
        driver = self.procs.driver
        if driver is None:
            return
        try:
            kids = psutil.Process(driver).children(recursive=True)
        except psutil.Error:
            return
        for proc in kids:
            self.procs.tree.setdefault(proc.pid, proc)
            try:
                if self.procs.browser is None and proc.ppid() == driver:
                    self.procs.browser = proc.pid
            except psutil.Error:
                continue

    def mark_dead(self, reason: str) -> None:
        if self.dead_reason is None:
            self.dead_reason = reason


class BrowserSession:
    """Chromium plus one page, owned by a worker thread.

    Args:
        setup: called in the worker thread with the fresh :class:`SessionHandles` after the launch, to
            install request routing, init scripts and event handlers. It should not hold a reference to the
            object that owns the session, or that object can only be freed by ``close()``.
        viewport: ``(width, height)`` of the page in CSS pixels (= screenshot pixels at device scale 1).
        headless: run Chromium without a window.
        call_timeout_s: default Playwright timeout for page calls (seconds).
        extra_args: more Chromium flags.
        device_scale_factor: device pixels per CSS pixel (the simulated phone uses 3).
        lanes: let calls of different lanes (:meth:`call`'s ``lane``: the contexts of a
            :class:`~gui_envs.browser.shared.SharedBrowser`) overlap where they wait for the browser, instead of
            running one after another. Each lane's calls still run one at a time, in the order they were queued, and
            the Python code of a call is never interleaved with another's between two browser calls (greenlets, as
            Playwright runs its sync API's event handlers). The browser then works on several pages at once: a
            group's members step together (:class:`~gui_envs.multi.GroupEnv`).
    """

    def __init__(
        self,
        setup: Callable[[SessionHandles], None] | None = None,
        viewport: tuple[int, int] = (1280, 720),
        headless: bool = True,
        call_timeout_s: float = 10.0,
        extra_args: tuple[str, ...] = (),
        device_scale_factor: float = 1.0,
        lanes: bool = False,
    ) -> None:
        self.viewport = viewport
        self.call_timeout_s = call_timeout_s
        self._worker = _Worker(
            setup, viewport, headless, call_timeout_s, tuple(extra_args), float(device_scale_factor), lanes
        )
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(
            target=self._worker.run, args=(self._queue,), name="guigym-browser", daemon=True
        )
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._queue.put(("start", started))
        self._thread.start()
        try:
            started.result(timeout=60.0)
        except BaseException:
            _shutdown(self._queue, self._thread, self._worker.procs)
            raise
        self._finalizer = weakref.finalize(self, _shutdown, self._queue, self._thread, self._worker.procs)

    # ----- public API --------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        """False once the browser crashed or the session was closed."""
        return self._worker.dead_reason is None and self._finalizer.alive

    @property
    def browser_pid(self) -> int | None:
        """PID of the Chromium browser process."""
        return self._worker.procs.browser

    @property
    def process_tree(self) -> frozenset[int]:
        """PIDs of the driver, the browser and every browser child seen so far."""
        self._worker.refresh_tree()
        return frozenset(self._worker.procs.tree)

    def call(
        self, fn: Callable[[SessionHandles], T], timeout_s: float | None = None, lane: Hashable = None
    ) -> T:
        """Run ``fn(handles)`` in the worker thread and return its result.

        Args:
            fn: a callable that uses the Playwright objects; it runs in the worker thread.
            timeout_s: time limit for this call in seconds (default ``call_timeout_s``); Playwright calls
                inside ``fn`` carry their own timeouts, this is the backstop.
            lane: the calls' order: calls of one lane run one after another, in order; with ``lanes=True``, calls of
                different lanes may overlap (the session's own calls are lane ``None``).

        Raises:
            BrowserCrashedError: the browser died (or had died before this call).
            BrowserTimeoutError: a Playwright timeout fired inside ``fn``.
        """
        if not self.alive:
            reason = self._worker.dead_reason or "session closed"
            raise BrowserCrashedError(f"the browser is gone ({reason}); call env.reset() to relaunch it")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._put(("call", fn, future, lane))
        limit = (timeout_s if timeout_s is not None else self.call_timeout_s) + _GRACE_S
        try:
            return future.result(timeout=limit)
        except concurrent.futures.TimeoutError:
            self._worker.mark_dead(f"no answer from the browser thread within {limit:.0f} s")
            raise BrowserCrashedError(
                f"the browser stopped answering for {limit:.0f} s; env.reset() relaunches it"
            ) from None
        except BaseException as exc:
            raise self._translate(exc) from exc

    def submit(self, fn: Callable[[SessionHandles], object], lane: Hashable = None) -> None:
        """Queue ``fn(handles)`` to run in the worker thread without waiting for it (background work such as
        :meth:`SessionHandles.prepare_page`). The next :meth:`call` of its ``lane`` runs after it; its errors are
        logged only."""
        if not self.alive:
            return
        future: concurrent.futures.Future[object] = concurrent.futures.Future()
        future.add_done_callback(_log_failure)
        self._put(("call", fn, future, lane))

    def _put(self, item: tuple[Any, ...]) -> None:
        self._queue.put(item)
        wake = self._worker.wake  # read after the put: see _Worker._serve
        if wake is not None:
            wake()

    def close(self) -> None:
        """Close the browser and stop the worker thread; idempotent."""
        self._finalizer()

    def __enter__(self) -> BrowserSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- helpers -----------------------------------------------------------------------------------
    def _translate(self, exc: BaseException) -> BaseException:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

        if isinstance(exc, PlaywrightTimeoutError):
            return BrowserTimeoutError(str(exc).splitlines()[0])
        if isinstance(exc, PlaywrightError):
            message = str(exc)
            closed = any(
                s in message
                for s in ("has been closed", "Target crashed", "Connection closed", "Browser closed")
            )
            if closed or self._worker.dead_reason is not None or not self._browser_alive():
                self._worker.mark_dead(message.splitlines()[0] if message else "the browser died")
                return BrowserCrashedError(
                    f"the browser crashed or was killed ({self._worker.dead_reason}); env.reset() relaunches it"
                )
        return exc

    def _browser_alive(self) -> bool:
        pid = self._worker.procs.browser
        if pid is None:
            return True
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False


def _can_interleave(handles: SessionHandles | None) -> bool:
    """Whether the sync API's internals that :meth:`_Worker.serve` drives are there (Playwright's private
    ``_sync``; a version without it runs every call one after another, as ``lanes=False`` does)."""
    return handles is not None and callable(getattr(handles.playwright, "_sync", None))


def _log_failure(future: concurrent.futures.Future[object]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.debug("background browser work failed: %s", future.exception())


def _shutdown(q: queue.Queue[Any], thread: threading.Thread, procs: _Processes, wait_s: float = 10.0) -> None:
    """Stop the worker thread and make sure every process of the browser tree is gone.

    A module-level function so that ``weakref.finalize`` holds no reference to the session.
    """
    if thread.is_alive():
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        q.put(("stop", done))
        try:
            done.result(timeout=wait_s)
        except BaseException:  # noqa: BLE001 - a hung thread is handled by the kill below
            pass
    kill_processes(list(procs.tree.values()))


def kill_processes(processes: list[psutil.Process]) -> None:
    """SIGKILL every listed process that is still running (and its children), then reap them."""
    victims: list[psutil.Process] = []
    for proc in processes:
        try:
            if proc.is_running():
                victims.extend(proc.children(recursive=True))
                victims.append(proc)
        except psutil.Error:
            continue
    for proc in victims:
        try:
            proc.kill()
        except psutil.Error:
            continue
    # Our own children (the Playwright driver) must be reaped by us; the browser's processes are not our
    # children, and once killed they are zombies until their new parent reaps them. A zombie holds no
    # resources, so it counts as gone: waiting for init to reap it cost seconds per close.
    own = [p for p in victims if _parent_pid(p) == os.getpid()]
    psutil.wait_procs(own, timeout=5.0)
    deadline = time.monotonic() + 5.0
    pending = [p for p in victims if p not in own]
    while pending and time.monotonic() < deadline:
        pending = [p for p in pending if _running(p)]
        if pending:
            time.sleep(0.01)


def _parent_pid(proc: psutil.Process) -> int | None:
    try:
        return proc.ppid()
    except psutil.Error:
        return None


def _running(proc: psutil.Process) -> bool:
    """True while ``proc`` is alive and not a zombie."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
