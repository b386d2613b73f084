"""Trainers: rollout collection, GRPO (:mod:`trainers.grpo`), SFT (:mod:`trainers.sft`), DPO (:mod:`trainers.dpo`)
and MobileIPL (:mod:`trainers.ipl`); CORE builds on them."""

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
