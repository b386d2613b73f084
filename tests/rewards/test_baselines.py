"""Baselines: GUI-R1 binary reward rules, GUI-G2-style Gaussian point reward, cell match fraction."""

import math

import numpy as np
import pytest

from rewards.baselines import cell_match_fraction, gaussian_point_reward, gui_r1_reward
from rewards.steps import StepPrediction, StepTarget


def click(x, y):
    return StepPrediction("click", point=(float(x), float(y)))


def test_140_px_rule():
    t = StepTarget("click", point=(500.0, 500.0))
    # (584, 612): distance sqrt(84^2 + 112^2) = sqrt(7056 + 12544) = sqrt(19600) = 140 -> accepted (<=)
    assert gui_r1_reward(click(584, 612), t) == pytest.approx(1.0)  # 0.8 * 1 + 0.2
    # (640.5, 500): 140.5 px -> rejected; well-formed -> 0.2
    assert gui_r1_reward(click(640.5, 500), t) == pytest.approx(0.2)
    # a custom radius
    assert gui_r1_reward(click(640.5, 500), t, point_radius=141.0) == pytest.approx(1.0)


def test_box_rule_accepts_far_from_point():
    t = StepTarget("click", box=(0, 0, 1000, 100), point=(500.0, 50.0))
    assert gui_r1_reward(click(990, 95), t) == pytest.approx(1.0)  # 490 px from the point, inside the box
    assert gui_r1_reward(click(990, 101), t) == pytest.approx(0.2)  # just below the box, 490 px away
    assert gui_r1_reward(StepPrediction("double_click", point=(500.0, 50.0)), t) == pytest.approx(0.2)


def test_f1_half_rule():
    t = StepTarget("type", text="red running shoes")
    # {red, shoes} vs {red, running, shoes}: P = 1, R = 2/3 -> F1 = 0.8 -> accepted
    assert gui_r1_reward(StepPrediction("type", text="red shoes"), t) == pytest.approx(1.0)
    # {red, hat} vs ref: overlap 1, P = 1/2, R = 1/3 -> F1 = 2 * (1/6) / (5/6) = 0.4 -> rejected
    assert gui_r1_reward(StepPrediction("type", text="red hat"), t) == pytest.approx(0.2)
    # exactly 0.5: {a, b} vs {a, c}: P = R = 1/2 -> F1 = 0.5 -> accepted (>=)
    t2 = StepTarget("type", text="a c")
    assert gui_r1_reward(StepPrediction("type", text="a b"), t2) == pytest.approx(1.0)


def test_malformed_scores_zero_and_other_actions_by_type():
    t = StepTarget("click", point=(10.0, 10.0))
    assert gui_r1_reward(None, t) == 0.0
    assert gui_r1_reward(StepPrediction("click"), t) == 0.0  # no coordinates extracted
    assert gui_r1_reward(StepPrediction("click", point=(math.nan, 1.0)), t) == 0.0
    assert gui_r1_reward(StepPrediction("type"), StepTarget("type", text="x")) == 0.0  # no text
    s = StepTarget("scroll", args={"direction": "down"})
    assert gui_r1_reward(StepPrediction("scroll", args={"direction": "up"}), s) == pytest.approx(1.0)
    assert gui_r1_reward(StepPrediction("press", args={"key": "enter"}), s) == pytest.approx(0.2)


def test_gaussian_point_reward_by_hand():
    box = (0, 0, 100, 40)  # centre (50, 20), a = 50, b = 20; sigma = (50, 20) by default
    # centre -> 1; (100, 20): d = 1 -> exp(-0.5); (50, 60): d = 2 -> exp(-2), outside the box but not zero
    r = gaussian_point_reward([[50, 20], [100, 20], [50, 60], [np.nan, 0]], box)
    assert r == pytest.approx([1.0, math.exp(-0.5), math.exp(-2.0), 0.0])
    # sigma_frac = 0.5 -> sigma = (25, 10): (100, 20) is at d = 2 -> exp(-2)
    assert float(gaussian_point_reward([100, 20], box, sigma_frac=0.5)) == pytest.approx(math.exp(-2.0))


def test_cell_match_fraction():
    assert cell_match_fraction(np.eye(3), np.zeros((3, 3))) == pytest.approx(6 / 9)
    assert cell_match_fraction(np.zeros((2, 3)), np.zeros((3, 3))) == 0.0
