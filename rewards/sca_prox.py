"""SCA-Prox: credit for groups in which every click missed (seed 001, section 4.1, App. D.1).

Binary GRPO gives such a group zero advantage. Prox orders the valid clicks by proximity to the annotated
target instead:

* distance ``d_i`` is the normalised Mahalanobis distance to the box centre in units of the box half-sizes
  (:func:`rewards.geometry.normalised_offsets`), so it adapts to the target's scale and aspect ratio;
* proximity ``p_i = 1 / (1 + d_i)`` lies in ``(0, 1]`` and shrinks differences between far misses;
* credit ``c_i = prox_scale * spread * (p_i - mean) / (spread + eps)`` with mean and spread (population
  std) over the valid clicks: the proximity standardised after routing like every SCA credit (section 4.1,
  "one scalar credit per response"), then scaled by the spread of the proximity scores, so
  near-equidistant misses get a small update. Since ``p`` is bounded the credit is at most ``prox_scale``
  in size, below a typical GRPO advantage: an all-miss group moves the policy less than a group with a
  success.

Invalid clicks take ``config.invalid_prox_credit`` and do not enter the mean or spread.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rewards.geometry import FloatArray, normalised_offsets
from rewards.sca_config import SCAConfig


def prox_credit(
    coords: ArrayLike, boxes: ArrayLike, valid: ArrayLike, config: SCAConfig
) -> tuple[FloatArray, FloatArray]:
    """Prox credits of ``G`` all-miss groups.

    Args:
        coords: ``(G, N, 2)`` clicks in pixels (invalid ones may be NaN).
        boxes: ``(G, 4)`` target boxes in pixels.
        valid: ``(G, N)`` which clicks count.
        config: settings (``prox_scale``, ``invalid_prox_credit``, ``eps``).

    Returns:
        ``(credits, proximity)``, both ``(G, N)``; proximity is NaN for invalid clicks.

    >>> cfg = SCAConfig(prox_scale=1.0)
    >>> c, p = prox_credit([[[20.0, 0.0], [40.0, 0.0]]], [[-10, -10, 10, 10]], [[True, True]], cfg)
    >>> p.round(3).tolist(), c.round(3).tolist()  # d = 2 and 4: p = 1/3 and 1/5, mean 4/15
    ([[0.333, 0.2]], [[0.067, -0.067]])
    """
    p = np.asarray(coords, dtype=np.float64)
    ok = np.asarray(valid).astype(bool) & np.all(np.isfinite(p), axis=-1)
    u = normalised_offsets(np.where(ok[..., None], p, 0.0), np.asarray(boxes, dtype=np.float64)[:, None, :])
    prox = np.where(ok, 1.0 / (1.0 + np.hypot(u[..., 0], u[..., 1])), np.nan)
    n_ok = np.maximum(ok.sum(axis=1), 1)[:, None]
    dev = np.where(ok, prox - np.nansum(prox, axis=1, keepdims=True) / n_ok, 0.0)
    spread = np.sqrt(np.sum(dev * dev, axis=1, keepdims=True) / n_ok)  # population std of valid p
    ordering = dev / (spread + config.eps)
    credit = np.where(ok, config.prox_scale * spread * ordering, config.invalid_prox_credit)
    return credit, prox
