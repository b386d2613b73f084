"""The GRPO trainer's config: one documented field per knob, checked in ``__post_init__``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gui_envs.reward_wrappers import reward_key
from trainers.advantages import get_estimator
from trainers.config_base import (
    EvalScheduleFields,
    FormatArgsFields,
    FormatFields,
    LoggingFields,
    PolicyTrainerConfig,
    SamplingFields,
)
from trainers.config_io import ConfigError
from trainers.heldout import check_disjoint, resolve_seeds

#: Loss aggregation modes (see :func:`trainers.grpo.grpo_loss`).
LOSS_AGGREGATIONS = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm")


@dataclass
class GRPOConfig(
    PolicyTrainerConfig, FormatFields, SamplingFields, EvalScheduleFields, LoggingFields, FormatArgsFields
):
    """Everything one GRPO run needs. Load with :meth:`from_yaml`; unknown keys are an error.

    The fields GRPO shares with other trainers are documented once, in :mod:`trainers.config_base`.
    """

    # --- GRPO's defaults of shared fields (documented in trainers.config_base) ---
    env_id: str = "ClickGrid-v0"
    weight_decay: float = 0.01
    max_new_tokens: int = 256  # also seq-mean-token-sum-norm's constant
    logprob_chunk_size: int = 1024
    output_dir: str = "runs/grpo"

    # --- GRPO ---

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
    """First env reset seed of the training stream; step ``s`` uses the next ``groups_per_step`` seeds (with
    ``sampling_rounds = R``: the next ``R * groups_per_step``, one slice per round)."""
    num_train_seeds: int = 1_000_000
    """Size of the seed stream; seeds wrap around after it (a small value repeats tasks)."""
    sampling_rounds: int = 1
    """Rounds of ``groups_per_step`` fresh seeds a step may draw to fill its batch with groups that teach something
    (DAPO's dynamic sampling, Yu et al. 2025, section 3.2: a group whose ``N`` rewards are all equal has advantage
    0 and only dilutes a token-mean loss). A step draws rounds until ``groups_per_step`` groups with unequal
    rewards are in hand or ``sampling_rounds`` rounds are spent, then trains on ``groups_per_step`` groups: those
    with unequal rewards first (in the order drawn), topped up with equal-reward ones, so the batch size (and
    the memory plan) stay fixed. Each extra round costs its episodes (logged as ``episodes``). 1 (default): one
    round, the batch as drawn. DAPO draws until the batch is full; the cap bounds a step's env time when almost
    every group agrees."""
    grad_variance_every: int = 0
    """Log the variance of the policy gradient (``grad_var``, ``grad_mean_sq``, ``grad_noise_ratio``; see
    :func:`trainers.grpo.gradient_variance`) on every this many steps: one extra backward pass per group, before
    the step's first update. 0 (default): never, so a normal run pays nothing."""
    max_episode_steps: int = 1
    """Step cap per episode (1: single-step grounding)."""
    collapse_entropy: float = 0.05
    """Per-token policy entropy (nats) under which a step whose groups each wrote one answer is logged as
    ``collapsed`` (and warned about once): its advantages are all 0, so the run has stopped learning. A policy that
    is right everywhere also writes one answer per group, so the flag is a signal to read with the success rate,
    not an error."""
    num_steps: int = 100
    """Optimiser steps (one rollout batch each)."""
    mini_batches: int = 1
    """Optimiser updates per pass (the batch is split into this many mini-batches)."""
    eps_low: float = 0.2
    """Lower clip range: the ratio is clipped at ``1 - eps_low`` (seed 000 App. B.5)."""
    eps_high: float = 0.28
    """Upper clip range: ``1 + eps_high`` (DAPO's clip-higher)."""
    beta: float = 0.0
    """k3 KL coefficient; the reference model is loaded only when ``beta > 0``."""
    sft_mix_coef: float = 0.0
    """Weight of an auxiliary SFT term in every mini-batch update (InstructGPT's PPO-ptx, Ouyang et al. 2022,
    eq. 2: ``+ gamma * E[log pi(x)]`` on pretraining data): the answer-token NLL of ``sft_mix_batch`` samples that
    ``train(config, sft_mix=...)`` draws fresh for each update. It keeps a skill the rewards rarely exercise (the
    ``act`` format's pointing, from ``trainers.pointer_pretraining``) from eroding under noisy policy gradients.
    0 (default): off, and ``sft_mix`` is not called."""
    sft_mix_batch: int = 16
    """Samples of the auxiliary SFT term per mini-batch update (with ``sft_mix_coef > 0``)."""
    loss_agg: str = "token-mean"
    """``token-mean``, ``seq-mean-token-mean`` or ``seq-mean-token-sum-norm``."""
    prompt_sharing: str = "encode"
    """How a group's shared prompt is encoded for sampling: ``encode`` (default: tokenised once, prefilled per
    sample), ``cache`` (tokenised and prefilled once, its KV cache copied to the ``N`` samples; vision-language
    inputs fall back to ``encode``), ``auto`` (``cache`` when it spares at least
    ``agents.sampling.CACHE_MIN_TOKENS`` prompt tokens, else ``encode``; the fastest, see
    ``benchmarks/trainer_speed.py``) or ``none`` (every sample on its own). Same sampling distribution in each;
    ``encode`` and ``none`` also give a seeded run the same samples as before sharing existed."""
    decoder: str = "loop"
    """Who samples text batches: ``loop`` (default: guigym's own KV-cache loop, ``agents.sampling``: the same
    distribution and log-probs as ``generate`` with less overhead per token, the faster of the two in
    ``benchmarks/trainer_speed.py``; it hands a model whose generation config sets something only ``generate``
    applies to ``generate``, and image batches always go there) or ``hf`` (Hugging Face ``generate``). With
    ``prompt_sharing`` ``encode`` or ``none`` a seeded run draws the same samples with either decoder, so the default
    changed no seeded run's samples (it was ``hf`` before issue 41).
    ``vllm``: a vLLM engine colocated on the training GPU samples text and image batches
    (``agents.vllm_generator``; the ``guigym[vllm]`` extra, CUDA only), its weights synced after each optimiser
    step; the old log-probs are then always recomputed by the trained model and the sampler's distance from them
    is logged (``sampler_*``, ``trainers.sampler_stats``). See ``vllm_gpu_memory_utilization`` and
    ``vllm_kwargs``."""
    mixed_precision: str | None = None
    """accelerate's autocast: ``"no"``, ``"bf16"`` or ``"fp16"``; ``None`` takes ``accelerate launch``'s setting
    (``ACCELERATE_MIXED_PRECISION``), else ``"no"``. A model loaded in bf16 (``dtype``) needs no autocast. Set once
    per run even when another library made an ``Accelerator`` earlier in the process (a notebook that ran TRL),
    whose precision the run would otherwise inherit."""
    deterministic: bool = False
    """``torch.use_deterministic_algorithms`` (bit-identical resumes on CPU)."""
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
    device_memory_gib: float | None = None
    """Memory one device has for training, in GiB (2**30 bytes); the memory plan (``trainers.memory_plan``) must
    fit it or the run is refused before any env or rollout. ``None`` (default): the CUDA device's memory when
    there is one, else no check (the plan is still printed)."""
    show_memory_plan: bool = True
    """Print the memory plan table before the first rollout (the check against ``device_memory_gib`` runs either
    way). Runs that repeat one shape (``guigym.grpo_compare``, ``guigym demo``) print it for their first run only."""

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

        self.check_policy_trainer_fields()
        self.check_sampling_fields()
        self.check_eval_schedule_fields()
        self.check_logging_fields()
        for name in ("group_size", "groups_per_step", "num_envs", "num_steps", "mini_batches", "max_episode_steps",
                     "num_train_seeds", "sampling_rounds"):  # fmt: skip
            value = getattr(self, name)
            need(isinstance(value, int) and value >= 1, f"{name} must be an integer >= 1, got {value!r}")
        need(self.group_size >= 2 or self.estimator == "none",
             f"group_size={self.group_size}: group-relative estimators need >= 2 rollouts; raise it or use estimator='none'")  # fmt: skip
        need((self.groups_per_step * self.group_size) % self.mini_batches == 0,
             f"mini_batches={self.mini_batches} must divide the batch of {self.groups_per_step * self.group_size} episodes")  # fmt: skip
        need(0 <= self.eps_low < 1, f"eps_low must be in [0, 1) (default 0.2), got {self.eps_low}")
        need(self.eps_high >= 0, f"eps_high must be >= 0 (default 0.28), got {self.eps_high}")
        need(self.beta >= 0, f"beta must be >= 0 (0 turns the KL term and the reference off), got {self.beta}")
        need(self.sft_mix_coef >= 0, f"sft_mix_coef must be >= 0 (0: no auxiliary SFT term), got {self.sft_mix_coef}")
        need(isinstance(self.sft_mix_batch, int) and self.sft_mix_batch >= 1,
             f"sft_mix_batch must be an integer >= 1, got {self.sft_mix_batch!r}")  # fmt: skip
        need(self.loss_agg in LOSS_AGGREGATIONS, f"loss_agg={self.loss_agg!r}: use one of {LOSS_AGGREGATIONS}")
        need(isinstance(self.grad_variance_every, int) and self.grad_variance_every >= 0,
             f"grad_variance_every must be an int >= 0 (0: never), got {self.grad_variance_every!r}")  # fmt: skip
        # The split is resolved and checked here, so an overlap fails before any model loads.
        check_disjoint(self.seed_start, self.num_train_seeds, resolve_seeds(self.eval_seeds))
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
        need(not (self.step_rewards and self.estimator == "sca"),
             "step_rewards=true with estimator='sca': SCA credits one click per rollout; use step_rewards=false")  # fmt: skip
        need(self.master_weights in (None, True, False), f"master_weights must be true, false or null, got {self.master_weights!r}")
        need(self.device_memory_gib is None or self.device_memory_gib > 0,
             f"device_memory_gib must be > 0 or null (the CUDA device's), got {self.device_memory_gib!r}")  # fmt: skip
        need(not self.group_envs or (self.num_envs % self.group_size == 0 and self.reward != "ipl"),
             f"group_envs=true needs num_envs ({self.num_envs}) a multiple of group_size ({self.group_size}) and a "
             f"reward other than 'ipl' (got {self.reward!r}); change them or set group_envs=false")  # fmt: skip
        # The names are checked against the registries here so a typo fails before any model loads.
        reward_key(self.reward)
        get_estimator(self.estimator)

    @property
    def batch_size(self) -> int:
        """Episodes per optimiser step."""
        return self.groups_per_step * self.group_size
