"""The adversarial-judge checks shared by the web and phone suites (see :mod:`gui_envs.judge_audit`)."""

from __future__ import annotations

from gui_envs import judge_audit
from gui_envs.schema.actions import Action

SEEDS = (0, 1, 2, 3, 4)


def check_template(family: str, name: str) -> None:
    """On every seed: the blind policies score 0, and exactly one candidate answer passes (a blind guess)."""
    for seed in SEEDS:
        task = judge_audit.build_task(family, name, seed)
        for policy in judge_audit.ZERO_POLICIES:
            wins, episodes = judge_audit.play(task, policy)
            assert episodes >= 1 and wins == 0, (name, seed, policy, task.instruction)
        if judge_audit.is_answer_task(task):
            cands = judge_audit.candidates(task)
            assert len(cands) >= 2, (name, seed, cands)
            wins, episodes = judge_audit.play(task, "each_candidate")
            assert (wins, episodes) == (1, len(cands)), (name, seed, task.reference_answer)
            # The oracle's own answer passes: the judge is not simply refusing everything.
            assert judge_audit.judge(task, Action.stop(answer=task.reference_answer)) == 1.0
