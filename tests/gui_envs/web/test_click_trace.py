"""``benchmarks/click_trace.py``: one GuiWeb click enters each env module once (issue 27 item 2)."""

from __future__ import annotations

import gymnasium as gym

from benchmarks.click_trace import Trace, click_step_trace, trace_calls


def test_trace_counts_stops_and_reentries() -> None:
    trace = Trace(["web/env.py", "browser/page.py", "web/env.py", "web/env.py"])
    assert trace.modules == ["web/env.py", "browser/page.py"]
    assert trace.reentries == {"web/env.py": 2}


def test_trace_records_calls_from_another_module_only() -> None:
    from gui_envs.browser.routing import NetLog

    net = NetLog(blocked=["x"])
    trace, result = trace_calls(net.take)
    assert result == (["x"], []) and trace.stops == ["browser/routing.py"]


def test_a_click_enters_each_env_module_once() -> None:
    env = gym.make("GuiWeb-v0")
    try:
        trace = click_step_trace(env)
    finally:
        env.close()
    # The env's step, its plumbing (page, session, routing, observation), the task logic (tasks/env.py, the
    # oracle) and the site's state are each entered once. The one re-entry allowed is a template's goal calling
    # back its base class's helper (forum.py's goal -> web/tasks/base.py's opened_first): that is what a template
    # method is.
    assert trace.env_reentries == {}
    assert set(trace.reentries) <= {"web/tasks/base.py"} and sum(trace.reentries.values()) <= 1, trace.stops
    assert trace.stops.count("browser/site.py") == 1, trace.stops
    for module in (
        "web/env.py",
        "tasks/env.py",
        "browser/page.py",
        "browser/observation.py",
        "tasks/oracle.py",
    ):
        assert trace.stops.count(module) == 1, (module, trace.stops)
