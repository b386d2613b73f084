"""The fields the trainer configs share, each declared and documented once (TRL style).

:class:`TrainerConfig` is the base of all five trainer configs (GRPO, SFT, DPO, MobileIPL, CORE). The others are
topic groups, each inherited only by the configs that have that topic:

* :class:`TrainerConfig` (all five): model, env_kwargs, the held-out split (eval_seeds, eval_samples), epochs,
  learning rate, device, seed, output folder, resume;
* :class:`PolicyTrainerConfig` (GRPO, SFT, DPO, IPL: a trainer that runs its own optimiser; CORE's SFT runs
  through an ``SFTConfig``): env_id, load dtype, LoRA, AdamW, memory, checkpoints, plot, progress bar;
* :class:`FormatFields` (GRPO, SFT, DPO, CORE): output_format;
* :class:`SamplingFields` (GRPO, IPL, CORE): temperature, top_p, top_k, max_new_tokens;
* :class:`BatchFields` (SFT, DPO, IPL, CORE): batch_size;
* :class:`PairFields` (DPO, IPL): beta, sft_weight;
* :class:`LoggingFields` (GRPO, SFT, DPO): report_to;
* :class:`EvalScheduleFields` (GRPO, SFT, DPO): eval_every, eval_swap;
* :class:`HeldOutPlayFields` (SFT, DPO, IPL): eval_temperature, eval_max_steps;
* :class:`FormatArgsFields` (GRPO, SFT, DPO): format_kwargs;
* :class:`OfflineFields` (SFT, DPO; with the two above and :class:`FormatArgsFields`): eval_max_new_tokens,
  eval_num_envs.

A config redeclares a shared field only to change its default, without a docstring of its own (a ``#`` comment
says why that default); ``tests/trainers/test_config_base.py`` checks both. Names a few configs declare each with a
meaning of their own (``beta``, ``data``, ``num_envs``) are listed there with the reason.

Every group's checks are a ``check_*`` method beside its fields; a config's ``__post_init__`` calls those of the
groups it inherits, then checks its own fields.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from trainers.config_io import ConfigError, load_config
from trainers.heldout import resolve_seeds
from trainers.run_log import check_report_to

C = TypeVar("C", bound="TrainerConfig")


def _need_int(config: Any, names: tuple[str, ...], low: int, note: str = "") -> None:
    """Each of ``names`` must be an int (not a bool) ``>= low``; ``note`` explains the bound in the message."""
    for name in names:
        value = getattr(config, name)
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= low):
            raise ConfigError(f"{name} must be an int >= {low}{note}, got {value!r}")


@dataclass
class TrainerConfig:
    """The fields every trainer config has. Load a config with :meth:`from_yaml`; unknown keys are an error."""

    model: str = ""
    """Hugging Face model path or hub id (causal LM or VLM) of the policy trained (DPO and IPL: also the
    reference; IPL: the base model the warm-up starts from; CORE: the policy behaviour cloning starts from)."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Constructor arguments of the env (CORE: of every env), e.g. ``{n_boxes: 2}`` for ``ClickBox-v0``."""
    eval_seeds: list[int] | dict[str, int] | None = None
    """Held-out evaluation split: env reset seeds (CORE: task seeds of the training templates) never trained on,
    as a list or ``{start: s, count: n}`` (seeds ``s .. s+n-1``); ``None`` (default) evaluates nothing. On an env
    that draws its layout and target from the seed (``ClickBox-v0``) the seed alone names an unseen task. A seed
    that is also trained on is refused at start (``trainers.heldout.SplitOverlapError``). The training split is:
    GRPO's seed stream ``seed_start .. seed_start + num_train_seeds - 1``; the seeds recorded in the trajectories
    (SFT, of ``env_id`` or with no env recorded) or pairs (DPO, the ``seed`` column ``trainers.dpo.export_pairs``
    writes) trained on, where a trained one without a recorded seed is refused too; the seeds and episodes
    (template, task seed) of IPL's demonstrations; CORE's ``seed_base .. seed_base + seeds_per_template - 1``."""
    eval_samples: int = 1
    """Sampled rollouts per held-out seed (CORE: per held-out task) and evaluation, besides the one greedy
    (temperature 0) rollout, at ``eval_temperature`` where the config has one, else at the sampling temperature;
    logged as ``eval_sampled_success`` (0: greedy only)."""
    epochs: int = 1
    """Passes over the training data: GRPO, over each rollout batch (the old log-probs are stored once, before
    the first); SFT, over the samples; DPO and IPL, over (each round's) pairs; CORE, SFT epochs per iteration."""
    learning_rate: float = 1e-6
    """AdamW learning rate (SSL Table 6: 1e-6 for GRPO, 1e-5 for SFT)."""
    device: str | None = None
    """Torch device; default the accelerator's (CUDA when available)."""
    seed: int = 0
    """Seeds torch, numpy and Python once at start, and everything random the trainer draws from it: each SFT or
    DPO epoch's shuffling, IPL's tree sampler (``seed + round``), step subsets and pair order, CORE's template
    split, demonstration choice and noisy oracle."""
    output_dir: str = "runs"
    """Where the run's log (``metrics.jsonl``), plots, checkpoints and final model go (IPL: ``round-<r>/`` per
    round, ``rounds.jsonl``; CORE: each iteration's artefacts)."""
    resume: bool = False
    """Continue from what ``output_dir`` holds: the latest checkpoint (GRPO: an error when there is none); IPL
    skips finished rounds, CORE finished iterations."""

    def check_trainer_fields(self) -> None:
        """``model`` is set, ``epochs >= 1``, ``eval_samples >= 0``, ``eval_seeds`` is a well-formed split."""
        if not self.model:
            raise ConfigError("model is empty: set model to a Hugging Face path or hub id")
        _need_int(self, ("epochs",), 1)
        _need_int(self, ("eval_samples",), 0, " (0: greedy only)")
        resolve_seeds(self.eval_seeds)  # a malformed split is a config error at load time

    @property
    def eval_seed_list(self) -> list[int]:
        """The held-out seeds ``eval_seeds`` names (``[]`` without a split)."""
        return resolve_seeds(self.eval_seeds)

    @classmethod
    def from_yaml(
        cls: type[C], path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()
    ) -> C:
        """A config from a YAML mapping of field names, with ``key=value`` overrides on top."""
        return load_config(cls, path, overrides)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PolicyTrainerConfig(TrainerConfig):
    """A trainer that updates one policy with its own optimiser, acting in one env (GRPO, SFT, DPO, IPL)."""

    env_id: str = ""
    """Registered gymnasium id the policy acts in: GRPO trains in it; SFT, DPO and IPL play their held-out
    ``eval_seeds`` in it (SFT also replays observations in it); empty: none."""
    dtype: str | None = None
    """Load dtype: ``bfloat16``, ``float16``, ``float32`` or ``None`` (the checkpoint's)."""

    # --- LoRA ---
    lora: bool = False
    """Train a LoRA adapter (``peft``) instead of every weight; a reference model (GRPO with ``beta > 0``, DPO,
    IPL) is then the model with the adapter disabled, not a second copy."""
    lora_r: int = 16
    """LoRA rank."""
    lora_alpha: int = 32
    """LoRA scaling numerator."""
    lora_target_modules: str | list[str] = "all-linear"
    """Modules that get adapters (``peft``'s ``target_modules``)."""

    # --- AdamW ---
    weight_decay: float = 0.0
    """AdamW weight decay."""
    warmup_ratio: float = 0.0
    """Fraction of the optimiser steps (IPL: of each round's) with a linear learning-rate warm-up (then
    constant)."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm (0: off)."""

    # --- memory ---
    micro_batch_tokens: int = 0
    """Split each optimiser step's batch into micro-batches of at most this many (prompt + completion, padded)
    tokens and accumulate their gradients before the step; the accumulated gradient equals the one-pass gradient
    (GRPO: for every ``loss_agg``; SFT: each micro-batch's summed answer log-likelihood is divided by the whole
    batch's answer tokens; DPO and IPL's rounds: a pair's chosen and rejected rows stay in one micro-batch, whose
    loss is weighted by its share of the batch's pairs, and the reference's log-probs are taken micro-batch by
    micro-batch too). A sample longer than the budget forms a micro-batch of its own. 0 (default): one pass."""
    logprob_chunk_size: int = 0
    """Completion positions x rows whose logits are materialised at once (``trainers.logprobs.completion_logprobs``'s
    ``chunk_size``): the chosen-token log-probs (and GRPO's entropy) come chunk by chunk from the final hidden
    states through the LM head, each chunk's fp32 logits recomputed in the backward pass, so no ``(B, T, V)``
    fp32 tensor exists (for the policy and any reference). 0: the whole ``(B, T, V)`` at once (the fastest on
    tiny models)."""
    gradient_checkpointing: bool = False
    """Recompute each decoder layer's activations in the backward pass (less memory, about a third more time)."""

    # --- output ---
    save_every: int = 0
    """Checkpoint every this many optimiser steps (IPL: within a round; 0: only the final model)."""
    plot: bool = True
    """Write ``learning_curve.png`` beside the JSONL log: the trainer's loss or reward and its other statistics
    and, with ``eval_seeds``, held-out success, against step (IPL: also ``rounds.png``, per-round metrics)."""
    progress: bool = True
    """Show a progress bar."""

    def check_policy_trainer_fields(self) -> None:
        """The base's checks, then load dtype, LoRA rank, learning rate, warm-up, clipping, memory and checkpoint fields."""
        self.check_trainer_fields()
        if self.dtype not in (None, "bfloat16", "float16", "float32"):
            raise ConfigError(f"dtype={self.dtype!r}: use bfloat16, float16, float32 or null")
        _need_int(self, ("lora_r",), 1)
        if not self.learning_rate > 0:
            raise ConfigError(f"learning_rate must be > 0, got {self.learning_rate}")
        if not 0 <= self.warmup_ratio < 1:
            raise ConfigError(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        if not self.max_grad_norm >= 0:
            raise ConfigError(f"max_grad_norm must be >= 0 (0: off), got {self.max_grad_norm}")
        if self.save_every < 0:
            raise ConfigError(f"save_every must be >= 0, got {self.save_every}")
        _need_int(self, ("micro_batch_tokens",), 0, " (0: one pass)")
        _need_int(self, ("logprob_chunk_size",), 0, " (0: no chunking)")
        if not isinstance(self.gradient_checkpointing, bool):
            raise ConfigError(
                f"gradient_checkpointing must be true or false, got {self.gradient_checkpointing!r}"
            )


@dataclass
class FormatFields:
    """The prompt/answer format of the policy (GRPO, SFT, DPO, CORE; IPL's is CoaT)."""

    output_format: str = "auto"
    """Prompt/answer format the policy is trained and run with: ``auto``, ``gui_r1``, ``text``, ``cell`` (cell
    letters, for ClickGrid), ``box`` (answer-grid cell letters, for ClickBox) or ``element`` (CORE: one letter per
    clickable element, :class:`agents.prompts.element.ElementFormat`, which a tiny model can learn on CPU)."""


@dataclass
class SamplingFields:
    """How the policy samples actions (GRPO's rollouts, IPL's CoaT trees, CORE's trajectories)."""

    temperature: float = 1.0
    """Sampling temperature (> 0); GRPO's trained log-probs use the same temperature."""
    top_p: float | None = None
    """Nucleus sampling mass, or ``None`` (off)."""
    top_k: int | None = None
    """Top-k cut, or ``None`` (off)."""
    max_new_tokens: int = 128
    """Completion budget per step (IPL: per CoaT turn), in tokens."""

    def check_sampling_fields(self) -> None:
        """``temperature > 0`` and ``max_new_tokens >= 1``."""
        if not self.temperature > 0:
            raise ConfigError(f"temperature must be > 0 for sampling, got {self.temperature}")
        _need_int(self, ("max_new_tokens",), 1)


@dataclass
class LoggingFields:
    """Where the per-step scalars go (GRPO, SFT, DPO; IPL's rounds and CORE keep JSONL logs)."""

    report_to: list[str] = field(default_factory=list)
    """Where the per-step scalars go besides ``metrics.jsonl`` (always written): ``tensorboard`` (event files in
    ``<output_dir>/runs``, extra ``guigym[train]``) and / or ``wandb`` (project ``$WANDB_PROJECT`` or ``guigym``;
    ``WANDB_MODE=offline`` keeps the run on disk; extra ``guigym[wandb]``). ``[]`` (default) or ``none``: the JSONL
    log only. Names follow TRL's where the metric is the same (``train/reward``, ``train/loss``...; the table is in
    :mod:`trainers.run_log`)."""

    def check_logging_fields(self) -> None:
        """Normalise ``report_to`` to a list of names; an unknown name is a ``ConfigError`` listing the valid ones."""
        try:
            self.report_to = check_report_to(self.report_to)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc


@dataclass
class EvalScheduleFields:
    """When a trainer that evaluates between optimiser steps does so (GRPO, SFT, DPO)."""

    eval_every: int = 0
    """Evaluate on ``eval_seeds`` (DPO: also on ``eval_data``) every this many optimiser steps, besides before
    the first step and after the last (0: only those two)."""
    eval_swap: bool = False
    """With ``eval_seeds``, also run the swap test (:mod:`trainers.swap_test`: the held-out first screens with the
    instruction rewritten to name another target) at every held-out evaluation, logged as ``eval_swap_rate`` beside
    ``eval_swap_chance`` and ``eval_swap_kept``. MiniWoB envs (a task or ``GuiWeb-MiniWoB-Suite-v0``) only."""

    def check_eval_schedule_fields(self) -> None:
        """``eval_every >= 0``."""
        _need_int(self, ("eval_every",), 0, " (0: evaluate only before and after training)")


@dataclass
class HeldOutPlayFields:
    """How a trainer plays held-out episodes outside rollouts of its own (SFT, DPO, IPL)."""

    eval_temperature: float = 1.0
    """Sampling temperature of the sampled held-out rollouts (``eval_samples``)."""
    eval_max_steps: int = 50
    """Step cap per held-out episode (envs with their own end stop sooner)."""

    def check_held_out_play_fields(self) -> None:
        """``eval_temperature > 0`` and ``eval_max_steps >= 1``."""
        if not self.eval_temperature > 0:
            raise ConfigError(
                f"eval_temperature must be > 0 (the sampled pass samples), got {self.eval_temperature}"
            )
        _need_int(self, ("eval_max_steps",), 1)


@dataclass
class FormatArgsFields:
    """The arguments of the output format (GRPO, SFT, DPO)."""

    format_kwargs: dict[str, Any] | None = None
    """Arguments of the output format (``cell``: ``rows``, ``cols``; ``box``: ``grid``, ``letters``, e.g.
    ``{grid: 8, letters: 2}`` for an 8 x 8 answer grid named by a row and a column letter, with ``max_new_tokens:
    2`` in GRPO). ``None`` (default): GRPO passes its ``env_kwargs`` instead (``cell`` reads the env's ``rows`` /
    ``cols`` there; ``box`` keeps its 5 x 5 one-letter grid); SFT and DPO use the format's defaults."""


@dataclass
class OfflineFields(EvalScheduleFields, HeldOutPlayFields, FormatArgsFields):
    """A trainer that learns from recorded data (SFT, DPO): the format it is written in, and how the policy's
    held-out episodes in ``env_id`` are run (with the rollout machinery GRPO uses, ``trainers.heldout``)."""

    eval_max_new_tokens: int = 64
    """Completion budget per held-out step, in tokens."""
    eval_num_envs: int = 8
    """Env copies the held-out episodes are scheduled over."""

    def check_offline_fields(self) -> None:
        """The held-out fields: ``eval_seeds`` needs ``env_id``; the schedule, temperature, budgets and caps."""
        if resolve_seeds(getattr(self, "eval_seeds", None)) and not getattr(self, "env_id", ""):
            raise ConfigError(
                "eval_seeds needs env_id: the env (and env_kwargs) the held-out seeds are reset in"
            )
        self.check_eval_schedule_fields()
        self.check_held_out_play_fields()
        _need_int(self, ("eval_max_new_tokens", "eval_num_envs"), 1)


@dataclass
class BatchFields:
    """The batch of a trainer that steps over a fixed set of examples (SFT, DPO, IPL, CORE's SFT); GRPO's
    ``batch_size`` is derived, ``groups_per_step * group_size`` episodes."""

    batch_size: int = 8
    """Examples per optimiser step: samples (steps of trajectories) for SFT (SSL Table 6: 32), for IPL's warm-up
    (``warmup_sft_batch_size``) and for CORE's SFT; chosen / rejected pairs for DPO and IPL's rounds (seed: 128)."""

    def check_batch_fields(self) -> None:
        """``batch_size >= 1``."""
        _need_int(self, ("batch_size",), 1)


@dataclass
class PairFields:
    """The T-DPO / DPO loss of a trainer that learns from chosen / rejected pairs (DPO, IPL)."""

    beta: float = 0.1
    """DPO temperature ``beta`` of the sigmoid loss (Rafailov et al. 2023, Eq. 7)."""
    sft_weight: float = 0.0
    """Weight ``c`` of the SFT term on the chosen completions (MobileIPL's ``L_T-DPO + c * L_SFT``; 0: off)."""

    def check_pair_fields(self) -> None:
        """``beta > 0`` and ``sft_weight >= 0``."""
        if not self.beta > 0:
            raise ConfigError(f"beta must be > 0 (the DPO temperature), got {self.beta}")
        if self.sft_weight < 0:
            raise ConfigError(f"sft_weight must be >= 0, got {self.sft_weight}")
