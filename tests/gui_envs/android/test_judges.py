"""Judges that cannot be gamed on the phone (issue 9): blind policies score 0, one guess scores chance."""

from __future__ import annotations

import pytest

from gui_envs import judge_audit
from gui_envs.actions import Action
from tests.gui_envs.judge_suite import check_template


@pytest.mark.parametrize("name", judge_audit.templates("phone"))
def test_blind_policies_score_nothing_but_chance(name: str) -> None:
    check_template("phone", name)


def test_phone_answers_use_the_shared_judge() -> None:
    # The unit and currency rules reach the phone too: "25 min" for "25 minutes", "$" on an amount in dollars.
    task = judge_audit.build_task("phone", "recipes.cooking_time", 0)
    value = task.reference_answer.split()[0]
    assert judge_audit.judge(task, Action.stop(answer=f"{value} min")) == 1.0
    assert judge_audit.judge(task, Action.stop(answer=f"It takes {value} minutes")) == 0.0
    task = judge_audit.build_task("phone", "expenses.expense_amount", 0)
    assert judge_audit.judge(task, Action.stop(answer=f"${task.reference_answer}")) == 1.0
