"""Every task template: the oracle reaches reward 1 on 3 seeds; a random clicker is judged 0."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from gui_envs.actions import Action
from gui_envs.web.env import GuiWebEnv
from gui_envs.web.tasks import TASKS
from tests.gui_envs.web.conftest import run_oracle


def test_suite_size_and_spread() -> None:
    assert len(TASKS) >= 60
    per_site = collections.Counter(t.site for t in TASKS.values())
    assert min(per_site.values()) >= 15
    difficulties = [t.difficulty for t in TASKS.values()]
    assert min(difficulties) == 1 and max(difficulties) >= 15
    assert sum(t.requires_stop and "infeasible" in n for n, t in TASKS.items()) >= 3


@pytest.mark.slow
def test_every_oracle_succeeds_and_random_fails(web_env: GuiWebEnv) -> None:
    failures = []
    rng = np.random.default_rng(0)
    for name in sorted(TASKS):
        for seed in (0, 1, 2):
            total, info = run_oracle(web_env, name, seed)
            if not (info["success"] and total == pytest.approx(1.0)):
                failures.append((name, seed, info["instruction"], total))
        # one random episode per template: random clicks then a random answer
        web_env.reset(options={"task": name, "seed": 3})
        terminated = truncated = False
        for _ in range(3):
            point = Action.click(float(rng.uniform(0, 1280)), float(rng.uniform(0, 720)))
            _, _, terminated, truncated, info = web_env.step(point)
            if terminated:
                break
        if not terminated:
            _, _, _, _, info = web_env.step(Action.stop(answer=str(rng.integers(1000))))
        if info["success"] and TASKS[name].difficulty >= 2:
            failures.append((name, "random agent succeeded", info["instruction"], info["url"]))
    assert not failures, failures
