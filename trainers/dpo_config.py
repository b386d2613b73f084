"""The DPO trainer's config: one documented field per knob, checked in ``__post_init__`` (TRL style)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trainers.config_io import ConfigError, check_memory_fields, load_config
from trainers.heldout import HeldOutRolloutFields, check_eval_fields, resolve_seeds
from trainers.run_log import LoggingFields


@dataclass
class DPOConfig(HeldOutRolloutFields, LoggingFields):
    """Everything one DPO run on a pair file needs. Load with :meth:`from_yaml`; unknown keys are an error."""

    model: str = ""
    """Hugging Face model path or hub id (causal LM or VLM); also the reference model."""
    data: str = ""
    """Pair file in TRL's preference format (``prompt`` / ``chosen`` / ``rejected``, optional ``images``):
    ``.parquet``, ``.json`` / ``.jsonl``, or a folder written by ``datasets.Dataset.save_to_disk``."""
    beta: float = 0.1
    """DPO temperature ``beta`` of the sigmoid loss (Rafailov et al. 2023, Eq. 7)."""
    sft_weight: float = 0.0
    """Weight ``c`` of the SFT term on the chosen completions (MobileIPL's ``L_T-DPO + c * L_SFT``; 0: off)."""
    epochs: int = 1
    """Passes over the pairs (MobileIPL IPL stage: 1)."""
    batch_size: int = 8
    """Pairs per optimiser step."""
    learning_rate: float = 1e-6
    """AdamW learning rate."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    warmup_ratio: float = 0.0
    """Fraction of the optimiser steps with a linear warm-up (then constant)."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm (0: off)."""
    lora: bool = False
    """Train a LoRA adapter; the reference is then the model with the adapter disabled (no second copy)."""
    lora_r: int = 16
    """LoRA rank."""
    lora_alpha: int = 32
    """LoRA scaling numerator."""
    lora_target_modules: str | list[str] = "all-linear"
    """Modules LoRA wraps (``peft``'s ``target_modules``)."""
    dtype: str | None = None
    """Load dtype: ``bfloat16``, ``float16``, ``float32`` or ``None``."""
    device: str | None = None
    """Torch device; default CUDA when available."""
    seed: int = 0
    """Seeds torch, numpy and Python, and the shuffling of each epoch."""
    output_dir: str = "runs/dpo"
    """Where the log, curve, checkpoints and final model go."""
    save_every: int = 0
    """Checkpoint every this many optimiser steps (0: only the final model)."""
    resume: bool = False
    """Continue from the latest checkpoint in ``output_dir``."""
    plot: bool = True
    """Write ``learning_curve.png`` (loss, reward margin and accuracy against step, held-out beside training)."""
    progress: bool = True
    """Show a progress bar."""
    eval_data: str = ""
    """Held-out pair file (same formats as ``data``), e.g. pairs from env seeds never trained on; every
    evaluation logs its DPO statistics as ``eval_reward_margin``, ``eval_accuracy`` and ``eval_logp_margin``
    beside the training ones (empty: none). A held-out pair whose prompt is also a training pair's, or whose
    recorded seed is a training pair's, is refused at start (``trainers.heldout.SplitOverlapError``)."""
    env_id: str = ""
    """Registered gymnasium id the policy acts in, where ``eval_seeds`` are evaluated (empty: no task success)."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Constructor arguments of ``env_id``."""
    output_format: str = "auto"
    """Prompt/answer format the pairs were written in and the policy is run with in ``env_id``: ``auto``,
    ``gui_r1``, ``text``, ``cell`` or ``box``."""
    format_kwargs: dict[str, Any] | None = None
    """Arguments of the format (``cell``: ``rows``, ``cols``)."""
    eval_seeds: list[int] | dict[str, int] | None = None
    """Held-out evaluation split: env reset seeds of ``env_id`` never trained on, as a list or ``{start: s, count:
    n}``; ``None`` (default) evaluates no task success. The training split is the seeds the training pairs record
    (the ``seed`` column ``trainers.dpo.export_pairs`` writes for pairs from env episodes); a seed in both, or a
    training pair without a recorded seed, is refused at start."""


    # --- memory ---
    micro_batch_tokens: int = 0
    """Split each optimiser step's pairs into micro-batches of at most this many (prompt + completion, padded)
    tokens, chosen and rejected rows counted together, and accumulate their gradients before the step. A pair is
    never split (its chosen and rejected sides meet in one loss term); each micro-batch's loss, a mean over its
    pairs, is weighted by its share of the batch's pairs, so the accumulated gradient equals the one-pass gradient.
    The reference's log-probs are taken micro-batch by micro-batch too. A pair longer than the budget forms a
    micro-batch of its own. 0 (default): the whole batch in one pass."""
    logprob_chunk_size: int = 0
    """Completion positions x rows whose logits are materialised at once (``trainers.policy.completion_logprobs``'s
    ``chunk_size``), for the policy and the reference: no ``(B, T, V)`` fp32 tensor exists. 0 (default): all at
    once."""
    gradient_checkpointing: bool = False
    """Recompute each decoder layer's activations in the backward pass (less memory, about a third more time)."""

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError("model is empty: set model to a Hugging Face path or hub id")
        if not self.data:
            raise ConfigError("data is empty: set data to a pair file in TRL's prompt/chosen/rejected format")
        check_pair_fields(self)
        check_eval_fields(self)
        check_memory_fields(self)
        self.check_logging_fields()

    @property
    def eval_seed_list(self) -> list[int]:
        """The held-out seeds ``eval_seeds`` names (``[]`` without a split)."""
        return resolve_seeds(self.eval_seeds)

    @classmethod
    def from_yaml(cls, path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> DPOConfig:
        """A config from a YAML mapping of field names, with ``key=value`` overrides on top."""
        return load_config(cls, path, overrides)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_pair_fields(config: Any) -> None:
    """The checks DPO and IPL configs share (both train on pairs with the same fields).

    Raises:
        ConfigError: naming the field and the range it must be in.
    """
    for name in ("epochs", "batch_size", "lora_r"):
        value = getattr(config, name)
        if not (isinstance(value, int) and value >= 1):
            raise ConfigError(f"{name} must be an integer >= 1, got {value!r}")
    if not config.beta > 0:
        raise ConfigError(f"beta must be > 0 (the DPO temperature), got {config.beta}")
    if config.sft_weight < 0:
        raise ConfigError(f"sft_weight must be >= 0, got {config.sft_weight}")
    if not config.learning_rate > 0:
        raise ConfigError(f"learning_rate must be > 0, got {config.learning_rate}")
    if not 0 <= config.warmup_ratio < 1:
        raise ConfigError(f"warmup_ratio must be in [0, 1), got {config.warmup_ratio}")
    if config.save_every < 0:
        raise ConfigError(f"save_every must be >= 0, got {config.save_every}")
