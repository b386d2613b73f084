"""GRPO for GUI agents, one file, top to bottom (seed 000 App. B.5; seed 001 section 3).

One optimiser step:

    seeds   = the next ``groups_per_step`` seeds of the stream (this rank's share)    # data position
    groups  = collect_groups(envs, policy, seeds, N)      # (G, N) episodes; reward wrapper = config.reward
              (sampling_rounds > 1: more rounds of seeds until G groups with unequal rewards, DAPO 3.2)
    r       = episode reward of each rollout              # (G, N)
    A       = ESTIMATORS[config.estimator](r, clicks, boxes)  # (G, N) or (G, N, T)
    for epoch in range(epochs):                           # old log-probs stored once, before epoch 0
        loss = clipped surrogate + beta * k3 KL, aggregated as config.loss_agg
        step AdamW

Every step of every episode is one sample (its prompt and its sampled completion); in a multi-turn episode
each step takes the episode's advantage, or with ``step_rewards`` its own (:func:`step_advantages`). The
reward is read by the env's reward wrapper from the privileged channel (target boxes); the policy never sees
it. Runs unchanged under ``accelerate launch`` (DDP): each rank collects its share of the groups, gradients
are averaged across ranks. FSDP and DeepSpeed launches are refused (:func:`refuse_sharded_strategies`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import gui_envs  # noqa: F401  (registers the env ids)
from gui_envs.reward_wrappers import with_reward
from gui_envs.schema.trajectory import Trajectory
from trainers.advantages import GroupBatch, get_estimator
from trainers.checkpoint import (
    clean_checkpoint_dir,
    latest_checkpoint,
    load_checkpoint,
    load_model_weights,
    rng_state,
    save_checkpoint,
    set_rng_state,
)
from trainers.config_io import ConfigError
from trainers.grpo_config import GRPOConfig
from trainers.heldout import EVAL_KEYS, evaluate
from trainers.logprobs import completion_logprobs, encode_batch, split_by_tokens
from trainers.memory_plan import check_memory_plan
from trainers.optim import adamw_with_warmup
from trainers.policy_setup import apply_lora, resolve_output_format
from trainers.rollout import GroupWorkers, RolloutConfig, collect_groups, group_plans, make_workers
from trainers.run_log import RunLog, plot_curve, require_reporters
from trainers.sampler_stats import logprob_mismatch, padded_logprobs
from trainers.sft import SFTSample, sft_backward
from trainers.swap_test import SWAP_KEYS, swap_test

logger = logging.getLogger(__name__)

# ----- the loss (seed 000 App. B.5) ----------------------------------------------------------------------


#: ``(count, generator) -> count`` fresh SFT samples for the auxiliary term (``GRPOConfig.sft_mix_coef``).
SFTMix = Callable[[int, Any], list[SFTSample]]


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimator of ``KL(pi_theta || pi_ref)``: ``exp(q - p) - (q - p) - 1`` with ``p = log
    pi_theta``, ``q = log pi_ref`` (Schulman 2020; GRPO, Shao et al. 2024 Eq. 4). Non-negative, unbiased."""
    d = ref_logp - logp  # (B, T)
    return torch.exp(d) - d - 1.0


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, mode: str, max_len: int | None = None) -> torch.Tensor:
    """Reduce a ``(B, T)`` per-token loss to a scalar.

    * ``token-mean``: ``sum_bt l * m / sum_bt m`` (every token weighs the same; DAPO section 3.3).
    * ``seq-mean-token-mean``: ``mean_b (sum_t l * m / sum_t m)`` (every sequence weighs the same; GRPO).
    * ``seq-mean-token-sum-norm``: ``mean_b (sum_t l * m) / max_len`` with a constant ``max_len`` (Dr. GRPO,
      Liu et al. 2025 section 3.1: no length bias); default ``T``.
    """
    m = mask.to(per_token.dtype)
    if mode == "token-mean":
        return (per_token * m).sum() / m.sum().clamp(min=1.0)
    if mode == "seq-mean-token-mean":
        return ((per_token * m).sum(-1) / m.sum(-1).clamp(min=1.0)).mean()
    if mode == "seq-mean-token-sum-norm":
        return (per_token * m).sum(-1).mean() / float(max_len or per_token.shape[-1])
    raise ValueError(f"unknown loss_agg {mode!r}")


def grpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    eps_low: float = 0.2,
    eps_high: float = 0.28,
    beta: float = 0.0,
    ref_logp: torch.Tensor | None = None,
    loss_agg: str = "token-mean",
    max_len: int | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The clipped GRPO objective with an optional k3 KL term (seed 000 App. B.5, ``L_GRPO``).

    Per token: ``l = -min(rho * A, clip(rho, 1 - eps_low, 1 + eps_high) * A) + beta * KL_k3`` with
    ``rho = exp(logp - old_logp)``, then :func:`aggregate`.

    Args:
        logp: ``(B, T)`` log-probs under the current policy (with gradients).
        old_logp: ``(B, T)`` log-probs under the sampling policy.
        advantages: ``(B,)`` per sequence or ``(B, T)`` per token.
        mask: ``(B, T)`` 1 on completion tokens.
        eps_low, eps_high: clip range.
        beta: KL coefficient; needs ``ref_logp`` when > 0.
        ref_logp: ``(B, T)`` reference log-probs.
        loss_agg: see :func:`aggregate`.
        max_len: the constant of ``seq-mean-token-sum-norm``.

    Returns:
        The scalar loss and statistics (``clip_frac``, ``kl``, ``ratio_mean``) over the masked tokens.
    """
    adv = advantages if advantages.dim() == 2 else advantages[:, None]  # (B, T) or (B, 1)
    ratio = torch.exp(logp - old_logp)  # (B, T)
    surrogate = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv
    per_token = -torch.minimum(surrogate, clipped)  # (B, T)
    m = mask.bool()
    kl = torch.zeros_like(per_token)
    if beta > 0:
        if ref_logp is None:
            raise ValueError("beta > 0 needs ref_logp")
        kl = k3_kl(logp, ref_logp)
        per_token = per_token + beta * kl
    loss = aggregate(per_token, mask, loss_agg, max_len)
    with torch.no_grad():
        adv_b = adv.expand_as(ratio)
        # The gradient is cut where the clipped term is the smaller one (it is constant in theta there).
        was_clipped = ((ratio < 1.0 - eps_low) & (adv_b < 0)) | ((ratio > 1.0 + eps_high) & (adv_b > 0))
        n = m.sum().clamp(min=1)
        stats = {
            "clip_frac": float((was_clipped & m).sum() / n),
            "kl": float((kl * m).sum() / n),
            "ratio_mean": float((ratio * m).sum() / n),
        }
    return loss, stats


def gradient_variance(group_losses: Iterable[torch.Tensor], params: Sequence[torch.Tensor]) -> dict[str, float]:
    """How noisy the policy gradient is: the spread of the gradient estimates that single groups give.

    With ``g_1 .. g_G`` the gradients (flattened over ``params``) of the ``G`` group losses, each group's GRPO
    surrogate on its own samples at the sampling policy (ratio 1, so ``g_k = -grad agg(A * log pi)``, the
    policy-gradient estimate of one group), and ``g_bar`` their mean:

    * ``grad_var = sum_k ||g_k - g_bar||^2 / (G - 1)``: the trace of the sample covariance of the per-group
      estimates, i.e. the variance of one group's estimate summed over parameters (``G`` groups averaged have
      ``grad_var / G``; with ``token-mean`` and equally long groups the step's gradient is ``g_bar``);
    * ``grad_mean_sq = ||g_bar||^2``, the squared norm of the mean (the signal);
    * ``grad_noise_ratio = grad_var / grad_mean_sq``, scale-free (advantages of any scale compare).

    Units: squared loss gradients (loss per parameter unit, squared), summed over parameters.

    >>> theta = torch.zeros(2, requires_grad=True)
    >>> adv = (torch.tensor([1.0, -1.0]), torch.tensor([0.0, 0.0]))
    >>> losses = (-(a * torch.log_softmax(theta, 0)).sum() for a in adv)
    >>> {k: round(v, 4) for k, v in gradient_variance(losses, [theta]).items()}
    {'grad_var': 1.0, 'grad_mean_sq': 0.5, 'grad_noise_ratio': 2.0}
    """
    flat = []
    for loss in group_losses:
        grads = torch.autograd.grad(loss, list(params), allow_unused=True)
        parts = [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads, strict=True)]
        flat.append(torch.cat([x.reshape(-1) for x in parts]))
    if len(flat) < 2:
        raise ValueError(f"gradient_variance needs at least 2 groups, got {len(flat)}")
    g = torch.stack(flat).double()  # (G, P)
    mean = g.mean(dim=0)
    var = float(((g - mean) ** 2).sum() / (g.shape[0] - 1))
    mean_sq = float((mean**2).sum())
    ratio = var / mean_sq if mean_sq > 0 else float("inf")
    return {"grad_var": var, "grad_mean_sq": mean_sq, "grad_noise_ratio": ratio}


# ----- rollouts to samples -------------------------------------------------------------------------------


@dataclass
class Sample:
    """One sampled completion to train on: an env step of an episode, with its advantage."""

    prompt: str
    token_ids: list[int]
    logprobs: list[float] | None
    advantage: float | np.ndarray
    image: Any = None
    group: int = 0
    """Index of the group (seed) the sample's episode belongs to, within its step's batch."""


def group_batch(groups: list[list[Trajectory]]) -> GroupBatch:
    """Rewards, successes, first-step clicks and target boxes of ``G`` groups of ``N`` episodes."""
    g, n = len(groups), len(groups[0])
    rewards = np.array([[sum(s.reward for s in t.steps) for t in grp] for grp in groups])  # (G, N)
    success = np.array([[bool(t.success) for t in grp] for grp in groups])  # (G, N)
    coords = np.full((g, n, 2), np.nan)  # (G, N, 2) pixels; NaN: no located action
    boxes = np.full((g, 4), np.nan)  # (G, 4) pixels (privileged)
    for i, grp in enumerate(groups):
        for j, traj in enumerate(grp):
            action = traj.steps[0].action if traj.steps else None
            if action is not None and action.point is not None:
                coords[i, j] = action.point
        box = groups[i][0].steps[0].privileged.get("target_bbox") if groups[i][0].steps else None
        if box is not None:
            boxes[i] = box
    return GroupBatch(rewards, success, coords, boxes)


def collapse_signals(groups: list[list[Trajectory]], rewards: np.ndarray) -> dict[str, float]:
    """What says a GRPO run is collapsing, from one step's groups (``rewards``: ``(G, N)``).

    * ``zero_adv_frac``: the fraction of groups whose ``N`` rewards are all equal. Their group-normalised advantage
      is 0 for every member (seed 000 App. B.5), so they teach nothing; a run where this nears 1 has stopped
      learning, whether every member succeeds or every member fails.
    * ``distinct_answers``: distinct completions of a group's first step over ``N``, averaged over groups (1/N:
      every member wrote the same answer). With entropy, it tells a policy that is sure and right from one that
      has collapsed onto one answer (``benchmarks/trl_clickgrid.py``: a seed whose entropy fell from 6.6 to 0.02 by
      step 201 answered one constant cell).

    >>> from gui_envs.schema.trajectory import Step
    >>> def ep(text): return Trajectory(instruction="", steps=[Step(action=None, output_text=text)])
    >>> collapse_signals([[ep("a"), ep("a")], [ep("a"), ep("b")]], np.array([[1.0, 1.0], [0.0, 1.0]]))
    {'zero_adv_frac': 0.5, 'distinct_answers': 0.75}
    """
    equal = np.all(rewards == rewards[:, :1], axis=1)  # (G,)
    distinct = [len({t.steps[0].output_text if t.steps else None for t in grp}) / max(1, len(grp)) for grp in groups]
    return {"zero_adv_frac": float(equal.mean()), "distinct_answers": float(np.mean(distinct))}


def collapsed(record: dict[str, Any], entropy_floor: float, group_size: int) -> bool:
    """Whether a step's record says the policy answers one thing: every group's members agree (distinct answers
    1/N) and the per-token entropy is below ``entropy_floor`` (nats)."""
    ent = record.get("entropy", float("nan"))
    return record["distinct_answers"] <= 1.0 / group_size + 1e-9 and not ent >= entropy_floor


def step_advantages(groups: list[list[Trajectory]], estimator: Any, **kwargs: Any) -> list[list[np.ndarray]]:
    """Per-step advantages from per-step rewards: GRPO's process supervision (Shao et al. 2024, section 4.1.3).

    Each group's step rewards ``r_{j,t}`` (every step ``t`` of every episode ``j``, pooled, ``(M,)``) go through
    the estimator as one row, so ``grpo`` gives ``r~ = (r - mean(R)) / std(R)`` over the group's ``M`` steps;
    step ``t`` then takes ``A_{j,t} = sum_{t' >= t} r~_{j,t'}``.

    Returns:
        ``out[i][j]``: a ``(len(steps),)`` array of advantages for episode ``j`` of group ``i``.
    """
    out = []
    for grp in groups:
        r = np.array([s.reward for traj in grp for s in traj.steps], dtype=np.float64)  # (M,)
        norm = np.asarray(estimator(GroupBatch(r[None, :]), **kwargs), dtype=np.float64)[0] if r.size else r
        per_episode, k = [], 0
        for traj in grp:
            m = len(traj.steps)
            per_episode.append(np.cumsum(norm[k : k + m][::-1])[::-1])  # A_t = sum_{t' >= t} r~_t'
            k += m
        out.append(per_episode)
    return out


def to_samples(
    groups: list[list[Trajectory]], adv: np.ndarray, per_step: list[list[np.ndarray]] | None = None
) -> list[Sample]:
    """Every step with tokens becomes a sample carrying its episode's advantage (``(G, N)`` or ``(G, N, T)``),
    or with ``per_step`` (from :func:`step_advantages`) its own step's."""
    out = []
    for i, grp in enumerate(groups):
        for j, traj in enumerate(grp):
            for t, step in enumerate(traj.steps):
                if not step.token_ids or step.prompt is None:
                    continue  # nothing was sampled (a scripted step): nothing to train
                if per_step is not None:
                    a = per_step[i][j][t]
                else:
                    a = adv[i, j] if adv.ndim == 2 else adv[i, j, : len(step.token_ids)]
                out.append(Sample(step.prompt, list(step.token_ids), step.logprobs, a, step.screenshot, i))
    return out


# ----- the trainer ---------------------------------------------------------------------------------------


def make_agent(config: GRPOConfig, device: str) -> Any:
    """The policy: an :class:`agents.hf_agent.HFAgent` with the config's format and sampling, or with
    ``decoder: vllm`` an :class:`agents.lm_agent.LMAgent` on a :class:`agents.vllm_generator.VLLMGenerator`."""
    from agents.hf_agent import HFAgent

    fmt = resolve_output_format(
        config.output_format, config.env_kwargs if config.format_kwargs is None else config.format_kwargs
    )
    dtype = getattr(torch, config.dtype) if config.dtype else None
    if config.decoder == "vllm":
        from agents.generation import SamplingParams
        from agents.lm_agent import LMAgent
        from agents.vllm_generator import VLLMGenerator

        # The engine's seed is this rank's torch seed (seed_everything: config.seed + rank).
        generator = VLLMGenerator(config.model, device=device, dtype=dtype, seed=torch.initial_seed() % 2**31,
                                  gpu_memory_utilization=config.vllm_gpu_memory_utilization,
                                  engine_kwargs=config.vllm_kwargs)  # fmt: skip
        sampling = SamplingParams(temperature=config.temperature, top_p=config.top_p, top_k=config.top_k,
                                  max_new_tokens=config.max_new_tokens)  # fmt: skip
        agent = LMAgent(generator, fmt, sampling, name="vllm")
    else:
        agent = HFAgent(config.model, output_format=fmt, temperature=config.temperature, top_p=config.top_p,
                        top_k=config.top_k, max_new_tokens=config.max_new_tokens, device=device, dtype=dtype,
                        prompt_sharing=config.prompt_sharing, decoder=config.decoder)  # fmt: skip
    if config.constrain_answers:
        tokens = getattr(agent.output_format, "answer_tokens", None)
        if tokens is None:
            raise ConfigError(
                f"constrain_answers=true needs an output format with answer_tokens (box); {config.output_format!r} "
                "has none: set constrain_answers=false"
            )
        gen = agent.generator
        keep = set(tokens(gen.tokenizer))
        # The generator suppresses these in sampling and scoring alike (HFGenerator.suppress_ids).
        head = gen.model.get_output_embeddings()
        vocab = max(len(gen.tokenizer), int(head.weight.shape[0]) if head is not None else 0)  # padded heads too
        gen.suppress_ids = tuple(sorted(set(gen.suppress_ids) | (set(range(vocab)) - keep)))
    return agent


def step_seeds(config: GRPOConfig, step: int, round_: int = 0) -> list[int]:
    """The group seeds of optimiser step ``step`` (0-based) in sampling round ``round_`` (0-based, below
    ``config.sampling_rounds``), all ranks' together: the data position is the step, and every step owns
    ``sampling_rounds`` slices of the stream whether it draws them or not, so a resume neither repeats nor skips.

    >>> cfg = GRPOConfig(model="m", env_id="e", groups_per_step=2, sampling_rounds=3, seed_start=100)
    >>> step_seeds(cfg, 0), step_seeds(cfg, 0, 2), step_seeds(cfg, 1)
    ([100, 101], [104, 105], [106, 107])
    """
    pos = (step * config.sampling_rounds + round_) * config.groups_per_step
    return [config.seed_start + (pos + j) % config.num_train_seeds for j in range(config.groups_per_step)]


def informative(group: list[Trajectory]) -> bool:
    """Whether a group's episode rewards differ, so that its group-normalised advantages are not all 0."""
    rewards = [sum(s.reward for s in t.steps) for t in group]
    return max(rewards) != min(rewards)


def fill_batch(rounds: Sequence[list[list[Trajectory]]], size: int) -> list[list[Trajectory]]:
    """A step's ``size`` groups from the groups of its sampling rounds (DAPO's dynamic sampling, Yu et al. 2025,
    section 3.2): every informative group first, in the order drawn, then equal-reward groups to fill the batch.

    >>> from gui_envs.schema.trajectory import Step
    >>> def grp(*r): return [Trajectory(instruction=str(r), steps=[Step(action=None, reward=x)]) for x in r]
    >>> [g[0].instruction for g in fill_batch([[grp(1, 1), grp(0, 1)], [grp(0, 0), grp(1, 0)]], 3)]
    ['(0, 1)', '(1, 0)', '(1, 1)']
    """
    drawn = [grp for groups in rounds for grp in groups]
    kept = [grp for grp in drawn if informative(grp)][:size]
    return kept + [grp for grp in drawn if not informative(grp)][: size - len(kept)]


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def train(config: GRPOConfig, sft_mix: SFTMix | None = None) -> dict[str, Any]:
    """Run GRPO as configured; returns ``{"history": [per-step records], "eval": [held-out records], "model": the
    trained model}``. With ``eval_seeds`` the held-out records (``step``, ``eval_greedy_success``,
    ``eval_sampled_success``) come before the first step, every ``eval_every`` steps and after the last; those
    after a step are also merged into its history record and log line.

    ``sft_mix(count, generator)``: ``count`` fresh :class:`trainers.sft.SFTSample` (prompts through the generator's
    chat template) for the auxiliary SFT term; required when ``config.sft_mix_coef > 0``, unused otherwise."""
    if config.sft_mix_coef > 0 and sft_mix is None:
        raise ValueError("sft_mix_coef > 0 needs train(config, sft_mix=...): a function (count, generator) -> "
                         "SFT samples for the auxiliary term (e.g. trainers.pointer_pretraining.pointer_mix)")  # fmt: skip
    from accelerate.utils import gather_object

    require_reporters(config.report_to)  # a missing tensorboard / wandb stops the run before the model loads
    acc = _accelerator(config)
    refuse_sharded_strategies(acc.distributed_type)
    rank, world = acc.process_index, acc.num_processes
    # Before any model, env or rollout.
    check_memory_plan(config, acc.device, world, verbose=acc.is_main_process and config.show_memory_plan)
    seed_everything(config.seed + rank)  # ranks sample differently, start from the same weights
    if config.deterministic:
        torch.use_deterministic_algorithms(True)
    out_dir = Path(config.output_dir)

    # Policy, optional LoRA, optional reference (only when beta > 0).
    agent = make_agent(config, str(acc.device))
    gen = agent.generator
    model = gen.model
    if config.lora:
        model = apply_lora(model, config.lora_r, config.lora_alpha, config.lora_target_modules)
    if config.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    ref_model = None
    if config.beta > 0 and not config.lora:
        from agents.hf_agent import load_model

        ref_model = load_model(config.model, gen.supports_images, gen.model.dtype, False).to(acc.device).eval()
        ref_model.requires_grad_(False)
    optimizer, scheduler = adamw_with_warmup(
        model, config.learning_rate, config.weight_decay, config.warmup_ratio, config.num_steps, config.master_weights
    )
    model, optimizer = acc.prepare(model, optimizer)
    gen.model = acc.unwrap_model(model)  # generation runs on the unwrapped module; DDP shares its weights

    start = 0
    if acc.is_main_process:
        clean_checkpoint_dir(out_dir)  # a killed save's temp folder is full checkpoint size; a fresh run removes it too
    if config.resume:
        path = latest_checkpoint(out_dir)
        ckpt = load_checkpoint(path)
        load_model_weights(gen.model, ckpt, path)
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        set_rng_state(ckpt["rng"], rank, world, path)
        start = int(ckpt["state"]["step"])

    if config.decoder == "vllm" and start > 0:
        gen.sync_weights(gen.model)  # the engine loaded config.model; a resumed run samples from the checkpoint
    if config.group_envs:  # a browser and a prepared start per group (GroupWorkers)
        workers = GroupWorkers(config.env_id, config.num_envs, config.group_size, config.env_kwargs,
                               reward=config.reward, reward_kwargs=config.reward_kwargs)  # fmt: skip
    else:
        workers = make_workers(
            [with_reward(gym.make(config.env_id, **config.env_kwargs), config.reward, **config.reward_kwargs)
             for _ in range(config.num_envs)]
        )  # fmt: skip
    rollout_cfg = RolloutConfig(max_steps=config.max_episode_steps, progress=False, record_screenshots=agent.use_images)
    estimator = get_estimator(config.estimator)
    untempered = config.temperature == 1.0 and config.top_p is None and config.top_k is None
    log = None
    if acc.is_main_process:
        log = RunLog(out_dir / "metrics.jsonl", start, config.report_to, "grpo", config.to_dict())
    bar = None
    if config.progress and acc.is_main_process:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.num_steps, initial=start, desc="grpo", unit="step")
    history: list[dict[str, Any]] = []
    eval_seeds = config.eval_seed_list
    evals: list[dict[str, Any]] = []
    warned_collapse = False

    def held_out(done: int) -> dict[str, Any]:
        """Greedy and sampled success on this rank's share of the held-out seeds, summed over ranks."""
        gen.model.eval()
        counts = evaluate(workers, agent, eval_seeds[rank::world], config.eval_samples, rollout_cfg)
        if config.eval_swap:
            counts.update(swap_test(workers, agent, eval_seeds[rank::world]))
        shares = gather_object([counts]) if world > 1 else [counts]
        row: dict[str, Any] = {"step": done}
        for key in (*EVAL_KEYS, *(SWAP_KEYS if config.eval_swap else ())):
            hits = sum(c[key][0] for c in shares if key in c)
            total = sum(c[key][1] for c in shares if key in c)
            if total:
                row[key] = hits / total
        evals.append(row)
        return row

    if eval_seeds and start == 0:
        # The step-0 point is the untrained policy: the baseline that "learned" is measured against.
        row = held_out(0)
        if log is not None:
            log.write(row)

    for step in range(start, config.num_steps):
        # 1. Rollouts: N episodes per seed; the data position is the step counter, so a resume neither
        #    repeats nor skips seeds.
        t0, c0 = time.perf_counter(), time.process_time()
        #    With sampling_rounds > 1, further rounds of fresh seeds until the batch holds groups_per_step
        #    informative groups (dynamic sampling); each rank fills its own share.
        gen.model.eval()
        rounds: list[list[list[Trajectory]]] = []
        share = len(step_seeds(config, step)[rank::world])
        for r in range(config.sampling_rounds):
            seeds = step_seeds(config, step, r)[rank::world]
            rounds.append(collect_groups(workers, agent, seeds, config.group_size, rollout_cfg))
            if sum(informative(g) for groups in rounds for g in groups) >= share:
                break
        drawn = [grp for groups in rounds for grp in groups]
        groups = fill_batch(rounds, share) if config.sampling_rounds > 1 else drawn
        # The next step's resets are known now: browser envs prepare their first ones during the update.
        workers.announce(group_plans(step_seeds(config, step + 1)[rank::world], config.group_size, workers.num_envs))
        t1 = time.perf_counter()

        # 2. Scoring: episode rewards (the wrapper already graded each step) and advantages.
        batch = group_batch(groups)
        seen = group_batch(drawn)  # what the policy did this step, every round: the success and collapse signals
        if config.step_rewards:
            per_step = step_advantages(groups, estimator, **config.estimator_kwargs)
            adv = np.concatenate([a for grp in per_step for a in grp] or [np.zeros(1)])  # (all steps,) for the log
            samples = to_samples(groups, adv, per_step)
        else:
            adv = np.asarray(estimator(batch, **config.estimator_kwargs), dtype=np.float64)  # (G, N) or (G, N, T)
            samples = to_samples(groups, adv)
        t2 = time.perf_counter()

        # 3. Update: old log-probs stored once; epochs x mini-batches of the clipped loss.
        measure = bool(config.grad_variance_every) and (step + 1) % config.grad_variance_every == 0
        if config.decoder == "vllm":
            gen.sleep()  # with vllm_kwargs enable_sleep_mode: the engine's memory goes to the update
        stats = update(config, acc, model, gen, ref_model, optimizer, samples, untempered, measure,
                       sft_mix if config.sft_mix_coef > 0 else None)  # fmt: skip
        scheduler.step()
        if config.decoder == "vllm":
            gen.sync_weights(gen.model)  # the next rollouts (and held-out evaluation) sample the updated weights
        t3, c3 = time.perf_counter(), time.process_time()

        n_tokens = sum(len(s.token_ids) for s in samples)
        record = {
            "step": step + 1,
            "reward_mean": float(seen.rewards.mean()),
            "reward_std": float(seen.rewards.std()),
            "success_rate": float(seen.success.mean()),
            "adv_mean": float(adv.mean()),
            "adv_std": float(adv.std()),
            "adv_abs_mean": float(np.abs(adv).mean()),
            **collapse_signals(drawn, seen.rewards),
            "informative_groups": sum(informative(g) for g in groups),
            "episodes": sum(len(g) for g in drawn),
            **stats,
            "completion_len": n_tokens / max(1, len(samples)),
            "tokens_per_s": n_tokens / max(t1 - t0, 1e-9),
            "time_rollout": t1 - t0,
            "time_scoring": t2 - t1,
            "time_update": t3 - t2,
            # CPU seconds of this process (all its threads): steadier than wall time on a shared machine.
            "cpu_time_step": c3 - c0,
            "lr": scheduler.get_last_lr()[0],
        }
        done = step + 1
        if collapsed(record, config.collapse_entropy, config.group_size):
            record["collapsed"] = 1.0
            if not warned_collapse and acc.is_main_process:
                warned_collapse = True
                logger.warning(
                    "grpo step %d: the policy has collapsed to one answer per prompt (every group's members agree, "
                    "entropy %.3g < %.3g nats): GRPO's advantages are 0 from here on. Try a lower learning rate, "
                    "beta > 0, a larger group or a higher temperature.",
                    done, record.get("entropy", float("nan")), config.collapse_entropy,
                )  # fmt: skip
        if eval_seeds and ((config.eval_every and done % config.eval_every == 0) or done == config.num_steps):
            record.update({k: v for k, v in held_out(done).items() if k != "step"})
        history.append(record)
        if log is not None:
            log.write(record)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(reward=f"{record['reward_mean']:.3f}", success=f"{record['success_rate']:.2f}")

        # 4. Checkpoint (atomic) after the step is complete.
        if config.save_every and (step + 1) % config.save_every == 0:
            acc.wait_for_everyone()
            # Every rank's generator states, so that each rank resumes its own sampling stream.
            rngs = gather_object([rng_state()]) if world > 1 else [rng_state()]
            if acc.is_main_process:
                state = {"data_position": (step + 1) * config.groups_per_step * config.sampling_rounds,
                         "config": config.to_dict()}
                save_checkpoint(out_dir, step + 1, gen.model, optimizer, scheduler, state, rng_states=rngs,
                                processor=getattr(gen, "processor", gen.tokenizer))  # fmt: skip

    if bar is not None:
        bar.close()
    workers.close()
    acc.wait_for_everyone()
    if acc.is_main_process:
        gen.model.save_pretrained(out_dir / "final")
        getattr(gen, "processor", gen.tokenizer).save_pretrained(out_dir / "final")  # a VLM's image processor too
        if log is not None:
            log.close()
        if config.plot and log is not None:
            keys = ("reward_mean", ("success_rate", *EVAL_KEYS) if eval_seeds else "success_rate")
            plot_curve(log.path, out_dir / "learning_curve.png", keys=keys)
    return {"history": history, "eval": evals, "model": gen.model}


def refuse_sharded_strategies(distributed_type: Any) -> None:
    """Stop before any work when ``accelerate launch`` asks for FSDP or DeepSpeed.

    Sampling runs on the unwrapped module and checkpoints save each parameter as this rank holds it, both right
    under DDP (every rank holds whole weights) and wrong under a strategy that shards parameters or optimiser
    state: a run would sample from shards or save a rank's slice as the model. Until both gather, such a launch
    is an error that says so, not a run that trains or saves the wrong thing.
    """
    name = getattr(distributed_type, "value", str(distributed_type))
    if name in ("FSDP", "DEEPSPEED", "MEGATRON_LM"):
        raise NotImplementedError(
            f"GRPO runs under DDP (accelerate launch --multi_gpu, or --cpu with several processes); "
            f"accelerate asked for {name}, whose sharded parameters or optimiser state this trainer's sampling "
            "and checkpoints do not gather yet. Launch without --use_fsdp / --use_deepspeed."
        )


def _accelerator(config: GRPOConfig) -> Any:
    """This run's ``Accelerator``, with its own mixed precision (``config.mixed_precision``).

    accelerate keeps one ``AcceleratorState`` per process and a new ``Accelerator`` inherits its precision: a run
    after TRL's trainer in the same process trained under TRL's bf16 autocast (2.7x the CPU time, other numbers).
    That state is dropped when it disagrees; the process-group state (``PartialState``) is kept.
    """
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    wanted = config.mixed_precision or os.environ.get("ACCELERATE_MIXED_PRECISION", "no")
    if AcceleratorState._shared_state and AcceleratorState().mixed_precision != wanted:
        AcceleratorState._reset_state()
    return Accelerator(cpu=config.device == "cpu", mixed_precision=wanted)


def update(
    config: GRPOConfig,
    acc: Any,
    model: Any,
    gen: Any,
    ref_model: Any,
    optimizer: Any,
    samples: list[Sample],
    untempered: bool,
    measure_variance: bool = False,
    sft_mix: SFTMix | None = None,
) -> dict[str, float]:
    """``epochs`` passes of ``mini_batches`` AdamW updates over ``samples``; returns mean statistics, and with
    ``measure_variance`` the policy-gradient variance of the samples' groups before the first update. With
    ``sft_mix`` each update's gradient also holds ``config.sft_mix_coef`` times the answer NLL of
    ``config.sft_mix_batch`` fresh samples from it (``sft_mix_loss`` in the statistics, unscaled)."""
    if not samples:
        return {"loss": 0.0, "clip_frac": 0.0, "kl": 0.0, "ratio_mean": 1.0, "entropy": float("nan")}
    images = [[s.image] for s in samples] if samples[0].image is not None and gen.supports_images else None

    def encode(rows: list[int]) -> Any:
        return encode_batch(gen, [samples[r].prompt for r in rows], [samples[r].token_ids for r in rows],
                            [images[r] for r in rows] if images else None)  # fmt: skip

    full = encode(list(range(len(samples))))
    # Text batches are tokenised once and sliced by row; image tensors do not slice by sample, so a VLM's
    # mini-batches are encoded afresh.
    rows_of = encode if images else full.select
    t_max = full.completion_ids.shape[1]
    chunk = config.logprob_chunk_size
    # Micro-batch costs in padded tokens: a text slice keeps the full batch's width, a re-encoded VLM batch
    # pads to its own longest prompt and completion.
    prompt_lens = full.inputs["attention_mask"][:, : full.prompt_len].sum(-1).tolist()
    comp_lens = [len(s.token_ids) for s in samples]
    width = None if images else (full.prompt_len, t_max)

    def micro(rows: list[int]) -> list[list[int]]:
        return split_by_tokens(rows, prompt_lens, comp_lens, config.micro_batch_tokens, width)

    def no_grad_logprobs(policy: Any) -> torch.Tensor:
        """``(B, T)`` log-probs of all samples under ``policy``, micro-batch by micro-batch."""
        out = torch.zeros((len(samples), t_max), device=full.completion_ids.device)
        with torch.no_grad():
            for rows in micro(list(range(len(samples)))):
                mb = full if len(rows) == len(samples) else rows_of(rows)
                lp = completion_logprobs(policy, mb, config.temperature, chunk_size=chunk)[0]
                out[rows, : lp.shape[1]] = lp
        return out

    # Old log-probs: the sampler's own when it drew from softmax(logits) untouched, else recomputed. vLLM's are
    # never the old log-probs (its kernels are not the trainer's, so the ratio would not start at 1); they are
    # compared with the recomputed ones instead (trainers.sampler_stats).
    if untempered and config.decoder != "vllm" and all(s.logprobs is not None for s in samples):
        old = torch.zeros((len(samples), t_max), device=full.completion_ids.device)  # (B, T)
        for i, s in enumerate(samples):
            old[i, : len(s.logprobs)] = torch.as_tensor(s.logprobs)  # type: ignore[arg-type]
    else:
        old = no_grad_logprobs(gen.model)  # (B, T)
    mismatch = {}
    if config.decoder == "vllm" and all(s.logprobs is not None for s in samples):
        sampled = padded_logprobs([s.logprobs for s in samples], t_max, old.device)  # type: ignore[misc]
        mismatch = logprob_mismatch(sampled, old, full.completion_mask)
    ref = None
    if config.beta > 0:
        if config.lora:
            with gen.model.disable_adapter():  # the LoRA reference: the frozen base model
                ref = no_grad_logprobs(gen.model)
        else:
            ref = no_grad_logprobs(ref_model)
    adv = torch.zeros((len(samples), t_max), device=old.device)  # (B, T): per-sequence values broadcast
    for i, s in enumerate(samples):
        a = torch.as_tensor(np.asarray(s.advantage, dtype=np.float32), device=old.device)
        adv[i, : len(s.token_ids)] = a
    model.train()
    # Measured before the first update, at the sampling policy; logged as is, not averaged over the updates.
    variance = _group_gradient_variance(config, gen, rows_of, samples, adv) if measure_variance else {}
    sums: dict[str, float] = {}
    n_updates = 0
    size = math.ceil(len(samples) / config.mini_batches)
    for _ in range(config.epochs):
        perm = torch.randperm(len(samples)).tolist()
        for k in range(0, len(samples), size):
            rows = perm[k : k + size]
            # Gradient accumulation over micro-batches: each micro-batch's loss is weighted by its share of the
            # mini-batch's normaliser (masked tokens for token-mean, sequences otherwise), so the summed
            # gradients equal the gradient of the mini-batch's loss taken in one pass.
            n_tok = sum(comp_lens[r] for r in rows)
            parts = micro(rows)
            optimizer.zero_grad(set_to_none=True)
            st_sum: dict[str, float] = {}
            loss_sum, ent_sum = 0.0, 0.0
            if sft_mix is not None:  # PPO-ptx's term (Ouyang et al. 2022, eq. 2); DDP syncs at the last backward below
                mix = sft_mix(config.sft_mix_batch, gen)
                eos = gen.tokenizer.eos_token_id
                answers = [gen.tokenizer(m.answer, add_special_tokens=False)["input_ids"] + [eos] for m in mix]
                with acc.no_sync(model):
                    mixed = sft_backward(model, gen, [m.prompt for m in mix], answers, scale=config.sft_mix_coef)
                st_sum["sft_mix_loss"] = mixed["loss"]
            for j, mrows in enumerate(parts):
                mb = rows_of(mrows)
                t = mb.completion_ids.shape[1]
                logp, ent = completion_logprobs(model, mb, config.temperature, with_entropy=True, chunk_size=chunk)
                loss, st = grpo_loss(
                    logp, old[mrows, :t], adv[mrows, :t], mb.completion_mask,
                    eps_low=config.eps_low, eps_high=config.eps_high, beta=config.beta,
                    ref_logp=ref[mrows, :t] if ref is not None else None,
                    loss_agg=config.loss_agg, max_len=config.max_new_tokens,
                )  # fmt: skip
                m_tok = sum(comp_lens[r] for r in mrows)
                share = m_tok / n_tok if config.loss_agg == "token-mean" else len(mrows) / len(rows)
                if len(parts) > 1:
                    loss = loss * share
                # DDP averages gradients once, after the last micro-batch's backward.
                with acc.no_sync(model) if j < len(parts) - 1 else contextlib.nullcontext():
                    acc.backward(loss)
                loss_sum += float(loss.detach())
                ent_sum += float(ent[mb.completion_mask.bool()].sum()) if ent is not None else float("nan")
                for key, v in st.items():  # token-weighted, as the statistics are means over tokens
                    st_sum[key] = st_sum.get(key, 0.0) + v * m_tok / n_tok
            if config.max_grad_norm > 0:
                acc.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            optimizer.step()
            st_sum["entropy"] = ent_sum / n_tok
            st_sum["loss"] = loss_sum
            for key, v in st_sum.items():
                sums[key] = sums.get(key, 0.0) + v
            n_updates += 1
    model.eval()
    return {**{k: v / n_updates for k, v in sums.items()}, **variance, **mismatch}


def _group_gradient_variance(
    config: GRPOConfig, gen: Any, rows_of: Any, samples: list[Sample], adv: torch.Tensor
) -> dict[str, float]:
    """:func:`gradient_variance` of this step's groups at the sampling policy (before any update); ``{}`` with fewer
    than 2 groups. ``torch.autograd.grad`` leaves the parameters' ``.grad`` untouched."""
    params = [p for p in gen.model.parameters() if p.requires_grad]
    by_group: dict[int, list[int]] = {}
    for i, s in enumerate(samples):
        by_group.setdefault(s.group, []).append(i)
    if len(by_group) < 2:
        return {}

    def losses() -> Iterable[torch.Tensor]:
        for rows in by_group.values():
            mb = rows_of(rows)
            t = mb.completion_ids.shape[1]
            logp = completion_logprobs(gen.model, mb, config.temperature)[0]  # (b, T)
            # Ratio 1 (old = logp, detached): the loss's gradient is this group's policy-gradient estimate.
            loss, _ = grpo_loss(
                logp, logp.detach(), adv[rows, :t], mb.completion_mask, eps_low=config.eps_low,
                eps_high=config.eps_high, loss_agg=config.loss_agg, max_len=config.max_new_tokens,
            )  # fmt: skip
            yield loss

    return gradient_variance(losses(), params)
