"""Group-relative advantage (GRPO), the ordinary credit that SSL and SCA refine.

``A_i = (r_i - mean(r)) / (std(r) + eps)`` over the ``N`` responses of one group (seed 000, App. B.5;
seed 001, sections 3 and 4.1). The standard deviation is the population one (``ddof=0``) by default: seed
001 standardises credits over the group itself (its exact-gradient audit, section 5.4, compares against
GRPO in that form), and with it a standardised group has unit population variance. ``ddof=1`` gives the
sample form that ``torch.std`` computes in some GRPO code (EasyR1 / verl); at ``N = 5`` it shrinks every
advantage by ``sqrt(4 / 5)``. A group whose rewards are all equal gets zero advantage.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rewards.geometry import FloatArray


def group_std(rewards: ArrayLike, ddof: int = 0) -> FloatArray:
    """Standard deviation over the last axis; 0 where the group has ``<= ddof`` members.

    >>> round(float(group_std([1.0, 1.0, 0.0, 0.0, 0.0])), 6)  # sqrt(1.2 / 5)
    0.489898
    >>> round(float(group_std([1.0, 1.0, 0.0, 0.0, 0.0], ddof=1)), 6)  # sqrt(1.2 / 4)
    0.547723
    """
    r = np.asarray(rewards, dtype=np.float64)
    n = r.shape[-1]
    if n <= ddof:
        return np.zeros(r.shape[:-1])
    mean = r.mean(axis=-1, keepdims=True)
    return np.sqrt(np.sum((r - mean) ** 2, axis=-1) / (n - ddof))


def group_advantage(rewards: ArrayLike, eps: float = 1e-6, ddof: int = 0) -> FloatArray:
    """GRPO advantage ``(r - mean) / (std + eps)`` over the last axis (one group per row).

    Args:
        rewards: ``(N,)`` or ``(G, N)`` scalar rewards.
        eps: added to the standard deviation.
        ddof: delta degrees of freedom of the standard deviation (0: population, the seed's form).

    Returns:
        Advantages, same shape as ``rewards``.

    >>> group_advantage([1.0, 0.0], eps=0.0).tolist()  # mean .5, population std .5
    [1.0, -1.0]
    >>> group_advantage([0.4, 0.4, 0.4]).tolist()
    [0.0, 0.0, 0.0]
    """
    r = np.asarray(rewards, dtype=np.float64)
    std = group_std(r, ddof)[..., None]
    adv = (r - r.mean(axis=-1, keepdims=True)) / (std + eps)
    # Equal rewards give exact zeros: the mean's round-off (1e-17) over eps would otherwise leak ~1e-11.
    return np.where(np.ptp(r, axis=-1, keepdims=True) > 0, adv, 0.0)
