"""Blind policies against the answer and infeasible judges of the web and phone tasks, without a browser.

A judge is a referee: a trainer optimises whatever it pays for, so a judge that a blind policy can pass teaches
the loophole. This module plays policies that never look at a page against every answer and infeasible
template, and scores them with the template's own judge, evaluated directly from the task object and its seeded
app state. That is what the envs do too: answer judges read only the ``stop`` action; the phone's infeasible
judge reads the app's ``searches`` table (empty when the agent did not search); the web's reads the visited
URLs, which for a policy that stops at step 1 are the start page alone (:func:`build_task` sets exactly that).

Policies (each returns the ``stop`` actions it plays, one per episode, all at step 1):

* ``list_every_option``: one answer listing every candidate (:meth:`AnswerTask.candidates`), comma separated;
* ``echo_question``: the instruction as the answer;
* ``empty``: an empty answer;
* ``stop_at_once``: a bare ``stop`` with each status (success, failure, infeasible), one episode each;
* ``each_candidate``: each candidate in turn, one guess per episode; a judge that cannot be gamed passes
  exactly one, so its success rate is ``1 / #candidates``, a blind guess.

The first four must score 0. ``benchmarks/judge_audit.py`` prints the table; the adversarial tests assert it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gui_envs.actions import MAX_ANSWER_CHARS, Action
from gui_envs.android.apps import default_apps
from gui_envs.android.tasks import TASKS as PHONE_TASKS
from gui_envs.android.tasks.base import PhoneState
from gui_envs.browser.site import SiteState
from gui_envs.tasks.base import AnswerTask, InfeasibleTask, Task
from gui_envs.web.tasks import SITES
from gui_envs.web.tasks import TASKS as WEB_TASKS

#: The task families audited, by name.
FAMILIES = ("web", "phone")
STATUSES = ("success", "failure", "infeasible")
#: The policies that must score exactly 0 (``each_candidate`` must score chance instead).
ZERO_POLICIES = ("list_every_option", "echo_question", "empty", "stop_at_once")


def templates(family: str) -> list[str]:
    """The answer and infeasible template names of ``family`` (``"web"`` or ``"phone"``), sorted."""
    pools = {"web": WEB_TASKS, "phone": PHONE_TASKS}
    if family in pools:
        return sorted(n for n, t in pools[family].items() if issubclass(t, (AnswerTask, InfeasibleTask)))
    raise ValueError(f"unknown family {family!r}; choose from {FAMILIES}")


def is_answer_task(task: Any) -> bool:
    return isinstance(task, AnswerTask)


class _States:
    """One live database per web site and per phone app, restored to a seed for each task built."""

    def __init__(self) -> None:
        self.web = {host: SiteState(site) for host, site in SITES.items()}
        self.phone = {app.package: SiteState(app) for app in default_apps()}


_STATES: _States | None = None


def build_task(family: str, name: str, seed: int) -> Any:
    """The task ``name`` of ``family`` on task seed ``seed``, as the env's ``reset`` builds it, with no browser.

    The site or app databases are restored from the seed and the task drawn with the env's generator
    (``[seed, 7]`` on the web, ``[seed, 11]`` on the phone), so the parameters equal the env's. A web task's
    ``visited`` holds its start page only: what the env records before the agent's first step. The databases
    are shared module state, so a task is only valid until the next call.
    """
    global _STATES
    if _STATES is None:
        _STATES = _States()
    if family == "web":
        cls = WEB_TASKS[name]
        state = _STATES.web[cls.site]
        state.restore(seed)
        task = cls(state, np.random.default_rng([seed, 7]))
        task.visited = [state.site.origin + task.start_path]
        return task
    if family == "phone":
        for app_state in _STATES.phone.values():
            app_state.restore(seed)
        return PHONE_TASKS[name](PhoneState(apps=_STATES.phone), np.random.default_rng([seed, 11]))
    raise ValueError(f"unknown family {family!r}; choose from {FAMILIES}")


def judge(task: Task, stop: Action) -> float:
    """The task's score for an episode whose only action is ``stop``."""
    return float(task.evaluate(stop))


def candidates(task: Any) -> list[str]:
    """The task's distinct candidate answers (none for an infeasible task)."""
    return list(dict.fromkeys(task.candidates())) if is_answer_task(task) else []


def every_option(task: Any) -> str:
    """All candidates, comma-separated, cut at the last whole candidate that fits an answer
    (:data:`~gui_envs.actions.MAX_ANSWER_CHARS`): the longest list a ``stop`` action can carry."""
    answer = ""
    for option in candidates(task):
        longer = f"{answer}, {option}" if answer else option
        if len(longer) > MAX_ANSWER_CHARS:
            break
        answer = longer
    return answer


POLICIES: dict[str, Callable[[Any], list[Action]]] = {
    "list_every_option": lambda t: [Action.stop(answer=every_option(t))],
    "echo_question": lambda t: [Action.stop(answer=t.instruction)],
    "empty": lambda t: [Action.stop(answer="")],
    "stop_at_once": lambda t: [Action.stop(status=s) for s in STATUSES],
    "each_candidate": lambda t: [Action.stop(answer=c) for c in candidates(t)],
}


def chance(task: Any) -> float:
    """What a blind guess deserves: ``1 / #candidates`` for an answer task, 0 for an infeasible one."""
    n = len(candidates(task))
    return 1.0 / n if n else 0.0


def play(task: Any, policy: str) -> tuple[int, int]:
    """``(successes, episodes)`` of ``policy`` on ``task``: each of its stops is one episode from the start."""
    stops = POLICIES[policy](task)
    return sum(judge(task, stop) >= 1.0 for stop in stops), len(stops)
