"""Sweet Spot Learning (SSL) tiered rewards: ``R_SSL = C + alpha * S_hat`` (seed 000, section 3.2).

Two instantiations (section 3.3):

* **GUI** (App. B.1, Table 5): a Gaussian field ``phi(p; B)`` over the target box scores each grounding
  step; other steps score binary correctness; the step scores are averaged (Eq. 3) and the average is
  discretised into ``K`` zones with boundaries ``tau_k = exp(-k^2 / 2)``.
* **Grids** (App. B.2): maze, Sudoku and ARC outputs are compared with the reference block by block on a
  3x3 partition; each block gets a tiered value and the block values are averaged. These block values are
  already tiered, so the block average is used as ``S_hat`` directly.

Choices where the paper is silent (each is a parameter):

* **Gaussian width.** ``sigma = (a, b) / edge_sigmas``: the box edge lies ``edge_sigmas`` standard
  deviations from the centre. ``phi = exp(-d^2 / 2) > tau_k`` exactly when ``d < k``, so zone ``k`` is the
  elliptical ring ``k - 1 <= d < k``. The default ``edge_sigmas = K - 1`` puts the outermost boundary
  ``tau_{K-1}`` on the ellipse inscribed in the box: zones ``1 .. K-1`` are rings of equal width that tile
  that ellipse, and zone ``K`` is what remains of the box (its corners). A larger value would leave zones
  that no in-box click can reach; a smaller one would squeeze the inner zones.
* **Zone value.** Section 3.3 writes ``S_hat = s_k = b_k`` for ``phi in (b_k, b_{k-1}]`` (``"lower"``: the
  zone's lower boundary, so the outermost zone is worth ``b_K = 0``). ``"upper"`` assigns ``b_{k-1}``
  instead (the centre zone is worth 1). Section 3.2's ``Z_k = [b_{k-1}, b_k)`` has its ends swapped (it
  would be empty since ``b_{k-1} > b_k``); we follow the App. B.1 / section 3.3 form. A score of 0 (a click
  outside the box) is in no zone and is worth 0 under both readings.
* **Grid sizes** not divisible by 3 are split with ``numpy.array_split`` (the first blocks get the extra
  row / column); blocks left empty (sides shorter than 3) are left out of the mean.
* **ARC** grids are both resampled to the reference's size by nearest-neighbour interpolation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rewards.geometry import FloatArray, as_box, mahalanobis_sq, point_in_box
from rewards.steps import GROUNDING_TYPES, StepPrediction, StepTarget, args_match, text_exact

ZoneValue = Literal["lower", "upper"]
#: Block tiers of App. B.2: match-fraction thresholds and the values they earn (as printed: 0.67, 0.33).
BLOCK_THRESHOLDS: tuple[float, float, float] = (0.75, 0.5, 0.25)
BLOCK_VALUES: tuple[float, float, float, float] = (1.0, 0.67, 0.33, 0.0)


class MissingTargetBoxError(ValueError):
    """A grounding step was scored without a target box; annotate ``StepTarget.box`` in pixels."""


def _check_zones(n_zones: int) -> None:
    if int(n_zones) != n_zones or n_zones < 2:
        raise ValueError(f"n_zones must be an integer >= 2 (the paper uses 2-8, default 4), got {n_zones!r}")


def zone_boundaries(n_zones: int = 4) -> FloatArray:
    """Boundaries ``1 = b_0 > b_1 > ... > b_{K-1} > b_K = 0`` with ``b_k = tau_k = exp(-k^2/2)`` (App. B.1).

    >>> zone_boundaries(3).round(4).tolist()
    [1.0, 0.6065, 0.1353, 0.0]
    """
    _check_zones(n_zones)
    return _boundaries(int(n_zones))


@lru_cache(maxsize=16)
def _boundaries(n_zones: int) -> FloatArray:
    # Cached (read-only): a reward wrapper tiers every env step, and rebuilding these dominated its cost.
    k = np.arange(n_zones, dtype=np.float64)
    # Written as exp(-0.5 * k^2) so that phi at d == k (computed the same way) lands exactly on b_k.
    b = np.append(np.exp(-0.5 * k * k), 0.0)
    b.flags.writeable = False
    return b


def gaussian_field(
    points: ArrayLike, box: ArrayLike, *, n_zones: int = 4, edge_sigmas: float | None = None
) -> FloatArray:
    """Step proximity ``phi(p; B) = exp(-d^2 / 2)`` inside the box, 0 outside (section 3.3, App. B.1).

    ``d`` is the normalised Mahalanobis distance to the box centre with per-axis widths
    ``sigma = (a, b) / edge_sigmas`` (``a``, ``b`` the half-sizes), so ``phi`` is 1 at the centre and
    ``exp(-edge_sigmas^2 / 2)`` at the middle of each edge.

    Args:
        points: ``(2,)`` or ``(..., 2)`` in pixels; NaN gives 0.
        box: ``(x1, y1, x2, y2)`` in pixels.
        n_zones: number of zones ``K``; sets the default width.
        edge_sigmas: box half-size in standard deviations; default ``K - 1`` (see the module docstring).

    Returns:
        ``phi`` in ``[0, 1]``, shape ``points.shape[:-1]``.

    >>> float(gaussian_field((100.0, 50.0), (0, 0, 200, 100)))
    1.0
    >>> round(float(gaussian_field((150.0, 50.0), (0, 0, 200, 100), n_zones=3)), 4)  # d = 1
    0.6065
    >>> float(gaussian_field((201.0, 50.0), (0, 0, 200, 100)))
    0.0
    """
    _check_zones(n_zones)
    k_edge = float(n_zones - 1) if edge_sigmas is None else float(edge_sigmas)
    one = _one_point_field(points, box, k_edge)
    if one is not None:
        return one
    d2 = mahalanobis_sq(points, box, edge_sigmas=k_edge)
    with np.errstate(invalid="ignore"):
        phi = np.exp(-0.5 * d2)
    return np.where(point_in_box(points, box), phi, 0.0)


def _one_point_field(points: ArrayLike, box: ArrayLike, k_edge: float) -> np.float64 | None:
    """``gaussian_field`` of one point and one box in float arithmetic, bit for bit the array path's value (the same
    operations in the same order, and numpy's ``exp``); ``None`` for any other shape. A reward wrapper grades one
    click per env step, where numpy's per-call overhead cost ten times the arithmetic."""
    if not (isinstance(points, tuple | list) and len(points) == 2 and isinstance(box, tuple | list) and len(box) == 4):
        return None
    try:
        x, y = float(points[0]), float(points[1])
    except (TypeError, ValueError):
        return None
    x1, y1, x2, y2 = (float(v) for v in as_box(box).tolist())
    if not k_edge > 0:
        raise ValueError(f"edge_sigmas must be positive, got {k_edge!r}")
    d2 = 0.0
    for p, lo, hi in ((x, x1, x2), (y, y1, y2)):
        delta, half = p - (lo + hi) / 2.0, (hi - lo) / 2.0
        u = (delta * k_edge) / half if half > 0 else (0.0 if delta == 0 else math.inf)
        d2 += u * u
    inside = x1 <= x <= x2 and y1 <= y <= y2
    return np.float64(np.exp(-0.5 * d2)) if inside else np.float64(0.0)


def zone_index(scores: ArrayLike, n_zones: int = 4) -> NDArray[np.int64]:
    """Zone ``k`` in ``1..K`` with ``score in (b_k, b_{k-1}]``; 0 for scores ``<= 0`` (outside every zone).

    >>> zone_index([1.0, 0.61, 0.6, 0.0], n_zones=4).tolist()
    [1, 1, 2, 0]
    """
    b = zone_boundaries(n_zones)
    s = np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=0.0)
    # k = 1 + #{j in 1..K-1 : s <= b_j}; the inner boundaries are decreasing.
    k = 1 + np.sum(s[..., None] <= b[1:-1], axis=-1)
    return np.where(s > 0, k, 0).astype(np.int64)


def discretise(scores: ArrayLike, n_zones: int = 4, zone_value: ZoneValue = "lower") -> FloatArray:
    """Sweet-spot value ``S_hat`` of a proximity score (Eq. 4; section 3.3 form ``S_hat = s_k = b_k``).

    Args:
        scores: trajectory proximity ``S`` (or a single ``phi``) in ``[0, 1]``.
        n_zones: ``K``.
        zone_value: ``"lower"`` gives zone ``k`` the value ``b_k`` (as printed); ``"upper"`` gives ``b_{k-1}``.

    Returns:
        ``S_hat`` in ``[0, 1]``, same shape as ``scores``; 0 for a score of 0.

    >>> discretise([1.0, 0.5, 0.0], n_zones=2).round(4).tolist()
    [0.6065, 0.0, 0.0]
    >>> discretise([1.0, 0.5, 0.0], n_zones=2, zone_value="upper").round(4).tolist()
    [1.0, 0.6065, 0.0]
    """
    if zone_value not in ("lower", "upper"):
        raise ValueError(f"zone_value must be 'lower' or 'upper', got {zone_value!r}")
    b = zone_boundaries(n_zones)
    if isinstance(scores, float | int):  # one score (a wrapper's step): no arrays
        s = 0.0 if math.isnan(scores) else float(scores)
        k = 1 + sum(s <= bj for bj in b[1:-1].tolist()) if s > 0 else 0
        return np.float64(0.0 if k == 0 else b[k] if zone_value == "lower" else b[k - 1])
    k = zone_index(scores, n_zones)
    value = b[k] if zone_value == "lower" else b[np.maximum(k - 1, 0)]
    return np.where(k > 0, value, 0.0)


def step_correct(
    target: StepTarget, pred: StepPrediction | None, grounding_types: frozenset[str] = GROUNDING_TYPES
) -> bool:
    """Binary step verifier of App. B.4 (GUI planning, conditions 1-3).

    Type must match; grounding actions need the point in the box (drag: the end in ``end_box`` too when
    annotated); ``type`` needs the exact text (whitespace-normalised); other arguments must match.

    >>> step_correct(StepTarget("click", box=(0, 0, 10, 10)), StepPrediction("click", point=(10.0, 3.0)))
    True
    """
    if pred is None or pred.action_type != target.action_type:
        return False
    if target.action_type in grounding_types:
        if target.box is None:
            raise MissingTargetBoxError(f"step target {target!r} is a grounding action without a box")
        if pred.point is None or not bool(point_in_box(pred.point, target.box)):
            return False
        if target.end_box is not None and (
            pred.end_point is None or not bool(point_in_box(pred.end_point, target.end_box))
        ):
            return False
    return text_exact(pred, target) and args_match(pred, target)


def step_proximity(
    target: StepTarget,
    pred: StepPrediction | None,
    *,
    n_zones: int = 4,
    edge_sigmas: float | None = None,
    grounding_types: frozenset[str] = GROUNDING_TYPES,
) -> float:
    """``h(s_t, a_t)`` of Table 5: ``phi(p; B)`` for grounding actions, binary correctness otherwise.

    A wrong action type (or an unparsed prediction) scores 0. A drag scores the smaller of its start and end
    fields (both ends must be right; the weaker end sets the tier); without ``end_box`` only the start counts.

    >>> step_proximity(StepTarget("click", box=(0, 0, 200, 100)), StepPrediction("click", point=(100.0, 50.0)))
    1.0
    >>> step_proximity(StepTarget("scroll", args={"direction": "up"}), StepPrediction("scroll", args={"direction": "up"}))
    1.0
    """
    if pred is None or pred.action_type != target.action_type:
        return 0.0
    if target.action_type not in grounding_types:
        return float(step_correct(target, pred, grounding_types))
    if target.box is None:
        raise MissingTargetBoxError(f"step target {target!r} is a grounding action without a box")
    if pred.point is None or not args_match(pred, target):
        return 0.0
    kw = {"n_zones": n_zones, "edge_sigmas": edge_sigmas}
    phi = float(gaussian_field(pred.point, target.box, **kw))
    if target.end_box is not None:
        end = float(gaussian_field(pred.end_point, target.end_box, **kw)) if pred.end_point else 0.0
        phi = min(phi, end)
    return phi


def trajectory_proximity(
    targets: Sequence[StepTarget], preds: Sequence[StepPrediction | None], **kwargs: object
) -> float:
    """``S(tau) = 1/(T+1) * sum_t h(s_t, a_t)`` (Eq. 3); ``kwargs`` go to :func:`step_proximity`.

    >>> t = [StepTarget("click", box=(0, 0, 200, 100)), StepTarget("type", text="hi")]
    >>> trajectory_proximity(t, [StepPrediction("click", point=(100.0, 50.0)), StepPrediction("type", text="no")])
    0.5
    """
    if len(targets) != len(preds) or not targets:
        raise ValueError(f"need one prediction per target step, got {len(preds)} for {len(targets)} targets")
    return float(np.mean([step_proximity(t, p, **kwargs) for t, p in zip(targets, preds, strict=True)]))  # type: ignore[arg-type]


def ssl_reward(correct: ArrayLike, s_hat: ArrayLike, alpha: float = 0.2) -> FloatArray:
    """``R_SSL = C + alpha * S_hat`` (section 3.2, Eq. 1); ``alpha = 0.2`` as trained in section 4.1.

    >>> float(ssl_reward(1, 0.6, alpha=0.2))
    1.12
    """
    if not alpha > 0:
        raise ValueError(f"alpha must be positive (the paper uses 0.1-0.5), got {alpha!r}")
    return np.asarray(correct, dtype=np.float64) + alpha * np.asarray(s_hat, dtype=np.float64)


def gui_ssl_reward(
    targets: Sequence[StepTarget],
    preds: Sequence[StepPrediction | None],
    *,
    alpha: float = 0.2,
    n_zones: int = 4,
    edge_sigmas: float | None = None,
    zone_value: ZoneValue = "lower",
    goal_reached: bool | None = None,
) -> float:
    """SSL reward of one GUI trajectory (grounding is the one-step case).

    ``C`` is 1 when every step passes :func:`step_correct` and, when given, ``goal_reached`` holds (App.
    B.4 condition 4); ``S_hat`` discretises :func:`trajectory_proximity`.

    >>> round(gui_ssl_reward([StepTarget("click", box=(0, 0, 200, 100))], [StepPrediction("click", point=(100.0, 50.0))]), 6)
    1.121306
    """
    correct = (
        all(step_correct(t, p) for t, p in zip(targets, preds, strict=True)) and goal_reached is not False
    )
    s = trajectory_proximity(targets, preds, n_zones=n_zones, edge_sigmas=edge_sigmas)
    return float(ssl_reward(float(correct), discretise(s, n_zones, zone_value), alpha))


# ---------------------------------------------------------------- grids (App. B.2) ----


def block_values(
    pred: ArrayLike,
    ref: ArrayLike,
    thresholds: Sequence[float] = BLOCK_THRESHOLDS,
    values: Sequence[float] = BLOCK_VALUES,
) -> FloatArray:
    """Tiered value ``s_ij`` of each block of a 3x3 partition (App. B.2); NaN for an empty block.

    ``n_ij`` counts equal cells in block ``(i, j)``; the value is ``values[0]`` when ``n_ij >= 0.75|B_ij|``,
    ``values[1]`` when ``>= 0.5|B_ij|``, ``values[2]`` when ``>= 0.25|B_ij|`` and ``values[3]`` otherwise.

    Args:
        pred: predicted grid ``(H, W)``.
        ref: reference grid, same shape.
        thresholds: the three decreasing match-fraction thresholds.
        values: the four block values, best first.

    Returns:
        ``(3, 3)`` array of block values.
    """
    p, r = np.asarray(pred), np.asarray(ref)
    if p.shape != r.shape or p.ndim != 2:
        raise ValueError(
            f"grids must be 2-D with equal shapes, got {p.shape} and {r.shape}; "
            "use arc_blockwise_score to resample grids of different sizes"
        )
    match = p == r
    rows = np.array_split(np.arange(r.shape[0]), 3)
    cols = np.array_split(np.arange(r.shape[1]), 3)
    out = np.full((3, 3), np.nan)
    for i, ri in enumerate(rows):
        for j, cj in enumerate(cols):
            size = ri.size * cj.size
            if size == 0:
                continue
            n = int(match[np.ix_(ri, cj)].sum())
            tier = next((t for t, thr in enumerate(thresholds) if n >= thr * size), len(thresholds))
            out[i, j] = values[tier]
    return out


def blockwise_score(pred: ArrayLike, ref: ArrayLike) -> float:
    """``S(tau) = 1/9 * sum_ij s_ij`` over the 3x3 blocks (section 3.3, App. B.2); empty blocks left out.

    >>> blockwise_score(np.zeros((6, 6)), np.zeros((6, 6)))
    1.0
    """
    return float(np.nanmean(block_values(pred, ref)))


def sudoku_blockwise_score(pred: ArrayLike, ref: ArrayLike) -> float:
    """Blockwise score over the nine 3x3 Sudoku subgrids (App. B.2, "Extension to Sudoku").

    For a 9x9 grid the 3x3 partition of :func:`block_values` is exactly the subgrids.
    """
    if np.shape(pred) != (9, 9) or np.shape(ref) != (9, 9):
        raise ValueError(f"Sudoku grids are 9x9, got {np.shape(pred)} and {np.shape(ref)}")
    return blockwise_score(pred, ref)


def resize_nearest(grid: ArrayLike, shape: tuple[int, int]) -> NDArray:
    """Nearest-neighbour resampling of a 2-D grid to ``shape`` (cell centres aligned).

    Output cell ``i`` reads input cell ``floor((i + 0.5) * h_in / h_out)``, and the same for columns.

    >>> resize_nearest(np.array([[1, 2], [3, 4]]), (4, 4)).tolist()[0]
    [1, 1, 2, 2]
    """
    g = np.asarray(grid)
    rows = np.minimum(((np.arange(shape[0]) + 0.5) * g.shape[0] / shape[0]).astype(int), g.shape[0] - 1)
    cols = np.minimum(((np.arange(shape[1]) + 0.5) * g.shape[1] / shape[1]).astype(int), g.shape[1] - 1)
    return g[np.ix_(rows, cols)]


def arc_blockwise_score(pred: ArrayLike, ref: ArrayLike, size: tuple[int, int] | None = None) -> float:
    """Blockwise score of an ARC output after resampling both grids to one size (App. B.2, ARC-AGI).

    Args:
        pred: predicted output grid (any 2-D shape; an empty grid scores 0).
        ref: reference output grid.
        size: common size; default the reference's shape, so the reference is never resampled.

    >>> arc_blockwise_score(np.array([[1, 2], [3, 4]]), resize_nearest(np.array([[1, 2], [3, 4]]), (4, 4)))
    1.0
    """
    p, r = np.asarray(pred), np.asarray(ref)
    if p.ndim != 2 or p.size == 0:
        return 0.0
    shape = r.shape if size is None else size
    return blockwise_score(resize_nearest(p, shape), resize_nearest(r, shape))
