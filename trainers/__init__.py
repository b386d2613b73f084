"""Trainers: rollout collection now; GRPO, DPO, SFT and CORE build on it."""

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
