"""Theil-Sen line fits vectorised over many small problems (SCA's Residual branch, seed 001 sec. 4.1).

SCA fits a line to three or four points at a time, a hundred times per group; calling
``scipy.stats.theilslopes`` per fit is far too slow for the exact-gradient audit. This module fits all of
them at once. It reproduces ``scipy.stats.theilslopes(y, x, method="separate")``: the slope is the median
of ``(y_b - y_a) / (x_b - x_a)`` over pairs with ``x_a != x_b``, the intercept is
``median(y) - slope * median(x)``. A problem whose ``x`` values are all equal has no slope (invalid).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rewards.geometry import FloatArray


def theil_sen(x: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """Fit ``y = intercept + slope * x`` along the last axis of every problem.

    Args:
        x: ``(..., m)`` abscissae (``m >= 2``); leading dimensions broadcast with ``y``.
        y: ``(..., m)`` ordinates.

    Returns:
        ``(slope, intercept, valid)``, each of the broadcast leading shape; slope and intercept are NaN
        where ``valid`` is False (fewer than two distinct finite ``x`` values).

    >>> s, b, ok = theil_sen([0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, 3.0, 20.0])  # robust to the outlier
    >>> float(s), float(b), bool(ok)
    (1.0, 0.0, True)
    """
    xb, yb = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    m = xb.shape[-1]
    if m < 2:
        raise ValueError(f"a line needs at least two points, got {m}")
    a, b = np.triu_indices(m, 1)
    dx = xb[..., b] - xb[..., a]  # (..., m(m-1)/2)
    dy = yb[..., b] - yb[..., a]
    usable = (dx > 0) | (dx < 0)  # False for equal x and for NaN, as scipy's `deltax > 0` mask
    with np.errstate(invalid="ignore", divide="ignore"):
        slopes = np.where(usable, dy / np.where(usable, dx, 1.0), np.nan)
    slopes = np.sort(slopes, axis=-1)  # NaN sort last
    k = usable.sum(axis=-1)
    lo = np.maximum((k - 1) // 2, 0)[..., None]
    hi = np.maximum(k // 2, 0)[..., None]
    med = 0.5 * (np.take_along_axis(slopes, lo, -1) + np.take_along_axis(slopes, hi, -1))[..., 0]
    valid = k > 0
    slope = np.where(valid, med, np.nan)
    intercept = np.median(yb, axis=-1) - slope * np.median(xb, axis=-1)
    return slope, intercept, valid
