"""The adversarial-judge checks shared by the web and phone suites.

See :mod:`benchmarks.judge_attacks.blind_policies`.
"""

from __future__ import annotations

from benchmarks.judge_attacks import blind_policies
from gui_envs.schema.actions import Action

SEEDS = (0, 1, 2, 3, 4)


def check_template(family: str, name: str) -> None:
    """On every seed: the blind policies score 0, and exactly one candidate answer passes (a blind guess)."""
    for seed in SEEDS:
        task = blind_policies.build_task(family, name, seed)
        for policy in blind_policies.ZERO_POLICIES:
            wins, episodes = blind_policies.play(task, policy)
            assert episodes >= 1 and wins == 0, (name, seed, policy, task.instruction)
        if blind_policies.is_answer_task(task):
            cands = blind_policies.candidates(task)
            assert len(cands) >= 2, (name, seed, cands)
            wins, episodes = blind_policies.play(task, "each_candidate")
            assert (wins, episodes) == (1, len(cands)), (name, seed, task.reference_answer)
            # The oracle's own answer passes: the judge is not simply refusing everything.
            assert blind_policies.judge(task, Action.stop(answer=task.reference_answer)) == 1.0
