"""Trainers: rollout collection, GRPO (:mod:`trainers.grpo`), SFT (:mod:`trainers.sft`); DPO and CORE build on them."""

from trainers.rollout import (
    EnvWorkers,
    ListWorkers,
    RayWorkers,
    RolloutConfig,
    VectorWorkers,
    collect_episodes,
    collect_groups,
    make_workers,
)

__all__ = [
    "EnvWorkers",
    "ListWorkers",
    "RayWorkers",
    "RolloutConfig",
    "VectorWorkers",
    "collect_episodes",
    "collect_groups",
    "make_workers",
]
