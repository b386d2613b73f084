"""GRPO's dynamic sampling (``GRPOConfig.sampling_rounds``, DAPO section 3.2): a step draws further rounds of
fresh seeds until its batch holds ``groups_per_step`` groups whose rewards differ, trains on a fixed-size batch
with those first, and every step owns its own slice of the seed stream."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gui_envs.schema.trajectory import Step, Trajectory
from trainers.grpo import fill_batch, informative, step_seeds, train
from trainers.grpo_config import GRPOConfig


def _group(*rewards: float) -> list[Trajectory]:
    return [Trajectory(instruction=str(rewards), steps=[Step(action=None, reward=r)]) for r in rewards]


def test_every_round_of_every_step_has_its_own_seeds() -> None:
    cfg = GRPOConfig(model="m", env_id="e", groups_per_step=3, sampling_rounds=4, seed_start=1000)
    drawn = [s for step in range(5) for r in range(4) for s in step_seeds(cfg, step, r)]
    assert len(drawn) == len(set(drawn)) == 5 * 4 * 3
    assert drawn == list(range(1000, 1060))  # contiguous: the stream in order, round by round
    one = GRPOConfig(model="m", env_id="e", groups_per_step=3, seed_start=1000)
    assert step_seeds(one, 2) == [1006, 1007, 1008]  # one round: the stream as before dynamic sampling


def test_the_batch_takes_informative_groups_first_then_fills_up() -> None:
    assert informative(_group(0.0, 1.0)) and not informative(_group(1.0, 1.0))
    # A multi-step episode's reward is its steps' sum: (0.5 + 0.5) ties with 1.0.
    two_steps = Trajectory(instruction="", steps=[Step(action=None, reward=0.5), Step(action=None, reward=0.5)])
    assert not informative([two_steps, _group(1.0)[0]])
    rounds = [[_group(1, 1), _group(0, 1), _group(0, 0)], [_group(1, 0), _group(1, 1)]]
    names = [g[0].instruction for g in fill_batch(rounds, 3)]
    assert names == ["(0, 1)", "(1, 0)", "(1, 1)"]  # informative in the order drawn, then the first equal one
    assert [g[0].instruction for g in fill_batch(rounds, 1)] == ["(0, 1)"]
    assert len(fill_batch([[_group(0, 0)] * 2], 2)) == 2  # nothing informative: the batch keeps its size


@pytest.mark.parametrize("rounds", [1, 3])
def test_a_run_draws_more_rounds_only_while_groups_agree(tiny_lm_path: Path, tmp_path: Path, rounds: int) -> None:
    # A random model rarely hits a cell, so with the binary reward most groups are all 0: with 3 rounds a step
    # spends them looking for groups that differ; with 1 (the default) it trains on what it drew.
    torch.set_num_threads(1)
    cfg = GRPOConfig(model=str(tiny_lm_path), env_id="ClickGrid-v0", output_format="cell", reward="binary",
                     group_size=4, groups_per_step=2, num_envs=8, num_steps=3, max_new_tokens=3,
                     sampling_rounds=rounds, learning_rate=1e-3, device="cpu", output_dir=str(tmp_path),
                     progress=False, plot=False)  # fmt: skip
    history = train(cfg)["history"]
    per_round = cfg.groups_per_step * cfg.group_size
    for row in history:
        assert row["episodes"] in [k * per_round for k in range(1, rounds + 1)]
        assert 0 <= row["informative_groups"] <= cfg.groups_per_step
        # fewer informative groups than the batch wants: every round was spent looking for them
        assert row["informative_groups"] == cfg.groups_per_step or row["episodes"] == rounds * per_round
    if rounds > 1:
        assert sum(r["episodes"] for r in history) > len(history) * per_round
