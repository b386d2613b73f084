"""GRPO loss, k3 KL and advantage estimators against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from trainers.advantages import GroupBatch, UnknownEstimatorError, get_estimator, register_estimator
from trainers.grpo import grpo_loss, k3_kl

# Ratios rho = exp(logp - old) = [[1.5, 0.5], [0.5, 0.7]]; row 1's second token is padding.
RATIO = torch.tensor([[1.5, 0.5], [0.5, 0.7]])
OLD = torch.zeros(2, 2)
MASK = torch.tensor([[1, 1], [1, 0]])
ADV = torch.tensor([1.0, -1.0])
# Per token, -min(rho * A, clip(rho, 0.8, 1.28) * A):
#   row 0 (A = +1): 1.5 -> -1.28 (clipped above), 0.5 -> -0.5 (unclipped: min picks rho * A)
#   row 1 (A = -1): 0.5 -> +0.8 (clipped below), 0.7 -> masked
HAND = {
    "token-mean": (-1.28 - 0.5 + 0.8) / 3,  # -0.326667
    "seq-mean-token-mean": ((-1.28 - 0.5) / 2 + 0.8) / 2,  # -0.045
    "seq-mean-token-sum-norm": ((-1.28 - 0.5) + 0.8) / 2 / 4,  # max_len 4: -0.1225
}


@pytest.mark.parametrize("mode", list(HAND))
def test_loss_by_aggregation_with_clipping(mode: str) -> None:
    logp = torch.log(RATIO).requires_grad_(True)
    loss, stats = grpo_loss(logp, OLD, ADV, MASK, eps_low=0.2, eps_high=0.28, loss_agg=mode, max_len=4)
    assert float(loss.detach()) == pytest.approx(HAND[mode], abs=1e-6)
    assert stats["clip_frac"] == pytest.approx(2 / 3)
    loss.backward()
    # Only the unclipped real token (row 0, token 1) carries gradient: d(-rho * A)/d logp = -rho * A = -0.5,
    # divided by that mode's normaliser.
    norm = {"token-mean": 3, "seq-mean-token-mean": 4, "seq-mean-token-sum-norm": 8}[mode]
    expected = torch.tensor([[0.0, -0.5 / norm], [0.0, 0.0]])
    torch.testing.assert_close(logp.grad, expected)


def test_k3_kl_by_hand() -> None:
    # p = log 0.5, q = log 0.25: exp(q - p) - (q - p) - 1 = 0.5 + ln 2 - 1
    kl = k3_kl(torch.tensor([math.log(0.5)]), torch.tensor([math.log(0.25)]))
    assert float(kl) == pytest.approx(0.5 + math.log(2) - 1)
    assert float(k3_kl(torch.tensor([-1.3]), torch.tensor([-1.3]))) == 0.0


def test_kl_term_enters_the_loss() -> None:
    logp = torch.full((1, 2), math.log(0.5))
    ref = torch.full((1, 2), math.log(0.25))
    # rho = 1, A = 0: the surrogate is 0, the loss is beta * KL = 0.1 * 0.193147
    loss, stats = grpo_loss(logp, logp.clone(), torch.zeros(1), torch.ones(1, 2), beta=0.1, ref_logp=ref)
    assert float(loss) == pytest.approx(0.1 * (math.log(2) - 0.5), abs=1e-6)
    assert stats["kl"] == pytest.approx(math.log(2) - 0.5, abs=1e-6)


def test_per_token_advantages() -> None:
    logp = torch.zeros(1, 2, requires_grad=True)
    loss, _ = grpo_loss(logp, torch.zeros(1, 2), torch.tensor([[2.0, -1.0]]), torch.ones(1, 2))
    assert float(loss) == pytest.approx(-(2.0 - 1.0) / 2)


def test_grpo_advantage_population_std() -> None:
    # mean 0.25, population std sqrt(0.1875) = 0.4330
    adv = get_estimator("grpo")(GroupBatch(np.array([[1.0, 0.0, 0.0, 0.0]])), eps=0.0)
    np.testing.assert_allclose(adv, [[0.75 / 0.4330127, -0.25 / 0.4330127, -0.25 / 0.4330127, -0.25 / 0.4330127]], rtol=1e-6)
    # An all-equal group gets 0 (the default eps keeps the division finite).
    np.testing.assert_array_equal(get_estimator("grpo")(GroupBatch(np.ones((1, 4)))), 0.0)


def test_dr_grpo_advantage() -> None:
    adv = get_estimator("dr_grpo")(GroupBatch(np.array([[1.0, 0.0, 0.5, 0.5]])))
    np.testing.assert_allclose(adv, [[0.5, -0.5, 0.0, 0.0]])


def test_sca_all_miss_prox_by_hand() -> None:
    # Box centred at 0 with half-size 10: misses at 2 and 4 half-sizes, p = 1/3 and 1/5, mean 4/15, population
    # spread 1/15. Prox credit (seed 001 App. D.1) = prox_scale * spread * (p - mean) / spread
    # = 0.5 * (+-1/15) = +-1/30 (SCAConfig's default prox_scale 0.5).
    batch = GroupBatch(np.zeros((1, 2)), coords=np.array([[[20.0, 0.0], [40.0, 0.0]]]), boxes=np.array([[-10, -10, 10, 10.0]]))
    np.testing.assert_allclose(get_estimator("sca")(batch), [[1 / 30, -1 / 30]], atol=1e-5)


def test_sca_no_valid_click_falls_back_to_the_ordinary_advantage() -> None:
    nan = np.full((2, 4, 2), np.nan)
    # Group 0: every click invalid and every reward 0 -> 0. Group 1: invalid clicks with a success -> GRPO
    # advantage with the population std (seed 001, 4.1): mean 0.25, std sqrt(0.75 / 4) = 0.4330127;
    # 0.75 / 0.4330127 = 1.7320508 and -0.25 / 0.4330127 = -0.5773503.
    rewards = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    adv = get_estimator("sca")(GroupBatch(rewards, coords=nan, boxes=np.array([[0, 0, 10, 10.0]] * 2)))
    np.testing.assert_allclose(adv, [[0, 0, 0, 0], [1.7320508, -0.5773503, -0.5773503, -0.5773503]], atol=1e-4)


def test_unknown_estimator_is_a_clear_error() -> None:
    with pytest.raises(UnknownEstimatorError, match="dr_grpo"):
        get_estimator("dr-grpo")


def test_user_registered_estimator() -> None:
    @register_estimator("test_rank")
    def rank(batch: GroupBatch) -> np.ndarray:
        return batch.rewards.argsort(axis=1).argsort(axis=1).astype(float)

    assert get_estimator("test_rank")(GroupBatch(np.array([[0.3, 0.1]]))).tolist() == [[1.0, 0.0]]
