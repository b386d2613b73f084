"""Label functions judge a stop's answer as the env does: a list of every candidate is a guess, not an answer.

The strategy graph synthesised from an oracle demonstration of an answer template is one
``validate_stop_action(trajectory, <reference>)``; the graph reward must pay it exactly what the task's own judge
(:func:`gui_envs.tasks.judging.answers_match`) pays.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import gui_envs  # noqa: F401
from agents.oracle import record_oracle
from benchmarks.judge_attacks.blind_policies import build_task, every_option, judge
from gui_envs.reward_wrappers import with_reward
from gui_envs.schema.actions import Action
from gui_envs.tasks.judging import answers_match
from gui_envs.verifiers import api, run_label_functions
from gui_envs.verifiers.api import view_from_records
from gui_envs.verifiers.graph import StrategyGraph
from gui_envs.verifiers.synth import label_function, synthesise

#: The templates whose graph paid a list of every candidate 1.0 on 20/20 episodes (issue 23).
TEMPLATES = ["forum.author_of", "forum.comment_count", "shop.wishlist_count", "classifieds.favourites_count"]


def stop_view(answer: str) -> Any:
    return view_from_records("q", [{"type": "stop", "status": "success", "answer": answer}], [{}, {}])


def test_the_validator_is_the_env_judge() -> None:
    assert api.answers_match is answers_match  # one function, not a copy
    pairs = [("12.5", "$12.50"), ("It has 420 calories.", "420 calories"), ("42", "420"), ("Fair and Good", "good, fair"),
             ("New, Like new, Good, Fair", "Good"), ("lee88", "Lee88"), ("", "x"), ("3", "3 hours")]
    codes = [label_function(f"validate_stop_action(trajectory, {ref!r})") for _, ref in pairs]
    rows = run_label_functions(codes, [stop_view(a) for a, _ in pairs])
    assert [rows[i][i].passed for i in range(len(pairs))] == [answers_match(a, r) for a, r in pairs]
    # In the host too (the graph judges views there when a caller runs the validators directly).
    api.start_log()
    assert not api.validate_stop_action(stop_view("hiro_trips, lee88"), "lee88")


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_list_of_every_candidate_gets_nothing_from_the_graph(template: str) -> None:
    tasks = [build_task("web", template, seed) for seed in range(20)]
    cases = [(t.reference_answer, every_option(t), judge(t, Action.stop(answer=every_option(t)))) for t in tasks]
    graphs = [StrategyGraph.linear([label_function(f"validate_stop_action(trajectory, {ref!r})")]) for ref, _, _ in cases]
    guesses = [g.classify(stop_view(every)).best_fraction for g, (_, every, _) in zip(graphs, cases, strict=True)]
    exact = [g.classify(stop_view(ref)).best_fraction for g, (ref, _, _) in zip(graphs, cases, strict=True)]
    assert all(len(every.split(", ")) > 1 for _, every, _ in cases)  # a real list of guesses
    assert guesses == [env_score for _, _, env_score in cases] == [0.0] * 20
    assert exact == [1.0] * 20


@pytest.fixture(scope="module")
def web_env() -> Any:
    pytest.importorskip("playwright")
    env = gym.make("GuiWeb-v0", tasks=TEMPLATES, screenshots=False)
    yield env
    env.close()


@pytest.mark.parametrize("template", TEMPLATES)
def test_graph_reward_pays_what_the_env_pays(web_env: Any, template: str) -> None:
    oracle = record_oracle(web_env.unwrapped, template, seed=5)
    graph = StrategyGraph.linear(synthesise(oracle), task=template)
    env = with_reward(web_env, "graph", graphs=graph)
    for answer, expected in (("every", 0.0), ("reference", 1.0)):
        env.reset(options={"task": template, "seed": 5})
        task = web_env.unwrapped.task
        text = every_option(task) if answer == "every" else task.reference_answer
        _, reward, _, _, info = env.step(Action.stop(answer=text))
        assert (reward, info["score"]) == (expected, expected), (answer, text)  # the graph's and the env's
