"""Seconds per GRPO step: guigym's trainer against TRL's ``GRPOTrainer``, same tiny model, same batch, same run.

What both sides do, per optimiser step:

* **Model**: the tests' tiny random Llama (2 layers, hidden 32), CPU, one torch thread for both, float32
  throughout: TRL 1.x turns bf16 autocast on by default (``bf16=True``), which on a CPU without bf16
  instructions is several times slower and is not the work guigym does, so it is passed ``bf16=False``.
  Every run is a fresh Python process, so that no run inherits another's state: accelerate's process-wide
  state once made guigym's runs after a TRL run go through TRL's bf16 autocast, and even with that state
  reset, a guigym run after a TRL run in the same process took 1.3-1.5x the CPU time of one before it
  (measured on an idle machine, small batch: 0.044-0.053 s before, 0.065-0.069 s after; TRL's leftover
  objects, 70,000 more live Python objects after one run).
* **Batches**: ``small`` = 1 group of 4 rollouts; ``large`` = 8 groups of 8.
* **Sampling**: one batched Hugging Face ``generate`` call, temperature 1, no top-k / top-p, up to 16 new
  tokens, the same prompts ("click cell c. Cell:" through the same chat template). TRL encodes and
  prefills each group's prompt ``N`` times (its sampler repeats the prompt); the ``guigym`` column runs
  ``prompt_sharing="auto"`` (not the config default ``encode``, which keeps seeded runs bit-identical to
  before): it tokenises the prompt once, and where that spares enough prefill (the large batch) prefills it
  once and copies its KV cache to the ``N`` samples. The ``guigym, no sharing`` column
  (``prompt_sharing="none"``) is the same trainer before that change. The ``guigym, own decoder`` column adds
  ``decoder="loop"``: guigym's KV-cache sampling loop in place of ``generate`` (same distribution, same
  log-probs; ``agents.sampling.sample_tokens``), with each distinct prompt prefilled once. The ``guigym default``
  column runs ``GRPOConfig``'s own defaults of both fields (read from the dataclass, so it follows them): what a
  config that sets neither gets.
* **Reward**: 1 when the answer names the right cell. guigym steps the real env (rollout through
  ``collect_groups``, the ``binary`` reward wrapper, which reads the target box and grades the click's
  geometry, the ``grpo`` estimator); TRL gets the same prompts from a dataset and a reward function doing the
  same check on the text.
* **Update**: one epoch, one mini-batch, beta 0 (no reference model, no old-log-prob pass on either side:
  guigym reuses the sampler's log-probs, TRL detaches the current ones), token-mean loss, AdamW at lr 1e-4,
  gradient clipping at 1.0, no gradient checkpointing (TRL 1.x turns it on by default; it is turned off so
  both do the same work).
* **Timed**: the wall time of each optimiser step after ``--warmup`` steps (guigym: rollout + scoring +
  update, from its log; TRL: ``on_step_begin`` to ``on_step_end``, which includes its generation); the
  median over ``--steps`` steps of ``--rounds`` rounds. The sides run alternately, round after round, so a
  change in the machine's load falls on both. Completion lengths differ run to run (the model may stop
  early), so the mean generated length of each is printed beside it.

TRL is a benchmark-only dependency: without it the script prints guigym's timings and says TRL was skipped.
Run: ``python benchmarks/trainer_speed.py``; ``--quick`` (``guigym bench``) times 2 steps after 1 warm-up, one
round: every column runs, but the medians rest on two steps each. ``--sides default,loop`` runs only those columns
beside TRL (more rounds in the same time, for a tighter paired median).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BATCHES = {"small": (1, 4), "large": (8, 8)}  # (groups, rollouts per group)
LABELS = "abcdefghi"




def config_default(name: str) -> str:
    """The default of ``GRPOConfig``'s field ``name``: the ``default`` column runs what a config that says nothing
    about sampling runs."""
    from trainers.grpo_config import GRPOConfig

    return str(GRPOConfig.__dataclass_fields__[name].default)


_DEFAULT = (config_default("prompt_sharing"), config_default("decoder"))
#: guigym's columns: (prompt_sharing, decoder) of each.
GUIGYM_SIDES = {"default": _DEFAULT, "none": ("none", "hf"), "auto": ("auto", "hf"), "loop": ("auto", "loop")}
TITLES = {
    "default": f"guigym default ({_DEFAULT[0]}, {_DEFAULT[1]})",
    "none": "guigym, no sharing",
    "auto": "guigym",
    "loop": "guigym, own decoder",
    "trl": "TRL",
}


def guigym_step(
    model: Path,
    groups: int,
    n: int,
    steps: int,
    warmup: int,
    out: Path,
    sharing: str = "auto",
    decoder: str = "hf",
) -> tuple[list[float], list[float], list[float]]:
    """Wall seconds, CPU seconds and mean completion length (tokens) of each timed step, guigym."""
    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    config = GRPOConfig(
        model=str(model), env_id="ClickGrid-v0", output_format="cell", reward="binary", estimator="grpo",
        group_size=n, groups_per_step=groups, num_envs=groups * n, num_steps=warmup + steps, learning_rate=1e-4,
        max_new_tokens=16, device="cpu", output_dir=str(out), progress=False, plot=False, max_grad_norm=1.0,
        prompt_sharing=sharing, decoder=decoder,
    )  # fmt: skip
    hist = train(config)["history"][warmup:]
    times = [r["time_rollout"] + r["time_scoring"] + r["time_update"] for r in hist]
    return times, [r["cpu_time_step"] for r in hist], [r["completion_len"] for r in hist]


def trl_step(
    model: Path, groups: int, n: int, steps: int, warmup: int, out: Path
) -> tuple[list[float], list[float], list[float]]:
    """Wall seconds, CPU seconds and mean completion length (tokens) of each timed step, TRL ``GRPOTrainer``."""
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    rows = [{"prompt": [{"role": "user", "content": f"click cell {LABELS[i % 9]}. Cell:"}], "target": LABELS[i % 9]}
            for i in range(groups * (warmup + steps) * 2)]  # fmt: skip

    def reward(completions: list[Any], target: list[str], **_: Any) -> list[float]:
        out = []
        for c, t in zip(completions, target, strict=True):
            text = c[0]["content"] if isinstance(c, list) else str(c)
            first = next((ch for ch in text.lower() if ch in LABELS), None)
            out.append(float(first == t))
        return out

    class Timer(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []
            self.cpu: list[float] = []
            self.t0 = self.c0 = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t0, self.c0 = time.perf_counter(), time.process_time()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.times.append(time.perf_counter() - self.t0)
            self.cpu.append(time.process_time() - self.c0)

    lengths: list[float] = []

    class Lengths(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            if logs and "completions/mean_length" in logs:
                lengths.append(float(logs["completions/mean_length"]))

    args = GRPOConfig(
        output_dir=str(out), per_device_train_batch_size=groups * n, num_generations=n, max_completion_length=16,
        max_steps=warmup + steps, learning_rate=1e-4, beta=0.0, temperature=1.0, logging_steps=1,
        report_to="none", save_strategy="no", use_cpu=True, max_grad_norm=1.0, seed=0,
        gradient_checkpointing=False, disable_tqdm=True, log_level="error", bf16=False,
    )  # fmt: skip
    timer = Timer()
    trainer = GRPOTrainer(
        model=str(model), reward_funcs=reward, args=args, train_dataset=Dataset.from_list(rows),
        processing_class=AutoTokenizer.from_pretrained(model, padding_side="left"), callbacks=[timer, Lengths()],
    )  # fmt: skip
    trainer.train()
    return timer.times[warmup:], timer.cpu[warmup:], lengths[warmup:]


RESULT = "RESULT "


def run_side(
    side: str, model: Path, groups: int, n: int, steps: int, warmup: int, out: Path
) -> tuple[list[float], list[float], list[float]]:
    """One run of ``side`` (``trl``, or a key of :data:`GUIGYM_SIDES`) in a fresh Python process."""
    cmd = [sys.executable, __file__, "--worker", side, "--model", str(model), "--groups", str(groups), "--n", str(n),
           "--steps", str(steps), "--warmup", str(warmup), "--out", str(out)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT)]
    if proc.returncode or not lines:
        raise RuntimeError(f"{side} run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    times, cpu, lengths = json.loads(lines[-1][len(RESULT) :])
    return times, cpu, lengths


def _worker(args: argparse.Namespace) -> None:
    import torch

    # Every run on the same core: left to the scheduler, runs of the same side differed by 30% from process to
    # process on the 2-core machine (one torch thread does the work either way).
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    torch.set_num_threads(1)
    if args.worker == "trl":
        fn = trl_step
    else:
        sharing, decoder = GUIGYM_SIDES[args.worker]
        fn = functools.partial(guigym_step, sharing=sharing, decoder=decoder)
    result = fn(Path(args.model), args.groups, args.n, args.steps, args.warmup, Path(args.out))
    print(RESULT + json.dumps(result), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=5, help="timed steps per run")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps at the start of each run")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each side, alternating")
    parser.add_argument("--quick", action="store_true", help="--steps 2 --warmup 1 --rounds 1 (overrides them)")
    parser.add_argument("--sides", default=",".join(GUIGYM_SIDES),
                        help=f"guigym's columns, comma-separated, of {', '.join(GUIGYM_SIDES)} (TRL always runs)")  # fmt: skip
    for hidden in ("--worker", "--model", "--out"):  # one run in its own process (see run_side)
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    parser.add_argument("--groups", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args)
        return
    if args.quick:
        args.steps, args.warmup, args.rounds = 2, 1, 1
    ours = [k.strip() for k in args.sides.split(",") if k.strip()]
    unknown = [k for k in ours if k not in GUIGYM_SIDES]
    if unknown or not ours:
        parser.error(f"--sides: unknown {unknown or 'none given'}; choose from {', '.join(GUIGYM_SIDES)}")

    from tqdm.auto import tqdm

    from agents.tiny_models import build_causal_lm

    tmp = Path(tempfile.mkdtemp(prefix="trainer-speed-"))
    model = build_causal_lm(tmp / "tiny")
    have_trl = importlib.util.find_spec("trl") is not None
    sides = ours + (["trl"] if have_trl else [])
    rows = []
    rounds: list[tuple[str, int, str, float]] = []  # (batch, round, side, median CPU s/step of that run)
    bar = tqdm(total=len(BATCHES) * args.rounds * len(sides), desc="runs", unit="run")
    for name, (groups, n) in BATCHES.items():
        times: dict[str, list[float]] = {k: [] for k in sides}
        cpu: dict[str, list[float]] = {k: [] for k in sides}
        lens: dict[str, list[float]] = {k: [] for k in sides}
        for r in range(args.rounds):
            for side in sides:
                out = tmp / f"{side}-{name}-{r}"
                t, c, ln = run_side(side, model, groups, n, args.steps, args.warmup, out)
                times[side] += t
                cpu[side] += c
                lens[side] += ln
                rounds.append((name, r, side, statistics.median(c)))
                bar.update(1)
        med = {k: statistics.median(v) for k, v in times.items()}
        med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
        mean_len = {k: statistics.mean(v) if v else float("nan") for k, v in lens.items()}
        rows.append((name, groups, n, med, med_cpu, mean_len))
    bar.close()
    print("Wall seconds per step (median):")
    _table(rows, 3, have_trl, ours)
    print("\nCPU seconds per step (median; this process's threads only, so other load on the machine counts less):")
    _table(rows, 4, have_trl, ours)
    if not have_trl:
        print("TRL is not installed (pip install trl): its column was skipped.")
        return
    # The machine's speed drifts between runs (a shared VM: the same side's runs differed by up to 30%), so each
    # round's guigym run is also compared with the TRL run next to it in time; the median of those paired ratios
    # is the figure least moved by the drift.
    print("\nPaired by round (median CPU s/step of each run; the sides of a round run back to back):")
    print("| batch | round | " + " | ".join(TITLES[k] for k in sides)
          + " | " + " | ".join(f"{TITLES[k]} / TRL" for k in ours) + " |")  # fmt: skip
    print("| --- | --- | " + " | ".join("---" for _ in range(len(sides) + len(ours))) + " |")
    paired: dict[tuple[str, str], list[float]] = {}
    for name in BATCHES:
        for r in range(args.rounds):
            got = {side: c for b, rr, side, c in rounds if b == name and rr == r}
            ratios = []
            for k in ours:
                paired.setdefault((name, k), []).append(got[k] / got["trl"])
                ratios.append(f"{paired[(name, k)][-1]:.2f}x")
            print(f"| {name} | {r + 1} | " + " | ".join(f"{got[k]:.3f}" for k in sides) + " | "
                  + " | ".join(ratios) + " |")  # fmt: skip
    print("Median paired ratio to TRL:")
    for k in ours:
        print(f"  {TITLES[k]}: "
              + ", ".join(f"{name} {statistics.median(paired[(name, k)]):.2f}x" for name in BATCHES))  # fmt: skip


def _table(rows: list[tuple[Any, ...]], col: int, have_trl: bool, keys: list[str]) -> None:
    print("| batch | " + " | ".join(f"{TITLES[k]} s/step" for k in keys) + " | guigym mean len | TRL s/step "
          "| TRL mean len | " + " | ".join(f"{TITLES[k]} / TRL" for k in keys) + " |")  # fmt: skip
    print("| --- | " + " | ".join("---" for _ in range(2 * len(keys) + 3)) + " |")
    for row in rows:
        name, groups, n, sec, mean_len = row[0], row[1], row[2], row[col], row[5]
        head = (
            f"| {name} ({groups}x{n}) | "
            + " | ".join(f"{sec[k]:.3f}" for k in keys)
            + f" | {mean_len[keys[0]]:.1f} "
        )
        if have_trl:
            print(head + f"| {sec['trl']:.3f} | {mean_len['trl']:.1f} | "
                  + " | ".join(f"{sec[k] / sec['trl']:.2f}x" for k in keys) + " |")  # fmt: skip
        else:
            print(head + "| skipped | - | " + " | ".join("-" for _ in keys) + " |")


if __name__ == "__main__":
    main()
