"""The GRPO trainer's config: one documented field per knob, checked in ``__post_init__``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gui_envs.reward_wrappers import reward_key
from trainers.advantages import get_estimator
from trainers.config_io import ConfigError, load_config
from trainers.heldout import check_disjoint, resolve_seeds
from trainers.run_log import LoggingFields

#: Loss aggregation modes (see :func:`trainers.grpo.grpo_loss`).
LOSS_AGGREGATIONS = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm")


@dataclass
class GRPOConfig(LoggingFields):
    """Everything one GRPO run needs. Load with :meth:`from_yaml`; unknown keys are an error."""

    model: str = ""
    """Hugging Face model path or hub id (causal LM or VLM)."""
    env_id: str = "ClickGrid-v0"
    """Registered gymnasium id to train on."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Constructor arguments of the env."""
    reward: str = "env"
    """Reward by name: ``env``, ``binary``, ``ssl``, ``continuous``, ``ipl`` or ``graph`` (``gui_envs.reward_wrappers.REWARDS``)."""
    reward_kwargs: dict[str, Any] = field(default_factory=dict)
    """Arguments of the reward wrapper (e.g. ``alpha`` for ``ssl``)."""
    estimator: str = "grpo"
    """Advantage estimator by name: ``grpo``, ``dr_grpo``, ``sca``, ``none`` or one a user registered."""
    estimator_kwargs: dict[str, Any] = field(default_factory=dict)
    """Arguments of the estimator (``sca``: fields of ``rewards.sca_config.SCAConfig``)."""
    step_rewards: bool = False
    """Multi-turn credit. ``False`` (default, outcome supervision, GRPO section 4.1.2): every step of an episode
    takes the episode's advantage, computed from the episode reward (the sum of its step rewards). ``True``
    (process supervision, GRPO section 4.1.3): each step's own reward is normalised by the estimator against
    all step rewards of its group's ``N`` episodes, and step ``t`` takes the sum of its episode's normalised
    rewards from ``t`` to the end. Needs an estimator that normalises rewards alone (``grpo``, ``dr_grpo``,
    ``none``). Single-step episodes get the same advantages either way."""
    output_format: str = "auto"
    """Prompt/answer format: ``auto``, ``gui_r1``, ``text``, ``cell`` (cell letters, for ClickGrid) or ``box`` (answer-grid cell letters, for ClickBox)."""
    constrain_answers: bool = False
    """Sample only the tokens the output format's answers are made of (its ``answer_tokens``, e.g. the ``box``
    format's cell letters): every other token is suppressed in sampling, evaluation and scoring alike, so the
    trained log-probs are those of the distribution sampled from. A tiny model then spends its updates on which
    cell to name, not on finding the few tokens that name one. Formats without ``answer_tokens`` refuse it."""
    group_size: int = 8
    """Rollouts per group ``N`` (same task, same seed)."""
    groups_per_step: int = 4
    """Groups (distinct seeds) per optimiser step; the batch is ``groups_per_step * group_size`` episodes."""
    num_envs: int = 8
    """Env copies the rollouts are scheduled over (per process)."""
    seed_start: int = 0
    """First env reset seed of the training stream; step ``s`` uses the next ``groups_per_step`` seeds."""
    num_train_seeds: int = 1_000_000
    """Size of the seed stream; seeds wrap around after it (a small value repeats tasks)."""
    eval_seeds: list[int] | dict[str, int] | None = None
    """Held-out evaluation split: env reset seeds never trained on, as a list or ``{start: s, count: n}`` (seeds
    ``s .. s+n-1``); ``None`` (default) evaluates nothing and leaves the training path as it was. On an env that
    draws its layout and target from the seed (``ClickBox-v0``) the seed alone names an unseen task. Seeds in the
    training stream ``seed_start .. seed_start + num_train_seeds - 1`` are refused at start
    (``trainers.heldout.SplitOverlapError``)."""
    eval_every: int = 0
    """Evaluate on ``eval_seeds`` every this many optimiser steps, besides before the first step and after the
    last (0: only those two)."""
    eval_samples: int = 1
    """Sampled rollouts per evaluation seed, at the training temperature, besides the one greedy (temperature 0)
    rollout; logged as ``eval_sampled_success`` (0: greedy only)."""
    grad_variance_every: int = 0
    """Log the variance of the policy gradient (``grad_var``, ``grad_mean_sq``, ``grad_noise_ratio``; see
    :func:`trainers.grpo.gradient_variance`) on every this many steps: one extra backward pass per group, before
    the step's first update. 0 (default): never, so a normal run pays nothing."""
    max_episode_steps: int = 1
    """Step cap per episode (1: single-step grounding)."""
    num_steps: int = 100
    """Optimiser steps (one rollout batch each)."""
    epochs: int = 1
    """Passes over each rollout batch; the old log-probs are stored once, before the first pass."""
    mini_batches: int = 1
    """Optimiser updates per pass (the batch is split into this many mini-batches)."""
    learning_rate: float = 1e-6
    """AdamW learning rate (SSL Table 6: 1e-6)."""
    weight_decay: float = 0.01
    """AdamW weight decay."""
    warmup_ratio: float = 0.0
    """Fraction of ``num_steps`` with a linear learning-rate warm-up (then constant)."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm (0: off)."""
    eps_low: float = 0.2
    """Lower clip range: the ratio is clipped at ``1 - eps_low`` (seed 000 App. B.5)."""
    eps_high: float = 0.28
    """Upper clip range: ``1 + eps_high`` (DAPO's clip-higher)."""
    beta: float = 0.0
    """k3 KL coefficient; the reference model is loaded only when ``beta > 0``."""
    loss_agg: str = "token-mean"
    """``token-mean``, ``seq-mean-token-mean`` or ``seq-mean-token-sum-norm``."""
    temperature: float = 1.0
    """Sampling temperature (> 0); the trained log-probs use the same temperature."""
    top_p: float | None = None
    """Nucleus mass, or ``None``."""
    top_k: int | None = None
    """Top-k cut, or ``None``."""
    max_new_tokens: int = 256
    """Completion budget per step, in tokens; also ``seq-mean-token-sum-norm``'s constant."""
    prompt_sharing: str = "encode"
    """How a group's shared prompt is encoded for sampling: ``encode`` (default: tokenised once, prefilled per
    sample), ``cache`` (tokenised and prefilled once, its KV cache copied to the ``N`` samples; vision-language
    inputs fall back to ``encode``), ``auto`` (``cache`` when it spares at least
    ``agents.hf_agent.CACHE_MIN_TOKENS`` prompt tokens, else ``encode``; the fastest, see
    ``benchmarks/trainer_speed.py``) or ``none`` (every sample on its own). Same sampling distribution in each;
    ``encode`` and ``none`` also give a seeded run the same samples as before sharing existed."""
    decoder: str = "hf"
    """Who samples text batches: ``hf`` (default: Hugging Face ``generate``) or ``loop`` (guigym's own KV-cache
    loop, ``agents.decode_loop``: the same distribution and log-probs with less overhead per token, the faster
    on small models, see ``benchmarks/trainer_speed.py``; image batches still go to ``generate``). With
    ``prompt_sharing`` ``encode`` or ``none`` a seeded run draws the same samples with either decoder.
    ``vllm``: a vLLM engine colocated on the training GPU samples text and image batches
    (``agents.vllm_generator``; the ``guigym[vllm]`` extra, CUDA only), its weights synced after each optimiser
    step; the old log-probs are then always recomputed by the trained model and the sampler's distance from them
    is logged (``sampler_*``, ``trainers.sampler_stats``). See ``vllm_gpu_memory_utilization`` and
    ``vllm_kwargs``."""
    lora: bool = False
    """Train a LoRA adapter (``peft``); the reference is the model with the adapter disabled."""
    lora_r: int = 16
    """LoRA rank."""
    lora_alpha: int = 32
    """LoRA scaling numerator."""
    lora_target_modules: str | list[str] = "all-linear"
    """Modules that get adapters."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass (less memory, more time)."""
    dtype: str | None = None
    """Load dtype: ``bfloat16``, ``float16``, ``float32`` or ``None`` (the checkpoint's)."""
    device: str | None = None
    """Torch device; default the accelerator's (CUDA when available)."""
    mixed_precision: str | None = None
    """accelerate's autocast: ``"no"``, ``"bf16"`` or ``"fp16"``; ``None`` takes ``accelerate launch``'s setting
    (``ACCELERATE_MIXED_PRECISION``), else ``"no"``. A model loaded in bf16 (``dtype``) needs no autocast. Set once
    per run even when another library made an ``Accelerator`` earlier in the process (a notebook that ran TRL),
    whose precision the run would otherwise inherit."""
    seed: int = 0
    """Seeds torch, numpy and Python once at start."""
    deterministic: bool = False
    """``torch.use_deterministic_algorithms`` (bit-identical resumes on CPU)."""
    output_dir: str = "runs/grpo"
    """Where logs, the learning curve, checkpoints and the final model go."""
    save_every: int = 0
    """Checkpoint every this many steps (0: only at the end)."""
    resume: bool = False
    """Continue from the latest checkpoint in ``output_dir`` (an error when there is none)."""
    progress: bool = True
    """Show a progress bar with the running reward."""
    plot: bool = True
    """Write ``learning_curve.png`` beside the JSONL log."""
    # --- vLLM sampler ---
    vllm_gpu_memory_utilization: float = 0.3
    """With ``decoder: vllm``: the fraction of the GPU's memory the engine takes (its weights, activations and KV
    cache), in ``(0, 1)``; the rest is the trainer's. 0.3 of an 80 GiB GPU is 24 GiB: a 3B model's bf16 weights
    (7.5 GB) and about 15 GiB of KV cache."""
    vllm_kwargs: dict[str, Any] = field(default_factory=dict)
    """With ``decoder: vllm``: more ``vllm.LLM`` arguments, e.g. ``{enable_sleep_mode: true}`` (free the engine's
    weights and KV cache during each update), ``max_model_len``, ``dtype``, ``enforce_eager``."""


    # --- precision and memory ---
    master_weights: bool | None = None
    """Keep fp32 master weights for bf16 / fp16 trainable parameters (``trainers.precision.MasterWeightAdamW``):
    AdamW steps the fp32 copy, the model keeps computing in its dtype. ``None`` (default): on when the trainable
    parameters are bf16 or fp16. Costs 4 bytes per trainable parameter (14 GiB for the 3.75B Qwen2.5-VL-3B;
    ``python -m trainers.memory_plan``); without it, 10 steps at lr 1e-6 move about 2% of bf16 weights (``tests/trainers/test_precision.py``)."""
    micro_batch_tokens: int = 0
    """Split each mini-batch into micro-batches of at most this many (prompt + completion, padded) tokens and
    accumulate their gradients before the optimiser step; the gradient equals the one-pass gradient for every
    ``loss_agg``. A sample longer than the budget forms a micro-batch of its own. 0 (default): one pass."""
    logprob_chunk_size: int = 1024
    """Completion positions whose logits are materialised at once: the chosen-token log-probs (and the entropy)
    are computed chunk by chunk from the final hidden states through the LM head, each chunk's fp32 logits
    recomputed in the backward pass (activation checkpointing), so no ``(B, T, V)`` fp32 tensor exists.
    0: the whole ``(B, T, V)`` at once (the fastest on tiny models)."""
    device_memory_gib: float | None = None
    """Memory one device has for training, in GiB (2**30 bytes); the memory plan (``trainers.memory_plan``) must
    fit it or the run is refused before any env or rollout. ``None`` (default): the CUDA device's memory when
    there is one, else no check (the plan is still printed)."""

    # --- rollout envs ---
    group_envs: bool = False
    """Run the ``num_envs`` env slots as :class:`~gui_envs.multi.GroupEnv` copies of ``group_size`` members
    (``trainers.rollout.GroupWorkers``): a group's members share one browser, and its start is built and observed
    once, the others copying it (``python benchmarks/rollout_speed.py``). Needs ``num_envs`` a multiple of
    ``group_size`` and a reward other than ``ipl``. False (default): ``num_envs`` separate envs, a browser each."""

    def __post_init__(self) -> None:
        def need(ok: bool, msg: str) -> None:
            if not ok:
                raise ConfigError(msg)

        need(bool(self.model), "model is empty: set model to a Hugging Face path or hub id")
        for name in ("group_size", "groups_per_step", "num_envs", "num_steps", "epochs", "mini_batches",
                     "max_new_tokens", "max_episode_steps", "num_train_seeds", "lora_r"):  # fmt: skip
            value = getattr(self, name)
            need(isinstance(value, int) and value >= 1, f"{name} must be an integer >= 1, got {value!r}")
        need(self.group_size >= 2 or self.estimator == "none",
             f"group_size={self.group_size}: group-relative estimators need >= 2 rollouts; raise it or use estimator='none'")  # fmt: skip
        need((self.groups_per_step * self.group_size) % self.mini_batches == 0,
             f"mini_batches={self.mini_batches} must divide the batch of {self.groups_per_step * self.group_size} episodes")  # fmt: skip
        need(self.learning_rate > 0, f"learning_rate must be > 0, got {self.learning_rate}")
        need(0 <= self.eps_low < 1, f"eps_low must be in [0, 1) (default 0.2), got {self.eps_low}")
        need(self.eps_high >= 0, f"eps_high must be >= 0 (default 0.28), got {self.eps_high}")
        need(self.beta >= 0, f"beta must be >= 0 (0 turns the KL term and the reference off), got {self.beta}")
        need(self.loss_agg in LOSS_AGGREGATIONS, f"loss_agg={self.loss_agg!r}: use one of {LOSS_AGGREGATIONS}")
        need(self.temperature > 0, f"temperature must be > 0 for sampling, got {self.temperature}")
        need(0 <= self.warmup_ratio < 1, f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        need(self.max_grad_norm >= 0, f"max_grad_norm must be >= 0 (0: off), got {self.max_grad_norm}")
        need(isinstance(self.eval_every, int) and self.eval_every >= 0,
             f"eval_every must be an int >= 0 (0: evaluate only before and after training), got {self.eval_every!r}")  # fmt: skip
        need(isinstance(self.grad_variance_every, int) and self.grad_variance_every >= 0,
             f"grad_variance_every must be an int >= 0 (0: never), got {self.grad_variance_every!r}")  # fmt: skip
        need(isinstance(self.eval_samples, int) and self.eval_samples >= 0,
             f"eval_samples must be an int >= 0 (0: greedy only), got {self.eval_samples!r}")  # fmt: skip
        # The split is resolved and checked here, so an overlap fails before any model loads.
        check_disjoint(self.seed_start, self.num_train_seeds, resolve_seeds(self.eval_seeds))
        need(self.save_every >= 0, f"save_every must be >= 0 (0: only at the end), got {self.save_every}")
        need(self.prompt_sharing in ("auto", "cache", "encode", "none"),
             f"prompt_sharing={self.prompt_sharing!r}: use 'auto', 'cache', 'encode' or 'none'")  # fmt: skip
        need(self.decoder in ("hf", "loop", "vllm"), f"decoder={self.decoder!r}: use 'hf', 'loop' or 'vllm'")
        if self.decoder == "vllm":
            from agents.vllm_generator import VLLMUnavailableError, require_vllm

            try:
                require_vllm("decoder='vllm'")  # refused here, before any model loads
            except VLLMUnavailableError as exc:
                raise ConfigError(str(exc)) from exc
        need(0 < self.vllm_gpu_memory_utilization < 1,
             f"vllm_gpu_memory_utilization must be in (0, 1), got {self.vllm_gpu_memory_utilization}")  # fmt: skip
        need(self.mixed_precision in (None, "no", "bf16", "fp16"),
             f"mixed_precision={self.mixed_precision!r}: use 'no', 'bf16', 'fp16' or null")  # fmt: skip
        need(self.dtype in (None, "bfloat16", "float16", "float32"),
             f"dtype={self.dtype!r}: use bfloat16, float16, float32 or null")  # fmt: skip
        need(not (self.step_rewards and self.estimator == "sca"),
             "step_rewards=true with estimator='sca': SCA credits one click per rollout; use step_rewards=false")  # fmt: skip
        need(self.master_weights in (None, True, False), f"master_weights must be true, false or null, got {self.master_weights!r}")
        need(isinstance(self.micro_batch_tokens, int) and self.micro_batch_tokens >= 0,
             f"micro_batch_tokens must be an int >= 0 (0: off), got {self.micro_batch_tokens!r}")  # fmt: skip
        need(isinstance(self.logprob_chunk_size, int) and self.logprob_chunk_size >= 0,
             f"logprob_chunk_size must be an int >= 0 (0: no chunking), got {self.logprob_chunk_size!r}")  # fmt: skip
        need(self.device_memory_gib is None or self.device_memory_gib > 0,
             f"device_memory_gib must be > 0 or null (the CUDA device's), got {self.device_memory_gib!r}")  # fmt: skip
        need(not self.group_envs or (self.num_envs % self.group_size == 0 and self.reward != "ipl"),
             f"group_envs=true needs num_envs ({self.num_envs}) a multiple of group_size ({self.group_size}) and a "
             f"reward other than 'ipl' (got {self.reward!r}); change them or set group_envs=false")  # fmt: skip
        # The names are checked against the registries here so a typo fails before any model loads.
        reward_key(self.reward)
        get_estimator(self.estimator)
        self.check_logging_fields()

    @property
    def eval_seed_list(self) -> list[int]:
        """The held-out seeds ``eval_seeds`` names (``[]`` without a split)."""
        return resolve_seeds(self.eval_seeds)

    @property
    def batch_size(self) -> int:
        """Episodes per optimiser step."""
        return self.groups_per_step * self.group_size

    @classmethod
    def from_yaml(cls, path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> GRPOConfig:
        """A config from a YAML mapping of field names, with ``key=value`` overrides on top."""
        return load_config(cls, path, overrides)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
