"""The SFT (behaviour cloning) trainer's config: one documented field per knob, checked in ``__post_init__``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trainers.config_io import ConfigError, check_memory_fields, load_config
from trainers.heldout import HeldOutRolloutFields, check_eval_fields, resolve_seeds
from trainers.run_log import LoggingFields


@dataclass
class SFTConfig(HeldOutRolloutFields, LoggingFields):
    """Everything one SFT run needs. Load with :meth:`from_yaml`; unknown keys are an error."""

    model: str = ""
    """Hugging Face model path or hub id (causal LM or VLM)."""
    data: str | list[str] = ""
    """Folder(s) of saved trajectories (``gui_envs.schema.trajectory`` format)."""
    output_format: str = "auto"
    """Prompt/answer format the policy will be run with: ``auto``, ``gui_r1``, ``text``, ``cell`` or ``box``."""
    format_kwargs: dict[str, Any] | None = None
    """Arguments of the format (``cell``: ``rows``, ``cols``)."""
    successful_only: bool = True
    """Train only on trajectories whose ``success`` is true (verified demonstrations)."""
    epochs: int = 1
    """Passes over the samples (SSL Table 6, SFT stage: 1)."""
    batch_size: int = 32
    """Samples (steps) per optimiser step (SSL Table 6: 32)."""
    learning_rate: float = 1e-5
    """AdamW learning rate (SSL Table 6: 1e-5)."""
    weight_decay: float = 0.01
    """AdamW weight decay."""
    warmup_ratio: float = 0.1
    """Fraction of the optimiser steps with a linear warm-up (then constant)."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm (0: off)."""
    lora: bool = False
    """Train a LoRA adapter (``peft``) instead of every weight."""
    lora_r: int = 16
    """LoRA rank."""
    lora_alpha: int = 32
    """LoRA scaling numerator."""
    dtype: str | None = None
    """Load dtype: ``bfloat16``, ``float16``, ``float32`` or ``None``."""
    device: str | None = None
    """Torch device; default CUDA when available."""
    seed: int = 0
    """Seeds torch, numpy and Python, and the shuffling of each epoch."""
    output_dir: str = "runs/sft"
    """Where the log, curve, checkpoints and final model go."""
    save_every: int = 0
    """Checkpoint every this many optimiser steps (0: only the final model)."""
    resume: bool = False
    """Continue from the latest checkpoint in ``output_dir``."""
    plot: bool = True
    """Write ``learning_curve.png`` (loss, token accuracy and, with ``eval_seeds``, held-out success against step)."""
    env_id: str = ""
    """Registered gymnasium id the policy acts in: where ``eval_seeds`` are evaluated and where
    ``replay_observations`` rebuilds observations (empty: neither)."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Constructor arguments of ``env_id`` (e.g. ``{n_boxes: 2}`` for ``ClickBox-v0``)."""
    replay_observations: bool = False
    """Rebuild each step's observation by resetting ``env_id`` at the trajectory's recorded seed (and task) and
    replaying its recorded actions, so the prompt holds everything the live policy reads (a trajectory file keeps
    the instruction, screenshot and text, not e.g. ``ClickBox-v0``'s ``elements``, which the ``box`` format lists).
    Needs a deterministic env; a replay whose verdict differs from the recorded one is an error."""
    eval_seeds: list[int] | dict[str, int] | None = None
    """Held-out evaluation split: env reset seeds of ``env_id`` never trained on, as a list or ``{start: s, count:
    n}``; ``None`` (default) evaluates nothing. The training split is the seeds recorded in the trajectories
    trained on (those of ``env_id``, or with no env recorded); a seed in both is refused at start
    (``trainers.heldout.SplitOverlapError``), and so is a trained trajectory without a recorded seed."""


    # --- memory ---
    micro_batch_tokens: int = 0
    """Split each optimiser step's batch into micro-batches of at most this many (prompt + answer, padded) tokens
    and accumulate their gradients before the step. Each micro-batch's summed answer log-likelihood is divided by
    the whole batch's answer tokens, so the accumulated gradient equals the one-pass token-mean gradient. A sample
    longer than the budget forms a micro-batch of its own. 0 (default): the whole batch in one pass."""
    logprob_chunk_size: int = 0
    """Answer positions x rows whose logits are materialised at once (``trainers.policy.completion_logprobs``'s
    ``chunk_size``): the chosen-token log-probs come chunk by chunk from the final hidden states, each chunk's fp32
    logits recomputed in the backward pass, so no ``(B, T, V)`` fp32 tensor exists. 0 (default): all at once."""
    gradient_checkpointing: bool = False
    """Recompute each decoder layer's activations in the backward pass (less memory, about a third more time)."""

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError("model is empty: set model to a Hugging Face path or hub id")
        if not self.data:
            raise ConfigError("data is empty: set data to a folder of saved trajectories")
        for name in ("epochs", "batch_size", "lora_r"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ConfigError(f"{name} must be an integer >= 1, got {value!r}")
        if not self.learning_rate > 0:
            raise ConfigError(f"learning_rate must be > 0, got {self.learning_rate}")
        if not 0 <= self.warmup_ratio < 1:
            raise ConfigError(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        if self.save_every < 0:
            raise ConfigError(f"save_every must be >= 0, got {self.save_every}")
        if self.replay_observations and not self.env_id:
            raise ConfigError("replay_observations needs env_id: the env the trajectories are replayed in")
        check_eval_fields(self)
        check_memory_fields(self)
        self.check_logging_fields()

    @property
    def eval_seed_list(self) -> list[int]:
        """The held-out seeds ``eval_seeds`` names (``[]`` without a split)."""
        return resolve_seeds(self.eval_seeds)

    @classmethod
    def from_yaml(cls, path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> SFTConfig:
        """A config from a YAML mapping of field names, with ``key=value`` overrides on top."""
        return load_config(cls, path, overrides)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
