"""SCA (seed 001): routing, Residual (leave-one-out Theil-Sen), Prox, fallbacks, numerical safety."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import theilslopes

from rewards.advantage import group_advantage
from rewards.sca import SCAConfig, spatial_credit, spatial_credit_batch
from rewards.theil_sen import theil_sen

BOX = (-10.0, -10.0, 10.0, 10.0)


def test_all_hit_is_grpo():
    coords = np.array([[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]], dtype=float)
    binary = spatial_credit(coords, [1] * 5, box=BOX)
    assert binary.branch == "all_hit"
    assert binary.credits.tolist() == [0.0] * 5
    # dense all-hit rewards [1, .9, .8, .9, 1]: mean .92, deviations .08 -.02 -.12 -.02 .08,
    # squares sum .028, sample var .007, std .0836660 -> A_0 = .08 / (.0836660 + 1e-6) = .956171
    dense = spatial_credit(coords, [1] * 5, [1.0, 0.9, 0.8, 0.9, 1.0], box=BOX)
    assert dense.branch == "all_hit"
    assert dense.credits[0] == pytest.approx(0.08 / (math.sqrt(0.007) + 1e-6))
    np.testing.assert_allclose(dense.credits, group_advantage([1.0, 0.9, 0.8, 0.9, 1.0]))


def test_all_miss_prox_by_hand():
    # box centre (0, 0), half-sizes 10: distances in half-sizes d = 2, 4, 3, 5 -> p = 1/3, 1/5, 1/4, 1/6
    # mean p = (20 + 12 + 15 + 10) / 60 / 4 = 57 / 240 = 0.2375
    # credits: 1/3 - .2375 = .095833, .2 - .2375 = -.0375, .25 - .2375 = .0125, 1/6 - .2375 = -.070833
    # the invalid (NaN) click takes invalid_prox_credit = 0 and stays out of the mean
    coords = [[20, 0], [40, 0], [0, 30], [0, -50], [np.nan, np.nan]]
    r = spatial_credit(coords, [0] * 5, box=BOX)
    assert r.branch == "prox"
    np.testing.assert_allclose(r.credits, [0.0958333, -0.0375, 0.0125, -0.0708333, 0.0], atol=1e-6)
    valid = r.credits[:4]
    dist = np.array([20, 40, 30, 50])
    assert list(np.argsort(-valid)) == list(np.argsort(dist))  # closer -> higher credit
    # near-equidistant misses get a small update: d = 10 and 11 -> p = 1/11, 1/12 -> credits +-0.0038
    small = spatial_credit([[100, 0], [110, 0], [100, 0], [110, 0], [105, 0]], [0] * 5, box=BOX).credits
    assert np.max(np.abs(small)) < 0.005
    # without a box (or with use_prox=False) all-miss groups keep the ordinary (zero) advantage
    assert spatial_credit(coords, [0] * 5).branch == "fallback"
    assert (
        spatial_credit(coords, [0] * 5, box=BOX, config=SCAConfig(use_prox=False)).credits.tolist()
        == [0.0] * 5
    )


def test_residual_collinear_by_hand():
    # Clicks on the x axis at x = 0, 10, 20, 30, 40 px; rewards y = 1, .8, .6, .4, .5; hits = first two.
    # The y projection is constant (no valid fit); x, x+y and x-y are all x, so they agree.
    coords = [[0, 0], [10, 0], [20, 0], [30, 0], [40, 0]]
    y = [1.0, 0.8, 0.6, 0.4, 0.5]
    r = spatial_credit(coords, [1, 1, 0, 0, 0], y)
    assert r.branch == "residual"
    std = math.sqrt(0.058)  # mean .66; squared deviations sum .232; / 4 = .058
    # i = 4: the other four lie on y = 1 - 0.02 x -> reference 1 - 0.8 = 0.2 (inside clip [-0.2, 1.6]);
    # every 3-point inner fit is exact -> skill 1, correlation 1 -> q = 1, rho = 1 -> lambda = 1.
    # credit = (0.5 - 0.2) / (std + eps) = 1.245675
    assert r.reference[4] == pytest.approx(0.2)
    assert r.spatial_weight[4] == pytest.approx(1.0)
    np.testing.assert_allclose(r.direction_weights[4], [1, 0, 1, 1], atol=1e-9)
    assert r.credits[4] == pytest.approx(0.3 / (std + 1e-6))
    assert r.credits[4] > r.advantage[4]  # a miss above its spatial reference is credited up
    # i = 0: outer slope median(-.02, -.02, -.02, -.01, -.005, .01) = -.015 per px, intercept .55 + .375.
    # Inner predictions of x = 10, 20, 30, 40: .6, .6, .5, .2 vs .8, .6, .4, .5 -> SSE = .04 + 0 + .01 + .09
    # = .14 > SSE_mean = .0875 (fold mean .575) -> skill = 1 - .14 / .0875 = -0.6 < 0 -> no direction counts,
    # no reference, lambda = 0, credit = ordinary advantage (1 - .66) / std = 1.411762
    assert math.isnan(r.reference[0]) and r.spatial_weight[0] == 0.0
    assert r.credits[0] == pytest.approx(0.34 / (std + 1e-6))


def test_invalid_coordinate_in_mixed_group_falls_back():
    coords = [[0, 0], [10, 0], [20, 0], [np.nan, np.nan], [40, 0]]
    r = spatial_credit(coords, [1, 1, 0, 0, 0], [1.0, 0.8, 0.6, 0.4, 0.5])
    assert r.branch == "fallback"
    np.testing.assert_allclose(r.credits, group_advantage([1.0, 0.8, 0.6, 0.4, 0.5]))
    masked = spatial_credit(
        [[0, 0], [10, 0], [20, 0], [30, 0], [40, 0]], [1, 1, 0, 0, 0], valid=[1, 1, 1, 0, 1]
    )
    assert masked.branch == "fallback"


def test_zero_weights_fall_back():
    # one hit among four misses: the hit's fold has no variance; the misses' folds cannot predict the
    # lone hit from three misses -> every weight is zero -> ordinary advantage
    coords = [[0, 0], [10, 3], [20, 9], [30, 1], [40, 5]]
    r = spatial_credit(coords, [1, 0, 0, 0, 0])
    assert r.branch == "fallback"
    np.testing.assert_allclose(r.credits, r.advantage)
    assert np.all(r.spatial_weight == 0)


def test_batch_matches_single_groups():
    rng = np.random.default_rng(3)
    coords = rng.normal(size=(64, 5, 2)) * 50
    hit = rng.random((64, 5)) < 0.4
    batch = spatial_credit_batch(coords, hit, boxes=BOX, config=SCAConfig(chunk_size=7))
    for g in range(64):
        one = spatial_credit(coords[g], hit[g], box=BOX)
        np.testing.assert_allclose(batch.credits[g], one.credits, rtol=1e-12, atol=1e-12)
        assert batch.branch[g] == one.branch


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy's confidence interval on tiny samples
@settings(max_examples=150, deadline=None)
@given(
    pts=st.lists(st.integers(-5, 5), min_size=2, max_size=7),
    ys=st.lists(st.integers(-3, 3), min_size=7, max_size=7),
)
def test_vectorised_theil_sen_equals_scipy(pts, ys):
    x = np.array(pts, dtype=float)
    y = np.array(ys[: len(pts)], dtype=float) * 0.7
    slope, icpt, ok = theil_sen(x, y)
    if np.unique(x).size < 2:
        assert not ok and math.isnan(slope)
        return
    ref = theilslopes(y, x, method="separate")
    assert ok
    assert slope == pytest.approx(ref.slope, rel=1e-12, abs=1e-12)
    assert icpt == pytest.approx(ref.intercept, rel=1e-12, abs=1e-12)


def _mixed_group(data, n):
    coords = np.array(
        data.draw(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)), min_size=n, max_size=n))
    )
    hits = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    assume(0 < sum(hits) < n)
    rewards = np.array(data.draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    return coords.astype(float), np.array(hits), rewards


FOLD_FIELDS = ("reference", "spatial_weight", "quality", "correlation", "direction_weights")


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n=st.sampled_from([4, 5, 6]), new=st.floats(-2, 3))
def test_held_out_reward_never_enters_its_own_reference(data, n, new):
    coords, hits, rewards = _mixed_group(data, n)
    i = data.draw(st.integers(0, n - 1))
    changed = rewards.copy()
    changed[i] = new
    assume(np.std(changed) > 1e-6 and np.std(rewards) > 1e-6)
    a = spatial_credit(coords, hits, rewards)
    b = spatial_credit(coords, hits, changed)
    for name in FOLD_FIELDS:
        np.testing.assert_allclose(
            getattr(a, name)[i], getattr(b, name)[i], rtol=1e-12, atol=1e-12, err_msg=name
        )


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 8),
    dense=st.booleans(),
    box=st.tuples(st.floats(-50, 50), st.floats(-50, 50), st.floats(0, 40), st.floats(0, 40)),
)
def test_credits_always_finite(data, n, dense, box):
    coord = st.one_of(st.floats(-1e4, 1e4), st.just(math.nan))
    coords = np.array(data.draw(st.lists(st.tuples(coord, coord), min_size=n, max_size=n)), dtype=float)
    hits = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    rewards = np.array(data.draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n))) if dense else None
    x1, y1, w, h = box
    r = spatial_credit(coords, hits, rewards, (x1, y1, x1 + w, y1 + h))
    assert r.credits.shape == (n,)
    assert np.all(np.isfinite(r.credits)), (r.branch, r.credits)
    assert np.all((r.spatial_weight >= 0) & (r.spatial_weight <= 1))


def test_config_validation():
    with pytest.raises(ValueError, match="gate"):
        SCAConfig(gate=(0.99, 0.8))
    with pytest.raises(ValueError, match="projections"):
        SCAConfig(projections=((0.0, 0.0),))
    with pytest.raises(ValueError, match=r"\(G, N, 2\)"):
        spatial_credit_batch(np.zeros((5, 2)), np.zeros(5))
