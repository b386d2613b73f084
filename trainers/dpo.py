"""DPO on preference pairs, one file, top to bottom (Rafailov et al. 2023; MobileIPL's T-DPO, seed 003 sec. 3.3).

One optimiser step over ``B`` pairs ``(x, y+, y-)``:

    lp+, lp- = sum_t log pi_theta(y_t | x, y_<t) over the chosen / rejected completion tokens   # (B,), (B,)
    rp+, rp- = the same under pi_ref (a frozen copy, or the LoRA model with its adapter disabled)  # (B,)
    z        = beta * ((lp+ - rp+) - (lp- - rp-))                                                 # (B,)
    L        = mean_b -log sigmoid(z)  +  c * mean_b ( -lp+ / |y+| )                              # DPO + SFT term

The second term is MobileIPL's SFT loss on the chosen side (sec. 3.3, "updates through the above data-pairs,
SFT loss, and CoaT-DPO loss"; ``c = sft_weight``, 0 for plain DPO). ``beta * (lp - rp)`` is each side's implicit
reward; the logs carry their means, the margin and the accuracy (share of pairs with ``z > 0``).

Pair files speak TRL's preference format: ``prompt`` / ``chosen`` / ``rejected``, standard (strings) or
conversational (lists of chat messages), with an ``images`` column of screenshots for a VLM. :func:`export_pairs`
writes Parquet (images embedded) that ``datasets.load_dataset("parquet", ...)`` reads; :func:`load_pairs` reads
TRL-format Parquet, JSON lines or a ``save_to_disk`` folder. Pairs from env episodes may carry the episode's
``seed`` and ``task`` (extra columns TRL ignores): the training split a held-out split is checked against.

Held-out evaluation: ``eval_seeds`` (task success of the policy rolled out in ``env_id``,
:class:`trainers.heldout.EnvHeldOut`) and ``eval_data`` (the DPO statistics of held-out pairs) are logged before the
first step, every ``eval_every`` steps and after the last.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from trainers.checkpoint import clean_checkpoint_dir, save_checkpoint
from trainers.config_io import ConfigError
from trainers.dpo_config import DPOConfig
from trainers.heldout import EVAL_KEYS, EnvHeldOut, check_no_overlap, due
from trainers.logprobs import completion_logprobs, encode_batch, prompt_lengths, split_by_tokens
from trainers.optim import adamw_with_warmup, epoch_rows, resume_latest, step_accumulated
from trainers.policy_setup import apply_lora, enable_activation_checkpointing, resolve_output_format
from trainers.precision import merge_lora
from trainers.run_log import RunLog, plot_curve


class PairFormatError(ValueError):
    """A pair file is not in TRL's preference format; the message names the column or row to fix."""


@dataclass
class PairSample:
    """One preference pair.

    Attributes:
        prompt: the shared prefix: a chat conversation (list of messages, TRL's conversational format) or a
            prompt text with the chat template already applied (standard format).
        chosen: the preferred completion text.
        rejected: the dispreferred completion text.
        images: screenshots (H, W, 3 uint8 arrays or PIL images) the prompt's image parts refer to.
        kind: where the pair came from (``"beta"`` / ``"gamma"`` for MobileIPL trees), not exported.
        seed: the env reset seed of the episode the pair came from, when it came from one (exported).
        task: that episode's task name, when the env has several (exported).
    """

    prompt: str | list[dict[str, Any]]
    chosen: str
    rejected: str
    images: list[Any] = field(default_factory=list)
    kind: str = ""
    seed: int | None = None
    task: str | None = None


# ----- the loss -------------------------------------------------------------------------------------------


def dpo_loss(
    chosen_logps: torch.Tensor,
    rejected_logps: torch.Tensor,
    ref_chosen_logps: torch.Tensor,
    ref_rejected_logps: torch.Tensor,
    beta: float,
    sft_weight: float = 0.0,
    chosen_lengths: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The sigmoid DPO loss (Rafailov et al. 2023, Eq. 7) plus MobileIPL's SFT term (seed 003, sec. 3.3).

    Args:
        chosen_logps, rejected_logps: ``(B,)`` summed completion log-probs under the policy (nats).
        ref_chosen_logps, ref_rejected_logps: ``(B,)`` the same under the reference.
        beta: DPO temperature.
        sft_weight: ``c`` of ``c * mean_b(-lp+ / |y+|)``; 0 turns it off.
        chosen_lengths: ``(B,)`` chosen token counts (for the per-token SFT mean); required when
            ``sft_weight > 0``.

    Returns:
        The scalar loss and statistics: ``dpo_loss``, ``sft_loss``, ``reward_chosen``, ``reward_rejected``,
        ``reward_margin``, ``accuracy``, ``logp_margin``.

    >>> z = torch.zeros(1)
    >>> round(float(dpo_loss(z, z, z, z, beta=0.1)[0]), 4)  # -log sigmoid(0) = log 2
    0.6931
    """
    reward_c = beta * (chosen_logps - ref_chosen_logps)  # (B,)
    reward_r = beta * (rejected_logps - ref_rejected_logps)  # (B,)
    z = reward_c - reward_r  # (B,)
    dpo = -F.logsigmoid(z).mean()
    sft = torch.zeros((), dtype=dpo.dtype, device=dpo.device)
    if sft_weight > 0:
        if chosen_lengths is None:
            raise ValueError("sft_weight > 0 needs chosen_lengths (the chosen completions' token counts)")
        sft = (-chosen_logps / chosen_lengths.clamp(min=1)).mean()
    loss = dpo + sft_weight * sft
    with torch.no_grad():
        stats = {
            "dpo_loss": float(dpo),
            "sft_loss": float(sft),
            "reward_chosen": float(reward_c.mean()),
            "reward_rejected": float(reward_r.mean()),
            "reward_margin": float(z.mean()),
            "accuracy": float((z > 0).float().mean()),
            "logp_margin": float((chosen_logps - rejected_logps).mean()),
        }
    return loss, stats


# ----- tokenising and scoring pairs -----------------------------------------------------------------------


def prompt_text(gen: Any, prompt: str | list[dict[str, Any]]) -> str:
    """The prompt as the model reads it: a conversation through the chat template, a string as is."""
    return prompt if isinstance(prompt, str) else gen.prompt_text(prompt)


def completion_ids(gen: Any, text: str) -> list[int]:
    """Token ids of a completion text, closed by the end-of-sequence token (as sampling ends it)."""
    return gen.tokenizer(text, add_special_tokens=False)["input_ids"] + [gen.tokenizer.eos_token_id]


def pair_logps(
    model: Any, gen: Any, pairs: Sequence[PairSample], chunk_size: int = 0
) -> tuple[torch.Tensor, ...]:
    """Summed log-probs of the chosen and rejected completions, ``(B,)`` each, and the chosen lengths ``(B,)``.

    Chosen and rejected go through one forward pass of ``2B`` rows (prompt, then completion); gradients flow
    unless called under ``torch.no_grad``. ``chunk_size``: see :func:`trainers.logprobs.completion_logprobs`.
    """
    prompts = [prompt_text(gen, p.prompt) for p in pairs]
    comps = [completion_ids(gen, p.chosen) for p in pairs] + [completion_ids(gen, p.rejected) for p in pairs]
    images = [list(p.images) for p in pairs] * 2 if gen.supports_images and pairs[0].images else None
    batch = encode_batch(gen, prompts * 2, comps, images)
    logp, _ = completion_logprobs(model, batch, chunk_size=chunk_size)  # (2B, T)
    mask = batch.completion_mask.float()
    seq = (logp * mask).sum(-1)  # (2B,)
    b = len(pairs)
    return seq[:b], seq[b:], mask[:b].sum(-1)


def reference_logps(
    model: Any, gen: Any, ref_model: Any, pairs: Sequence[PairSample], chunk_size: int = 0
) -> tuple[torch.Tensor, ...]:
    """``pair_logps`` under the reference: ``ref_model``, or ``model`` with its LoRA adapter disabled."""
    with torch.no_grad():
        if ref_model is not None:
            return pair_logps(ref_model, gen, pairs, chunk_size)
        with model.disable_adapter():
            return pair_logps(model, gen, pairs, chunk_size)


def pair_micro_batches(gen: Any, pairs: Sequence[PairSample], budget: int) -> list[list[int]]:
    """Indices of ``pairs`` cut into micro-batches of at most ``budget`` padded tokens (0: one part), chosen and
    rejected rows counted together and never separated.

    A micro-batch of pairs ``R`` is encoded as ``2|R|`` rows padded to its longest prompt and longest chosen or
    rejected completion, so it costs ``2 |R| (P + T)``: :func:`trainers.logprobs.split_by_tokens` over pairs, each
    pair's completion length its longer side's, at half the budget.
    """
    rows = list(range(len(pairs)))
    if budget <= 0:
        return [rows]
    prompts = [prompt_text(gen, p.prompt) for p in pairs]
    images = [list(p.images) for p in pairs] if gen.supports_images and pairs[0].images else None
    comp = [max(len(completion_ids(gen, p.chosen)), len(completion_ids(gen, p.rejected))) for p in pairs]
    return split_by_tokens(rows, prompt_lengths(gen, prompts, images), comp, max(1, budget // 2))


def pairs_backward(
    model: Any,
    gen: Any,
    ref_model: Any,
    pairs: Sequence[PairSample],
    beta: float,
    sft_weight: float = 0.0,
    micro_batch_tokens: int = 0,
    logprob_chunk_size: int = 0,
) -> tuple[float, dict[str, float]]:
    """Back-propagate :func:`dpo_loss` of one step's ``pairs`` into the parameters' ``.grad`` (added to what is
    there), micro-batch by micro-batch (:func:`pair_micro_batches`); returns the loss and its statistics.

    The loss and every statistic are means over pairs, so a micro-batch's are weighted by its share of the pairs:
    the summed gradients are the one-pass gradient, and the statistics the one-pass values. The reference's
    log-probs are taken on the same micro-batches, without gradients.
    """
    parts = pair_micro_batches(gen, pairs, micro_batch_tokens)
    loss_sum, sums = 0.0, {}
    for part in parts:
        batch = [pairs[i] for i in part]
        ref_c, ref_r, _ = reference_logps(model, gen, ref_model, batch, logprob_chunk_size)  # (b,), (b,)
        lp_c, lp_r, n_c = pair_logps(model, gen, batch, logprob_chunk_size)  # (b,), (b,), (b,)
        loss, stats = dpo_loss(lp_c, lp_r, ref_c, ref_r, beta, sft_weight, n_c)
        share = len(part) / len(pairs)
        if len(parts) > 1:
            loss = loss * share
        loss.backward()
        loss_sum += float(loss.detach())
        for key, v in stats.items():
            sums[key] = sums.get(key, 0.0) + v * share
    return loss_sum, sums


def pair_margins(
    model: Any, gen: Any, pairs: Sequence[PairSample], batch_size: int = 16, chunk_size: int = 0
) -> np.ndarray:
    """``log pi(y+ | x) - log pi(y- | x)`` of each pair (nats), without gradients; for held-out checks.
    ``chunk_size``: see :func:`trainers.logprobs.completion_logprobs`."""
    out = []
    with torch.no_grad():
        for k in range(0, len(pairs), batch_size):
            c, r, _ = pair_logps(model, gen, pairs[k : k + batch_size], chunk_size)
            out.append((c - r).float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def pair_stats(
    model: Any,
    gen: Any,
    pairs: Sequence[PairSample],
    ref_logps: tuple[torch.Tensor, torch.Tensor],
    beta: float,
    batch_size: int = 16,
    chunk_size: int = 0,
) -> dict[str, float]:
    """:func:`dpo_loss`'s statistics of ``pairs`` under ``model`` against fixed reference log-probs, without
    gradients, prefixed ``eval_`` (``eval_reward_margin``, ``eval_accuracy``, ``eval_logp_margin``,
    ``eval_dpo_loss``); for held-out pairs. The model is put in eval mode and back in the mode it was in.

    Args:
        ref_logps: the reference's summed chosen and rejected log-probs, ``(P,)`` each (:func:`reference_logps`,
            computed once: the reference is frozen).
        chunk_size: see :func:`trainers.logprobs.completion_logprobs`.
    """
    training = bool(model.training)
    model.eval()
    chosen, rejected = [], []
    try:
        with torch.no_grad():
            for k in range(0, len(pairs), batch_size):
                c, r, _ = pair_logps(model, gen, pairs[k : k + batch_size], chunk_size)
                chosen.append(c.float())
                rejected.append(r.float())
    finally:
        model.train(training)
    _, stats = dpo_loss(torch.cat(chosen), torch.cat(rejected), ref_logps[0], ref_logps[1], beta)
    return {f"eval_{k}": stats[k] for k in ("reward_margin", "accuracy", "logp_margin", "dpo_loss")}


def split_check(pairs: Sequence[PairSample], eval_seeds: Sequence[int], held_pairs: Sequence[PairSample],
                gen: Any = None, env_id: str = "") -> None:  # fmt: skip
    """Refuse a held-out split that overlaps the training pairs (:class:`trainers.heldout.SplitOverlapError`).

    * ``eval_seeds`` against the seeds the training pairs record; a training pair without one is a
      :class:`ConfigError` (the split cannot be checked).
    * ``held_pairs`` against the training pairs: the same prompt (the text the model reads; ``gen`` renders chat
      prompts, else they are compared as messages), or the same recorded seed.
    """
    if eval_seeds:
        unseeded = sum(p.seed is None for p in pairs)
        if unseeded:
            raise ConfigError(
                f"{unseeded} of {len(pairs)} training pairs record no env seed, so eval_seeds cannot be checked "
                "against the training split: export pairs from env episodes with their seed (PairSample.seed, "
                "the 'seed' column export_pairs writes)"
            )
        check_no_overlap((p.seed for p in pairs), eval_seeds, f"{env_id} seeds".strip(),
                         "the training pairs came from these seeds; pick eval_seeds outside them")  # fmt: skip
    if held_pairs:

        def key(p: PairSample) -> str:
            return prompt_text(gen, p.prompt) if gen is not None else repr(p.prompt)

        check_no_overlap(map(key, pairs), map(key, held_pairs), "pair prompts",
                         "eval_data must hold pairs on prompts never trained on")  # fmt: skip
        check_no_overlap((p.seed for p in pairs if p.seed is not None),
                         (p.seed for p in held_pairs if p.seed is not None), "pair seeds",
                         "eval_data's pairs must come from env seeds the training pairs did not")  # fmt: skip


# ----- the optimisation loop, shared with MobileIPL's rounds --------------------------------------------


def optimise_pairs(
    config: Any,
    gen: Any,
    ref_model: Any,
    pairs: Sequence[PairSample],
    out_dir: str | Path,
    resume: bool = False,
    desc: str = "dpo",
    *,
    held_out: Callable[[int], dict[str, Any]] | None = None,
    eval_every: int = 0,
) -> list[dict[str, Any]]:
    """``epochs`` passes of AdamW over ``pairs`` in batches, with checkpoints, a JSONL log and resume.

    Args:
        config: a :class:`DPOConfig` or ``IPLConfig`` (``beta``, ``sft_weight``, ``epochs``, ``batch_size``,
            ``learning_rate``, ``weight_decay``, ``warmup_ratio``, ``max_grad_norm``, ``seed``, ``save_every``,
            ``progress``, ``micro_batch_tokens``, ``logprob_chunk_size``).
        gen: the :class:`agents.hf_agent.HFGenerator` whose ``model`` trains.
        ref_model: the frozen reference, or ``None`` for a LoRA model (adapter disabled = reference).
        pairs: the training pairs.
        out_dir: the run folder (``metrics.jsonl``, ``checkpoint-*``).
        resume: continue from the latest checkpoint in ``out_dir``.
        desc: progress-bar label.
        held_out: ``held_out(step)`` evaluates the policy and returns a record (``step`` and metrics); it is called
            before the first step (on a fresh run), every ``eval_every`` steps and after the last, and must leave
            torch's random state and the model's mode as it found them. Its metrics join the step's record.
        eval_every: see ``held_out`` (0: only before the first step and after the last).

    Returns:
        One record per optimiser step run here.
    """
    model = gen.model
    out_dir = Path(out_dir)
    steps_per_epoch = -(-len(pairs) // config.batch_size)
    total = steps_per_epoch * config.epochs
    optimizer, scheduler = adamw_with_warmup(
        model, config.learning_rate, config.weight_decay, config.warmup_ratio, total
    )
    clean_checkpoint_dir(out_dir)  # a killed save's temp folder is full checkpoint size
    start = resume_latest(out_dir, model, optimizer, scheduler) if resume else 0
    # IPL's rounds call this loop with an IPLConfig, which has no report_to: their logs stay JSONL.
    log = RunLog(out_dir / "metrics.jsonl", start, getattr(config, "report_to", []), "dpo", config.to_dict())
    if held_out is not None and start == 0:
        log.write(held_out(0))  # the untrained policy: the baseline that "learned" is measured against
    bar = None
    if config.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=start, desc=desc, unit="step")
    history = []
    model.train()
    for step in range(start, total):
        epoch, rows = epoch_rows(step, steps_per_epoch, config.batch_size, len(pairs), config.seed)
        optimizer.zero_grad(set_to_none=True)
        loss, stats = pairs_backward(model, gen, ref_model, [pairs[r] for r in rows], config.beta,
                                     config.sft_weight, config.micro_batch_tokens, config.logprob_chunk_size)  # fmt: skip
        step_accumulated(model, optimizer, scheduler, config.max_grad_norm)
        record = {"step": step + 1, "epoch": epoch, "loss": loss, **stats, "lr": scheduler.get_last_lr()[0]}
        if held_out is not None and due(step + 1, eval_every, total):
            record.update({k: v for k, v in held_out(step + 1).items() if k != "step"})
        history.append(record)
        log.write(record)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{record['loss']:.3f}", acc=f"{record['accuracy']:.2f}")
        if config.save_every and (step + 1) % config.save_every == 0:
            state = {"data_position": (step + 1) * config.batch_size, "config": config.to_dict()}
            processor = getattr(gen, "processor", gen.tokenizer)
            save_checkpoint(out_dir, step + 1, model, optimizer, scheduler, state, processor=processor)
    if bar is not None:
        bar.close()
    log.close()
    model.eval()
    return history


def load_policy(config: Any, model_path: str | Path) -> tuple[Any, Any]:
    """The policy generator (LoRA-wrapped when ``config.lora``) and the frozen reference (``None`` under LoRA,
    where the adapter disabled is the reference), both loaded from ``model_path``."""
    from agents.hf_agent import HFGenerator, load_model

    dtype = getattr(torch, config.dtype) if config.dtype else None
    gen = HFGenerator(str(model_path), device=config.device, dtype=dtype)
    if config.lora:
        gen.model = apply_lora(gen.model, config.lora_r, config.lora_alpha, config.lora_target_modules)
    if config.gradient_checkpointing:
        enable_activation_checkpointing(gen.model)
    if config.lora:
        return gen, None
    ref = load_model(str(model_path), gen.supports_images, gen.model.dtype, False).to(gen.device).eval()
    ref.requires_grad_(False)
    return gen, ref


def save_policy(gen: Any, path: str | Path, merge_dtype: str = "model", measure_dtype: Any = None) -> Path:
    """Save the policy as a plain model folder (a LoRA adapter is merged in first, so the next round or user
    loads it like any checkpoint).

    ``merge_dtype`` (:func:`trainers.precision.merge_lora`): ``"model"`` merges into the weights' own dtype,
    ``"float32"`` merges exactly and saves fp32 weights. What a merge into the model's dtype loses is written
    beside the weights, ``lora_merge.json`` (``merge_rel_err``: the fraction of the adapter's update lost; in
    ``measure_dtype``, default the weights' own).
    """
    model = gen.model
    errors = None
    if hasattr(model, "merge_and_unload"):
        model, errors = merge_lora(model, merge_dtype, measure_dtype)
        gen.model = model
    model.save_pretrained(path)
    gen.processor.save_pretrained(path)
    if errors is not None:
        (Path(path) / "lora_merge.json").write_text(json.dumps({"merge_dtype": merge_dtype, **errors}))
    return Path(path)


def train_dpo(config: DPOConfig) -> dict[str, Any]:
    """Run DPO on ``config.data`` as configured; returns ``{"history": [per-step records], "eval": [held-out
    records], "model": ...}``.

    With ``eval_seeds`` and / or ``eval_data`` the held-out records (``step`` and ``eval_*`` metrics) come before the
    first step, every ``eval_every`` steps and after the last; those after a step are also in its history record.

    Raises:
        SplitOverlapError: the held-out seeds or pairs overlap the training pairs (before any model loads, except
            for a chat-prompt check, which needs the tokenizer's template).
    """
    from agents.lm_agent import resolve_format

    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    out_dir = Path(config.output_dir)
    pairs = load_pairs(config.data)
    eval_seeds = config.eval_seed_list
    held_pairs = load_pairs(config.eval_data) if config.eval_data else []
    split_check(pairs, eval_seeds, held_pairs, env_id=config.env_id)
    gen, ref = load_policy(config, config.model)
    if held_pairs:
        split_check(pairs, [], held_pairs, gen)  # chat prompts compared as the model reads them
    evals: list[dict[str, Any]] = []
    env_eval = None
    if eval_seeds:
        fmt = resolve_format(resolve_output_format(config.output_format, config.format_kwargs))
        env_eval = EnvHeldOut(gen, config.env_id, config.env_kwargs, eval_seeds, config.eval_samples,
                              fmt if fmt is not None else "auto", temperature=config.eval_temperature,
                              max_new_tokens=config.eval_max_new_tokens, max_steps=config.eval_max_steps,
                              num_envs=config.eval_num_envs, swap=config.eval_swap)  # fmt: skip
    ref_held = None
    chunk = config.logprob_chunk_size
    if held_pairs:
        refs = [reference_logps(gen.model, gen, ref, held_pairs[k : k + 16], chunk)
                for k in range(0, len(held_pairs), 16)]  # fmt: skip
        ref_held = (torch.cat([r[0].float() for r in refs]), torch.cat([r[1].float() for r in refs]))

    def held_out(step: int) -> dict[str, Any]:
        row = env_eval(step) if env_eval is not None else {"step": step}
        if ref_held is not None:
            row.update(pair_stats(gen.model, gen, held_pairs, ref_held, config.beta, chunk_size=chunk))
        evals.append(row)
        return row

    evaluating = env_eval is not None or ref_held is not None
    history = optimise_pairs(config, gen, ref, pairs, out_dir, config.resume,
                             held_out=held_out if evaluating else None, eval_every=config.eval_every)  # fmt: skip
    if env_eval is not None:
        env_eval.close()
    save_policy(gen, out_dir / "final")
    if config.plot:
        margin = ("reward_margin", "eval_reward_margin") if held_pairs else "reward_margin"
        accuracy = ("accuracy", "eval_accuracy") if held_pairs else "accuracy"
        keys: tuple[Any, ...] = ("loss", margin, accuracy) + ((EVAL_KEYS,) if eval_seeds else ())
        plot_curve(out_dir / "metrics.jsonl", out_dir / "learning_curve.png", keys=keys)
    return {"history": history, "eval": evals, "model": gen.model}


# ----- TRL-format pair files ------------------------------------------------------------------------------


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [{"type": p.get("type"), "text": p.get("text")} for p in content]


def export_pairs(pairs: Sequence[PairSample], path: str | Path) -> Path:
    """Write ``pairs`` as a TRL preference dataset in Parquet: ``prompt``, ``chosen``, ``rejected`` (and
    ``images``, embedded PNGs, when any pair has screenshots).

    Conversational prompts export as TRL's conversational format (``chosen`` / ``rejected`` as one assistant
    message); when any message has image parts every content becomes a list of parts, so Arrow sees one type.
    """
    import datasets

    if not pairs:
        raise PairFormatError("no pairs to export")
    conversational = not isinstance(pairs[0].prompt, str)
    with_images = any(p.images for p in pairs)
    rows: dict[str, list[Any]] = {"prompt": [], "chosen": [], "rejected": []}
    for p in pairs:
        if conversational != (not isinstance(p.prompt, str)):
            raise PairFormatError("pairs mix string and conversational prompts; export them as two files")
        if conversational:
            prompt = [{"role": m["role"], "content": _parts(m["content"]) if with_images else m["content"]}
                      for m in p.prompt]  # type: ignore[union-attr]  # fmt: skip
            rows["prompt"].append(prompt)
            for side in ("chosen", "rejected"):
                text = getattr(p, side)
                rows[side].append([{"role": "assistant", "content": _parts(text) if with_images else text}])
        else:
            rows["prompt"].append(p.prompt)
            rows["chosen"].append(p.chosen)
            rows["rejected"].append(p.rejected)
    # Pairs from env episodes record where they came from (extra columns; TRL's loaders ignore them).
    for name in ("seed", "task"):
        if any(getattr(p, name) is not None for p in pairs):
            rows[name] = [getattr(p, name) for p in pairs]
    ds = datasets.Dataset.from_dict(rows)
    if with_images:
        # Arrow cannot infer a type for PIL images: hand it PNG bytes, then declare the column as images.
        imgs = [[{"bytes": _png(i), "path": None} for i in p.images] for p in pairs]
        ds = ds.add_column("images", imgs).cast_column("images", datasets.Sequence(datasets.Image()))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.to_parquet(str(path))
    return path


def _png(image: Any) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    (image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image))).save(buf, format="PNG")
    return buf.getvalue()


def _text_of(value: Any, column: str, row: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        content = value[-1].get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(str(p.get("text") or "") for p in content if p.get("type") == "text")
    raise PairFormatError(f"row {row}: {column!r} must be a string or a list of chat messages, got {value!r:.80}")


def load_pairs(source: Any) -> list[PairSample]:
    """Pairs from a TRL preference dataset: a ``datasets.Dataset``, or a path to ``.parquet``, ``.json`` /
    ``.jsonl`` or a ``save_to_disk`` folder.

    Raises:
        PairFormatError: a missing column, a bad row, or an unreadable path.
    """
    import datasets

    ds = source
    if not isinstance(source, datasets.Dataset):
        path = Path(source)
        if path.is_dir():
            ds = datasets.load_from_disk(str(path))
        elif path.suffix in (".parquet", ".json", ".jsonl"):
            kind = "parquet" if path.suffix == ".parquet" else "json"
            ds = datasets.load_dataset(kind, data_files=str(path), split="train")
        else:
            raise PairFormatError(f"{str(path)!r}: give a .parquet, .json / .jsonl file or a save_to_disk folder")
    missing = {"prompt", "chosen", "rejected"} - set(ds.column_names)
    if missing:
        raise PairFormatError(f"pair data lacks column(s) {sorted(missing)}; TRL's format has prompt, chosen, rejected")
    if "images" in ds.column_names and isinstance(source, (str, Path)):
        feature = ds.features["images"]
        if not isinstance(getattr(feature, "feature", None), datasets.Image):
            base = Path(source).parent  # JSON lines name image files relative to themselves
            ds = ds.map(lambda r: {"images": [str(base / i) if isinstance(i, str) else i for i in r["images"] or []]})
            ds = ds.cast_column("images", datasets.Sequence(datasets.Image()))
    out = []
    for i, row in enumerate(ds):
        prompt = row["prompt"]
        if not isinstance(prompt, (str, list)):
            raise PairFormatError(f"row {i}: 'prompt' must be a string or a list of chat messages")
        if isinstance(prompt, list):
            # Arrow fills absent struct fields with None; drop them so chat templates see TRL's shape.
            prompt = [{"role": m["role"], "content": m["content"] if isinstance(m["content"], str)
                       else [{k: v for k, v in part.items() if v is not None} for part in m["content"]]}
                      for m in prompt]  # fmt: skip
        seed = row.get("seed")
        if seed is not None and not (isinstance(seed, int) and not isinstance(seed, bool)):
            raise PairFormatError(f"row {i}: 'seed' must be an integer env seed or null, got {seed!r}")
        task = row.get("task")
        out.append(PairSample(prompt, _text_of(row["chosen"], "chosen", i), _text_of(row["rejected"], "rejected", i),
                              list(row.get("images") or []), seed=seed, task=task))  # fmt: skip
    return out
