"""ClickGrid-v0 learning curves: guigym's own GRPO trainer against TRL's ``GRPOTrainer`` through ``trainers.trl``.

Both sides train the same model folder (the tiny 2-layer Llama of :func:`trainers.trl.tiny.build_tool_causal_lm`,
hidden 32, ``torch.manual_seed(0)``, TRL's Qwen2.5 chat template), on CPU with one thread, float32:

* **data**: step ``s`` plays seeds ``[G*s, G*(s+1))``, ``N`` rollouts each (guigym: ``seed_start=0``, its seed
  stream; TRL: dataset rows ``seed = 0, 1, ...`` in order, ``shuffle_dataset=False``);
* **prompt and answer**: the ``cell`` format's prompt ("click cell c. Cell:"), one sampled token at temperature
  1, parsed by guigym's ``CellFormat`` and played on the env (TRL: ``action_mode="text"``);
* **reward**: the env's verdict (guigym ``reward: env``; TRL reward function ``env``);
* **update**: one epoch, one mini-batch, beta 0, token-mean loss (TRL ``loss_type="dapo"``, the same for
  one-token completions), clip ``[1 - 0.2, 1 + 0.28]``, AdamW at the same learning rate with weight decay 0.01,
  no warm-up, constant schedule, gradient clipping at 1.0.

Known differences, kept: the advantage's std (guigym: population std + 1e-6; TRL: sample std + 1e-4), and each
side's own sampler and random stream, so the curves agree in trend, not sample for sample.

Printed: training success (the fraction of the step's rollouts the env judged a success) per block of steps for
both sides. Run: ``python benchmarks/trl_clickgrid.py`` (200 steps, 8 groups of 8, lr 4e-3, as
``configs/grpo_tiny_cpu.yaml``); ``--quick`` runs 3 steps of 2 groups of 4 on each side (the path, not a curve).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RESULT = "RESULT "


def guigym_curve(
    model: Path, steps: int, groups: int, n: int, lr: float, out: Path, seed: int
) -> list[float]:
    """guigym's GRPO: training success of each step."""
    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    config = GRPOConfig(
        model=str(model), env_id="ClickGrid-v0", output_format="cell", reward="env", estimator="grpo",
        group_size=n, groups_per_step=groups, num_envs=groups * n, num_steps=steps, learning_rate=lr,
        max_new_tokens=1, temperature=1.0, device="cpu", output_dir=str(out), progress=False, plot=False,
        max_grad_norm=1.0, seed=seed, seed_start=0,
    )  # fmt: skip
    return [float(r["success_rate"]) for r in train(config)["history"]]


def trl_curve(model: Path, steps: int, groups: int, n: int, lr: float, out: Path, seed: int) -> list[float]:
    """TRL's GRPOTrainer through trainers.trl: training success (mean env verdict) of each step."""
    from transformers import AutoTokenizer
    from trl import GRPOConfig

    from trainers.trl.config import GuiGymTRLConfig
    from trainers.trl.train import build_trainer

    guigym = GuiGymTRLConfig(env_id="ClickGrid-v0", action_mode="text", output_format="cell", rewards=["env"],
                             seeds=[0, groups * steps])  # fmt: skip
    args = GRPOConfig(
        output_dir=str(out), per_device_train_batch_size=groups * n, num_generations=n, max_completion_length=1,
        max_steps=steps, learning_rate=lr, lr_scheduler_type="constant", weight_decay=0.01, max_grad_norm=1.0,
        beta=0.0, epsilon=0.2, epsilon_high=0.28, loss_type="dapo", temperature=1.0, shuffle_dataset=False,
        logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, seed=seed, bf16=False,
        gradient_checkpointing=False, disable_tqdm=True, log_level="error",
    )  # fmt: skip
    tok = AutoTokenizer.from_pretrained(model, padding_side="left")
    trainer = build_trainer(guigym, args, str(model), tok)
    trainer.train()
    return [float(h["rewards/env/mean"]) for h in trainer.state.log_history if "rewards/env/mean" in h]


def run_side(
    side: str, model: Path, steps: int, groups: int, n: int, lr: float, out: Path, seed: int
) -> list[float]:
    """One side in a fresh Python process (accelerate's process-wide state must not leak between them)."""
    cmd = [sys.executable, __file__, "--worker", side, "--model", str(model), "--steps", str(steps),
           "--groups", str(groups), "--n", str(n), "--lr", str(lr), "--out", str(out), "--seed", str(seed)]  # fmt: skip
    env = {**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT)]
    if proc.returncode or not lines:
        raise RuntimeError(f"{side} run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len(RESULT) :])


def table(curves: dict[str, list[float]], block: int) -> str:
    """Mean training success per block of ``block`` steps, one row per block, one column per side."""
    names = list(curves)
    steps = min(len(c) for c in curves.values())
    rows = [f"| steps | {' | '.join(names)} |", f"| --- | {' | '.join('---' for _ in names)} |"]
    for start in range(0, steps, block):
        stop = min(start + block, steps)
        cells = [f"{sum(curves[k][start:stop]) / (stop - start):.3f}" for k in names]
        rows.append(f"| {start + 1}-{stop} | {' | '.join(cells)} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--groups", type=int, default=8, help="groups (seeds) per step")
    parser.add_argument("--n", type=int, default=8, help="rollouts per group")
    parser.add_argument("--lr", type=float, default=4e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--block", type=int, default=20, help="steps per table row")
    parser.add_argument(
        "--quick", action="store_true", help="3 steps of 2 groups of 4 (the path, not a curve)"
    )
    parser.add_argument("--json", help="also write the per-step curves to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        import torch

        torch.set_num_threads(1)
        fn = guigym_curve if args.worker == "guigym" else trl_curve
        curve = fn(Path(args.model), args.steps, args.groups, args.n, args.lr, Path(args.out), args.seed)
        print(RESULT + json.dumps(curve), flush=True)
        return
    if args.quick:
        args.steps, args.groups, args.n, args.block = 3, 2, 4, 1
    from trainers.trl.tiny import build_tool_causal_lm

    with tempfile.TemporaryDirectory() as tmp:
        model = build_tool_causal_lm(Path(tmp) / "model")
        curves = {
            side: run_side(side, model, args.steps, args.groups, args.n, args.lr, Path(tmp) / side, args.seed)
            for side in ("guigym", "trl")
        }
    print(
        f"ClickGrid-v0, {args.steps} steps of {args.groups} groups x {args.n}, lr {args.lr}: training success"
    )
    print(table(curves, args.block))
    if args.json:
        Path(args.json).write_text(json.dumps(curves))


if __name__ == "__main__":
    main()
