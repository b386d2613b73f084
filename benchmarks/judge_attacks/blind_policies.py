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

from benchmarks.judge_attacks.blind_sweep import Form, FormBrowser, SweepResult, sweep
from gui_envs.android.apps import default_apps
from gui_envs.android.tasks import TASKS as PHONE_TASKS
from gui_envs.android.tasks.base import PhoneState
from gui_envs.browser.site import SiteState
from gui_envs.schema.actions import MAX_ANSWER_CHARS, Action
from gui_envs.tasks.base import AnswerTask, InfeasibleTask, StateTask, Task
from gui_envs.verifiers.api import view_from_records
from gui_envs.verifiers.graph import StrategyGraph
from gui_envs.verifiers.synth import synthesise
from gui_envs.web.tasks import SITES
from gui_envs.web.tasks import TASKS as WEB_TASKS

#: The task families audited, by name.
FAMILIES = ("web", "phone")
STATUSES = ("success", "failure", "infeasible")
#: The policies that must score exactly 0 (``each_candidate`` must score chance instead).
ZERO_POLICIES = ("list_every_option", "echo_question", "empty", "stop_at_once")


def templates(family: str) -> list[str]:
    """The answer and infeasible template names of ``family`` (``"web"`` or ``"phone"``), sorted."""
    return templates_of(family, (AnswerTask, InfeasibleTask))


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
    (:data:`~gui_envs.schema.actions.MAX_ANSWER_CHARS`): the longest list a ``stop`` action can carry."""
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


def best_constant(family: str, name: str, seeds: list[int] | range) -> tuple[str, float]:
    """The answer a policy that never looks does best to repeat on every seed, and the share of ``seeds`` it
    passes under the template's own judge.

    A fair answer generator keeps this near the mean of :func:`chance` over the same seeds; one that favours some
    answers ("4 items" on a quarter of the seeds) pays a constant guess more than a blind one. The references
    of all seeds are pooled, then each is judged on every seed (an answer may pass where the reference is written
    differently, "$12" for "$12.00"); ties go to the reference seen first.
    """
    seeds = list(seeds)
    pool = list(dict.fromkeys(str(build_task(family, name, seed).reference_answer) for seed in seeds))
    wins = dict.fromkeys(pool, 0)
    for seed in seeds:
        task = build_task(family, name, seed)
        for answer in pool:
            wins[answer] += judge(task, Action.stop(answer=answer)) >= 1.0
    best = max(pool, key=lambda answer: wins[answer])
    return best, wins[best] / len(seeds)


# ----- the second round's attacks (issue 23) ---------------------------------------------------------------------
#: Words that would give a template's verdict away if its name held them (an agent reads ``info["task"]``).
VERDICT_WORDS = ("infeasible", "missing", "impossible", "cannot", "fake", "nonexist")


def templates_of(family: str, kinds: tuple[type, ...] = (AnswerTask, InfeasibleTask, StateTask)) -> list[str]:
    """Every template of ``family`` whose judge is one of ``kinds`` (default: all three), sorted."""
    pools = {"web": WEB_TASKS, "phone": PHONE_TASKS}
    if family not in pools:
        raise ValueError(f"unknown family {family!r}; choose from {FAMILIES}")
    return sorted(n for n, t in pools[family].items() if issubclass(t, kinds))


def site_of(family: str, task: Any) -> tuple[SiteState, str, Callable[[str], None]]:
    """The live state a blind policy acts on for ``task``, the path it starts from, and the callback that
    records a shown path as the env records locations (web: the URL; phone: ``package/activity``, which is
    also the foreground app the phone judges read)."""
    if family == "web":
        state = _STATES.web[task.site]  # type: ignore[union-attr]
        home = state.site.origin
        return state, task.start_path, lambda path: task.visited.append(home + path)
    package = getattr(task, "search_app", None) or task.app
    state = _STATES.phone[package]  # type: ignore[union-attr]

    def shown(path: str) -> None:
        activity = state.site.activity_for(path)
        task.state.package, task.state.activity = package, activity
        task.visited.append(f"{package}/{activity}")

    return state, "/", shown


def name_reading(family: str, task: Any) -> tuple[int, int]:
    """Read the template's name: where it holds a :data:`VERDICT_WORDS` word, make a look that does not depend
    on the task (the start and home pages, and every search form submitted with the whole instruction) and stop
    as infeasible; elsewhere give up (``stop(status="failure")``). One episode. Must score 0: a name that says
    nothing about the verdict leaves this policy nothing to read."""
    if not any(word in task.name for word in VERDICT_WORDS):
        return int(judge(task, Action.stop(status="failure")) >= 1.0), 1
    state, start, shown = site_of(family, task)
    browser = FormBrowser(state, shown)
    for page in dict.fromkeys((start, "/")):
        browser.get(page)
        for form in [f for f in browser.forms if f.method == "GET"]:
            browser.submit(Form(form.method, form.action, {**form.fields, "q": task.instruction}, form.buttons))
            browser.get(page)
    return int(judge(task, Action.stop(status="infeasible")) >= 1.0), 1


def graph_of_answer(task: Any) -> StrategyGraph:
    """The strategy graph CORE synthesises from this seed's oracle demonstration, as far as an answer decides
    it: the label function of the final ``stop`` with the reference answer (an answer template's bundled set
    is that one function)."""
    oracle = view_from_records(task.instruction, [Action.stop(answer=task.reference_answer).to_dict()], [{}])
    return StrategyGraph.linear(synthesise(oracle), task.name)


def graph_list(task: Any) -> tuple[int, int]:
    """List every candidate in one answer (:func:`every_option`), judged by the strategy-graph reward instead of
    the env: one episode, a pass when some path of the graph passes fully. Must score 0."""
    graph = graph_of_answer(task)
    guess = view_from_records(task.instruction, [Action.stop(answer=every_option(task)).to_dict()], [{}])
    return int(graph.classify(guess).best_fraction >= 1.0), 1


def side_effect_sweep(family: str, task: Any) -> SweepResult:
    """The blind sweep of :mod:`benchmarks.judge_attacks.blind_sweep` on a state task: open every item page, press
    the buttons the instruction names, until the judge passes. Fair when it passes at most ``1 / #items``."""
    state, start, shown = site_of(family, task)
    return sweep(task, state, start, shown)


def binomial_slack(p: float, n: int, sigmas: float = 3.0) -> float:
    """``sigmas`` standard errors of a success rate ``p`` measured over ``n`` episodes: how far a fair blind
    policy's measured rate may lie above its chance by sampling noise alone. Three by default, since an audit
    tests about a hundred templates at once (two would flag a fair one in forty)."""
    return sigmas * float(np.sqrt(max(p * (1.0 - p), 0.0) / max(n, 1)))


def held_out_constant(family: str, name: str, fit_seeds: range | list[int], seeds: range | list[int]) -> tuple[str, float]:
    """The best constant answer chosen on ``fit_seeds`` (:func:`best_constant`), and the share of ``seeds`` it
    passes: what a policy that memorised the most common answer earns on episodes it was not fitted on.

    Choosing the constant on the seeds it is scored on would overstate it: the most common of k equally likely
    answers passes more than ``1 / k`` of a finite sample by chance alone. Scored on other seeds, a fair
    generator gives it ``chance`` in expectation, and a skewed one more.
    """
    answer, _ = best_constant(family, name, fit_seeds)
    seeds = list(seeds)
    wins = sum(judge(build_task(family, name, s), Action.stop(answer=answer)) >= 1.0 for s in seeds)
    return answer, wins / len(seeds)
