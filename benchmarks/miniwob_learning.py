"""Instruction following on MiniWoB++, learned by guigym's trainers from a tiny random model: held-out success
and the swap test, per task and per arm, over several seeds.

* **Suite**: ``GuiWeb-MiniWoB-Suite-v0`` (:data:`gui_envs.web.miniwob_suite.INSTRUCTION_SUITE`): click-test-2,
  click-button, click-link, click-tab, click-dialog-2, focus-text-2 (one step each), enter-text, login-user,
  click-checkboxes, click-button-sequence (2-4 steps). Suite seed ``s`` runs task ``s % 10`` at MiniWoB seed ``s``.
  Seeds: training from :data:`TRAIN_START`, demonstrations from :data:`DEMO_START`, held-out from
  :data:`EVAL_START`: three disjoint ranges of MiniWoB's own seeds, nothing tuned on the held-out ones.
* **Policy**: one tiny Llama from a config (random weights; ``--hidden``, ``--layers``; torch seed = the run's
  seed), byte tokens (:func:`agents.tiny_models.build_tokenizer` with ``merges=False``), the ``act`` format
  (:class:`agents.prompts.act.ActFormat`: the task's elements by letter, answers ``click X`` / ``type X N``),
  screenshots off.
* **Pointer pre-training** (``--pointer-steps``; 0 turns it off): before any arm, the random model learns on
  synthetic pages (:mod:`trainers.pointer_pretraining`: random words, no MiniWoB page, wording or task) to answer
  with the letter of the line the instruction quotes, the copy a pretrained LM brings and a 2-layer random model
  cannot grow from 10 demonstrations per task. First ``--pointer-checklist-steps`` steps on checklist pages only
  (click the first named box not yet ticked), ended early once ``--pointer-checklist-target`` of fresh synthetic
  checklist pages are read right; then ``--pointer-steps`` steps with ``--pointer-checklists`` of the pages
  checklists. Every arm starts from it (``grpo`` too), and every SFT arm mixes ``--pointer-mix`` synthetic pages per
  demonstration sample into its data (GRPO: ``--grpo-sft-mix``) so training on MiniWoB keeps it.
* **Demonstrations**: the scripted demonstrator (:class:`agents.miniwob_demonstrator.MiniWoBDemonstrator`, reads the
  instruction and the DOM listing, never MiniWoB's reward), ``--demos`` per task (10, as WGE).
* **Arms** (each at every ``--seeds``): ``sft@N``: SFT (:func:`trainers.sft.train_sft`) on N demonstrations per
  task, for N in ``--budgets`` (10, 100, 1000); ``sft+grpo``: SFT on ``--demos`` then guigym's GRPO
  (:func:`trainers.grpo.train`); ``grpo``: GRPO from the random model; ``sft+trl``: SFT on ``--demos`` then TRL's
  GRPOTrainer through guigym's adapter (:mod:`benchmarks.miniwob_trl`; one step per rollout, so the single-step
  tasks only, at the same episodes per step).
* **Metrics** per task and arm, on ``--eval-per-task`` held-out seeds per task: greedy success, sampled success
  (temperature 1), the swap test (:mod:`trainers.swap_test`: the page kept, the instruction rewritten to name
  another target; the share of answers that follow, beside its chance, a uniformly drawn listed element); the mean
  over seeds with a 95% interval over seeds and episodes (normal approximation of the pooled binomial); the paired
  difference sft+grpo - sft@10 over seeds on the suite mean; env steps and CPU minutes per arm. GRPO runs log
  held-out greedy success, sampled success and the swap rate every ``--eval-every`` steps on
  ``--curve-per-task`` seeds per task (a learning curve) plus entropy, ``zero_adv_frac`` and ``distinct_answers``.

Measured (2026-12-07; cut down: 5 seeds, 30 held-out seeds per task, GRPO 40 steps of 10 x 4 at lr 1e-4 with the
pointer mix and 3 sampling rounds, no SFT(1000); ``docs/learning_benchmarks.md``, "Sixth look"): suite mean
SFT(10) 0.907, SFT(100) 0.949, SFT(10) then GRPO 0.915 (paired +0.008 ± 0.028; -0.034 ± 0.020 against SFT(100)),
then TRL equal to GRPO on the single-step tasks (-0.004 ± 0.029, 3 seeds). Every single-step task at 0.96 or more,
swap 0.97-1.00 on five of them (click-button 0.89); login-user 0.947, click-button-sequence 1.000 (swap 0.00: the
swapped order never occurs in training), click-checkboxes 0.360: the policy clicks ticked boxes again, and neither
the box's state beside its letter nor checklist pointer pages (``PointerPretrainingConfig.checklists``) changed that
("Seventh look"). The same checkpoints at 200 held-out seeds per task: SFT(10) 0.905, then GRPO 0.920 (paired
+0.015 ± 0.025 over 5 seeds), swap 0.96-1.00 on every single-step task. With the checkbox's state before its letter and a checklist-only pointer stage first ("Eighth look",
3 seeds, 30 held-out seeds per task): SFT(10) 0.940, then GRPO 0.948 (paired +0.008 ± 0.010), click-checkboxes
0.600 -> 0.644 (1.000 on the seed whose pointer stage read ticks), its swap 1.00. With that stage run until it
reads 0.95 of fresh synthetic checklists (the defaults; "Ninth look"): SFT(10) 0.928, then GRPO 0.946 (paired
+0.018 ± 0.049), click-checkboxes at 200 held-out seeds 0.705 -> 0.695 (0.96 and 0.83 on the two seeds whose stage
reached the bar, 0.30 on the one stopped by the cap); click-test-2's swap 0.00 on one seed. Issue 37's targets are
not all reached.

Run: ``python benchmarks/miniwob_learning.py`` (the defaults; a benchmark, not a test), or ``--quick`` (2 tasks, a
few minutes: the CI version, ``tests/trainers/test_miniwob_learning.py``). Writes ``benchmarks/out/miniwob_learning``
``.json``, ``.md`` (the tables) and ``.png`` (the GRPO held-out curves).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gui_envs.web.miniwob_suite import SINGLE_STEP_TASKS  # noqa: E402  (after the path: run as a script)

SUITE_ID = "GuiWeb-MiniWoB-Suite-v0"
TRAIN_START = 0
DEMO_START = 20_000_000
EVAL_START = 10_000_000
#: Step cap of an episode: the longest demonstration (login-user, click-checkboxes) takes 4-6 steps.
MAX_STEPS = 8
ENV_KWARGS: dict[str, Any] = {"screenshots": False, "reload_page": False, "max_steps": MAX_STEPS}
OUT = Path(__file__).resolve().parent / "out"


@dataclass
class Settings:
    """One benchmark run's settings (the CLI's defaults; ``--quick`` cuts them)."""

    tasks: tuple[str, ...]
    seeds: tuple[int, ...] = (0, 1, 2)
    demos: int = 10
    budgets: tuple[int, ...] = (10, 100, 1000)
    hidden: int = 128
    layers: int = 2
    pointer_steps: int = 1000  # synthetic pointer pre-training before any arm (trainers.pointer_pretraining); 0: none
    pointer_checklists: float = 0.5  # share of checklist pages in pointer pre-training and in every mix below
    # A first stage on checklist pages only (PointerPretrainingConfig), ended once fresh synthetic checklist pages
    # are read this well (the cap: steps): run seeds 0 and 2 passed 0.95 after 3,750 and 3,500 steps, seed 1 was at
    # 0.755 at the cap (docs/learning_benchmarks.md, "Ninth look").
    pointer_checklist_steps: int = 5000
    pointer_checklist_target: float = 0.95
    pointer_lr_schedule: str = "linear"  # of the mixed stage (the checklist stage is constant)
    pointer_mix: float = 1.0  # with pointer_steps: synthetic pages per demonstration sample in every SFT arm
    sft_steps: int = 400
    sft_lr: float = 1e-3
    # Linear decay: at a constant 1e-3 the last step left run seed 0 answering 1 of 20 click-button-sequence
    # training steps right (20 of 20 with the decay); balance: focus-text-2's 10 steps were fitted with one letter.
    sft_lr_schedule: str = "linear"  # SFTConfig.lr_scheduler_type
    sft_balance_tasks: bool = True  # SFTConfig.balance_tasks: every task's steps drawn equally often
    grpo_steps: int = 150
    grpo_lr: float = 1e-4  # 5e-4 (SFT's half) lowered held-out success within 20-40 steps; docs/learning_benchmarks.md
    grpo_beta: float = 0.0  # k3 KL to the model GRPO starts from (the SFT checkpoint in sft+grpo)
    grpo_sft_mix: float = 1.0  # with pointer_steps: PPO-ptx weight of synthetic pointer pages in every GRPO update
    grpo_sampling_rounds: int = 1  # >1: DAPO's dynamic sampling, rounds of fresh seeds for groups whose rewards differ
    group_size: int = 8
    num_envs: int = 8
    eval_per_task: int = 200
    curve_per_task: int = 20
    eval_every: int = 25
    arms: tuple[str, ...] = ("sft", "sft+grpo", "grpo", "sft+trl")
    eval_init: bool = False  # the random model: it writes no answer the format reads, so each episode runs 8 no-op steps
    work: Path = field(default_factory=lambda: OUT / "miniwob_learning_runs")


# ----- data and models --------------------------------------------------------------------------------------


def suite_seeds(start: int, per_task: int, n_tasks: int) -> list[int]:
    """``per_task`` suite seeds of every task from ``start`` on (seed ``s`` runs task ``s % n_tasks``)."""
    first = start - start % n_tasks
    return list(range(first, first + per_task * n_tasks))


def make_suite(tasks: Sequence[str]) -> Any:
    import gymnasium as gym

    import gui_envs  # noqa: F401

    return gym.make(SUITE_ID, tasks=list(tasks), **ENV_KWARGS)


def record_demonstrations(tasks: Sequence[str], per_task: int, folder: Path, num_envs: int) -> Path:
    """``per_task`` demonstrator episodes of every task (seeds from :data:`DEMO_START`), saved as trajectories."""
    from agents.episode import ListWorkers
    from agents.miniwob_demonstrator import MiniWoBDemonstrator
    from trainers.rollout import RolloutConfig, collect_groups

    if (folder / "done").exists():
        return folder
    workers = ListWorkers([make_suite(tasks) for _ in range(num_envs)])
    try:
        seeds = suite_seeds(DEMO_START, per_task, len(tasks))
        groups = collect_groups(workers, MiniWoBDemonstrator(), seeds, 1,
                                RolloutConfig(max_steps=MAX_STEPS, save_dir=folder, progress=False))  # fmt: skip
    finally:
        workers.close()
    failed = sum(not t.success for grp in groups for t in grp)
    if failed:
        print(f"  demonstrator failed {failed} of {len(seeds)} episodes (SFT trains on the successful ones)")
    (folder / "done").write_text(str(len(seeds)))
    return folder


def build_policy(folder: Path, settings: Settings, seed: int) -> Path:
    from agents.tiny_models import build_causal_lm, build_tokenizer

    if not (folder / "config.json").exists():
        build_causal_lm(folder, hidden_size=settings.hidden, num_layers=settings.layers, seed=seed,
                        tokenizer_builder=lambda p: build_tokenizer(p, merges=False))  # fmt: skip
    return folder


def pointer_config(settings: Settings, seed: int, **kwargs: Any) -> Any:
    """The synthetic pages' settings for pre-training and for the SFT and GRPO mixes: the same checklist share."""
    from trainers.pointer_pretraining import PointerPretrainingConfig

    return PointerPretrainingConfig(seed=seed, checklists=settings.pointer_checklists, **kwargs)


def pointer_pretrained(init: Path, out: Path, settings: Settings, seed: int) -> Path:
    """``init`` after :func:`trainers.pointer_pretraining.pretrain_pointing` (synthetic pages, no MiniWoB)."""
    from trainers.pointer_pretraining import pretrain_pointing

    if not (out / "config.json").exists():
        done = pretrain_pointing(init, out, pointer_config(settings, seed, steps=settings.pointer_steps,
                                                           checklist_steps=settings.pointer_checklist_steps,
                                                           checklist_target=settings.pointer_checklist_target,
                                                           lr_schedule=settings.pointer_lr_schedule))  # fmt: skip
        # the checklist stage's checks on fresh synthetic pages: how long it ran, and how well it reads them
        (out / "checklist_checks.json").write_text(json.dumps(done["checks"]))
    return out


def run_sft(model: Path, data: Path, out: Path, settings: Settings, seed: int) -> Path:
    from trainers.sft import train_sft
    from trainers.sft_config import SFTConfig

    if not (out / "final" / "config.json").exists():
        from gui_envs.schema.trajectory import load_trajectories

        steps_by_task: dict[str, int] = defaultdict(int)
        for t in load_trajectories(data, load_images=False):
            steps_by_task[str(t.task)] += len(t.steps) if t.success else 0
        n_rows = sum(steps_by_task.values())
        if settings.sft_balance_tasks:
            n_rows = max(steps_by_task.values(), default=0) * len(steps_by_task)
        mix = settings.pointer_mix if settings.pointer_steps else 0.0
        n_rows += round(mix * n_rows)  # the synthetic pointer pages mixed in (below)
        epochs = max(1, math.ceil(settings.sft_steps * 16 / max(1, n_rows)))  # about sft_steps batches of 16
        cfg = SFTConfig(model=str(model), data=str(data), env_id=SUITE_ID, env_kwargs={"tasks": list(settings.tasks), **ENV_KWARGS},
                        output_format="act", replay_observations=True, successful_only=True, epochs=epochs, balance_tasks=settings.sft_balance_tasks, lr_scheduler_type=settings.sft_lr_schedule,
                        batch_size=16, learning_rate=settings.sft_lr, warmup_ratio=0.0, weight_decay=0.0,
                        device="cpu", seed=seed, output_dir=str(out), progress=False, plot=False)  # fmt: skip
        make_samples = None
        if mix > 0:
            from trainers.pointer_pretraining import with_pointer_samples

            make_samples = with_pointer_samples(cfg, settings.pointer_mix, pointer_config(settings, seed))
        train_sft(cfg, make_samples)
    return out / "final"


def run_grpo(model: Path, out: Path, settings: Settings, seed: int) -> tuple[Path, list[dict[str, Any]]]:
    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    if (out / "final" / "config.json").exists():  # a finished run (this benchmark resumed): its held-out curve
        rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        return out / "final", [r for r in rows if "eval_greedy_success" in r]
    n = len(settings.tasks)
    mix = settings.grpo_sft_mix if settings.pointer_steps else 0.0
    cfg = GRPOConfig(model=str(model), env_id=SUITE_ID, env_kwargs={"tasks": list(settings.tasks), **ENV_KWARGS},
                     output_format="act", max_episode_steps=MAX_STEPS, group_size=settings.group_size,
                     groups_per_step=n, num_envs=settings.num_envs, num_steps=settings.grpo_steps,
                     learning_rate=settings.grpo_lr, weight_decay=0.0, max_new_tokens=12, decoder="loop",
                     beta=settings.grpo_beta, sft_mix_coef=mix, sampling_rounds=settings.grpo_sampling_rounds, device="cpu", seed=seed, seed_start=TRAIN_START + 1_000_000 * seed,
                     num_train_seeds=1_000_000, eval_seeds=suite_seeds(EVAL_START, settings.curve_per_task, n),
                     eval_every=settings.eval_every, eval_samples=1, eval_swap=True, output_dir=str(out),
                     progress=False, plot=True)  # fmt: skip
    sft_mix = None
    if mix > 0:
        from trainers.pointer_pretraining import pointer_mix

        sft_mix = pointer_mix(pointer_config(settings, seed))
    result = train(cfg, sft_mix)
    return out / "final", result["eval"]


# ----- evaluation ---------------------------------------------------------------------------------------------


def evaluate_policy(
    model: Path, settings: Settings, tasks: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Per task: greedy and sampled held-out success, the swap test, episodes, env steps."""
    from dataclasses import replace

    from agents.episode import ListWorkers
    from agents.hf_agent import HFAgent
    from agents.prompts.act import ActFormat
    from trainers.rollout import RolloutConfig, collect_groups
    from trainers.swap_test import swap_test

    tasks = list(tasks or settings.tasks)
    agent = HFAgent(str(model), output_format=ActFormat(), temperature=1.0, max_new_tokens=12, device="cpu",
                    decoder="loop", seed=0)  # fmt: skip
    workers = ListWorkers([make_suite(settings.tasks) for _ in range(settings.num_envs)])
    n = len(settings.tasks)
    seeds = [s for s in suite_seeds(EVAL_START, settings.eval_per_task, n) if settings.tasks[s % n] in tasks]
    out: dict[str, dict[str, Any]] = {t: {} for t in tasks}
    try:
        rollout = RolloutConfig(max_steps=MAX_STEPS, progress=False)
        sampling = agent.sampling
        for mode, temperature in (("greedy", 0.0), ("sampled", 1.0)):
            agent.sampling = replace(sampling, temperature=temperature)
            trajs = [t for grp in collect_groups(workers, agent, seeds, 1, rollout) for t in grp]
            for t in trajs:
                row = out[str(t.task)]
                row[mode] = row.get(mode, 0) + bool(t.success)
                row["episodes"] = row.get("episodes", 0) + (mode == "greedy")
                row["env_steps"] = row.get("env_steps", 0) + len(t.steps)
        agent.sampling = sampling
        for task in tasks:
            mine = [s for s in seeds if settings.tasks[s % n] == task]
            swap = swap_test(workers, agent, mine)
            for key, (total, count) in swap.items():
                out[task][key.removeprefix("eval_")] = total / count if count else float("nan")
            out[task]["swap_episodes"] = swap["eval_swap_rate"][1]
    finally:
        workers.close()
    for row in out.values():
        for mode in ("greedy", "sampled"):
            row[mode] = row.get(mode, 0) / max(1, row.get("episodes", 0))
    return out


def interval(rates: Sequence[float], episodes: int) -> tuple[float, float]:
    """Mean over seeds and a 95% half-width over the pooled seeds x episodes (normal approximation)."""
    mean = float(np.mean(rates))
    total = max(1, episodes * len(rates))
    return mean, 1.96 * math.sqrt(max(mean * (1 - mean), 1e-12) / total)


def paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Mean paired difference ``a - b`` over seeds and its 95% t half-width (NaN with one seed)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if len(d) < 2:
        return float(d.mean()), float("nan")
    from scipy import stats

    return float(d.mean()), float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d)))


# ----- the run --------------------------------------------------------------------------------------------


def run(settings: Settings) -> dict[str, Any]:
    settings.work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(settings).items()},
                               "arms": defaultdict(dict), "curves": defaultdict(dict), "cost": defaultdict(dict)}  # fmt: skip
    budgets = sorted(set(settings.budgets) | {settings.demos})
    demo_dirs = {
        b: record_demonstrations(settings.tasks, b, settings.work / f"demos{b}", settings.num_envs)
        for b in budgets
    }
    for seed in settings.seeds:
        run_seed(seed, settings, demo_dirs, results)
    return results


def _timed(results: dict[str, Any], name: str, seed: int, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, its wall and CPU minutes recorded under ``results["cost"][name][seed]``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    wall = (time.perf_counter() - t0) / 60
    results["cost"][name][seed] = {"wall_min": wall, "cpu_min": (time.process_time() - c0) / 60}
    print(f"  seed {seed} {name}: {wall:.1f} min", flush=True)
    return out


def run_seed(seed: int, settings: Settings, demo_dirs: dict[int, Path], results: dict[str, Any]) -> None:
    """Every arm of one seed, then each arm's held-out evaluation."""
    root = settings.work / f"seed{seed}"
    init = build_policy(root / "init", settings, seed)
    if settings.pointer_steps:
        init = _timed(results, "pointer", seed, pointer_pretrained, init, root / "pointer", settings, seed)
    arms: dict[str, Path] = {}
    start: Path | None = None  # the SFT checkpoint GRPO and TRL start from
    if {"sft", "sft+grpo", "sft+trl"} & set(settings.arms):
        budgets = sorted(demo_dirs) if "sft" in settings.arms else [settings.demos]
        for b in budgets:
            arms[f"sft@{b}"] = _timed(
                results, f"sft@{b}", seed, run_sft, init, demo_dirs[b], root / f"sft{b}", settings, seed
            )
        start = arms[f"sft@{settings.demos}"]
    if "sft+grpo" in settings.arms:
        arms["sft+grpo"], results["curves"]["sft+grpo"][seed] = _timed(
            results, "sft+grpo", seed, run_grpo, start, root / "sft_grpo", settings, seed)  # fmt: skip
    if "grpo" in settings.arms:
        arms["grpo"], results["curves"]["grpo"][seed] = _timed(
            results, "grpo", seed, run_grpo, init, root / "grpo", settings, seed
        )
    if "sft+trl" in settings.arms:
        from benchmarks.miniwob_trl import train_trl_arm

        single = [t for t in settings.tasks if t in SINGLE_STEP_TASKS]
        done = root / "sft_trl" / "final"
        arms["sft+trl"] = done if (done / "config.json").exists() else Path(_timed(results, "sft+trl", seed, train_trl_arm, str(start), str(root / "sft_trl"), single, seed,
                                      settings.grpo_steps, group_size=settings.group_size, prompts_per_step=len(single),
                                      learning_rate=settings.grpo_lr))  # fmt: skip
    if settings.eval_init:
        arms["init"] = init
    for name, model in arms.items():
        tasks = [t for t in settings.tasks if t in SINGLE_STEP_TASKS] if name == "sft+trl" else None
        stored = root / f"eval_{name.replace('@', '').replace('+', '_')}.json"
        key = evaluation_key(model, settings, tasks)
        if stored.exists() and json.loads(stored.read_text()).get("key") == key:
            results["arms"][name][seed] = json.loads(stored.read_text())["rows"]  # a resumed run: same model, seeds
            continue
        results["arms"][name][seed] = _timed(
            results, f"eval {name}", seed, evaluate_policy, model, settings, tasks
        )
        stored.write_text(json.dumps({"key": key, "rows": results["arms"][name][seed]}, default=float))


def evaluation_key(model: Path, settings: Settings, tasks: Sequence[str] | None) -> dict[str, Any]:
    """What a stored held-out evaluation is valid for: the checkpoint's weights file (size and time) and the
    evaluation's seeds, tasks and episode settings."""
    weights = model / "model.safetensors"
    stat = weights.stat() if weights.exists() else None
    return {"weights": [stat.st_size, stat.st_mtime_ns] if stat else None, "tasks": list(tasks or settings.tasks),
            "suite": list(settings.tasks), "eval_per_task": settings.eval_per_task, "env": ENV_KWARGS,
            "num_envs": settings.num_envs}  # fmt: skip


def tables(results: dict[str, Any], settings: Settings) -> str:
    arms = [a for a in ("init", *[f"sft@{b}" for b in sorted(set(settings.budgets) | {settings.demos})], "grpo", "sft+grpo", "sft+trl")
            if a in results["arms"]]  # fmt: skip
    lines = [f"Held-out greedy success per task (mean over {len(settings.seeds)} seeds, ± 95% over seeds x "
             f"{settings.eval_per_task} episodes); swap rate in brackets, chance after the slash.", "",
             "| task | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]  # fmt: skip
    suite_means: dict[str, list[float]] = {}
    for task in settings.tasks:
        cells = []
        for arm in arms:
            per_seed = [r[task] for r in results["arms"][arm].values() if task in r]
            if not per_seed:
                cells.append("-")
                continue
            m, h = interval([r["greedy"] for r in per_seed], per_seed[0]["episodes"])
            swap = float(np.nanmean([r["swap_rate"] for r in per_seed]))
            chance = float(np.nanmean([r["swap_chance"] for r in per_seed]))
            cells.append(f"{m:.3f} ± {h:.3f} [{swap:.2f}/{chance:.2f}]")
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    for arm in arms:
        runs = results["arms"][arm]
        suite_means[arm] = [float(np.mean([r[t]["greedy"] for t in r])) for r in runs.values()]
    lines += [
        "",
        "| arm | suite mean (per seed) | sampled | env steps (eval) | train CPU min (per seed) |",
        "|---|---|---|---|---|",
    ]
    for arm in arms:
        runs = results["arms"][arm]
        sampled = [float(np.mean([r[t]["sampled"] for t in r])) for r in runs.values()]
        steps = [sum(r[t]["env_steps"] for t in r) for r in runs.values()]
        cost = results["cost"].get(arm, {})
        per_seed = ", ".join(f"{v:.3f}" for v in suite_means[arm])
        cpu = ", ".join(f"{c['cpu_min']:.1f}" for c in cost.values()) or "-"
        ran = {t for r in runs.values() for t in r}
        label = arm if len(ran) == len(settings.tasks) else f"{arm} ({len(ran)} tasks only)"
        lines.append(f"| {label} | {np.mean(suite_means[arm]):.3f} ({per_seed}) | {np.mean(sampled):.3f} | "
                     f"{int(np.mean(steps))} | {cpu} |")  # fmt: skip
    ref = f"sft@{settings.demos}"
    for arm, other in (("sft+grpo", ref), ("sft+grpo", "sft@100"), ("sft+trl", ref), ("sft+trl", "sft+grpo")):
        if arm not in arms or other not in arms:
            continue
        runs, others = results["arms"][arm], results["arms"][other]
        seeds = [k for k in runs if k in others]
        tasks = [t for t in settings.tasks if all(t in runs[k] for k in seeds)]
        if len(seeds) < 2 or not tasks:
            continue
        a = [float(np.mean([runs[k][t]["greedy"] for t in tasks])) for k in seeds]
        b = [float(np.mean([others[k][t]["greedy"] for t in tasks])) for k in seeds]
        d, h = paired(a, b)
        where = "the suite mean" if len(tasks) == len(settings.tasks) else f"the mean of the {len(tasks)} tasks it ran"
        lines.append(f"\nPaired {arm} - {other} on {where} ({np.mean(a):.3f} vs {np.mean(b):.3f}, {len(seeds)} seeds): "
                     f"{d:+.3f} ± {h:.3f} (95% t over seeds)")  # fmt: skip
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for arm, runs in results["curves"].items():
        for ax, key in zip(axes, ("eval_greedy_success", "eval_swap_rate"), strict=True):
            steps = sorted({row["step"] for curve in runs.values() for row in curve})
            mean = [
                np.mean(
                    [row[key] for curve in runs.values() for row in curve if row["step"] == s and key in row]
                    or [np.nan]
                )
                for s in steps
            ]
            ax.plot(steps, mean, marker="o", label=arm)
            if key == "eval_swap_rate":  # chance on the same seeds: a uniformly drawn listed element
                chance = [
                    np.mean([row["eval_swap_chance"] for curve in runs.values() for row in curve
                             if row["step"] == s and "eval_swap_chance" in row] or [np.nan])
                    for s in steps
                ]  # fmt: skip
                ax.plot(steps, chance, linestyle="--", color="grey", label=f"{arm}: chance")
    for ax, title in zip(axes, ("held-out greedy success", "swap rate"), strict=True):
        ax.set_title(title)
        ax.set_xlabel("GRPO step")
        ax.set_ylim(0, 1)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def merge_results(paths: Sequence[Path]) -> tuple[dict[str, Any], Settings]:
    """One result from the ``.json`` of several runs (one seed each, run side by side), and its settings."""
    merged: dict[str, Any] = {"arms": defaultdict(dict), "curves": defaultdict(dict), "cost": defaultdict(dict)}
    seeds: list[int] = []
    for path in paths:
        one = json.loads(Path(path).read_text())
        merged["settings"] = one["settings"]
        seeds += one["settings"]["seeds"]
        for part in ("arms", "curves", "cost"):
            for arm, by_seed in one[part].items():
                merged[part][arm].update(by_seed)
    fields = {k: v for k, v in merged["settings"].items() if k in Settings.__dataclass_fields__}
    fields.update(seeds=tuple(sorted(seeds)), work=Path(fields["work"]))
    for k in ("tasks", "budgets", "arms"):
        fields[k] = tuple(fields[k])
    merged["settings"]["seeds"] = sorted(seeds)
    return merged, Settings(**fields)


def main(argv: list[str] | None = None) -> int:
    from gui_envs.web.miniwob_suite import INSTRUCTION_SUITE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="the CI cut-down: 2 tasks, 1 seed, a few minutes"
    )
    parser.add_argument("--tasks", nargs="+", default=list(INSTRUCTION_SUITE))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--demos", type=int, default=10, help="demonstrations per task before GRPO")
    parser.add_argument(
        "--budgets", type=int, nargs="+", default=[10, 100, 1000], help="SFT-only budgets per task"
    )
    parser.add_argument("--arms", nargs="+", default=["sft", "sft+grpo", "grpo", "sft+trl"])
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--pointer-steps", type=int, default=1000,
                        help="synthetic pointer pre-training steps before every arm (0: the random model)")
    parser.add_argument("--pointer-checklists", type=float, default=0.5,
                        help="share of checklist pages in pointer pre-training and in the SFT and GRPO mixes")
    parser.add_argument("--pointer-checklist-steps", type=int, default=5000,
                        help="a first pointer stage on checklist pages only (with --pointer-checklist-target: its cap; 0: none)")
    parser.add_argument("--pointer-checklist-target", type=float, default=0.95,
                        help="end the checklist stage once this share of fresh synthetic checklist pages is read "
                             "right (--pointer-checklist-steps is then its cap; 0: run it all)")
    parser.add_argument("--pointer-lr-schedule", choices=["constant", "linear"], default="linear",
                        help="the (mixed) pointer stage's learning rate: flat, or down to 0 at the last step")
    parser.add_argument("--pointer-mix", type=float, default=1.0,
                        help="with --pointer-steps: synthetic pages per demonstration sample in each SFT arm")
    parser.add_argument("--sft-steps", type=int, default=400, help="SFT optimiser steps (batch 16), about")
    parser.add_argument("--sft-lr", type=float, default=1e-3, help="SFT learning rate (constant, AdamW)")
    parser.add_argument("--sft-lr-schedule", choices=["constant", "linear"], default="linear",
                        help="SFT's learning rate after warm-up: flat, or down to 0 at the last step")
    parser.add_argument("--sft-balance-tasks", action=argparse.BooleanOptionalAction, default=True,
                        help="SFT draws every task's steps equally often (SFTConfig.balance_tasks)")
    parser.add_argument("--grpo-steps", type=int, default=150)
    parser.add_argument("--grpo-lr", type=float, default=1e-4, help="GRPO learning rate (constant, AdamW)")
    parser.add_argument("--grpo-beta", type=float, default=0.0,
                        help="GRPO's k3 KL coefficient to the model it starts from (0: no reference model)")
    parser.add_argument("--grpo-sft-mix", type=float, default=1.0,
                        help="with --pointer-steps: weight of an SFT term on fresh synthetic pointer pages in every "
                             "GRPO update (PPO-ptx; 0: off)")  # fmt: skip
    parser.add_argument("--grpo-sampling-rounds", type=int, default=1,
                        help="GRPO's dynamic sampling: up to this many rounds of fresh seeds per step until the "
                             "batch's groups have unequal rewards (DAPO; 1: off)")  # fmt: skip
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--eval-per-task", type=int, default=200)
    parser.add_argument("--curve-per-task", type=int, default=20)
    parser.add_argument("--eval-every", type=int, default=25)
    parser.add_argument("--work", type=Path, default=None, help="run folders (default: under benchmarks/out)")
    parser.add_argument("--out", type=Path, default=None, help="result files, without suffix")
    parser.add_argument(
        "--merge", type=Path, nargs="+", default=None,
        help="instead of running: merge these result .json files (runs of other seeds, same settings) into --out",
    )  # fmt: skip
    a = parser.parse_args(argv)
    name = "miniwob_learning_quick" if a.quick else "miniwob_learning"  # the cut-down run never reuses the full one's
    a.work = a.work or OUT / f"{name}_runs"
    a.out = a.out or OUT / name
    if a.quick:
        # Two demonstrations per task, so that the warm start leaves room to rise on 20 held-out seeds (from ten,
        # SFT alone scored 0.975 and GRPO had nothing to add), and dynamic sampling, as at this start most groups
        # agree (every member right) and teach nothing. The pointer stage is short for the same reason: it alone
        # teaches click-button's pointing (SFT(2) on click-button after 400 / 600 / 650 / 700 / 800 pointer steps:
        # 0.40 / 0.45 / 0.65 / 0.85 / 0.85-0.90, GRPO then 0.90 at 650 with 40 steps, 1.00 at 700-800 with 30).
        settings = Settings(tasks=("click-test-2", "click-button"), seeds=(0,), demos=2, budgets=(2,), pointer_steps=650,
                            pointer_checklists=0.0, pointer_checklist_steps=0, pointer_lr_schedule="constant",
                            sft_steps=150, grpo_steps=40, grpo_lr=3e-4, grpo_sampling_rounds=3, group_size=4, num_envs=4,
                            eval_per_task=20, curve_per_task=5, eval_every=10, arms=("sft", "sft+grpo"), work=a.work)  # fmt: skip
    else:
        settings = Settings(tasks=tuple(a.tasks), seeds=tuple(a.seeds), demos=a.demos, budgets=tuple(a.budgets),
                            hidden=a.hidden, layers=a.layers, pointer_steps=a.pointer_steps, pointer_mix=a.pointer_mix, pointer_checklists=a.pointer_checklists, pointer_checklist_steps=a.pointer_checklist_steps, pointer_checklist_target=a.pointer_checklist_target, pointer_lr_schedule=a.pointer_lr_schedule, sft_steps=a.sft_steps, sft_lr=a.sft_lr, sft_balance_tasks=a.sft_balance_tasks, sft_lr_schedule=a.sft_lr_schedule, grpo_steps=a.grpo_steps,
                            grpo_lr=a.grpo_lr, grpo_beta=a.grpo_beta, grpo_sft_mix=a.grpo_sft_mix, grpo_sampling_rounds=a.grpo_sampling_rounds, group_size=a.group_size, eval_per_task=a.eval_per_task,
                            curve_per_task=a.curve_per_task, eval_every=a.eval_every, arms=tuple(a.arms), work=a.work)  # fmt: skip
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    t0 = time.perf_counter()
    if a.merge:
        results, settings = merge_results(a.merge)
    else:
        results = run(settings)
    text = tables(results, settings)
    print(text)
    print(f"\ntotal {(time.perf_counter() - t0) / 60:.1f} min")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps(results, indent=1, default=float))
    a.out.with_suffix(".md").write_text(text + "\n")
    if results["curves"]:
        plot(results, a.out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
