"""Spatial Credit Assignment (SCA) for one group of ``N`` sampled clicks (seed 001, sections 3-4.1, App. C-D).

Routing uses the binary successes (section 4.1):

* **all hit**: ordinary group-relative advantage (GRPO, :func:`rewards.advantage.group_advantage`).
* **mixed** -> **Residual**: for each held-out response ``i``, Theil-Sen lines of reward against coordinate
  are fitted on the other ``N - 1`` responses along ``D`` projections of the click; each direction is
  weighted by its nested leave-one-out skill; the weighted prediction at click ``i`` is its *reference*.
  The residual ``(y_i - ref_i) / (std(y) + eps)`` is blended with the ordinary advantage by a spatial
  weight ``lambda_i`` in ``[0, 1]`` and the blend is standardised over the group:
  ``credit = standardise((1 - lambda) * A + lambda * (y - ref) / (std(y) + eps))``.
  Before standardising, the group-mean baseline is replaced, in proportion ``lambda_i``, by the spatial
  reference.
* **all miss** -> **Prox**: standardised proximity to the target box (the ordering), scaled by the
  spread of the proximity scores (see :mod:`rewards.sca_prox`). With dense rewards an all-miss group still
  takes Prox credit: routing reads the binary successes, the dense signal feeds the advantage and the
  Residual fit.

After routing, one scalar credit per response is standardised over its group (section 4.1): the Residual
blend is re-centred and divided by its (population) std (:func:`standardise`); Prox standardises the
proximities and scales them by their spread; all-hit and fallback groups keep the advantage, which is
standardised already. The credits are plain arrays, so "detached" holds by construction: a trainer wraps
them in a tensor without a graph before weighting each response's tokens.

Held-out discipline (App. C.2): the reward ``y_i`` never enters ``ref_i``, the direction weights, the skill,
the quality ``q_i`` or the gate of response ``i``: all of them are computed from the other ``N - 1`` rewards
only. ``y_i`` is used afterwards, in the residual and in the group statistics.

Fallbacks (App. D.1): any invalid coordinate in a mixed group, a group whose rewards are all equal, or
all-zero spatial weights give the ordinary advantage; Prox uses the valid subset.

Cost (App. D.1): per mixed group ``N * D`` outer fits on ``N - 1`` points and ``N * (N - 1) * D`` inner fits on
``N - 2`` points (20 and 80 at ``N = 5``, ``D = 4``), all vectorised across groups by
:func:`spatial_credit_batch`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rewards.advantage import group_advantage, group_std
from rewards.geometry import FloatArray
from rewards.sca_config import BRANCHES, SCAConfig
from rewards.sca_prox import prox_credit
from rewards.theil_sen import theil_sen


def _ramp(v: FloatArray, band: tuple[float, float]) -> FloatArray:
    lo, hi = band
    return np.nan_to_num(np.clip((v - lo) / (hi - lo), 0.0, 1.0), nan=0.0)


def _pearson(a: FloatArray, b: FloatArray, axis: int) -> FloatArray:
    da = a - a.mean(axis=axis, keepdims=True)
    db = b - b.mean(axis=axis, keepdims=True)
    den = np.sqrt(np.sum(da * da, axis=axis) * np.sum(db * db, axis=axis))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, np.sum(da * db, axis=axis) / np.where(den > 0, den, 1.0), np.nan)


def _clip_to_fold(pred: FloatArray, y_train: FloatArray, margin: float) -> FloatArray:
    """Clip ``pred (..., D)`` to the range of ``y_train (..., m)`` widened by ``margin`` ranges each side."""
    lo, hi = y_train.min(axis=-1), y_train.max(axis=-1)
    span = hi - lo
    return np.clip(pred, (lo - margin * span)[..., None], (hi + margin * span)[..., None])


def _fold_indices(n: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``others[i]``: every index but ``i``; ``inner[i, k]``: every index but ``i`` and ``others[i, k]``."""
    others = np.array([[j for j in range(n) if j != i] for i in range(n)], dtype=np.intp)
    inner = np.array([[[m for m in others[i] if m != j] for j in others[i]] for i in range(n)], dtype=np.intp)
    return others, inner


def residual_reference(coords: ArrayLike, rewards: ArrayLike, config: SCAConfig) -> dict[str, FloatArray]:
    """Cross-fitted spatial references of mixed groups (section 4.1, App. C.1), vectorised over groups.

    For group ``g``, response ``i`` and direction ``d`` (projection ``z = u_d . p``):

    1. outer fit: Theil-Sen line on ``{(z_j, y_j) : j != i}``, evaluated at ``z_i`` and clipped to the
       training rewards' range widened by ``config.clip_margin`` ranges -> ``pred[i, d]``;
    2. inner (nested) fits: for each ``j != i`` a line on ``{(z_m, y_m) : m != i, j}``, evaluated at ``z_j``
       and clipped likewise -> ``inner[i, j, d]``;
    3. skill ``s[i, d] = 1 - SSE_fit / SSE_null``, a predictive R^2 over the nested folds against a null
       predictor chosen by ``config.skill_null``: ``"loo_mean"`` (default) predicts ``y_j`` by the mean of
       fold ``(i, j)``'s own training rewards and leaves out the folds whose training rewards are all
       equal (there the line *is* that mean, so the fold says nothing about the trend); ``"fold_mean"``
       predicts every ``y_j`` by ``mean_{m != i} y_m``, which has seen ``y_j``;
    4. direction ``d`` counts when both of its fits are valid, ``s > 0`` and its nested predictions
       correlate positively with the rewards (``r[i, d]``, over all nested folds); its weight is
       ``s[i, d] * ramp(r[i, d]; corr_band)``, the runtime correlation blend (App. A.1);
    5. ``ref_i = sum_d w[i, d] pred[i, d] / sum_d w[i, d]``; the same weights combine the nested predictions,
       whose skill (as in step 3) is the quality ``q_i`` and whose correlation is ``rho_i``;
    6. ``lambda_i = ramp(q_i; gate)``, rising linearly from 0 at ``q_lo`` to 1 at ``q_hi`` (section 4.1);
       ``lambda_i = 0`` when no direction counts.

    Args:
        coords: ``(G, N, 2)`` finite click coordinates in pixels.
        rewards: ``(G, N)`` response rewards (binary or dense).
        config: settings; see :class:`SCAConfig`.

    Returns:
        Dict of arrays: ``reference`` ``(G, N)`` (NaN where no direction counts), ``spatial_weight``,
        ``quality``, ``correlation`` ``(G, N)`` and ``direction_weights`` ``(G, N, D)``.
    """
    p = np.asarray(coords, dtype=np.float64)
    y = np.asarray(rewards, dtype=np.float64)
    n = y.shape[-1]
    if n < 4:
        raise ValueError(f"Residual needs N >= 4 responses (nested fits use N - 2 >= 2 points), got {n}")
    others, inner = _fold_indices(n)
    z = p @ np.asarray(config.projections, dtype=np.float64).T  # (G, N, D)

    # Outer fits: fold i trains on others[i]; (G, N, D, N-1) points per fit.
    y_tr = y[:, others]  # (G, N, N-1)
    slope, icpt, ok_out = theil_sen(np.moveaxis(z[:, others, :], -1, -2), y_tr[:, :, None, :])
    pred = _clip_to_fold(icpt + slope * z, y_tr, config.clip_margin)  # (G, N, D)

    # Inner fits: fold (i, k) trains on inner[i, k] and predicts others[i, k]; (G, N, N-1, D, N-2) points.
    y_in = y[:, inner]  # (G, N, N-1, N-2)
    s_in, b_in, ok_in = theil_sen(np.moveaxis(z[:, inner, :], -1, -2), y_in[:, :, :, None, :])
    pred_in = _clip_to_fold(b_in + s_in * z[:, others, :], y_in, config.clip_margin)  # (G, N, N-1, D)

    # Null predictor and the nested folds that count (step 3).
    if config.skill_null == "loo_mean":
        null = y_in.mean(axis=-1)  # (G, N, N-1)
        counted = np.ptp(y_in, axis=-1) > 0
        # A fold with constant training rewards predicts its null whatever the line's validity.
        pred_in = np.where(counted[..., None], pred_in, null[..., None])
        ok_in = ok_in | ~counted[..., None]
    else:
        null = np.broadcast_to(y_tr.mean(axis=-1, keepdims=True), y_tr.shape)
        counted = np.ones(y_tr.shape, dtype=bool)
    dev = np.where(counted, y_tr - null, 0.0)
    sse_null = np.sum(dev * dev, axis=-1)  # (G, N)
    informative = sse_null > config.min_sse
    safe_sse = np.where(informative, sse_null, 1.0)
    err = np.where(counted[..., None], y_tr[..., None] - pred_in, 0.0)  # (G, N, N-1, D); NaN: failed fit
    skill = 1.0 - np.sum(err * err, axis=2) / safe_sse[..., None]  # (G, N, D)
    corr = _pearson(pred_in, y_tr[..., None], axis=2)
    usable = ok_out & ok_in.all(axis=2) & informative[..., None] & (skill > 0) & (corr > 0)
    w = np.where(usable, skill * _ramp(corr, config.corr_band), 0.0)
    w_sum = w.sum(axis=-1)
    has = w_sum > 0
    w_norm = w / np.where(has, w_sum, 1.0)[..., None]
    live = w > 0

    # Weighted references and their nested quality (steps 5-6); zero-weight terms are masked, not multiplied.
    reference = np.where(has, np.sum(np.where(live, w_norm * pred, 0.0), axis=-1), np.nan)
    ens_in = np.sum(np.where(live[:, :, None, :], w_norm[:, :, None, :] * pred_in, 0.0), axis=-1)
    e = np.where(counted, y_tr - ens_in, 0.0)
    quality = np.where(has, 1.0 - np.sum(e * e, axis=-1) / safe_sse, np.nan)
    rho = np.where(has, _pearson(ens_in, y_tr, axis=-1), np.nan)
    lam = np.where(has, _ramp(quality, config.gate), 0.0)
    return {
        "reference": reference,
        "spatial_weight": lam,
        "quality": quality,
        "correlation": rho,
        "direction_weights": w,
    }


def standardise(credits: ArrayLike, eps: float = 1e-6, ddof: int = 0) -> FloatArray:
    """Standardise each row of ``credits (..., N)`` to mean 0 and std 1 (section 4.1), as GRPO does rewards.

    A row whose credits are all equal becomes zeros.

    >>> standardise([3.0, 1.0, 2.0, 2.0], eps=0.0).round(6).tolist()  # mean 2, population std sqrt(.5)
    [1.414214, -1.414214, 0.0, 0.0]
    """
    return group_advantage(credits, eps, ddof)


@dataclass(frozen=True)
class SCABatch:
    """Credits and diagnostics of ``G`` groups of ``N`` responses.

    Attributes:
        credits: ``(G, N)`` one scalar credit per response (detach it before weighting tokens).
        advantage: ``(G, N)`` ordinary GRPO advantage of the same rewards.
        branch: ``(G,)`` which rule produced each group's credits, one of :data:`BRANCHES`.
        reference: ``(G, N)`` Residual's held-out reference ``ref_i`` (NaN where none was formed).
        spatial_weight: ``(G, N)`` Residual's blend weight ``lambda_i`` (0 outside Residual).
        quality: ``(G, N)`` nested ensemble skill ``q_i`` (NaN where none).
        correlation: ``(G, N)`` nested ensemble correlation ``rho_i`` (NaN where none).
        direction_weights: ``(G, N, D)`` per-direction skills that entered the ensemble.
        proximity: ``(G, N)`` Prox proximity scores (NaN outside Prox and for invalid clicks).
    """

    credits: FloatArray
    advantage: FloatArray
    branch: NDArray[np.str_]
    reference: FloatArray
    spatial_weight: FloatArray
    quality: FloatArray
    correlation: FloatArray
    direction_weights: FloatArray
    proximity: FloatArray


def spatial_credit_batch(
    coords: ArrayLike,
    success: ArrayLike,
    rewards: ArrayLike | None = None,
    boxes: ArrayLike | None = None,
    *,
    valid: ArrayLike | None = None,
    config: SCAConfig | None = None,
) -> SCABatch:
    """SCA credits for ``G`` groups at once (section 4.1); see the module docstring for the rules.

    Args:
        coords: ``(G, N, 2)`` click coordinates in pixels; NaN marks an invalid (unparsed) click.
        success: ``(G, N)`` binary successes; they route each group.
        rewards: ``(G, N)`` response signal for the advantage and the Residual fit (e.g. the dense
            ``0.8 * R_gaussian + 0.2 * R_format``); default ``success`` as floats.
        boxes: ``(G, 4)`` or ``(4,)`` target boxes in pixels, read only by Prox; ``None`` turns Prox off.
        valid: ``(G, N)`` extra validity mask, combined with finiteness of ``coords``.
        config: settings; default :class:`SCAConfig()`.

    Returns:
        An :class:`SCABatch`.
    """
    cfg = SCAConfig() if config is None else config
    p = np.asarray(coords, dtype=np.float64)
    hit = np.asarray(success).astype(bool)
    if p.ndim != 3 or p.shape[-1] != 2 or hit.shape != p.shape[:2]:
        raise ValueError(f"coords must be (G, N, 2) and success (G, N); got {p.shape} and {hit.shape}")
    g, n = hit.shape
    y = hit.astype(np.float64) if rewards is None else np.asarray(rewards, dtype=np.float64)
    if y.shape != (g, n) or not np.all(np.isfinite(y)):
        raise ValueError(f"rewards must be finite with shape {(g, n)}, got {y.shape}")
    ok = np.all(np.isfinite(p), axis=-1)
    if valid is not None:
        ok &= np.asarray(valid).astype(bool)

    adv = group_advantage(y, cfg.eps, cfg.ddof)
    credits = adv.copy()
    branch = np.full(g, "fallback", dtype="<U9")
    nan_gn = np.full((g, n), np.nan)
    out = {k: nan_gn.copy() for k in ("reference", "quality", "correlation", "proximity")}
    lam_all = np.zeros((g, n))
    w_all = np.zeros((g, n, len(cfg.projections)))

    n_hit = hit.sum(axis=1)
    branch[n_hit == n] = "all_hit"
    scale = group_std(y, cfg.ddof) + cfg.eps  # (G,)
    mixed = (n_hit > 0) & (n_hit < n) & ok.all(axis=1) & (group_std(y, cfg.ddof) > 0)
    if cfg.use_residual and n >= 4 and mixed.any():
        idx = np.flatnonzero(mixed)
        for start in range(0, idx.size, cfg.chunk_size):
            sel = idx[start : start + cfg.chunk_size]
            res = residual_reference(p[sel], y[sel], cfg)
            lam = res["spatial_weight"]
            z = (y[sel] - np.nan_to_num(res["reference"])) / scale[sel, None]
            # Section 4.1: after routing, one scalar credit per response is standardised over its group
            # (a group with no spatial weight keeps its advantage, which is standardised already).
            blend = standardise((1.0 - lam) * adv[sel] + lam * z, cfg.eps, cfg.ddof)
            credits[sel] = np.where(lam.max(axis=1, keepdims=True) > 0, blend, adv[sel])
            lam_all[sel], w_all[sel] = lam, res["direction_weights"]
            for key in ("reference", "quality", "correlation"):
                out[key][sel] = res[key]
            branch[sel] = np.where(lam.max(axis=1) > 0, "residual", "fallback")

    miss = (n_hit == 0) & ok.any(axis=1)
    if cfg.use_prox and boxes is not None and miss.any():
        b = np.broadcast_to(np.asarray(boxes, dtype=np.float64), (g, 4))
        sel = np.flatnonzero(miss)
        credits[sel], out["proximity"][sel] = prox_credit(p[sel], b[sel], ok[sel], cfg)
        branch[sel] = "prox"
    return SCABatch(
        credits=credits, advantage=adv, branch=branch, spatial_weight=lam_all, direction_weights=w_all, **out
    )


@dataclass(frozen=True)
class SCAResult:
    """Credits and diagnostics of one group; fields as in :class:`SCABatch` without the group axis."""

    credits: FloatArray
    advantage: FloatArray
    branch: str
    reference: FloatArray
    spatial_weight: FloatArray
    quality: FloatArray
    correlation: FloatArray
    direction_weights: FloatArray
    proximity: FloatArray


def spatial_credit(
    coords: ArrayLike,
    success: ArrayLike,
    rewards: ArrayLike | None = None,
    box: ArrayLike | None = None,
    *,
    valid: ArrayLike | None = None,
    config: SCAConfig | None = None,
) -> SCAResult:
    """SCA credit of one group of ``N`` responses (section 4.1).

    Args:
        coords: ``(N, 2)`` click coordinates in pixels; NaN marks an invalid click.
        success: ``(N,)`` binary successes (routing).
        rewards: ``(N,)`` response signal; default ``success``.
        box: target box ``(x1, y1, x2, y2)`` in pixels, used only when every click misses.
        valid: ``(N,)`` extra validity mask.
        config: settings; default :class:`SCAConfig()`.

    Returns:
        An :class:`SCAResult`; ``result.credits`` is the ``(N,)`` credit.

    >>> r = spatial_credit([[5, 5], [6, 5], [50, 50], [60, 50], [70, 50]], [1, 1, 0, 0, 0])
    >>> r.branch, r.credits.shape
    ('residual', (5,))
    >>> spatial_credit([[5, 5], [6, 5]] * 2 + [[7, 7]], [1] * 5).credits.tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0]
    """
    batch = spatial_credit_batch(
        np.asarray(coords, dtype=np.float64)[None],
        np.asarray(success)[None],
        None if rewards is None else np.asarray(rewards, dtype=np.float64)[None],
        None if box is None else np.asarray(box, dtype=np.float64)[None],
        valid=None if valid is None else np.asarray(valid)[None],
        config=config,
    )
    fields = {f: getattr(batch, f)[0] for f in SCAResult.__dataclass_fields__}
    fields["branch"] = str(fields["branch"])
    return SCAResult(**fields)


__all__ = [
    "BRANCHES",
    "SCABatch",
    "SCAConfig",
    "SCAResult",
    "residual_reference",
    "standardise",
    "spatial_credit",
    "spatial_credit_batch",
]
