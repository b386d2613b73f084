"""The TRL arm of the MiniWoB++ learning benchmark (issue 37): SFT, then GRPO through TRL's ``GRPOTrainer``.

:func:`train_trl_arm` continues an SFT checkpoint with TRL's ``GRPOTrainer`` through guigym's adapter
(:func:`trainers.trl.train.build_trainer`; GRPO itself is TRL's), on ``GuiWeb-MiniWoB-Suite-v0``:

* **env**: ``GuiWeb-MiniWoB-Suite-v0`` with ``tasks``, ``screenshots=False``, ``reload_page=False``; seed ``s``
  runs ``tasks[s % len(tasks)]`` at MiniWoB seed ``s``;
* **prompt and answer**: the ``act`` format (:class:`agents.prompts.act.ActFormat`: the instruction and the
  page's elements by letter, answered ``click X`` or ``type X N``), rendered by the checkpoint's chat template as
  guigym's own trainers render it; the completion (at most ``max_new_tokens`` tokens, temperature 1) is parsed by
  the same format and played as one env step (the adapter's ``action_mode="text"``);
* **reward**: MiniWoB's own verdict (the adapter's ``env`` reward: 1.0 when the page's raw reward is positive);
* **data**: dataset rows are the seeds ``[seed_start, seed_start + num_steps * prompts_per_step)`` in order
  (``shuffle_dataset=False``), so step ``k`` plays the ``prompts_per_step`` seeds after those of step ``k - 1`` and
  the seeds cycle over the tasks;
* **budget**: each optimiser step generates ``prompts_per_step * group_size`` completions (TRL's
  ``per_device_train_batch_size``, ``num_generations = group_size``), each one episode of exactly one env step:
  6 x 8 = 48 episodes and 48 env steps per optimiser step at the defaults, ``num_steps * 48`` in a run. That is
  guigym's GRPO with ``groups_per_step = prompts_per_step``, the same ``group_size`` and ``max_episode_steps = 1``
  (its default); with ``max_episode_steps > 1`` guigym's episodes can take more env steps than this arm's;
* **update**: one epoch, one mini-batch, ``beta = 0``, token-mean loss (``loss_type="dapo"``), clip
  ``[1 - 0.2, 1 + 0.28]``, AdamW (weight decay 0.01), constant learning rate, gradient clipping at 1.0, CPU,
  float32.

**Single-step tasks only.** Text mode plays one env step per rollout, so only the tasks one action solves belong
in this arm: ``click-test-2``, ``click-button``, ``click-link``, ``click-tab``, ``click-dialog-2``,
``focus-text-2`` (:data:`SINGLE_STEP_TASKS`). The multi-step tasks of the suite (``enter-text``, ``login-user``,
``click-checkboxes``, ``click-button-sequence``) are not in the TRL arm: text mode is one step, and the adapter's
multi-turn ``tools`` mode needs tool-call syntax that a tiny model does not have. :func:`train_trl_arm` raises
:class:`MultiStepTaskError` for them.

**Cost.** Rollout slot ``i`` of a step plays prompt ``i // group_size``, so with ``prompts_per_step`` a multiple
of the number of tasks every slot keeps one task and one page (48 pages on one Chromium at the defaults);
otherwise a slot opens a page per task it meets. The first step pays the browser launch and the page loads (46 s
at the defaults on the shared 2-core machine, load about 11); later steps took 2.3-5.1 s at 6 x 8 and 2.7-3.2 s at
6 x 4 (tiny model, hidden 64, 10-token completions).

Run: ``python benchmarks/miniwob_trl.py --model runs/sft --out runs/trl-arm --steps 50`` (the model folder is an
SFT checkpoint with its tokenizer). ``--tiny`` first builds a random tiny model there (hidden 64, 2 layers, byte
tokenizer), to check the path only: a random model earns no reward, so its groups have no advantage.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gui_envs.web.miniwob_suite import SINGLE_STEP_TASKS  # noqa: E402  (after the path: run as a script)

ENV_ID = "GuiWeb-MiniWoB-Suite-v0"


class MultiStepTaskError(ValueError):
    """A task that needs more than one action was given to the TRL arm, whose text mode plays one step."""


def trl_arm_configs(
    out_dir: str,
    tasks: Sequence[str],
    seed: int,
    num_steps: int,
    group_size: int = 8,
    prompts_per_step: int = 6,
    seed_start: int = 0,
    learning_rate: float = 1e-3,
    max_new_tokens: int = 10,
) -> tuple[Any, Any]:
    """The adapter's ``GuiGymTRLConfig`` and TRL's ``GRPOConfig`` of :func:`train_trl_arm` (same arguments)."""
    from trl import GRPOConfig

    from trainers.trl.config import GuiGymTRLConfig

    multi = [t for t in tasks if t not in SINGLE_STEP_TASKS]
    if multi or not tasks:
        raise MultiStepTaskError(
            f"tasks {multi or 'none given'}: the TRL arm plays one env step per rollout (text mode); "
            f"choose from {list(SINGLE_STEP_TASKS)}"
        )
    guigym = GuiGymTRLConfig(
        env_id=ENV_ID, env_kwargs={"tasks": list(tasks), "screenshots": False, "reload_page": False},
        action_mode="text", output_format="act", rewards=["env"], shared_browser=False,
        seeds=[seed_start, seed_start + num_steps * prompts_per_step],
    )  # fmt: skip
    args = GRPOConfig(
        output_dir=out_dir, per_device_train_batch_size=prompts_per_step * group_size, num_generations=group_size,
        max_completion_length=max_new_tokens, max_steps=num_steps, learning_rate=learning_rate,
        lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.01, max_grad_norm=1.0, beta=0.0, epsilon=0.2,
        epsilon_high=0.28, loss_type="dapo", temperature=1.0, shuffle_dataset=False, logging_steps=1,
        report_to="none", save_strategy="no", use_cpu=True, seed=seed, bf16=False, gradient_checkpointing=False,
        disable_tqdm=True, log_level="error",
    )  # fmt: skip
    return guigym, args


def train_trl_arm(
    model_dir: str,
    out_dir: str,
    tasks: Sequence[str],
    seed: int,
    num_steps: int,
    group_size: int = 8,
    prompts_per_step: int = 6,
    seed_start: int = 0,
    learning_rate: float = 1e-3,
    max_new_tokens: int = 10,
) -> str:
    """GRPO through TRL from the checkpoint in ``model_dir`` (module docstring); returns the folder holding the
    final model and tokenizer (``out_dir/final``). The per-step log (TRL's ``log_history``: ``rewards/env/mean``,
    ``entropy``, ...) is written to ``out_dir/log_history.json``.

    Args:
        model_dir: an SFT checkpoint folder (model and tokenizer, ``save_pretrained``).
        out_dir: where TRL writes; the final model goes to ``out_dir/final``.
        tasks: MiniWoB task names, all in :data:`SINGLE_STEP_TASKS`.
        seed: TRL's seed (sampling, data order).
        num_steps: optimiser steps.
        group_size: completions per prompt (TRL's ``num_generations``).
        prompts_per_step: distinct seeds (prompts) per step.
        seed_start: the first training seed.
        learning_rate: AdamW learning rate, constant.
        max_new_tokens: most tokens of a completion.
    """
    import json

    from transformers import AutoTokenizer

    from trainers.trl.train import build_trainer, close_environments

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    guigym, args = trl_arm_configs(
        out_dir,
        tasks,
        seed,
        num_steps,
        group_size,
        prompts_per_step,
        seed_start,
        learning_rate,
        max_new_tokens,
    )
    tokenizer = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
    trainer = build_trainer(guigym, args, str(model_dir), tokenizer)
    try:
        trainer.train()
    finally:
        close_environments(trainer)
    final = Path(out_dir) / "final"
    trainer.save_model(str(final))
    tokenizer.save_pretrained(final)
    (Path(out_dir) / "log_history.json").write_text(json.dumps(trainer.state.log_history, indent=1))
    return str(final)


def build_tiny(path: Path, seed: int = 0) -> Path:
    """A random tiny model for checking the path: 2-layer Llama, hidden 64, byte tokenizer (no merges)."""
    from agents.tiny_models import build_causal_lm, build_tokenizer

    return build_causal_lm(
        path, 64, num_layers=2, seed=seed, tokenizer_builder=lambda p: build_tokenizer(p, merges=False)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="an SFT checkpoint folder (model and tokenizer)")
    parser.add_argument("--out", required=True, help="output folder; the final model goes to OUT/final")
    parser.add_argument("--tasks", nargs="+", default=list(SINGLE_STEP_TASKS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--prompts-per-step", type=int, default=6)
    parser.add_argument("--seed-start", type=int, default=0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--max-new-tokens", type=int, default=10)
    parser.add_argument("--tiny", action="store_true", help="first build a random tiny model in --model")
    ns = parser.parse_args(argv)
    if ns.tiny:
        build_tiny(Path(ns.model), ns.seed)
    start = time.perf_counter()
    final = train_trl_arm(
        ns.model, ns.out, ns.tasks, ns.seed, ns.steps, ns.group_size, ns.prompts_per_step, ns.seed_start, ns.lr,
        ns.max_new_tokens,
    )  # fmt: skip
    print(f"final model: {final} ({time.perf_counter() - start:.1f} s for {ns.steps} steps)")


if __name__ == "__main__":
    main()
