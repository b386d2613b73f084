"""GroupWorkers: collect_groups over GroupEnv-backed slots plays the episodes separate envs play, one start per
group (the other members copy it and, for grounding, open no browser), and tells each group its next seeds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("playwright")

import gui_envs  # noqa: E402,F401
from agents.base import AgentOutput  # noqa: E402
from trainers.rollout import GroupWorkers, RolloutConfig, collect_groups  # noqa: E402

BOX = {"action_type": "box", "viewport": (640, 400)}


class CentreClicker:
    """Clicks the page's centre, whatever it sees."""

    name = "centre"

    def act_batch(self, observations: Sequence[Any], histories: Any = None) -> list[AgentOutput]:
        return [AgentOutput(action=np.array([320.0, 200.0], np.float32)) for _ in observations]


def test_collect_groups_over_group_workers_plays_one_shared_start_per_group() -> None:
    workers = GroupWorkers("GuiWebGround-v0", num_envs=4, group_size=2, env_kwargs=BOX)
    lone = gym.make("GuiWebGround-v0", **BOX)
    try:
        groups = collect_groups(workers, CentreClicker(), [21, 22, 23], 2, RolloutConfig(progress=False))
        for seed, group in zip([21, 22, 23], groups, strict=True):
            lone.reset(seed=seed)
            assert [t.instruction for t in group] == [lone.unwrapped.instruction] * 2
            assert len({t.total_reward for t in group}) == 1  # the same click on the same page
        leaders = [workers.slots[0].unwrapped, workers.slots[2].unwrapped]
        followers = [workers.slots[1].unwrapped, workers.slots[3].unwrapped]
        assert all(f.browser_pid is None for f in followers)  # they copied every start
        assert all(leader.browser_pid is not None for leader in leaders)
        # Seed 23's group ran on group env 0 in the second wave; group env 1 had nothing announced left.
        assert leaders[0]._resets.upcoming.next() is None
    finally:
        workers.close()
        lone.close()


def test_group_workers_refuse_slots_that_do_not_split_into_groups() -> None:
    with pytest.raises(ValueError, match="multiple of group_size"):
        GroupWorkers("GuiWebGround-v0", num_envs=3, group_size=2)
