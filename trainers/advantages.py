"""Advantage estimators by name, in a registry a user extends with a decorator.

An estimator turns a :class:`GroupBatch` (``G`` groups of ``N`` rollouts: rewards, successes, the click of
each rollout's graded step and the group's target box) into advantages: a ``(G, N)`` array (one per
response, spread over its tokens) or a ``(G, N, T)`` array (one per completion token of the graded step).

>>> @register_estimator("reward_minus_half")
... def _half(batch: GroupBatch, **kwargs) -> np.ndarray:
...     return batch.rewards - 0.5
>>> get_estimator("reward_minus_half")(GroupBatch(np.array([[1.0, 0.0]]))).tolist()
[[0.5, -0.5]]
>>> del ESTIMATORS["reward_minus_half"]
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewards import SCAConfig, spatial_credit_batch
from rewards.advantage import group_advantage


class UnknownEstimatorError(ValueError):
    """No estimator has this name; the message lists the registered ones."""


class EstimatorInputError(ValueError):
    """An estimator lacks what it needs (e.g. ``sca`` without target boxes); the message says what to record."""


@dataclass
class GroupBatch:
    """What estimators read about ``G`` groups of ``N`` rollouts.

    Attributes:
        rewards: ``(G, N)`` episode rewards (the sum of each episode's step rewards).
        success: ``(G, N)`` binary successes (the env's verdict); default ``rewards > 0``.
        coords: ``(G, N, 2)`` the graded step's click point in screenshot pixels; NaN for no valid click.
        boxes: ``(G, 4)`` each group's target box ``(x0, y0, x1, y1)`` in pixels (privileged); NaN if none.
    """

    rewards: np.ndarray
    success: np.ndarray | None = None
    coords: np.ndarray | None = None
    boxes: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.rewards = np.asarray(self.rewards, dtype=np.float64)
        if self.rewards.ndim != 2:
            raise ValueError(f"rewards must be (G, N), got shape {self.rewards.shape}")
        if self.success is None:
            self.success = self.rewards > 0
        self.success = np.asarray(self.success).astype(bool)


Estimator = Callable[..., np.ndarray]
#: Registered estimators by name.
ESTIMATORS: dict[str, Estimator] = {}


def register_estimator(name: str) -> Callable[[Estimator], Estimator]:
    """Decorator: register ``fn(batch: GroupBatch, **kwargs) -> (G, N) or (G, N, T) array`` under ``name``."""

    def deco(fn: Estimator) -> Estimator:
        ESTIMATORS[name] = fn
        return fn

    return deco


def get_estimator(name: str) -> Estimator:
    """The estimator registered as ``name``.

    Raises:
        UnknownEstimatorError: with the closest registered names.
    """
    if name not in ESTIMATORS:
        close = difflib.get_close_matches(str(name), list(ESTIMATORS), n=2)
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise UnknownEstimatorError(
            f"unknown advantage estimator {name!r}; registered: {sorted(ESTIMATORS)}.{hint} "
            "Register your own with @trainers.advantages.register_estimator(name)."
        )
    return ESTIMATORS[name]


@register_estimator("grpo")
def grpo_advantage(batch: GroupBatch, eps: float = 1e-6) -> np.ndarray:
    """``A_i = (r_i - mean_g r) / (std_g r + eps)`` with the population std of each seed's group (seed 000
    App. B.5; GRPO, Shao et al. 2024 section 4.1.2). Equal rewards give 0.

    >>> grpo_advantage(GroupBatch(np.array([[1.0, 0.0, 0.0, 0.0]])), eps=0.0).round(4).tolist()
    [[1.7321, -0.5774, -0.5774, -0.5774]]
    """
    return group_advantage(batch.rewards, eps=eps, ddof=0)


@register_estimator("dr_grpo")
def dr_grpo_advantage(batch: GroupBatch) -> np.ndarray:
    """``A_i = r_i - mean_g r``: Dr. GRPO drops the std division (Liu et al. 2025, section 3.1).

    >>> dr_grpo_advantage(GroupBatch(np.array([[1.0, 0.0, 0.0, 0.0]]))).tolist()
    [[0.75, -0.25, -0.25, -0.25]]
    """
    return batch.rewards - batch.rewards.mean(axis=1, keepdims=True)


@register_estimator("none")
def no_baseline(batch: GroupBatch) -> np.ndarray:
    """``A_i = r_i``: plain REINFORCE, no baseline (for comparisons).

    >>> no_baseline(GroupBatch(np.array([[1.0, 0.0]]))).tolist()
    [[1.0, 0.0]]
    """
    return batch.rewards.copy()


@register_estimator("sca")
def sca_advantage(batch: GroupBatch, **sca_kwargs: Any) -> np.ndarray:
    """Spatial Credit Assignment (seed 001, section 4.1) through :func:`rewards.sca.spatial_credit_batch`.

    Needs each rollout's click (``coords``) and each group's target box (``boxes``, read by the all-miss
    Prox branch). Documented fallback, from ``rewards.sca``: a group with no valid click at all (every
    ``coords`` row NaN) gets the ordinary GRPO advantage, which is 0 when its rewards are equal; without
    boxes (an env with no ``target_bbox``) all-miss groups get it too.

    Args:
        batch: the groups.
        **sca_kwargs: fields of :class:`rewards.sca_config.SCAConfig`.

    Raises:
        EstimatorInputError: ``coords`` are missing (the rollouts were not single-click steps).
    """
    if batch.coords is None:
        raise EstimatorInputError(
            "estimator 'sca' needs each rollout's click point: train on a grounding env (click actions) "
            "whose privileged channel gives target_bbox"
        )
    config = SCAConfig(**sca_kwargs)
    boxes = batch.boxes
    if boxes is not None and not np.all(np.isfinite(boxes)):
        if np.any(np.isfinite(boxes)):
            raise EstimatorInputError("estimator 'sca': some groups have a target box and some do not")
        boxes = None  # no box anywhere: Prox is off and all-miss groups get the ordinary advantage
    return spatial_credit_batch(batch.coords, batch.success, batch.rewards, boxes, config=config).credits
