"""SFT / behaviour cloning on saved trajectories, one file, top to bottom.

Every step of every (successful) trajectory becomes one sample: the prompt the policy would see at that
step (the output format's messages for the step's instruction, history and screenshot, through the chat
template) and the answer it should write (the step's recorded model output when there is one, else the
format's rendering of the recorded action). The loss is the negative log-likelihood of the answer tokens
only, the prompt is masked out:

    L = - sum_{b,t} m_bt log pi(y_bt | x_b, y_b,<t) / sum_{b,t} m_bt       # token mean over answer tokens

CORE calls :func:`train_sft` every iteration on the trajectories its verifier accepted.

Held-out evaluation (``eval_seeds``): the training split is the env seeds recorded in the trajectories trained on;
a held-out seed among them is refused before any model loads. Before the first step, every ``eval_every`` steps
and after the last, the policy is rolled out greedily and sampled on the held-out seeds
(:class:`trainers.heldout.EnvHeldOut`) and the success rates join that step's log line.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.lm_agent import resolve_format
from agents.prompts.formats import GuiR1Format, PromptContext, auto_format
from agents.prompts.observation import instruction_of
from gui_envs.schema.actions import Action
from gui_envs.schema.trajectory import Trajectory, load_trajectories
from trainers.checkpoint import clean_checkpoint_dir, save_checkpoint
from trainers.config_io import ConfigError
from trainers.heldout import EVAL_KEYS, EnvHeldOut, check_no_overlap, due
from trainers.logprobs import completion_logprobs, encode_batch, prompt_lengths, split_by_tokens
from trainers.optim import adamw_with_warmup, epoch_rows, resume_latest, step_accumulated
from trainers.policy_setup import apply_lora, enable_activation_checkpointing, resolve_output_format
from trainers.run_log import RunLog, plot_curve
from trainers.sft_config import SFTConfig


class NoSamplesError(ValueError):
    """The trajectory folders hold no step to learn from; the message says why."""


class ReplayError(ValueError):
    """Replaying a trajectory in its env did not reproduce it (another instruction or verdict): the env is not
    deterministic in its seed, or the trajectory was recorded with other env arguments."""


@dataclass
class SFTSample:
    """One (prompt, answer) pair; ``image`` is the step's screenshot for a VLM."""

    prompt: str
    answer: str
    image: Any = None


def answer_text(fmt: Any, action: Action, observation: dict[str, Any]) -> str:
    """What the policy should write for ``action`` in format ``fmt``."""
    if hasattr(fmt, "answer_text"):
        return fmt.answer_text(action, observation)
    if isinstance(fmt, GuiR1Format):
        return f"<answer>{json.dumps([action.to_gui_r1()])}</answer>"
    return action.to_json()


def replay_observations(env: Any, traj: Trajectory) -> list[dict[str, Any]]:
    """The observation each step of ``traj`` answered, rebuilt by resetting ``env`` at the trajectory's seed (with
    its task as the ``task`` reset option, where the env declares one) and stepping its recorded actions.

    Replay stops at the first step without an action (the env cannot be stepped past it).

    Raises:
        ReplayError: no recorded seed, or the replay shows another instruction or ends with another verdict.
    """
    if traj.seed is None:
        raise ReplayError(f"trajectory {traj.id} has no recorded seed: it cannot be replayed")
    # Only envs that declare a task option get one (ClickBox records its one task's name but takes no options).
    takes_task = "task" in (getattr(type(env.unwrapped), "reset_options", None) or {})
    obs, _ = env.reset(seed=traj.seed, options={"task": traj.task} if traj.task and takes_task else None)
    if instruction_of(obs, traj.instruction) != traj.instruction:
        raise ReplayError(
            f"trajectory {traj.id} (seed {traj.seed}) replays as {instruction_of(obs)!r}, recorded as "
            f"{traj.instruction!r}: check env_id and env_kwargs against the env that recorded it"
        )
    out = []
    info: dict[str, Any] = {}
    for step in traj.steps:
        out.append(dict(obs))
        if step.action is None:
            return out
        obs, _, terminated, truncated, info = env.step(step.action)
        if terminated or truncated:
            break
    if traj.success is not None and "success" in info and bool(info["success"]) != bool(traj.success):
        raise ReplayError(
            f"trajectory {traj.id} (seed {traj.seed}) replays to success={bool(info['success'])}, recorded "
            f"success={traj.success}: the env is not deterministic in its seed or ran with other arguments"
        )
    return out


def build_samples(
    trajectories: list[Trajectory],
    generator: Any,
    fmt: Any,
    successful_only: bool,
    *,
    observations: list[list[dict[str, Any]]] | None = None,
) -> list[SFTSample]:
    """The SFT samples of ``trajectories``, in order (steps without an action or output are skipped).

    ``fmt``: an output format, or ``None`` to pick one per observation (:func:`auto_format`).
    ``observations``: per trajectory, the observation of each step (:func:`replay_observations`); without it a
    step's observation is what the file keeps (instruction, screenshot, observation text).
    """
    out = []
    for i, traj in enumerate(trajectories):
        if successful_only and not traj.success:
            continue
        history: list[str] = []
        for j, step in enumerate(traj.steps):
            if observations is not None:
                if j >= len(observations[i]):
                    break
                obs = {**observations[i][j], "instruction": traj.instruction}
            else:
                obs = {"instruction": traj.instruction}
                if step.screenshot is not None:
                    obs["screenshot"] = step.screenshot
                if step.observation_text:
                    obs["text"] = step.observation_text
            f = fmt if fmt is not None else auto_format(obs)
            shot = obs.get("screenshot")
            with_image = bool(getattr(generator, "supports_images", False)) and shot is not None
            ctx = PromptContext(obs, traj.instruction, list(history), with_image)
            if step.output_text:
                answer = step.output_text
            elif step.action is not None:
                answer = answer_text(f, step.action, obs)
            else:
                continue
            out.append(SFTSample(generator.prompt_text(f.messages(ctx)), answer, shot if with_image else None))
            history.append(f.describe(step.action) if step.action is not None else "invalid action")
    return out


def config_samples(config: SFTConfig, trajectories: list[Trajectory], generator: Any) -> list[SFTSample]:
    """The samples :func:`train_sft` makes of ``trajectories`` by default: :func:`build_samples` in the config's
    output format, on observations replayed in the config's env when ``replay_observations`` is set."""
    import gymnasium as gym

    fmt = resolve_format(resolve_output_format(config.output_format, config.format_kwargs))
    observations = None
    if config.replay_observations:
        env = gym.make(config.env_id, **config.env_kwargs)
        try:
            observations = [replay_observations(env, t) for t in trajectories]
        finally:
            env.close()
    if not config.balance_tasks:
        return build_samples(trajectories, generator, fmt, config.successful_only, observations=observations)
    by_task: dict[str, list[int]] = {}
    for i, traj in enumerate(trajectories):
        by_task.setdefault(str(traj.task), []).append(i)
    per_task = [
        build_samples([trajectories[i] for i in rows], generator, fmt, config.successful_only,
                      observations=None if observations is None else [observations[i] for i in rows])
        for rows in by_task.values()
    ]  # fmt: skip
    return balanced(per_task)


def balanced(per_task: list[list[SFTSample]]) -> list[SFTSample]:
    """Every task's samples cycled up to the largest task's count (``SFTConfig.balance_tasks``), task by task.

    >>> [s.answer for s in balanced([[SFTSample("p", "a"), SFTSample("p", "b")], [SFTSample("p", "c")]])]
    ['a', 'b', 'c', 'c']
    """
    largest = max((len(samples) for samples in per_task), default=0)
    return [samples[k % len(samples)] for samples in per_task if samples for k in range(largest)]


def training_seeds(trajectories: list[Trajectory], env_id: str) -> list[int]:
    """The training split: the reset seeds recorded in ``trajectories`` that ran in ``env_id`` (or name no env).

    Raises:
        ConfigError: one of them has no recorded seed, so a held-out split cannot be checked against it.
    """
    mine = [t for t in trajectories if t.env_id in (None, env_id)]
    unseeded = [t.id for t in mine if t.seed is None]
    if unseeded:
        raise ConfigError(
            f"{len(unseeded)} training trajectories (e.g. {unseeded[0]}) record no seed, so eval_seeds cannot be "
            "checked against the training split: record demonstrations with seeds (guigym run --record does)"
        )
    return sorted({int(t.seed) for t in mine if t.seed is not None})


def sft_backward(
    model: Any,
    gen: Any,
    prompts: list[str],
    answers: list[list[int]],
    images: list[list[Any]] | None = None,
    micro_batch_tokens: int = 0,
    logprob_chunk_size: int = 0,
    scale: float = 1.0,
) -> dict[str, float]:
    """Back-propagate one step's token-mean NLL over the answer tokens (the module docstring's ``L``), times
    ``scale``, into the parameters' ``.grad`` (added to what is there), micro-batch by micro-batch; returns ``loss``
    (unscaled) and ``token_acc`` (share of answer tokens given probability > 0.5).

    With ``micro_batch_tokens`` > 0 the rows are cut by :func:`trainers.logprobs.split_by_tokens` (each encoded on
    its own) and each micro-batch's summed log-likelihood is divided by the whole batch's answer token count
    ``N``: the summed gradients are the gradient of ``L`` in one pass. ``logprob_chunk_size``: see
    :func:`trainers.logprobs.completion_logprobs`.
    """
    n_tok = sum(len(a) for a in answers)  # N: the denominator of the token mean, over the whole batch
    rows = list(range(len(prompts)))
    if micro_batch_tokens > 0:
        parts = split_by_tokens(rows, prompt_lengths(gen, prompts, images), [len(a) for a in answers],
                                micro_batch_tokens)  # fmt: skip
    else:
        parts = [rows]
    loss_sum, correct = 0.0, 0.0
    for part in parts:
        batch = encode_batch(gen, [prompts[r] for r in part], [answers[r] for r in part],
                             [images[r] for r in part] if images is not None else None)  # fmt: skip
        logp, _ = completion_logprobs(model, batch, chunk_size=logprob_chunk_size)  # (b, T)
        mask = batch.completion_mask.float()
        loss = -(logp * mask).sum() / n_tok  # this micro-batch's share of the token mean
        (loss * scale).backward()
        loss_sum += float(loss.detach())
        with torch.no_grad():
            correct += float(((logp.exp() > 0.5).float() * mask).sum())
    return {"loss": loss_sum, "token_acc": correct / n_tok}


def train_sft(
    config: SFTConfig, make_samples: Callable[[list[Trajectory], Any], list[SFTSample]] | None = None
) -> dict[str, Any]:
    """Run SFT as configured; returns ``{"history": [per-step records], "eval": [held-out records], "model": the
    trained model}``.

    ``make_samples(trajectories, generator)`` replaces :func:`build_samples` for data written another way
    (MobileIPL's CoaT warm-up gives one sample per dialogue turn). With ``eval_seeds`` the held-out records
    (``step``, ``eval_greedy_success``, ``eval_sampled_success``) come before the first step, every ``eval_every``
    steps and after the last; those after a step are also merged into its history record and log line.

    Raises:
        SplitOverlapError: a held-out seed is among the seeds of the trajectories trained on (before any model
            loads).
    """
    from agents.hf_agent import HFGenerator

    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    out_dir = Path(config.output_dir)

    # Data first: the held-out split is checked against the trajectories trained on before any model loads.
    folders = [config.data] if isinstance(config.data, str) else list(config.data)
    trajectories = [t for folder in folders for t in load_trajectories(folder, load_images=True)]
    used = [t for t in trajectories if t.success or not config.successful_only]
    eval_seeds = config.eval_seed_list
    if eval_seeds:
        check_no_overlap(
            training_seeds(used, config.env_id), eval_seeds, f"{config.env_id} seeds",
            f"the trajectories in {folders} were recorded at these seeds; pick eval_seeds outside them",
        )  # fmt: skip

    dtype = getattr(torch, config.dtype) if config.dtype else None
    gen = HFGenerator(config.model, device=config.device, dtype=dtype)
    if config.lora:
        gen.model = apply_lora(gen.model, config.lora_r, config.lora_alpha, config.lora_target_modules)
    if config.gradient_checkpointing:
        enable_activation_checkpointing(gen.model)
    model = gen.model

    # Samples: every step of every accepted trajectory, tokenised once.
    fmt = resolve_format(resolve_output_format(config.output_format, config.format_kwargs))
    samples = make_samples(used, gen) if make_samples is not None else config_samples(config, used, gen)
    if not samples:
        raise NoSamplesError(
            f"no SFT samples in {folders}: {len(trajectories)} trajectories"
            + (", none successful (set successful_only=false to use them)" if config.successful_only else "")
        )
    eos = gen.tokenizer.eos_token_id
    answers = [gen.tokenizer(s.answer, add_special_tokens=False)["input_ids"] + [eos] for s in samples]

    steps_per_epoch = -(-len(samples) // config.batch_size)
    total = steps_per_epoch * config.epochs
    optimizer, scheduler = adamw_with_warmup(
        model, config.learning_rate, config.weight_decay, config.warmup_ratio, total, decay=config.lr_scheduler_type
    )
    clean_checkpoint_dir(out_dir)  # a killed save's temp folder is full checkpoint size
    start = resume_latest(out_dir, model, optimizer, scheduler) if config.resume else 0
    log = RunLog(out_dir / "metrics.jsonl", start, config.report_to, "sft", config.to_dict())
    held_out = None
    evals: list[dict[str, Any]] = []
    if eval_seeds:
        held_out = EnvHeldOut(gen, config.env_id, config.env_kwargs, eval_seeds, config.eval_samples,
                              fmt if fmt is not None else "auto", temperature=config.eval_temperature,
                              max_new_tokens=config.eval_max_new_tokens, max_steps=config.eval_max_steps,
                              num_envs=config.eval_num_envs, swap=config.eval_swap)  # fmt: skip
        if start == 0:
            # The step-0 point is the untrained policy: the baseline that "learned" is measured against.
            evals.append(held_out(0))
            log.write(evals[-1])
    bar = None
    if config.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=start, desc="sft", unit="step")
    history = []
    model.train()
    for step in range(start, total):
        epoch, rows = epoch_rows(step, steps_per_epoch, config.batch_size, len(samples), config.seed)
        images = [[samples[r].image] for r in rows] if samples[rows[0]].image is not None else None
        optimizer.zero_grad(set_to_none=True)
        stats = sft_backward(model, gen, [samples[r].prompt for r in rows], [answers[r] for r in rows], images,
                             config.micro_batch_tokens, config.logprob_chunk_size)  # fmt: skip
        step_accumulated(model, optimizer, scheduler, config.max_grad_norm)
        record = {"step": step + 1, "epoch": epoch, **stats, "lr": scheduler.get_last_lr()[0]}
        if held_out is not None and due(step + 1, config.eval_every, total):
            evals.append(held_out(step + 1))
            record.update({k: v for k, v in evals[-1].items() if k != "step"})
        history.append(record)
        log.write(record)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{record['loss']:.3f}")
        if config.save_every and (step + 1) % config.save_every == 0:
            state = {"data_position": step + 1, "config": config.to_dict()}
            processor = getattr(gen, "processor", gen.tokenizer)
            save_checkpoint(out_dir, step + 1, model, optimizer, scheduler, state, processor=processor)
    if bar is not None:
        bar.close()
    if held_out is not None:
        held_out.close()
    model.eval()
    model.save_pretrained(out_dir / "final")
    getattr(gen, "processor", gen.tokenizer).save_pretrained(out_dir / "final")  # a VLM's image processor too
    log.close()
    if config.plot:
        keys: tuple[Any, ...] = ("loss", "token_acc", EVAL_KEYS) if eval_seeds else ("loss", "token_acc")
        plot_curve(log.path, out_dir / "learning_curve.png", keys=keys)
    return {"history": history, "eval": evals, "model": model}
