"""The DPO trainer's config: one documented field per knob, checked in ``__post_init__`` (TRL style)."""

from __future__ import annotations

from dataclasses import dataclass

from trainers.config_base import (
    BatchFields,
    FormatFields,
    LoggingFields,
    OfflineFields,
    PairFields,
    PolicyTrainerConfig,
)
from trainers.config_io import ConfigError


@dataclass
class DPOConfig(PolicyTrainerConfig, FormatFields, BatchFields, PairFields, OfflineFields, LoggingFields):
    """Everything one DPO run on a pair file needs. Load with :meth:`from_yaml`; unknown keys are an error.

    The fields DPO shares with other trainers are documented once, in :mod:`trainers.config_base`; the output
    format is the one the pairs were written in and the policy is run with in ``env_id``.
    """

    # --- DPO's defaults of shared fields (documented in trainers.config_base) ---
    output_dir: str = "runs/dpo"

    # --- DPO ---
    data: str = ""
    """Pair file in TRL's preference format (``prompt`` / ``chosen`` / ``rejected``, optional ``images``):
    ``.parquet``, ``.json`` / ``.jsonl``, or a folder written by ``datasets.Dataset.save_to_disk``."""
    eval_data: str = ""
    """Held-out pair file (same formats as ``data``), e.g. pairs from env seeds never trained on; every
    evaluation logs its DPO statistics as ``eval_reward_margin``, ``eval_accuracy`` and ``eval_logp_margin``
    beside the training ones (empty: none). A held-out pair whose prompt is also a training pair's, or whose
    recorded seed is a training pair's, is refused at start (``trainers.heldout.SplitOverlapError``)."""

    def __post_init__(self) -> None:
        self.check_policy_trainer_fields()
        if not self.data:
            raise ConfigError("data is empty: set data to a pair file in TRL's prompt/chosen/rejected format")
        self.check_batch_fields()
        self.check_pair_fields()
        self.check_offline_fields()
        self.check_logging_fields()
