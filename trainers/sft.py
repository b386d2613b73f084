"""SFT / behaviour cloning on saved trajectories, one file, top to bottom.

Every step of every (successful) trajectory becomes one sample: the prompt the policy would see at that
step (the output format's messages for the step's instruction, history and screenshot, through the chat
template) and the answer it should write (the step's recorded model output when there is one, else the
format's rendering of the recorded action). The loss is the negative log-likelihood of the answer tokens
only, the prompt is masked out:

    L = - sum_{b,t} m_bt log pi(y_bt | x_b, y_b,<t) / sum_{b,t} m_bt       # token mean over answer tokens

CORE calls :func:`train_sft` every iteration on the trajectories its verifier accepted.
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
from gui_envs.actions import Action
from gui_envs.trajectory import Trajectory, load_trajectories
from trainers.checkpoint import clean_checkpoint_dir, save_checkpoint
from trainers.optim import adamw_with_warmup, epoch_rows, optimiser_step, resume_latest
from trainers.policy import (
    apply_lora,
    completion_logprobs,
    encode_batch,
    resolve_output_format,
    trainable_state,
)
from trainers.run_log import RunLog, plot_curve
from trainers.sft_config import SFTConfig


class NoSamplesError(ValueError):
    """The trajectory folders hold no step to learn from; the message says why."""


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


def build_samples(trajectories: list[Trajectory], generator: Any, fmt: Any, successful_only: bool) -> list[SFTSample]:
    """The SFT samples of ``trajectories``, in order (steps without an action or output are skipped).

    ``fmt``: an output format, or ``None`` to pick one per observation (:func:`auto_format`).
    """
    out = []
    for traj in trajectories:
        if successful_only and not traj.success:
            continue
        history: list[str] = []
        for step in traj.steps:
            obs: dict[str, Any] = {"instruction": traj.instruction}
            if step.screenshot is not None:
                obs["screenshot"] = step.screenshot
            if step.observation_text:
                obs["text"] = step.observation_text
            f = fmt if fmt is not None else auto_format(obs)
            with_image = bool(getattr(generator, "supports_images", False)) and step.screenshot is not None
            ctx = PromptContext(obs, traj.instruction, list(history), with_image)
            if step.output_text:
                answer = step.output_text
            elif step.action is not None:
                answer = answer_text(f, step.action, obs)
            else:
                continue
            out.append(SFTSample(generator.prompt_text(f.messages(ctx)), answer, step.screenshot if with_image else None))
            history.append(f.describe(step.action) if step.action is not None else "invalid action")
    return out


def train_sft(
    config: SFTConfig, make_samples: Callable[[list[Trajectory], Any], list[SFTSample]] | None = None
) -> dict[str, Any]:
    """Run SFT as configured; returns ``{"history": [per-step records], "model": the trained model}``.

    ``make_samples(trajectories, generator)`` replaces :func:`build_samples` for data written another way
    (MobileIPL's CoaT warm-up gives one sample per dialogue turn).
    """
    from agents.hf_agent import HFGenerator

    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    out_dir = Path(config.output_dir)
    dtype = getattr(torch, config.dtype) if config.dtype else None
    gen = HFGenerator(config.model, device=config.device, dtype=dtype)
    if config.lora:
        gen.model = apply_lora(gen.model, config.lora_r, config.lora_alpha, "all-linear")
    model = gen.model

    # Data: every step of every accepted trajectory, tokenised once.
    folders = [config.data] if isinstance(config.data, str) else list(config.data)
    trajectories = [t for folder in folders for t in load_trajectories(folder, load_images=True)]
    fmt = resolve_format(resolve_output_format(config.output_format, config.format_kwargs))
    if make_samples is not None:
        samples = make_samples([t for t in trajectories if t.success or not config.successful_only], gen)
    else:
        samples = build_samples(trajectories, gen, fmt, config.successful_only)
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
        model, config.learning_rate, config.weight_decay, config.warmup_ratio, total
    )
    clean_checkpoint_dir(out_dir)  # a killed save's temp folder is full checkpoint size
    start = resume_latest(out_dir, model, optimizer, scheduler) if config.resume else 0
    log = RunLog(out_dir / "metrics.jsonl", start)
    history = []
    model.train()
    for step in range(start, total):
        epoch, rows = epoch_rows(step, steps_per_epoch, config.batch_size, len(samples), config.seed)
        images = [[samples[r].image] for r in rows] if samples[rows[0]].image is not None else None
        batch = encode_batch(gen, [samples[r].prompt for r in rows], [answers[r] for r in rows], images)
        logp, _ = completion_logprobs(model, batch)  # (B, T)
        mask = batch.completion_mask.float()
        loss = -(logp * mask).sum() / mask.sum()  # token mean over the answer tokens only
        optimiser_step(model, optimizer, scheduler, loss, config.max_grad_norm)
        with torch.no_grad():
            token_acc = float(((logp.exp() > 0.5).float() * mask).sum() / mask.sum())
        record = {"step": step + 1, "epoch": epoch, "loss": float(loss.detach()), "token_acc": token_acc,
                  "lr": scheduler.get_last_lr()[0]}  # fmt: skip
        history.append(record)
        log.write(record)
        if config.save_every and (step + 1) % config.save_every == 0:
            state = {"data_position": step + 1, "config": config.to_dict()}
            save_checkpoint(out_dir, step + 1, trainable_state(model), optimizer, scheduler, state)
    model.eval()
    model.save_pretrained(out_dir / "final")
    gen.tokenizer.save_pretrained(out_dir / "final")
    if config.plot:
        plot_curve(log.path, out_dir / "learning_curve.png", keys=("loss", "token_acc"))
    return {"history": history, "model": model}
