"""Every bundled template's checked-in label-function set: its oracle passes fully, a random agent does not.

The sets in ``gui_envs/verifiers/data`` were synthesised (``python -m agents.label_sets web|phone``) from
the oracle demonstration on task seed :data:`~gui_envs.verifiers.synth.DATA_SEED`; here the oracle is replayed
on the same seed, so this also checks that the synthesiser and the envs' records have not drifted apart.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_envs  # noqa: F401
from agents.episode import run_episode
from agents.oracle import record_oracle
from agents.random_agent import RandomAgent
from gui_envs.verifiers import run_label_functions
from gui_envs.verifiers.graph import StrategyGraph
from gui_envs.verifiers.synth import DATA_SEED, load_sets

pytest.importorskip("playwright")

FAMILIES = {"web": "GuiWeb-v0", "phone": "GuiAndroid-v0"}
#: A quick cross-section run on every test pass: one state, one answer and one navigation task per family.
QUICK = {
    "web": ["shop.add_to_cart", "forum.comment_count", "classifieds.search"],
    "phone": ["clock.add_alarm", "contacts.phone_number", "expenses.delete_expense"],
}


def check_family(family: str, tasks: list[str]) -> None:
    sets = load_sets(family)
    env = gym.make(FAMILIES[family], screenshots=False)
    try:
        failures = []
        for task in tasks:
            functions = sets[task]["functions"]
            oracle = record_oracle(env.unwrapped, task, seed=DATA_SEED)
            randoms = [
                run_episode(env, RandomAgent(env.action_space, seed=0), options={"task": task, "seed": DATA_SEED}, max_steps=10)
            ]
            rows = run_label_functions(functions, [oracle, *randoms])
            graph = StrategyGraph.linear(functions, task=task)
            oracle_label = graph.judge(dict(enumerate(rows[0]))).label
            random_labels = [graph.judge(dict(enumerate(r))).label for r in rows[1:]]
            if not oracle.success or oracle_label != "fully" or "fully" in random_labels:
                failures.append((task, oracle.success, oracle_label, random_labels))
        assert not failures, failures
    finally:
        env.close()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_template_has_a_set(family: str) -> None:
    env = gym.make(FAMILIES[family], screenshots=False)
    try:
        assert sorted(load_sets(family)) == sorted(env.unwrapped.task_names)
    finally:
        env.close()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_quick_cross_section(family: str) -> None:
    check_family(family, QUICK[family])


#: The slow test's groups: one per site or pair of apps, so each stays within the suite's per-test timeout.
GROUPS = [("web", "shop."), ("web", "forum."), ("web", "classifieds."), ("phone", "clock."), ("phone", "contacts."),
          ("phone", "expenses."), ("phone", "launcher."), ("phone", "multi."), ("phone", "notes."), ("phone", "recipes."),
          ("phone", "settings.")]


def test_groups_cover_every_template() -> None:
    for family in FAMILIES:
        prefixes = tuple(p for f, p in GROUPS if f == family)
        assert all(task.startswith(prefixes) for task in load_sets(family))


@pytest.mark.slow
@pytest.mark.parametrize(("family", "prefix"), GROUPS)
def test_all_templates(family: str, prefix: str) -> None:
    check_family(family, sorted(t for t in load_sets(family) if t.startswith(prefix)))
