"""The sandbox: the paper's shape is accepted, hostile code is rejected or stopped, the host survives."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from gui_envs.verifiers import (
    Crashed,
    Rejected,
    TimedOut,
    check_source,
    run_label_function,
    run_label_functions,
)
from gui_envs.verifiers.sandbox import _POOL
from tests.gui_envs.verifiers.helpers import fn, wishlist_view

GOOD = """from Function_APIs import *
def verify_function(trajectory, stop_page_url):
    # Check if the 'Add to Wish List' link was clicked
    if not validate_click_or_hover_action(trajectory, 'click', 'A', 'Add to Wish List'):
        return False
    if not validate_item_in_wishlist(trajectory, 'Crunchy Almonds'):
        return False
    return True
# Execute and return result
result = verify_function(trajectory, stop_page_url)
"""

MARK = Path("/tmp") / f"guigym_sandbox_escape_{os.getpid()}"


def body(line: str) -> str:
    """A label function whose body runs ``line`` (hostile code inside the accepted frame)."""
    return f"from Function_APIs import *\ndef verify_function(trajectory):\n    {line}\n    return True\nresult = verify_function(trajectory)\n"


HOSTILE: dict[str, str] = {
    "import os": "import os\n" + GOOD,
    "from os import system": "from os import system\n" + GOOD,
    "relative import": "from .Function_APIs import *\n" + GOOD.split("\n", 1)[1],
    "import in body": body("import os"),
    "open() write": body(f"open('{MARK}', 'w').write('x')"),
    "__import__": body("__import__('os').system('touch " + str(MARK) + "')"),
    "class mro walk": body("().__class__.__mro__[1].__subclasses__()"),
    "getattr trick": body("getattr(trajectory, '__class__')"),
    "attribute on trajectory": body("trajectory.steps"),
    "subscript": body("if not validate_click_action(trajectory, [1][0]): return False"),
    "while True": body("while True: pass"),
    "for loop": body("for i in range(10**9): pass"),
    "deep recursion": "from Function_APIs import *\ndef verify_function(trajectory):\n    if not verify_function(trajectory): return False\n    return True\nresult = verify_function(trajectory)\n",
    "memory bomb": body("x = 'a' * 10**10"),
    "huge literal": body("x = '" + "a" * 50_000 + "'"),
    "huge int literal": body("if not validate_click_action(trajectory, 10**100): return False"),
    "huge source": GOOD + "#" * 30_000,
    "socket": body("import socket; socket.create_connection(('example.com', 80))"),
    "exec": body("exec('import os')"),
    "eval": body("eval('1+1')"),
    "compile": body("compile('1', 'x', 'eval')"),
    "syntax error": "def verify_function(trajectory)\n    return True\n",
    "lambda": body("f = lambda: 1"),
    "global": body("global x"),
    "comprehension": body("[x for x in range(10)]"),
    "generator": body("(x for x in range(10))"),
    "try/except": body("try:\n        pass\n    except Exception:\n        pass"),
    "with": body("with open('/etc/passwd') as f: pass"),
    "nested def": body("def g(): return 1"),
    "class": "class X: pass\n" + GOOD,
    "decorator": GOOD.replace("def verify", "@validate_click_action\ndef verify"),
    "dunder param": GOOD.replace("(trajectory, stop_page_url):", "(trajectory, __builtins__):"),
    "environ via name": body("if not validate_click_action(trajectory, environ): return False"),
    "no result": "from Function_APIs import *\ndef verify_function(trajectory):\n    return True\n",
    "two defs": GOOD + "def verify_function(trajectory):\n    return True\n",
    "code after result": GOOD + "x = 1\n",
    "result from other call": GOOD.replace("result = verify_function(trajectory, stop_page_url)", "result = open('/etc/passwd')"),
    "non-bool return": body("return trajectory"),
    "nested if": body("if validate_click_action(trajectory, 'a'):\n        if validate_click_action(trajectory, 'b'): return False"),
    "walrus": body("if (x := validate_click_action(trajectory, 'a')): return False"),
    "f-string": body("if not validate_click_action(trajectory, f'{trajectory}'): return False"),
    "star args": body("if not validate_click_action(*trajectory): return False"),
    "kwargs splat": body("if not validate_click_action(trajectory, **{}): return False"),
    "yield": body("yield 1"),
    "await": "async def verify_function(trajectory):\n    return True\nresult = verify_function(trajectory)\n",
    "assert": body("assert False"),
    "raise": body("raise SystemExit(0)"),
    "delete": body("del trajectory"),
    "bytes literal": body("if not validate_click_action(trajectory, b'x'): return False"),
    "not a string": None,  # type: ignore[dict-item]
}


def test_the_paper_shape_is_accepted() -> None:
    assert check_source(GOOD) is None
    verdict = run_label_function(GOOD, wishlist_view())
    assert verdict.passed is True and verdict.error is None


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_code_is_rejected_or_stopped(name: str) -> None:
    assert len(HOSTILE) >= 30
    start = time.monotonic()
    verdict = run_label_function(HOSTILE[name], wishlist_view(), timeout_s=2.0)  # type: ignore[arg-type]
    elapsed = time.monotonic() - start
    assert verdict.passed is None, (name, verdict)
    assert isinstance(verdict.error, (Rejected, TimedOut, Crashed)), (name, verdict)
    assert elapsed < 2.5, (name, elapsed)
    assert not MARK.exists()
    # The host is alive (we are here) and the next verdict is still right.
    assert run_label_function(GOOD, wishlist_view()).passed is True
    assert run_label_function(GOOD, wishlist_view(item="Spicy Pretzels")).passed is False


def test_rejections_name_the_line() -> None:
    err = check_source(HOSTILE["import in body"])
    assert isinstance(err, Rejected) and err.message.startswith("line 3:"), err


def test_worker_limits_stop_what_slips_past_the_parser() -> None:
    """Layer 2 alone: run code the parser would reject straight in the worker (as if a parser bug let it by)."""
    jobs = {
        "loop": "while True: pass\nresult = True",
        "memory": "x = bytearray(2 * 1024 ** 3)\nresult = True",
        "write": f"open('{MARK}', 'w').write('x')\nresult = True",
        "builtins": "result = __builtins__['__import__']('os').getcwd() == '/'",
    }
    for name, code in jobs.items():
        start = time.monotonic()
        (verdict,) = _POOL.run([(code, f"direct-{name}", wishlist_view().to_json())], timeout_s=1.0)
        assert verdict.passed is None and isinstance(verdict.error, (TimedOut, Crashed)), (name, verdict)
        assert time.monotonic() - start < 2.0
    assert not MARK.exists()
    assert run_label_function(GOOD, wishlist_view()).passed is True


def test_a_batch_keeps_order_and_isolates_bad_functions() -> None:
    bad = HOSTILE["while True"]
    wrong = GOOD.replace("Crunchy Almonds", "Spicy Pretzels")
    out = run_label_functions([GOOD, bad, wrong], [wishlist_view(), wishlist_view(click=False)])
    assert [v.passed for v in out[0]] == [True, None, False]
    assert [v.passed for v in out[1]] == [False, None, False]


def _verdict_in_child(queue: Any) -> None:
    queue.put(run_label_function(GOOD, wishlist_view()).passed)


def test_a_forked_host_gets_its_own_worker() -> None:
    import multiprocessing

    assert run_label_function(GOOD, wishlist_view()).passed is True  # the parent's worker is running
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_verdict_in_child, args=(queue,))
    child.start()
    assert queue.get(timeout=20) is True
    child.join(20)
    assert run_label_function(GOOD, wishlist_view(item="Spicy Pretzels")).passed is False


# ----- batches of any size (issue 23: 1,500 functions on one trajectory deadlocked host and worker) ----------
def _batch(n: int) -> list[str]:
    """``n`` distinct functions; every seventh one passes on :func:`wishlist_view`."""
    return [
        fn(f"validate_click_action(trajectory, {'Crunchy Almonds' if i % 7 == 0 else f'Item {i}'!r})") for i in range(n)
    ]


def _in_thread(call: Any, limit_s: float) -> Any:
    """``call()`` in a daemon thread; fails (instead of hanging the suite) when it has not returned in ``limit_s``."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(limit_s)
    assert not thread.is_alive(), f"no answer within {limit_s} s: host and worker are deadlocked"
    return result[0]


@pytest.mark.parametrize("n", [1, 1_199, 1_500, 5_000, 10_000])
def test_a_batch_of_any_size_gets_its_verdicts(n: int) -> None:
    codes = _batch(n)
    start = time.monotonic()
    (row,) = _in_thread(lambda: run_label_functions(codes, [wishlist_view()]), limit_s=120)
    elapsed = time.monotonic() - start
    print(f"{n} functions: {elapsed:.2f} s")
    assert [v.passed for v in row] == [i % 7 == 0 for i in range(n)]
    # Speed is benchmarks/verifier_speed.py's to measure; the 120 s deadline above is the deadlock check.
    # The pool is free again: the next call is answered, and right.
    assert _in_thread(lambda: run_label_function(GOOD, wishlist_view(item="Spicy Pretzels")), 20).passed is False


def test_a_hanging_function_in_a_big_batch_is_timed_out_and_the_rest_judged() -> None:
    view = wishlist_view().to_json()
    codes = _batch(3_000)
    hang = 1_700  # past the old deadlock size: the hang happens with request bytes still unsent
    jobs = [("while True: pass\nresult = True" if i == hang else c, "hang-batch", view) for i, c in enumerate(codes)]
    start = time.monotonic()
    verdicts = _in_thread(lambda: _POOL.run(jobs, timeout_s=1.0), limit_s=60)
    elapsed = time.monotonic() - start
    assert isinstance(verdicts[hang].error, TimedOut)
    assert [v.passed for i, v in enumerate(verdicts) if i != hang] == [i % 7 == 0 for i in range(3_000) if i != hang]
    assert elapsed < 1.0 + 20, elapsed
    assert run_label_function(GOOD, wishlist_view()).passed is True


def test_a_hanging_call_does_not_block_another_thread() -> None:
    jobs = [("while True: pass\nresult = True", "hang-thread", wishlist_view().to_json())]
    stuck = threading.Thread(target=lambda: _POOL.run(jobs, timeout_s=1.5), daemon=True)
    stuck.start()
    time.sleep(0.2)  # the hanging call holds the worker now
    start = time.monotonic()
    assert _in_thread(lambda: run_label_function(GOOD, wishlist_view()), limit_s=20).passed is True
    assert time.monotonic() - start < 1.5 + 5  # it waited for the time-out at most, not for ever
    stuck.join(10)
    assert not stuck.is_alive()
