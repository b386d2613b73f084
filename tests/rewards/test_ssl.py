"""SSL (seed 000): Gaussian-field zones, step proximity, blockwise grid scores, R = C + alpha * S_hat.

Zone boundaries b_k = exp(-k^2/2): b_1 = 0.606531, b_2 = 0.135335, b_3 = 0.011109, b_4 = 3.3546e-4,
b_7 = exp(-24.5) = 2.2897e-11, and b_K = 0. With the default width the box edge sits K - 1 sigmas out,
and phi = exp(-d^2/2) > b_k exactly when d < k, so zone k is k - 1 <= d < k.
"""

import math

import numpy as np
import pytest

from rewards.ssl import (
    MissingTargetBoxError,
    arc_blockwise_score,
    block_values,
    blockwise_score,
    discretise,
    gaussian_field,
    gui_ssl_reward,
    resize_nearest,
    ssl_reward,
    step_correct,
    step_proximity,
    sudoku_blockwise_score,
    trajectory_proximity,
    zone_boundaries,
    zone_index,
)
from rewards.steps import StepPrediction, StepTarget

E = math.exp


def zone_values(points, box, k):
    phi = gaussian_field(points, box, n_zones=k)
    return zone_index(phi, k).tolist(), discretise(phi, k, "lower"), discretise(phi, k, "upper")


def test_boundaries():
    assert zone_boundaries(4) == pytest.approx([1.0, E(-0.5), E(-2.0), E(-4.5), 0.0])
    with pytest.raises(ValueError, match="n_zones"):
        zone_boundaries(1)


def test_k4_centre_borders_outside():
    # box (0, 0, 300, 300): centre (150, 150), a = b = 150, edge at 3 sigma -> sigma = 50 px.
    box = (0, 0, 300, 300)
    pts = [
        [150, 150],  # d = 0: phi = 1 -> zone 1; lower b_1, upper b_0 = 1
        [199, 150],  # d = 0.98 < 1 -> still zone 1
        [200, 150],  # d = 1 exactly: phi = b_1 -> zone 2 (phi in (b_2, b_1]); lower b_2, upper b_1
        [150, 250],  # d = 2 (on y): phi = b_2 -> zone 3; lower b_3, upper b_2
        [300, 150],  # box edge, d = 3: phi = b_3 -> zone 4; lower b_4 = 0, upper b_3
        [300, 300],  # corner, d = 3 * sqrt(2): still in the box -> zone 4
        [301, 150],  # outside: phi = 0 -> no zone, 0 under both readings
    ]
    idx, lower, upper = zone_values(pts, box, 4)
    assert idx == [1, 1, 2, 3, 4, 4, 0]
    assert lower == pytest.approx([E(-0.5), E(-0.5), E(-2), E(-4.5), 0, 0, 0])
    assert upper == pytest.approx([1, 1, E(-0.5), E(-2), E(-4.5), E(-4.5), 0])
    assert float(gaussian_field([200, 150], box)) == E(-0.5)  # exactly on the boundary


def test_k2_rectangular_box():
    # box (0, 0, 200, 100): a = 100, b = 50, edge at 1 sigma -> sigma = (100, 50).
    box = (0, 0, 200, 100)
    pts = [
        [100, 50],  # centre: zone 1 -> lower b_1 = 0.6065, upper 1
        [150, 75],  # d^2 = 0.5^2 + 0.5^2 = 0.5 -> phi = exp(-0.25) = 0.7788 -> zone 1
        [200, 50],  # edge, d = 1: phi = b_1 -> zone 2 -> lower b_2 = 0, upper b_1
        [100, -1],  # outside
    ]
    idx, lower, upper = zone_values(pts, box, 2)
    assert idx == [1, 1, 2, 0]
    assert lower == pytest.approx([E(-0.5), E(-0.5), 0, 0])
    assert upper == pytest.approx([1, 1, E(-0.5), 0])
    assert float(gaussian_field([150, 75], box, n_zones=2)) == pytest.approx(E(-0.25))


def test_k8():
    # box (0, 0, 700, 140): a = 350, b = 70, edge at 7 sigma -> sigma = (50, 10) px.
    box = (0, 0, 700, 140)
    pts = [
        [350, 70],  # centre, zone 1: lower b_1
        [400, 70],  # d = 1 -> zone 2: lower b_2 = exp(-2), upper b_1
        [350, 80],  # d = 1 along y -> zone 2
        [425, 70],  # d = 1.5: phi = exp(-1.125) = 0.3247 in (b_2, b_1] -> zone 2
        [500, 70],  # d = 3 -> zone 4: lower b_4 = exp(-8), upper b_3 = exp(-4.5)
        [700, 70],  # edge, d = 7 -> zone 8: lower 0, upper b_7 = exp(-24.5)
        [-0.5, 70],  # outside
    ]
    idx, lower, upper = zone_values(pts, box, 8)
    assert idx == [1, 2, 2, 2, 4, 8, 0]
    assert lower == pytest.approx([E(-0.5), E(-2), E(-2), E(-2), E(-8), 0, 0], rel=1e-12, abs=0)
    assert upper == pytest.approx([1, E(-0.5), E(-0.5), E(-0.5), E(-4.5), E(-24.5), 0], rel=1e-12, abs=0)


def test_explicit_width_and_vectorised_shape():
    # edge_sigmas = 1 on a K = 4 field: the box edge (d = 1) is then only the zone 1/2 border.
    box = (0, 0, 300, 300)
    assert float(gaussian_field([300, 150], box, n_zones=4, edge_sigmas=1.0)) == pytest.approx(E(-0.5))
    assert gaussian_field(np.zeros((3, 5, 2)), box).shape == (3, 5)


def test_steps_and_trajectory():
    click = StepTarget("click", box=(0, 0, 300, 300))
    typing = StepTarget("type", text="hello world")
    scroll = StepTarget("scroll", args={"direction": "down"})
    # click 50 px right of centre: d = 1 -> phi = exp(-0.5) = 0.6065
    assert step_proximity(click, StepPrediction("click", point=(200.0, 150.0))) == pytest.approx(E(-0.5))
    assert step_proximity(click, StepPrediction("long_press", point=(150.0, 150.0))) == 0.0  # wrong type
    assert step_proximity(click, None) == 0.0
    assert step_proximity(typing, StepPrediction("type", text=" hello  world ")) == 1.0  # exact after spacing
    assert step_proximity(typing, StepPrediction("type", text="hello")) == 0.0
    assert step_proximity(scroll, StepPrediction("scroll", args={"direction": "up"})) == 0.0
    # drag: min(phi_start, phi_end) = min(1, exp(-2)) with end 100 px (2 sigma) right of the end box centre
    drag = StepTarget("drag", box=(0, 0, 300, 300), end_box=(300, 0, 600, 300))
    pred = StepPrediction("drag", point=(150.0, 150.0), end_point=(550.0, 150.0))
    assert step_proximity(drag, pred) == pytest.approx(E(-2))
    # S = (phi_click + h_type) / 2 = (0.6065 + 0) / 2 = 0.30327
    preds = [StepPrediction("click", point=(200.0, 150.0)), StepPrediction("type", text="bye")]
    assert trajectory_proximity([click, typing], preds) == pytest.approx(E(-0.5) / 2)
    with pytest.raises(MissingTargetBoxError):
        step_proximity(StepTarget("click"), StepPrediction("click", point=(1.0, 1.0)))


def test_gui_ssl_reward_by_hand():
    click = StepTarget("click", box=(0, 0, 300, 300))
    typing = StepTarget("type", text="hi")
    # one step at the centre: C = 1, S = 1 -> zone 1 -> S_hat = b_1 -> R = 1 + 0.2 * 0.606531 = 1.121306
    assert gui_ssl_reward([click], [StepPrediction("click", point=(150.0, 150.0))]) == pytest.approx(
        1.121306, abs=1e-6
    )
    # centre click + wrong text: C = 0; S = 0.5 in (b_2, b_1] -> zone 2 -> S_hat = b_2 = 0.135335
    # R = 0 + 0.2 * 0.135335 = 0.027067
    preds = [StepPrediction("click", point=(150.0, 150.0)), StepPrediction("type", text="no")]
    assert gui_ssl_reward([click, typing], preds) == pytest.approx(0.2 * E(-2))
    # upper reading: S_hat = b_1 -> R = 0.2 * 0.606531
    assert gui_ssl_reward([click, typing], preds, zone_value="upper") == pytest.approx(0.2 * E(-0.5))
    # goal not reached -> C = 0 even with perfect steps
    one = [StepPrediction("click", point=(150.0, 150.0))]
    assert gui_ssl_reward([click], one, goal_reached=False) == pytest.approx(0.2 * E(-0.5))
    assert step_correct(click, StepPrediction("click", point=(300.0, 0.0)))  # corner is inside
    assert ssl_reward([0, 1], [0.5, 0.5], alpha=0.2).tolist() == [0.1, 1.1]


def test_blockwise_6x6_known_pattern():
    # 6x6 -> nine 2x2 blocks (4 cells). Mismatches per block, row-major:
    # (0,0): 0 -> 4/4 -> 1.0 | (0,1): 1 -> 3/4 = 0.75 -> 1.0 | (0,2): 2 -> 0.5 -> 0.67
    # (1,0): 3 -> 0.25 -> 0.33 | (1,1): 4 -> 0 -> 0.0     | (1,2): 0 -> 1.0
    # (2,*): 0 -> 1.0 each.  Mean = (1 + 1 + .67 + .33 + 0 + 1 + 1 + 1 + 1) / 9 = 7 / 9
    ref = np.zeros((6, 6), dtype=int)
    pred = ref.copy()
    pred[0, 2] = 1
    pred[0:2, 4] = 1
    pred[2, 0] = pred[2, 1] = pred[3, 0] = 1
    pred[2:4, 2:4] = 1
    assert block_values(pred, ref).tolist() == [[1.0, 1.0, 0.67], [0.33, 0.0, 1.0], [1.0, 1.0, 1.0]]
    assert blockwise_score(pred, ref) == pytest.approx(7 / 9)


def test_blockwise_non_multiple_of_three():
    # 7x5: rows split [3, 2, 2] (0-2, 3-4, 5-6), cols split [2, 2, 1] (0-1, 2-3, 4).
    # Block sizes: row 0: 6, 6, 3; rows 1-2: 4, 4, 2.
    ref = np.zeros((7, 5), dtype=int)
    pred = ref.copy()
    pred[0, 0] = pred[1, 1] = 1  # (0,0): 4/6 = 0.667 -> 0.67
    pred[0, 4] = 1  # (0,2): 2/3 -> 0.67
    pred[3, 4] = 1  # (1,2): 1/2 = 0.5 -> 0.67
    pred[5, 4] = pred[6, 4] = 1  # (2,2): 0/2 -> 0.0
    pred[3, 2] = pred[3, 3] = pred[4, 2] = 1  # (1,1): 1/4 = 0.25 -> 0.33
    # Sum = 0.67 + 1 + 0.67 + 1 + 0.33 + 0.67 + 1 + 1 + 0 = 6.34 -> / 9 = 0.704444
    assert blockwise_score(pred, ref) == pytest.approx(6.34 / 9)


def test_blockwise_tiny_grid_skips_empty_blocks():
    # 2x2 splits into [1, 1, 0] rows and cols: four 1x1 blocks, the other five empty and left out.
    # 3 of 4 cells match -> block values 1, 1, 1, 0 -> mean 0.75
    assert blockwise_score([[1, 2], [3, 4]], [[1, 2], [3, 0]]) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="arc_blockwise_score"):
        blockwise_score(np.zeros((3, 3)), np.zeros((4, 4)))


def test_sudoku_subgrids():
    ref = (np.arange(81).reshape(9, 9) % 9) + 1
    pred = ref.copy()
    pred[3:5, 3:5] = 0  # subgrid (1,1): 4 mismatches
    pred[5, 3] = 0  # ... and a 5th -> 4/9 = 0.444 -> 0.33
    pred[0, 0] = pred[1, 1] = pred[2, 2] = 0  # subgrid (0,0): 6/9 = 0.667 -> 0.67
    pred[8, 8] = pred[7, 7] = 0  # subgrid (2,2): 7/9 = 0.778 -> 1.0
    # Mean = (7 * 1.0 + 0.33 + 0.67) / 9 = 8 / 9
    assert sudoku_blockwise_score(pred, ref) == pytest.approx(8 / 9)
    with pytest.raises(ValueError, match="9x9"):
        sudoku_blockwise_score(np.zeros((6, 6)), np.zeros((6, 6)))


def test_arc_resize_cases():
    ref = np.arange(1, 10).reshape(3, 3)  # [[1,2,3],[4,5,6],[7,8,9]]
    # A 2x-upsampled prediction comes back exactly: output rows/cols floor((i + .5) * 6 / 3) = 1, 3, 5.
    assert arc_blockwise_score(resize_nearest(ref, (6, 6)), ref) == 1.0
    # A 2x2 prediction [[1,3],[7,9]] upsampled to 3x3: rows/cols floor((i + .5) * 2 / 3) = 0, 1, 1
    # -> [[1,3,3],[7,9,9],[7,9,9]]; equal to ref at (0,0), (0,2), (2,0), (2,2) -> 4 of nine 1x1 blocks = 4/9
    small = np.array([[1, 3], [7, 9]])
    assert resize_nearest(small, (3, 3)).tolist() == [[1, 3, 3], [7, 9, 9], [7, 9, 9]]
    assert arc_blockwise_score(small, ref) == pytest.approx(4 / 9)
    assert arc_blockwise_score(np.zeros((0, 0)), ref) == 0.0
