"""Baseline rewards the papers compare against.

* :func:`gui_r1_reward`: the binary GUI-R1-style action reward ``0.8 * accuracy + 0.2 * format`` (the
  evaluator of seed 001, section 3 and App. A.3 / F.2), which is also SCA's binary success signal.
* :func:`gaussian_point_reward`: GUI-G2-style continuous Gaussian point reward, SSL's "RL-continuous" GUI
  baseline (seed 000, Tables 1-2 and the rebuttal notes on continuous shaping).
* :func:`cell_match_fraction`: cell-level match fraction, SSL's continuous baseline for grids.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rewards.geometry import FloatArray, mahalanobis_sq, point_in_box
from rewards.steps import GROUNDING_TYPES, StepPrediction, StepTarget, is_well_formed
from rewards.text import token_set_f1


def gui_r1_accuracy(
    pred: StepPrediction,
    target: StepTarget,
    *,
    point_radius: float = 140.0,
    f1_threshold: float = 0.5,
) -> bool:
    """Binary action accuracy of the GUI-R1-style evaluator (seed 001, App. A.3 and F.2).

    The type must match. Pointer actions are accepted inside the target box (edges included) or within
    ``point_radius`` pixels of the ground-truth point; ``type`` is accepted at token-set F1 >=
    ``f1_threshold``; every other action scores on type match alone (its ``args`` are not checked).

    Args:
        pred: well-formed parsed prediction.
        target: annotation; pointer actions need ``box`` or ``point``.
        point_radius: acceptance radius around the ground-truth point, in pixels.
        f1_threshold: minimum token-set F1 for text.

    Returns:
        Whether the action is accepted.
    """
    if pred.action_type != target.action_type:
        return False
    if target.action_type in GROUNDING_TYPES:
        in_box = target.box is not None and bool(point_in_box(pred.point, target.box))
        gt = target.point
        near = (
            gt is not None and float(np.hypot(pred.point[0] - gt[0], pred.point[1] - gt[1])) <= point_radius
        )
        return in_box or near
    if target.text is not None:
        return token_set_f1(pred.text or "", target.text) >= f1_threshold
    return True


def gui_r1_reward(
    pred: StepPrediction | None,
    target: StepTarget,
    *,
    accuracy_weight: float = 0.8,
    format_weight: float = 0.2,
    point_radius: float = 140.0,
    f1_threshold: float = 0.5,
) -> float:
    """``0.8 * accuracy + 0.2 * format``; a malformed output (``None`` or missing arguments) scores 0.

    Args:
        pred: parsed prediction, ``None`` when the output did not parse.
        target: annotation.
        accuracy_weight: weight of the binary accuracy.
        format_weight: weight of the format term (1 for any well-formed output).
        point_radius: see :func:`gui_r1_accuracy`, pixels.
        f1_threshold: see :func:`gui_r1_accuracy`.

    Returns:
        One of ``0``, ``format_weight`` and ``accuracy_weight + format_weight``.

    >>> gui_r1_reward(StepPrediction("click", point=(200.0, 100.0)), StepTarget("click", point=(100.0, 100.0)))
    1.0
    >>> gui_r1_reward(StepPrediction("click", point=(241.0, 100.0)), StepTarget("click", point=(100.0, 100.0)))
    0.2
    >>> gui_r1_reward(None, StepTarget("click", point=(100.0, 100.0)))
    0.0
    """
    if not is_well_formed(pred):
        return 0.0
    assert pred is not None  # narrowed by is_well_formed
    acc = gui_r1_accuracy(pred, target, point_radius=point_radius, f1_threshold=f1_threshold)
    return accuracy_weight * float(acc) + format_weight


def gaussian_point_reward(points: ArrayLike, box: ArrayLike, sigma_frac: float = 1.0) -> FloatArray:
    """GUI-G2-style continuous point reward ``exp(-d^2 / 2)``, never cut off at the box edge.

    ``d`` is the Mahalanobis distance to the box centre with ``sigma = sigma_frac * (a, b)`` per axis
    (``a``, ``b`` the half-sizes), i.e. sigma proportional to the box size. The default ``sigma_frac = 1``
    (sigma = half the box width / height) places the box edge at one standard deviation, where the reward is
    ``exp(-1/2) ~ 0.61``; a click two box-widths from the centre earns ``exp(-8) ~ 3e-4``.

    Args:
        points: ``(2,)`` or ``(..., 2)`` in pixels; NaN gives 0.
        box: ``(x1, y1, x2, y2)`` in pixels.
        sigma_frac: standard deviation per axis as a fraction of the half-size.

    Returns:
        Reward in ``[0, 1]`` of shape ``points.shape[:-1]``.

    >>> round(float(gaussian_point_reward((20.0, 5.0), (0, 0, 20, 10))), 4)
    0.6065
    """
    if not sigma_frac > 0:
        raise ValueError(f"sigma_frac must be positive, got {sigma_frac!r}")
    with np.errstate(invalid="ignore"):
        r = np.exp(-0.5 * mahalanobis_sq(points, box, edge_sigmas=1.0 / sigma_frac))
    return np.nan_to_num(r, nan=0.0)


def cell_match_fraction(pred: ArrayLike, ref: ArrayLike) -> float:
    """Fraction of cells equal to the reference; a grid of another shape scores 0 (SSL's RL-continuous).

    >>> cell_match_fraction([[1, 2], [3, 4]], [[1, 2], [3, 0]])
    0.75
    """
    p, r = np.asarray(pred), np.asarray(ref)
    if p.shape != r.shape or r.size == 0:
        return 0.0
    return float(np.mean(p == r))


__all__ = [
    "cell_match_fraction",
    "gaussian_point_reward",
    "gui_r1_accuracy",
    "gui_r1_reward",
]
