"""The sandbox for untrusted label functions: a parser whitelist, then a limited worker process.

Label functions come from an LLM (seed 002, section 3.1, App. B prompt), so they are untrusted code. Two
layers keep the host safe:

1. **Parse first** (:func:`check_source`). Only the paper's shape is accepted: an optional
   ``from Function_APIs import *``; one ``def verify_function(trajectory, ...)`` whose body is a docstring,
   ``if not <API call>: return False`` (or ``if <API call>`` / ``and`` / ``or`` of API calls), ``pass`` and
   ``return True|False``; and a trailing ``result = verify_function(<names>)``. Inside calls: literals, the
   function's parameter names, keywords, unary minus, lists and tuples of those. Anything else (other
   imports, attribute access, subscripts, dunder names, loops, comprehensions, calls outside :data:`API`,
   ``lambda``, ``global``, ``with``, ``try``...) is a :class:`Rejected` verdict naming the line. Source over
   :data:`MAX_SOURCE_CHARS` characters or a literal over :data:`MAX_LITERAL_CHARS` is rejected too.
2. **Run in a worker process** (:mod:`gui_envs.verifiers._worker`): a fresh isolated interpreter with an empty
   environment, no builtins but the ``Function_APIs`` import, an address-space limit, no file writes, no new
   file descriptors (so no sockets) and no child processes. The host waits at most ``timeout_s`` per function;
   a worker that overruns is killed and replaced (:class:`TimedOut`); one that dies or whose function raises
   gives :class:`Crashed`. Only JSON comes back from it.

The worker is started once and reused (start-up is about 50 ms; a verdict then costs well under a millisecond),
so a training loop can verify batches (:func:`run_label_functions`, ``benchmarks/verifier_speed.py``) of any
size: the host writes a batch's request in the pieces the pipe takes while it reads the verdicts, so neither side
waits on a full pipe (10,000 functions on one trajectory take about a second).

**Time limit.** Each function gets ``timeout_s`` seconds (default 2), counted from the moment the worker could
start it (its previous verdict, or the last request bytes it took). A function that overruns gets
:class:`TimedOut`, its worker is killed and a fresh one (about 50 ms) runs the rest of the batch, so a call of
``n`` functions on ``m`` trajectories returns within ``n * m * (timeout_s + 0.1)`` seconds at the very worst, and
much sooner in practice. Calls from several threads take turns on the one worker; a time-out always releases it.
"""

from __future__ import annotations

import ast
import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui_envs.verifiers.api import API, TrajectoryView, view_of

MAX_SOURCE_CHARS = 20_000
MAX_LITERAL_CHARS = 2_000
#: The worker's address-space limit, bytes (an idle worker uses about 30 MB).
MEMORY_LIMIT_BYTES = 512 * 1024 * 1024
_WORKER = Path(__file__).with_name("_worker.py")


class VerdictError:
    """Why a label function has no True/False verdict; held in :attr:`Verdict.error`, never raised."""

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def __str__(self) -> str:
        return f"{type(self).__name__}: {self.message}"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.message == self.message  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.message))


class Rejected(VerdictError):
    """The source is not of the accepted shape; the message names the line and how to fix it."""


class TimedOut(VerdictError):
    """The function ran past ``timeout_s``; its worker was killed."""


class Crashed(VerdictError):
    """The function raised, returned a non-bool ``result``, or its worker died (memory limit...)."""


@dataclass(frozen=True)
class Verdict:
    """A label function's verdict on one trajectory.

    Attributes:
        passed: ``True`` / ``False``, or ``None`` when it did not run to the end (see ``error``).
        error: :class:`Rejected`, :class:`TimedOut` or :class:`Crashed`, else ``None``.
        calls: each validator call in order: ``(name, passed, match steps)`` (see :mod:`gui_envs.verifiers.api`).
    """

    passed: bool | None
    error: VerdictError | None = None
    calls: tuple[tuple[str, bool, tuple[int, ...]], ...] = field(default=())

    @property
    def match_steps(self) -> tuple[int, ...]:
        """When the function passed (steps): the match steps of its last validator call, from the latest first
        match of the earlier calls on (the strategy graph orders functions by these)."""
        if not self.passed or not self.calls:
            return ()
        floor = max((min(c[2]) for c in self.calls[:-1] if c[2]), default=-1)
        return tuple(t for t in self.calls[-1][2] if t >= floor) or (max(floor, max(self.calls[-1][2], default=-1)),)


# ----- layer 1: the whitelist -------------------------------------------------------------------------------
class _Reject(Exception):
    pass


def _fail(node: ast.AST | None, why: str) -> _Reject:
    line = getattr(node, "lineno", None)
    return _Reject(f"line {line}: {why}" if line is not None else why)


def _check_value(node: ast.expr, params: set[str]) -> None:
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (str, int, float, bool, type(None))):
            raise _fail(node, f"literal of type {type(node.value).__name__} is not allowed")
        if isinstance(node.value, str) and len(node.value) > MAX_LITERAL_CHARS:
            raise _fail(node, f"a string literal longer than {MAX_LITERAL_CHARS} characters")
        if isinstance(node.value, int) and abs(node.value) > 10**18:
            raise _fail(node, "an integer literal beyond 10**18")
    elif isinstance(node, ast.Name):
        if node.id not in params:
            raise _fail(node, f"name {node.id!r} is not a parameter of verify_function")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        _check_value(node.operand, params)
    elif isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) <= 64:
        for elt in node.elts:
            _check_value(elt, params)
    else:
        raise _fail(node, f"{type(node).__name__} is not allowed as an argument (use literals or parameter names)")


def _check_call(node: ast.expr, params: set[str]) -> None:
    if not isinstance(node, ast.Call):
        raise _fail(node, f"{type(node).__name__} is not allowed in a condition: call one validator per if")
    if not isinstance(node.func, ast.Name) or node.func.id not in API:
        what = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
        raise _fail(node, f"call to {what!r} is outside Function_APIs (allowed: validate_* from the API)")
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise _fail(arg, "*arguments are not allowed")
        _check_value(arg, params)
    for kw in node.keywords:
        if kw.arg is None:
            raise _fail(node, "**keyword arguments are not allowed")
        _check_value(kw.value, params)


def _check_condition(node: ast.expr, params: set[str]) -> None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _check_condition(node.operand, params)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _check_condition(value, params)
    else:
        _check_call(node, params)


def _check_body(body: list[ast.stmt], params: set[str], nested: bool) -> None:
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str) and i == 0:
            _check_value(stmt.value, params)
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.Return):
            if not (isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, bool)):
                raise _fail(stmt, "return only True or False")
        elif isinstance(stmt, ast.If) and not nested:
            _check_condition(stmt.test, params)
            _check_body(stmt.body, params, nested=True)
            if stmt.orelse:
                raise _fail(stmt, "else/elif is not allowed: one `if not <API call>: return False` per key step")
        else:
            kind = "a nested if" if isinstance(stmt, ast.If) else type(stmt).__name__
            raise _fail(stmt, f"{kind} is not allowed in verify_function")


def _check_module(tree: ast.Module) -> None:
    defs = 0
    params: set[str] = set()
    result_seen = False
    for stmt in tree.body:
        if result_seen:
            raise _fail(stmt, "nothing may follow `result = verify_function(...)`")
        if isinstance(stmt, ast.ImportFrom):
            if stmt.module != "Function_APIs" or stmt.level or [a.name for a in stmt.names] != ["*"]:
                raise _fail(stmt, "the only import allowed is `from Function_APIs import *`")
        elif isinstance(stmt, ast.Import):
            raise _fail(stmt, "imports are not allowed (only `from Function_APIs import *`)")
        elif isinstance(stmt, ast.FunctionDef):
            defs += 1
            if stmt.name != "verify_function" or defs > 1:
                raise _fail(stmt, "define exactly one function, named verify_function")
            args = stmt.args
            if stmt.decorator_list or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or stmt.returns:
                raise _fail(stmt, "verify_function takes plain parameters only (no decorators, *args, **kwargs)")
            if not args.args or args.args[0].arg != "trajectory":
                raise _fail(stmt, "the first parameter of verify_function must be `trajectory`")
            params = {a.arg for a in args.args}
            for a in args.args:
                if a.annotation is not None or a.arg.startswith("__"):
                    raise _fail(stmt, f"parameter {a.arg!r}: no annotations or dunder names")
            for default in args.defaults:
                _check_value(default, set())
            _check_body(stmt.body, params, nested=False)
        elif isinstance(stmt, ast.Assign):
            target, value = stmt.targets, stmt.value
            ok = (
                defs == 1
                and len(target) == 1
                and isinstance(target[0], ast.Name)
                and target[0].id == "result"
                and isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "verify_function"
                and not value.keywords
                and all(isinstance(a, ast.Name) and a.id in ("trajectory", "stop_page_url") for a in value.args)
            )
            if not ok:
                raise _fail(stmt, "the only assignment allowed is `result = verify_function(trajectory, ...)` "
                            "after the def, passing `trajectory` and `stop_page_url` only")
            result_seen = True
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            _check_value(stmt.value, set())
        else:
            raise _fail(stmt, f"{type(stmt).__name__} is not allowed at the top level")
    if defs != 1:
        raise _Reject("define exactly one function, named verify_function")
    if not result_seen:
        raise _Reject("end with `result = verify_function(trajectory)` (or `(trajectory, stop_page_url)`)")


def check_source(code: Any) -> Rejected | None:
    """``None`` when ``code`` has the accepted shape (see the module docstring), else the :class:`Rejected`."""
    if not isinstance(code, str):
        return Rejected(f"the code must be a str, got {type(code).__name__}")
    if len(code) > MAX_SOURCE_CHARS:
        return Rejected(f"the source is {len(code)} characters; at most {MAX_SOURCE_CHARS} are accepted")
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return Rejected(f"line {exc.lineno}: syntax error: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return Rejected(f"the source does not parse: {type(exc).__name__}")
    try:
        _check_module(tree)
    except _Reject as exc:
        return Rejected(str(exc))
    except RecursionError:
        return Rejected("the source nests too deeply")
    return None


# ----- layer 2: the worker -------------------------------------------------------------------------------------
class _Worker:
    """One limited worker process, started on demand and replaced when it times out or dies."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.sent: set[str] = set()
        self.lock = threading.Lock()
        self.counter = 0
        self.pid = os.getpid()

    def start(self) -> subprocess.Popen[bytes]:
        if self.proc is not None and self.pid != os.getpid():
            # A forked copy of the host (a trainer's worker) must not share the parent's pipes: start its own.
            self.proc, self.sent = None, set()
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_WORKER), str(MEMORY_LIMIT_BYTES)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={},
                cwd="/",
                bufsize=0,
                close_fds=True,
            )
            assert self.proc.stdin is not None
            # Requests go out in whatever pieces the pipe takes while replies are read (see _stream).
            os.set_blocking(self.proc.stdin.fileno(), False)
            self.sent, self.pid = set(), os.getpid()
        return self.proc

    def stop(self) -> None:
        if self.proc is not None and self.pid == os.getpid():
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
        self.proc, self.sent = None, set()

    def run(self, jobs: Sequence[tuple[str, str, dict[str, Any]]], timeout_s: float) -> list[Verdict]:
        """Run ``(code, view key, view json)`` jobs in order, each under ``timeout_s`` seconds (see
        :func:`run_label_functions` for the limit); after a time-out or a crash the worker is replaced and the
        jobs not yet judged are sent again."""
        out: list[Verdict] = []
        with self.lock:
            try:
                start = 0
                while start < len(jobs):
                    key = jobs[start][1]
                    stop = start
                    while stop < len(jobs) and jobs[stop][1] == key:
                        stop += 1
                    out.extend(self._group(jobs[start:stop], timeout_s))
                    start = stop
            except BaseException:
                # Interrupted half-way (KeyboardInterrupt...): the worker may still owe replies, so the next
                # call gets a fresh one rather than someone else's verdicts.
                self.stop()
                raise
        return out

    def _group(self, jobs: Sequence[tuple[str, str, dict[str, Any]]], timeout_s: float) -> list[Verdict]:
        out: list[Verdict] = []
        while len(out) < len(jobs):
            try:
                out.extend(self._stream(jobs[len(out) :], timeout_s))
            except (OSError, EOFError, ValueError) as exc:
                self.stop()
                out.append(Verdict(None, Crashed(f"the worker died ({type(exc).__name__}); it was restarted")))
        return out

    def _stream(self, jobs: Sequence[tuple[str, str, dict[str, Any]]], timeout_s: float) -> list[Verdict]:
        """Send one view's jobs and read their verdicts at the same time; stops early after a time-out or a
        restart (the caller sends the rest again).

        The request is written without blocking, in the pieces the pipe accepts, while replies are read: a
        batch bigger than both pipe buffers used to leave host and worker each blocked writing into the other's
        full pipe, for ever. The worker must show progress (take request bytes, or answer) within
        ``timeout_s``; it reads only between functions, so a function that runs past ``timeout_s`` stops both.
        """
        proc = self.start()
        assert proc.stdin is not None and proc.stdout is not None
        request, first = self._request(jobs)
        fd_in, fd_out = proc.stdin.fileno(), proc.stdout.fileno()
        out: list[Verdict] = []
        written, received = 0, b""
        deadline = time.monotonic() + timeout_s
        while True:
            if b"\n" in received:
                *lines, received = received.split(b"\n")
                for line in lines:
                    if len(out) == len(jobs):  # more replies than jobs: this worker cannot be trusted further
                        self.stop()
                        return out
                    verdict = self._verdict(json.loads(line), first + len(out))
                    out.append(verdict)
                    if verdict.error is not None and "restarted" in verdict.error.message:
                        return out
            if len(out) == len(jobs):
                if received:  # a partial line nobody asked for
                    self.stop()
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                return [*out, Verdict(None, TimedOut(f"no verdict within {timeout_s:g} s; the worker was killed"))]
            readable, writable, _ = select.select([fd_out], [fd_in] if written < len(request) else [], [], left)
            if writable:
                try:
                    written += os.write(fd_in, request[written : written + (1 << 16)])
                    deadline = time.monotonic() + timeout_s
                except BlockingIOError:
                    pass  # the pipe filled between select and write
            if readable:
                chunk = os.read(fd_out, 1 << 16)
                if not chunk:
                    raise EOFError("the worker exited")
                received += chunk
                deadline = time.monotonic() + timeout_s

    def _request(self, jobs: Sequence[tuple[str, str, dict[str, Any]]]) -> tuple[bytes, int]:
        """One view (if the worker lacks it) and its jobs as JSON lines; also the first job's id."""
        lines = []
        if len(self.sent) > 256:
            lines.append({"forget": True})
            self.sent = set()
        key, view = jobs[0][1], jobs[0][2]
        if key not in self.sent:
            lines.append({"key": key, "view": view})
            self.sent.add(key)
        first = self.counter + 1
        for code, _, _ in jobs:
            self.counter += 1
            lines.append({"id": self.counter, "key": key, "code": code})
        return "".join(json.dumps(m, separators=(",", ":")) + "\n" for m in lines).encode(), first

    def _verdict(self, reply: Any, expected_id: int) -> Verdict:
        if not isinstance(reply, dict) or reply.get("id") != expected_id:
            self.stop()
            return Verdict(None, Crashed("the worker answered out of turn; it was restarted"))
        if "crash" in reply:
            return Verdict(None, Crashed(str(reply["crash"])[:300]))
        try:
            calls = tuple((str(n), bool(p), tuple(int(t) for t in s)) for n, p, s in reply.get("log", []))
            return Verdict(bool(reply["passed"]), None, calls)
        except (TypeError, ValueError, KeyError):
            return Verdict(None, Crashed("the worker's reply was malformed"))


_POOL = _Worker()
atexit.register(_POOL.stop)


def _as_view(trajectory: Any) -> TrajectoryView | Crashed:
    try:
        return view_of(trajectory)
    except Exception as exc:  # a trajectory that cannot be read is that verdict's fault, not the caller's
        return Crashed(f"the trajectory could not be read: {type(exc).__name__}: {exc}")


def run_label_functions(
    codes: Sequence[str], trajectories: Sequence[Any], timeout_s: float = 2.0
) -> list[list[Verdict]]:
    """Every label function on every trajectory: ``out[j][i]`` is function ``i`` on trajectory ``j``.

    Each function gets ``timeout_s`` seconds per trajectory, so the call returns within
    ``len(codes) * len(trajectories) * (timeout_s + 0.1)`` seconds whatever the batch size (the module
    docstring's time limit). Never raises for bad code or bad trajectories.
    """
    checks = [check_source(c) for c in codes]
    out: list[list[Verdict]] = []
    for trajectory in trajectories:
        view = _as_view(trajectory)
        if isinstance(view, Crashed):
            out.append([Verdict(None, view) for _ in codes])
            continue
        data = view.to_json()
        key = f"{id(view)}-{os.getpid()}-{time.monotonic_ns()}"
        jobs = [(code, key, data) for code, check in zip(codes, checks, strict=True) if check is None]
        ran = iter(_POOL.run(jobs, timeout_s))
        out.append([Verdict(None, check) if check is not None else next(ran) for check in checks])
    return out


def run_label_function(code: str, trajectory: Any, timeout_s: float = 2.0) -> Verdict:
    """Run one label function on one trajectory (a ``Trajectory``, a saved folder, or a view).

    Returns a :class:`Verdict`; never raises.
    """
    try:
        return run_label_functions([code], [trajectory], timeout_s)[0][0]
    except Exception as exc:  # the contract is a verdict, whatever happens
        return Verdict(None, Crashed(f"{type(exc).__name__}: {exc}"))
