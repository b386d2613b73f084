"""The second round's blind policies against every web and phone template.

No browser: see :mod:`benchmarks.judge_attacks.blind_policies`.
"""

from __future__ import annotations

import pytest

from benchmarks.judge_attacks import blind_policies
from gui_envs.tasks.base import AnswerTask, StateTask

FAMILIES = blind_policies.FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_no_template_name_gives_its_verdict_away(family: str) -> None:
    for name in blind_policies.templates_of(family):
        assert not any(word in name for word in blind_policies.VERDICT_WORDS), name


@pytest.mark.parametrize("family", FAMILIES)
def test_name_reading_policy_passes_nothing(family: str) -> None:
    for name in blind_policies.templates_of(family):
        for seed in (0, 1):
            task = blind_policies.build_task(family, name, seed)
            assert blind_policies.name_reading(family, task) == (0, 1), (name, seed)


@pytest.mark.parametrize("family", FAMILIES)
def test_graph_reward_pays_the_answer_not_a_list_of_guesses(family: str) -> None:
    for name in blind_policies.templates_of(family, (AnswerTask,)):
        for seed in (0, 1):
            task = blind_policies.build_task(family, name, seed)
            assert blind_policies.graph_list(task) == (0, 1), (name, seed, blind_policies.every_option(task))
            # The same graph passes the reference answer: it is not refusing everything.
            graph = blind_policies.graph_of_answer(task)
            right = blind_policies.view_from_records(
                task.instruction, [blind_policies.Action.stop(answer=task.reference_answer).to_dict()], [{}]
            )
            assert graph.classify(right).best_fraction == 1.0, (name, seed)


# The state templates the second round's sweep passed, and their phone counterparts.
SWEPT = [
    ("web", "shop.add_to_cart"),
    ("web", "shop.add_to_wishlist"),
    ("web", "forum.upvote"),
    ("web", "forum.downvote"),
    ("web", "shop.open_product"),
    ("web", "forum.open_post"),
    ("web", "classifieds.favourite"),
    ("phone", "contacts.add_favourite"),
    ("phone", "contacts.delete_contact"),
    ("phone", "notes.delete_note"),
]


@pytest.mark.parametrize(("family", "name"), SWEPT)
def test_side_effect_sweep_is_a_blind_guess(family: str, name: str) -> None:
    seeds = range(30)
    wins, chance = 0, 0.0
    for seed in seeds:
        task = blind_policies.build_task(family, name, seed)
        assert isinstance(task, StateTask)
        result = blind_policies.side_effect_sweep(family, task)
        assert result.items >= 2, (name, seed)  # the sweep found the items it could touch
        wins += result.success
        chance += 1.0 / result.items / len(seeds)
    rate = wins / len(seeds)
    assert rate <= chance + blind_policies.binomial_slack(chance, len(seeds)), (name, rate, chance)


def test_sweep_catches_a_judge_that_ignores_side_effects() -> None:
    """The audit can fail: against a judge that only asks whether the target is starred (what
    ``contacts.add_favourite`` asked before side effects counted), the sweep stars contact after contact until
    the target is among them, and wins far more often than a blind guess."""
    seeds = range(20)
    wins = 0
    for seed in seeds:
        task = blind_policies.build_task("phone", "contacts.add_favourite", seed)

        def starred(stop: object = None, task: object = task) -> float:
            row = task.state.one(task.app, "SELECT starred FROM contacts WHERE id = ?", (task.cid,))  # type: ignore[attr-defined]
            return float(row == (1,))

        task.evaluate = starred  # type: ignore[method-assign]
        wins += blind_policies.side_effect_sweep("phone", task).success
    assert wins / len(seeds) > 0.5
