"""Per-step rewards for multi-turn episodes (GRPO process supervision, Shao et al. 2024 section 4.1.3) against
hand-computed values, and the config's default and checks."""

from __future__ import annotations

import numpy as np
import pytest

from gui_envs.schema.trajectory import Step, Trajectory
from trainers.advantages import get_estimator
from trainers.config_io import ConfigError
from trainers.grpo import group_batch, step_advantages, to_samples
from trainers.grpo_config import GRPOConfig


def _episode(rewards: list[float]) -> Trajectory:
    steps = [Step(None, reward=r, token_ids=[5, 6], logprobs=[-1.0, -1.0], prompt=f"p{t}") for t, r in enumerate(rewards)]
    return Trajectory("do it", steps=steps)


def test_process_supervision_by_hand() -> None:
    # One group: episode 0 has step rewards (0, 1), episode 1 has (0). Pooled R = (0, 1, 0):
    # mean 1/3, population std sqrt(2)/3, so r~ = (-1/sqrt(2), sqrt(2), -1/sqrt(2)).
    # Episode 0: A_0 = r~_0 + r~_1 = 1/sqrt(2), A_1 = sqrt(2); episode 1: A_0 = -1/sqrt(2).
    groups = [[_episode([0.0, 1.0]), _episode([0.0])]]
    adv = step_advantages(groups, get_estimator("grpo"), eps=0.0)
    np.testing.assert_allclose(adv[0][0], [0.70710678, 1.41421356], rtol=1e-7)
    np.testing.assert_allclose(adv[0][1], [-0.70710678], rtol=1e-7)
    # dr_grpo: r - mean only: (-1/3, 2/3, -1/3) -> episode 0: (1/3, 2/3), episode 1: (-1/3).
    dr = step_advantages(groups, get_estimator("dr_grpo"))
    np.testing.assert_allclose(dr[0][0], [1 / 3, 2 / 3])
    np.testing.assert_allclose(dr[0][1], [-1 / 3])


def test_samples_take_their_steps_advantage_and_default_is_the_episodes() -> None:
    groups = [[_episode([0.0, 1.0]), _episode([0.0])]]
    per_step = step_advantages(groups, get_estimator("grpo"), eps=0.0)
    samples = to_samples(groups, np.zeros((1, 2)), per_step)
    assert [s.prompt for s in samples] == ["p0", "p1", "p0"]
    np.testing.assert_allclose([s.advantage for s in samples], [0.70710678, 1.41421356, -0.70710678], rtol=1e-7)
    # Default (outcome supervision): the episode rewards (1, 0) give (1, -1) to every step of each episode.
    adv = get_estimator("grpo")(group_batch(groups), eps=0.0)
    np.testing.assert_allclose([s.advantage for s in to_samples(groups, adv)], [1.0, 1.0, -1.0])


def test_single_step_episodes_get_the_same_advantages_either_way() -> None:
    groups = [[_episode([r]) for r in (1.0, 0.0, 0.0, 0.5)]]
    per_step = step_advantages(groups, get_estimator("grpo"))
    episode = get_estimator("grpo")(group_batch(groups))
    np.testing.assert_allclose([a[0] for a in per_step[0]], episode[0])


def test_config_default_and_sca_refused() -> None:
    assert GRPOConfig(model="m").step_rewards is False
    with pytest.raises(ConfigError, match="step_rewards"):
        GRPOConfig(model="m", step_rewards=True, estimator="sca")


def test_trainer_runs_with_step_rewards(tiny_lm_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from trainers.grpo import train

    torch.set_num_threads(1)
    config = GRPOConfig(model=str(tiny_lm_path), env_id="ClickGrid-v0", output_format="cell", reward="continuous",
                        step_rewards=True, group_size=4, groups_per_step=1, num_envs=4, num_steps=1,
                        max_new_tokens=2, device="cpu", output_dir=str(tmp_path), progress=False, plot=False)  # fmt: skip
    (record,) = train(config)["history"]
    assert np.isfinite(record["loss"]) and np.isfinite(record["adv_std"])
