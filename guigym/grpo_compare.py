"""GRPO arms compared on held-out success, over several seeds: the runner behind ``benchmarks/ssl_grounding.py``,
``benchmarks/sca_grounding.py`` and ``guigym demo``'s GRPO stage.

* **Task** (:class:`Task`): ``ClickBox-v0`` (a layout of labelled boxes drawn per seed), answered in the ``box``
  format (one cell of a 5 x 5 answer grid by default, or of a finer grid named by row and column letters with
  ``Task.format_kwargs``; the click lands on that cell's centre, anywhere inside or outside the target box), with
  ``constrain_answers`` (only grid letters are sampled, so every answer is a well-formed click).
* **Arms** (:data:`ARMS`; only the reward or the credit changes, same loop and hyper-parameters otherwise):
  ``binary`` and ``grpo``: reward ``binary`` (GUI-R1's ``0.8 * accuracy + 0.2 * format``), estimator ``grpo``;
  ``ssl``: reward ``ssl`` (``C + alpha * S_hat``, seed 000 section 3), estimator ``grpo``; ``ssl_paper``: the same
  with the wrapper's defaults (alpha 0.2, the printed ``lower`` zone values); ``sca``: reward ``binary``,
  estimator ``sca`` (seed 001 section 4.1).
* **Splits**: run seed ``s`` trains on env seeds ``s * TRAIN_SEEDS_PER_RUN ..`` (a stream of its own); every run is
  evaluated on the same held-out seeds from :data:`EVAL_SEED_START` on, past every run's stream (the trainer
  refuses an overlap). The two arms of one seed share the initial weights, the training seeds and torch's seed
  (paired runs).
* **Metric**: held-out greedy success (temperature 0, one rollout per held-out seed) every ``eval_every`` steps,
  and before the first step; per arm the mean over seeds with a 95% t confidence interval (:func:`mean_ci`).

Why the format bonus decides nothing here: with ``constrain_answers`` every answer parses into a click, so
``binary`` pays ``0.2 + 0.8 * hit``, an affine map of the hit; GRPO's advantage ``(r - mean) / std`` is unchanged by
one (up to its ``eps``; :func:`format_bonus_is_constant` checks on the rollouts' rewards), so ``binary`` trains exactly as the bare
hit reward would, and ``ssl`` differs from it only by its tiers.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Env seeds per run's training stream: run seed ``s`` trains on ``s * TRAIN_SEEDS_PER_RUN ..`` onward.
TRAIN_SEEDS_PER_RUN = 1_000_000
#: First held-out seed (shared by every run); past the streams of run seeds below 1000.
EVAL_SEED_START = 1_000_000_000


@dataclass(frozen=True)
class Arm:
    """One side of a comparison: a reward and an advantage estimator of :class:`trainers.grpo_config.GRPOConfig`."""

    reward: str
    estimator: str = "grpo"
    reward_kwargs: dict[str, Any] = field(default_factory=dict)
    estimator_kwargs: dict[str, Any] = field(default_factory=dict)


#: SSL graded for this task: alpha 0.5 (the top of the paper's 0.1-0.5 sweep, section 4.5 / App.) and the zone's
#: upper boundary as its value, so a hit on the box's central cell earns 1.30 and one on a cell near the edge 1.07
#: (with the defaults both earn about 1.0: see benchmarks/ssl_grounding.py).
SSL_GRADED = {"alpha": 0.5, "zone_value": "upper"}

#: The ``binary`` arms train on GUI-R1's ``0.8 * hit + 0.2 * format`` (``binary_format``), the baseline the
#: comparisons were measured with; GRPO's ``(r - mean) / std`` removes the constant format term (see
#: :func:`format_bonus_is_constant`), so they train as on the hit alone.
ARMS: dict[str, Arm] = {
    "binary": Arm("binary_format", "grpo"),
    "grpo": Arm("binary_format", "grpo"),
    "ssl": Arm("ssl", "grpo", SSL_GRADED),
    "ssl_paper": Arm("ssl", "grpo"),
    "sca": Arm("binary_format", "sca"),
}


class UnknownVariantError(ValueError):
    """The arm is not one of :data:`ARMS`."""


@dataclass
class Task:
    """The task and the training budget every arm of a comparison shares."""

    env_kwargs: dict[str, Any] = field(default_factory=lambda: {"n_boxes": 2})
    """``ClickBox-v0`` constructor arguments."""
    group_size: int = 8
    """Rollouts per group ``N`` (SSL App. B.5: 8; SCA: 5)."""
    groups_per_step: int = 8
    """Groups (training seeds) per optimiser step."""
    steps: int = 200
    """Optimiser steps per run."""
    learning_rate: float = 1e-3
    """AdamW learning rate (a tiny model from random initialisation, not the paper's 1e-6 on a 3B VLM)."""
    eval_count: int = 200
    """Held-out seeds, from :data:`EVAL_SEED_START`."""
    eval_every: int = 20
    """Held-out evaluation every this many steps (and before the first, and after the last)."""
    grad_variance_every: int = 0
    """Log the policy-gradient variance on every this many steps (:func:`trainers.grpo.gradient_variance`; 0: never)."""
    # --- answer grid ---
    format_kwargs: dict[str, Any] = field(default_factory=dict)
    """``box`` format arguments (:class:`agents.prompts.box.BoxFormat`): ``{}`` is the 5 x 5 one-letter grid;
    ``{"grid": 10, "letters": 2}`` a 10 x 10 grid named by row and column letters (two sampled tokens)."""


def clickbox_task_args(grid: int, box_min: int, box_max: int) -> tuple[dict[str, int], dict[str, int]]:
    """``(env_kwargs, format_kwargs)``: ClickBox-v0 with 2 boxes of ``box_min``-``box_max`` pixels a side, and the
    ``box`` format's ``grid x grid`` answer grid (one letter per cell up to 5 x 5, else row and column letters).

    >>> clickbox_task_args(8, 20, 30)
    ({'n_boxes': 2, 'min_side': 20, 'max_side': 30}, {'grid': 8, 'letters': 2})
    >>> clickbox_task_args(5, 30, 48)[1]
    {'grid': 5, 'letters': 1}
    """
    return {"n_boxes": 2, "min_side": box_min, "max_side": box_max}, {"grid": grid, "letters": 1 if grid <= 5 else 2}


@dataclass
class RunResult:
    """One run: its held-out curve and its per-step training records."""

    arm: str
    seed: int
    eval_steps: list[int]
    """Optimiser steps at which the held-out split was evaluated (0: before training)."""
    greedy: list[float]
    """Held-out greedy success at those steps, in [0, 1]."""
    history: list[dict[str, Any]]
    """The trainer's per-step records (rewards, training-rollout success, ``grad_var`` when logged, ...)."""

    def metric(self, key: str) -> np.ndarray:
        """A per-step training metric, shape ``(steps,)`` (NaN where a step lacks it)."""
        return np.array([float(r.get(key, np.nan)) for r in self.history])


def run_arm(
    model: str | Path, arm: str, seed: int, task: Task, out: str | Path, progress: bool = False,
    show_memory_plan: bool = True,
) -> RunResult:
    """Train one GRPO run of ``arm`` with ``seed`` on the task; logs and the final model go to ``out/<arm>-<seed>``.
    ``show_memory_plan``: print the run's memory plan table (every arm and seed has the same one)."""
    import torch

    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    if arm not in ARMS:
        raise UnknownVariantError(f"unknown arm {arm!r}; choose one of {', '.join(ARMS)}")
    torch.set_num_threads(1)  # a tiny model is fastest on one thread, and the CPU is shared
    a = ARMS[arm]
    batch = task.group_size * task.groups_per_step
    config = GRPOConfig(
        model=str(model), env_id="ClickBox-v0", env_kwargs=dict(task.env_kwargs), output_format="box",
        constrain_answers=True, reward=a.reward, reward_kwargs=dict(a.reward_kwargs), estimator=a.estimator,
        estimator_kwargs=dict(a.estimator_kwargs), group_size=task.group_size, groups_per_step=task.groups_per_step,
        num_envs=batch, num_steps=task.steps, learning_rate=task.learning_rate, decoder="loop",
        format_kwargs=dict(task.format_kwargs) or None, max_new_tokens=int(task.format_kwargs.get("letters", 1)),
        device="cpu", seed=seed, seed_start=seed * TRAIN_SEEDS_PER_RUN, num_train_seeds=TRAIN_SEEDS_PER_RUN,
        eval_seeds={"start": EVAL_SEED_START, "count": task.eval_count}, eval_every=task.eval_every, eval_samples=0,
        grad_variance_every=task.grad_variance_every, output_dir=str(Path(out) / f"{arm}-{seed}"), progress=progress,
        plot=False, show_memory_plan=show_memory_plan,
    )  # fmt: skip
    result = train(config)
    evals = result["eval"]
    history = [{k: v for k, v in r.items()} for r in result["history"]]
    return RunResult(arm, seed, [int(e["step"]) for e in evals], [float(e["eval_greedy_success"]) for e in evals],
                     history)  # fmt: skip


def _run_job(job: tuple[str, str, int, dict[str, Any], str, bool]) -> RunResult:
    model, arm, seed, task, out, show_memory_plan = job
    return run_arm(model, arm, seed, Task(**task), out, show_memory_plan=show_memory_plan)


def compare(
    model: str | Path,
    arms: Sequence[str],
    seeds: Sequence[int],
    task: Task,
    out: str | Path,
    jobs: int = 1,
    on_run: Callable[[RunResult], None] | None = None,
    progress: bool = False,
) -> dict[str, list[RunResult]]:
    """Run every arm with every seed; ``{arm: [RunResult per seed, in seed order]}``.

    ``jobs > 1`` runs that many trainings at once in spawned processes (one torch thread each). The memory plan,
    the same for every run, is printed by the first run only.
    ``on_run(result)`` is called as each run finishes (for progress lines).
    """
    for arm in arms:
        if arm not in ARMS:
            raise UnknownVariantError(f"unknown arm {arm!r}; choose one of {', '.join(ARMS)}")
    order = [(arm, seed) for seed in seeds for arm in arms]  # paired arms of a seed finish together
    results: dict[tuple[str, int], RunResult] = {}
    if jobs <= 1:
        for i, (arm, seed) in enumerate(order):
            results[arm, seed] = r = run_arm(model, arm, seed, task, out, progress=progress, show_memory_plan=i == 0)
            if on_run is not None:
                on_run(r)
    else:
        with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as pool:
            futures = [
                pool.submit(_run_job, (str(model), arm, seed, asdict(task), str(out), i == 0))
                for i, (arm, seed) in enumerate(order)
            ]
            for fut in futures:
                r = fut.result()
                results[r.arm, r.seed] = r
                if on_run is not None:
                    on_run(r)
    return {arm: [results[arm, seed] for seed in seeds] for arm in arms}


def mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Mean over axis 0 and the half-width of its two-sided ``level`` Student-t interval (``(n - 1)`` dof).

    One value gives a half-width of NaN (no spread to estimate).

    >>> m, h = mean_ci(np.array([0.1, 0.2, 0.3]))
    >>> round(float(m), 3), round(float(h), 3)  # t_{0.975, 2} = 4.303, s = 0.1, h = 4.303 * 0.1 / sqrt(3)
    (0.2, 0.248)
    """
    from scipy import stats

    x = np.asarray(values, dtype=np.float64)
    n = x.shape[0]
    mean = x.mean(axis=0)
    if n < 2:
        return mean, np.full_like(mean, np.nan)
    half = stats.t.ppf(0.5 + level / 2, n - 1) * x.std(axis=0, ddof=1) / np.sqrt(n)
    return mean, half


def steps_to_level(steps: Sequence[int], curve: Sequence[float], level: float) -> int | None:
    """The first evaluated step whose held-out success reaches ``level``; None if none does.

    >>> steps_to_level([0, 20, 40, 60], [0.1, 0.3, 0.25, 0.5], 0.3)
    20
    >>> steps_to_level([0, 20], [0.1, 0.2], 0.3) is None
    True
    """
    hit = [s for s, c in zip(steps, curve, strict=True) if c >= level]
    return int(hit[0]) if hit else None


def steps_summary(runs: Sequence[RunResult], level: float) -> tuple[float, int, bool]:
    """Mean steps to ``level`` over ``runs``, a run that never gets there counted at its last step (so the mean is
    then a lower bound); returns ``(mean, runs that reached, whether the mean is a lower bound)``.

    >>> r = [RunResult("a", 0, [0, 10, 20], [0.0, 0.5, 0.6], []), RunResult("a", 1, [0, 10, 20], [0.0, 0.1, 0.2], [])]
    >>> steps_summary(r, 0.5)
    (15.0, 1, True)
    """
    reached = [steps_to_level(r.eval_steps, r.greedy, level) for r in runs]
    values = [s if s is not None else r.eval_steps[-1] for s, r in zip(reached, runs, strict=True)]
    n = sum(s is not None for s in reached)
    return float(np.mean(values)), n, n < len(runs)


def curves(runs: Sequence[RunResult]) -> tuple[np.ndarray, np.ndarray]:
    """The evaluated steps ``(E,)`` and the held-out greedy curves ``(seeds, E)`` of runs sharing one schedule."""
    steps = np.array(runs[0].eval_steps)
    if any(r.eval_steps != runs[0].eval_steps for r in runs):
        raise ValueError("runs evaluated at different steps: compare runs of one Task")
    return steps, np.array([r.greedy for r in runs])


def format_bonus_is_constant(runs: Sequence[RunResult]) -> bool:
    """Whether every training step of ``binary``-reward runs paid the format term to every rollout: the step's mean
    reward is ``0.2 + 0.8 * success`` (so the 0.2 is a constant offset that GRPO's normalisation removes).

    >>> format_bonus_is_constant([RunResult("binary", 0, [], [], [{"reward_mean": 0.4, "success_rate": 0.25}])])
    True
    >>> format_bonus_is_constant([RunResult("binary", 0, [], [], [{"reward_mean": 0.35, "success_rate": 0.25}])])
    False
    """
    return all(
        abs(r["reward_mean"] - (0.2 + 0.8 * r["success_rate"])) < 1e-9 for run in runs for r in run.history
    )


def plot_heldout(
    results: dict[str, list[RunResult]],
    png: str | Path,
    title: str,
    level: float | None = None,
    episodes_per_step: int | None = None,
) -> Path:
    """Held-out greedy success per arm: the mean over seeds with its 95% confidence band, against GRPO steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for arm, runs in results.items():
        steps, y = curves(runs)
        m, h = mean_ci(y)
        (line,) = ax.plot(
            steps, m, marker="o", ms=3, label=f"{arm} ({len(runs)} seed{'s' if len(runs) > 1 else ''})"
        )
        if len(runs) > 1:
            ax.fill_between(steps, m - h, m + h, color=line.get_color(), alpha=0.2, lw=0)
    if level is not None:
        ax.axhline(level, color="grey", ls=":", lw=1)
    per = f" ({episodes_per_step} rollouts each)" if episodes_per_step else ""
    ax.set_xlabel(f"GRPO step{per}")
    ax.set_ylabel("held-out greedy success")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    png = Path(png)
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png


def fmt_ci(mean: float, half: float, digits: int = 3) -> str:
    """``mean ± half`` (``mean`` alone when the half-width is NaN).

    >>> fmt_ci(0.25, 0.031), fmt_ci(0.25, float("nan"))
    ('0.250 ± 0.031', '0.250')
    """
    return f"{mean:.{digits}f}" if np.isnan(half) else f"{mean:.{digits}f} ± {half:.{digits}f}"


def heldout_table(results: dict[str, list[RunResult]], levels: Sequence[float]) -> list[str]:
    """Markdown rows: per arm, held-out greedy success before training and at the last step (mean ± 95% CI over
    seeds), and the mean steps to each of ``levels`` (``>=`` when some seed never got there, counted at its last
    step; the number of seeds that reached it in brackets)."""
    head = ["arm", "seeds", "held-out start", "held-out final (mean ± 95% CI)"]
    head += [f"steps to {level:.2f}" for level in levels]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for arm, runs in results.items():
        _, y = curves(runs)
        cells = [arm, str(len(runs)), fmt_ci(*mean_ci(y[:, 0])), fmt_ci(*mean_ci(y[:, -1]))]
        for level in levels:
            mean, n, lower = steps_summary(runs, level)
            cells.append(f"{'>= ' if lower else ''}{mean:.0f} ({n}/{len(runs)})")
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def steps_ratio_rows(
    results: dict[str, list[RunResult]], base: str, other: str, levels: Sequence[float]
) -> list[str]:
    """Markdown rows: the ratio of mean steps to each level, ``base / other`` (> 1: ``other`` needed fewer), marked
    as a bound where a mean is one, and the paired difference of final held-out success ``other - base``."""
    rows = [f"| level | steps {base} | steps {other} | ratio {base} / {other} |", "|---|---|---|---|"]
    for level in levels:
        (mb, _, lb), (mo, _, lo) = steps_summary(results[base], level), steps_summary(results[other], level)
        if lb and lo:
            ratio = "neither arm reached it on every seed"
        elif lb or lo:
            ratio = f"{'>=' if lb else '<='} {mb / mo:.2f}" if mo > 0 else "-"
        else:
            ratio = f"{mb / mo:.2f}" if mo > 0 else "-"
        rows.append(
            f"| {level:.2f} | {'>= ' if lb else ''}{mb:.0f} | {'>= ' if lo else ''}{mo:.0f} | {ratio} |"
        )
    return rows


def paired_final_difference(
    results: dict[str, list[RunResult]], base: str, other: str
) -> tuple[float, float]:
    """Mean and 95% half-width of ``other - base`` final held-out success, paired by seed (same seeds, same order)."""
    b, o = curves(results[base])[1][:, -1], curves(results[other])[1][:, -1]
    m, h = mean_ci(o - b)
    return float(m), float(h)


def run_with_progress(
    work: Path, arms: Sequence[str], seeds: Sequence[int], task: Task, jobs: int = 1
) -> dict[str, list[RunResult]]:
    """Build the tiny model (2 layers, hidden 128) under ``work``, then :func:`compare` with a progress bar and a
    line per finished run; run folders go to ``work/runs``."""
    import time

    import torch
    from tqdm.auto import tqdm

    from agents.tiny_models import build_causal_lm

    torch.set_num_threads(1)
    model = build_causal_lm(Path(work) / "tiny-llama-128", hidden_size=128)
    bar = tqdm(total=len(arms) * len(seeds), desc="runs", unit="run")
    t0 = time.perf_counter()

    def done(r: RunResult) -> None:
        bar.write(f"{r.arm} seed {r.seed}: held-out greedy {r.greedy[0]:.3f} -> {r.greedy[-1]:.3f} "
                  f"({time.perf_counter() - t0:.0f} s)")  # fmt: skip
        bar.update(1)

    try:
        return compare(model, arms, seeds, task, Path(work) / "runs", jobs=jobs, on_run=done)
    finally:
        bar.close()


def save_curves(
    results: dict[str, list[RunResult]], task: Task, path: Path, extra: Sequence[str] = ()
) -> Path:
    """Write the task and every run's held-out curve (plus the per-step training metrics named in ``extra``) as
    JSON, for re-plotting and the report."""
    import json

    runs = {
        arm: [{"seed": r.seed, "eval_steps": r.eval_steps, "greedy": r.greedy,
               **{k: r.metric(k).tolist() for k in extra}} for r in rs]
        for arm, rs in results.items()
    }  # fmt: skip
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task": asdict(task), "runs": runs}, indent=1))
    return path


def load_curves(path: Path) -> tuple[Task, dict[str, list[RunResult]]]:
    """The task and runs :func:`save_curves` wrote (each run's history holds the saved per-step metrics only)."""
    import json

    data = json.loads(Path(path).read_text())
    results = {}
    for arm, runs in data["runs"].items():
        results[arm] = []
        for r in runs:
            extra = {k: v for k, v in r.items() if k not in ("seed", "eval_steps", "greedy")}
            steps = len(next(iter(extra.values()))) if extra else 0
            history = [{k: v[i] for k, v in extra.items()} for i in range(steps)]
            results[arm].append(RunResult(arm, r["seed"], r["eval_steps"], r["greedy"], history))
    known = {
        k: v for k, v in data["task"].items() if k in Task.__dataclass_fields__
    }  # older files: extra keys
    return Task(**known), results


__all__ = [
    "ARMS", "EVAL_SEED_START", "SSL_GRADED", "TRAIN_SEEDS_PER_RUN", "Arm", "RunResult", "Task", "UnknownVariantError",
    "compare", "curves", "fmt_ci", "format_bonus_is_constant", "heldout_table", "load_curves", "mean_ci", "paired_final_difference",
    "plot_heldout", "run_arm", "run_with_progress", "save_curves", "steps_ratio_rows", "steps_summary", "steps_to_level",
]  # fmt: skip
