"""The SFT (behaviour cloning) trainer's config: one documented field per knob, checked in ``__post_init__``."""

from __future__ import annotations

from dataclasses import dataclass

from trainers.config_base import BatchFields, FormatFields, LoggingFields, OfflineFields, PolicyTrainerConfig
from trainers.config_io import ConfigError


@dataclass
class SFTConfig(PolicyTrainerConfig, FormatFields, BatchFields, OfflineFields, LoggingFields):
    """Everything one SFT run needs. Load with :meth:`from_yaml`; unknown keys are an error.

    The fields SFT shares with other trainers are documented once, in :mod:`trainers.config_base`.
    """

    # --- SFT's defaults of shared fields (documented in trainers.config_base) ---
    learning_rate: float = 1e-5  # SSL Table 6, SFT stage
    batch_size: int = 32  # SSL Table 6
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    output_dir: str = "runs/sft"

    # --- SFT ---
    data: str | list[str] = ""
    """Folder(s) of saved trajectories (``gui_envs.schema.trajectory`` format)."""
    successful_only: bool = True
    """Train only on trajectories whose ``success`` is true (verified demonstrations)."""
    replay_observations: bool = False
    """Rebuild each step's observation by resetting ``env_id`` at the trajectory's recorded seed (and task) and
    replaying its recorded actions, so the prompt holds everything the live policy reads (a trajectory file keeps
    the instruction, screenshot and text, not e.g. ``ClickBox-v0``'s ``elements``, which the ``box`` format lists).
    Needs a deterministic env; a replay whose verdict differs from the recorded one is an error."""
    lr_scheduler_type: str = "constant"
    """After warm-up, ``"constant"`` keeps the learning rate; ``"linear"`` lowers it to 0 at the last step (TRL's
    default), so the run ends settled on its data rather than wherever the last full-size step left it."""
    balance_tasks: bool = False
    """Draw every task's samples (steps) equally often: each task's samples are cycled up to the count of the
    task with the most, once per epoch. Off, a task weighs by its steps: with 10 demonstrations per task, a
    5-step login counts five times a one-click task, whose few samples a small model may then never fit (on
    MiniWoB focus-text-2's 10 samples were answered with one letter for all three ordinals)."""

    def __post_init__(self) -> None:
        self.check_policy_trainer_fields()
        if not self.data:
            raise ConfigError("data is empty: set data to a folder of saved trajectories")
        self.check_batch_fields()
        if self.lr_scheduler_type not in ("constant", "linear"):
            raise ConfigError(f"lr_scheduler_type must be 'constant' or 'linear', not {self.lr_scheduler_type!r}")
        if self.replay_observations and not self.env_id:
            raise ConfigError("replay_observations needs env_id: the env the trajectories are replayed in")
        self.check_offline_fields()
        self.check_logging_fields()
