"""Box and point geometry shared by every reward (SSL, SCA, MobileIPL, baselines).

Conventions: a point is ``(x, y)`` and a box is ``(x1, y1, x2, y2)``, both in **screenshot pixels**
(x to the right, y down), with ``x1 <= x2`` and ``y1 <= y2``. Functions accept one point ``(2,)`` or many
``(..., 2)``, and one box ``(4,)`` or many ``(..., 4)``; leading dimensions broadcast. Box edges count as
inside, as in SSL's verifier (seed 000, App. B.4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Box = tuple[float, float, float, float]
FloatArray = NDArray[np.float64]


class InvalidBoxError(ValueError):
    """A target box is not ``(x1, y1, x2, y2)`` with finite values and ``x1 <= x2``, ``y1 <= y2``."""


def as_box(box: ArrayLike) -> FloatArray:
    """Check one box ``(4,)`` or many ``(..., 4)`` and return them as float arrays.

    Args:
        box: ``(x1, y1, x2, y2)`` in pixels, or an array of such boxes.

    Returns:
        The boxes as ``float64`` values, same shape.

    Raises:
        InvalidBoxError: when a box is malformed; the message says which values are wrong.

    >>> as_box((0, 0, 10, 20)).tolist()
    [0.0, 0.0, 10.0, 20.0]
    """
    arr = np.asarray(box, dtype=np.float64)
    if arr.shape == (4,):
        # One box, the common case (a wrapper grades one click per step): float checks, no array reductions.
        x1, y1, x2, y2 = arr.tolist()
        finite = all(map(math.isfinite, (x1, y1, x2, y2)))
        ordered = x1 <= x2 and y1 <= y2
    else:
        finite = arr.ndim > 0 and arr.shape[-1] == 4 and bool(np.all(np.isfinite(arr)))
        ordered = finite and not (np.any(arr[..., 2] < arr[..., 0]) or np.any(arr[..., 3] < arr[..., 1]))
    if not finite:
        raise InvalidBoxError(f"a box is four finite numbers (x1, y1, x2, y2); got {box!r}")
    if not ordered:
        raise InvalidBoxError(
            f"box {box!r} has x2 < x1 or y2 < y1; pass the corners in (x1, y1, x2, y2) order"
        )
    return arr


def box_center(box: ArrayLike) -> FloatArray:
    """Centre ``c = ((x1 + x2) / 2, (y1 + y2) / 2)`` in pixels (seed 000, App. B.1).

    >>> box_center((0, 0, 10, 20)).tolist()
    [5.0, 10.0]
    """
    b = as_box(box)
    return np.stack([(b[..., 0] + b[..., 2]) / 2.0, (b[..., 1] + b[..., 3]) / 2.0], axis=-1)


def box_half_sizes(box: ArrayLike) -> FloatArray:
    """Half-width ``a = (x2 - x1) / 2`` and half-height ``b = (y2 - y1) / 2`` in pixels (App. B.1).

    >>> box_half_sizes((0, 0, 10, 20)).tolist()
    [5.0, 10.0]
    """
    b = as_box(box)
    return np.stack([(b[..., 2] - b[..., 0]) / 2.0, (b[..., 3] - b[..., 1]) / 2.0], axis=-1)


def point_in_box(points: ArrayLike, box: ArrayLike) -> NDArray[np.bool_]:
    """Whether each point lies in the box, edges included: ``x1 <= x <= x2 and y1 <= y <= y2`` (App. B.4).

    Args:
        points: ``(2,)`` or ``(..., 2)`` in pixels; NaN coordinates count as outside.
        box: ``(x1, y1, x2, y2)`` in pixels (or ``(..., 4)``).

    Returns:
        Boolean array of the broadcast leading shape.

    >>> point_in_box([[5, 5], [10, 20], [11, 5]], (0, 0, 10, 20)).tolist()
    [True, True, False]
    """
    if isinstance(points, tuple | list) and len(points) == 2 and not isinstance(points[0], Sequence | np.ndarray):
        # One point (a wrapper's click each step): float comparisons; NaN compares False, as in the array path.
        x1, y1, x2, y2 = as_box(box).tolist() if np.ndim(box) == 1 else (None,) * 4
        if x1 is not None:
            x, y = float(points[0]), float(points[1])
            return np.bool_(x1 <= x <= x2 and y1 <= y <= y2)
    p = np.asarray(points, dtype=np.float64)
    b = as_box(box)
    with np.errstate(invalid="ignore"):
        inside_x = (b[..., 0] <= p[..., 0]) & (p[..., 0] <= b[..., 2])
        return inside_x & (b[..., 1] <= p[..., 1]) & (p[..., 1] <= b[..., 3])


def normalised_offsets(points: ArrayLike, box: ArrayLike, edge: float = 1.0) -> FloatArray:
    """Offsets from the box centre with the box edge at ``edge``: ``(edge * (x - cx) / a, edge * (y - cy) / b)``.

    A zero half-size (a box of zero width or height) gives offset 0 for a point on that line and ``inf``
    elsewhere, so degenerate boxes stay usable. The product is formed before the division so that points on
    whole multiples of a standard deviation land exactly on them (``150 * 3 / 150 == 3``).

    Args:
        points: ``(2,)`` or ``(..., 2)`` in pixels.
        box: ``(x1, y1, x2, y2)`` in pixels (or ``(..., 4)``).
        edge: value of the offset at the box edge (the edge's distance in standard deviations).

    Returns:
        Array of shape ``points.shape``, dimensionless (box half-sizes).

    >>> normalised_offsets([15.0, 10.0], (0, 0, 20, 20)).tolist()
    [0.5, 0.0]
    """
    p = np.asarray(points, dtype=np.float64)
    delta = p - box_center(box)
    half = box_half_sizes(box)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (delta * edge) / half
    # 0/0 (on the line of a flat box) is a perfect hit on that axis; x/0 is infinitely far.
    return np.where(half > 0, out, np.where(delta == 0, 0.0, np.inf))


def mahalanobis_sq(points: ArrayLike, box: ArrayLike, edge_sigmas: float = 1.0) -> FloatArray:
    """Squared normalised Mahalanobis distance to the box centre with ``sigma = (a, b) / edge_sigmas``.

    ``d^2 = (edge_sigmas * (x - cx) / a)^2 + (edge_sigmas * (y - cy) / b)^2``: the diagonal-covariance
    Gaussian field of SSL (seed 000, section 3.3 and App. B.1) and of the GUI-G2-style point reward. The box
    edge lies ``edge_sigmas`` standard deviations from the centre.

    Args:
        points: ``(2,)`` or ``(..., 2)`` in pixels.
        box: ``(x1, y1, x2, y2)`` in pixels.
        edge_sigmas: half-size in standard deviations (``1 / edge_sigmas`` is sigma over the half-size).

    Returns:
        Array of the broadcast leading shape, dimensionless.

    >>> float(mahalanobis_sq([15.0, 10.0], (0, 0, 20, 20), edge_sigmas=2.0))
    1.0
    """
    if not edge_sigmas > 0:
        raise ValueError(f"edge_sigmas must be positive, got {edge_sigmas!r}")
    u = normalised_offsets(points, box, edge_sigmas)
    return np.sum(u * u, axis=-1)


def normalised_distance(
    point: ArrayLike,
    reference: ArrayLike,
    screen_size: Sequence[float],
    mode: Literal["axes", "diagonal"] = "axes",
) -> FloatArray:
    """Distance between points with the screen size divided out, clipped to ``[0, 1]``.

    ``mode="axes"`` divides x by the width and y by the height first, then takes the Euclidean norm: the
    normalised-coordinate distance of AndroidControl-style evaluators (seed 001, App. A.3 accepts below
    0.142) and of MobileIPL's 0-1000 coordinate frame. ``mode="diagonal"`` divides the pixel distance by the
    screen diagonal instead. Non-finite inputs give distance 1 (as far as possible).

    Args:
        point: ``(2,)`` or ``(..., 2)`` in pixels.
        reference: ``(2,)`` or ``(..., 2)`` in pixels.
        screen_size: ``(width, height)`` in pixels.
        mode: ``"axes"`` or ``"diagonal"``.

    Returns:
        Dimensionless distance in ``[0, 1]`` of shape ``broadcast(point, reference).shape[:-1]``.

    >>> float(normalised_distance((30, 40), (0, 0), (100, 100)))
    0.5
    >>> float(normalised_distance((30, 40), (0, 0), (300, 400), mode="diagonal"))
    0.1
    """
    w, h = (float(s) for s in screen_size)
    if not (w > 0 and h > 0):
        raise ValueError(f"screen_size must be two positive numbers (width, height), got {screen_size!r}")
    delta = np.asarray(point, dtype=np.float64) - np.asarray(reference, dtype=np.float64)
    if mode == "axes":
        d = np.hypot(delta[..., 0] / w, delta[..., 1] / h)
    elif mode == "diagonal":
        d = np.hypot(delta[..., 0], delta[..., 1]) / np.hypot(w, h)
    else:
        raise ValueError(f"mode must be 'axes' or 'diagonal', got {mode!r}")
    return np.clip(np.where(np.isfinite(d), d, 1.0), 0.0, 1.0)
