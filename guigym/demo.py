"""The demo that ``./run demo`` shows: the mission in miniature, on CPU, with no network.

Six stages, each printed as it runs and timed, then a summary table; everything lands in ``out`` (default
``runs/demo``) and ``out/report.html`` shows it:

1. **baselines**: every environment family with a random agent and with its oracle (the old demo's table);
2. **demos**: oracle demonstrations on the bundled shop (Chromium) and phone apps, with screenshots (the GIFs);
3. **core**: a tiny model built from a config (:mod:`agents.tiny_models`, nothing downloaded), then CORE
   (seed 002, App. C.4) on shop and phone templates: strategy graphs abstracted from oracle demonstrations,
   behaviour cloning, and one iteration of sampling, verifying, graph expansion and task extrapolation, with the
   scripted noisy oracle sampling beside the model (a random model solves nothing, so only it makes graphs grow).
   Its figure is held-out greedy success after behaviour cloning and after the iteration, on task seeds of the
   training templates never trained on (:data:`CORE_EVAL_START` on) and on the held-out templates; kept
   trajectories are counted by source, the oracle's and the noisy oracle's apart from the policy's;
4. **grpo**: GRPO with the ``ssl`` reward (seed 000) against ``binary`` on ``ClickBox-v0`` (layouts drawn per seed)
   with a wider tiny model (:mod:`guigym.grpo_compare`): held-out greedy success on layouts never trained on,
   the mean over seeds with a 95% band per reward;
5. **eval**: ``GuiOffline-v0``'s bundled fixtures scored Type / GR / SR (seed 000 sec. 4.1) for the oracle and a
   random agent;
6. **report**: ``report.html`` (:mod:`guigym.report`) with the tables, the curves, the GIFs and a graph drawing.

``quick=True`` runs the same path cut down (a test runs it in about a minute). Scratch work (the tiny model,
the CORE run, the GRPO checkpoints) goes to ``out/work`` and is left out of the report.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import gui_envs  # noqa: F401  (registers the ids)
from agents import OracleAgent, RandomAgent
from agents.episode import run_episode

#: (label, env id, constructor kwargs). Later issues append their environments here.
DEMO_ENVS: list[tuple[str, str, dict[str, Any]]] = [
    ("Maze 9x9, answer mode", "Maze-v0", {"size": 9}),
    ("Maze 9x9, navigate mode", "Maze-v0", {"size": 9, "mode": "navigate"}),
    ("Sudoku, 50 blanks", "Sudoku-v0", {}),
    ("ARC, procedural", "Arc-v0", {}),
    ("Web: shop/forum/classifieds tasks in Chromium", "GuiWeb-v0", {"max_steps": 15}),
    ("Android: simulated phone, 7 bundled apps", "GuiAndroid-v0", {"max_steps": 15}),
]

BASELINE_COLUMNS = ("environment", "agent", "mean return", "success", "mean steps")
EVAL_COLUMNS = ("dataset", "agent", "episodes", "Type", "GR", "SR", "success")
SUMMARY_COLUMNS = ("stage", "result", "artefacts", "seconds")
HELDOUT_COLUMNS = ("trainer", "held-out split", "run seeds", "first evaluation", "last evaluation", "training")
CORE_COLUMNS = (
    "iteration", "policy trained on", "held-out greedy: unseen task seeds", "held-out greedy: unseen templates",
    "kept: oracle demos", "kept: policy's own", "kept: policy's, relabelled", "kept: noisy oracle (scripted)",
    "avg path count",
)  # fmt: skip

CORE_TEMPLATES = [
    "GuiWeb-Shop-v0:shop.add_to_wishlist", "GuiWeb-Shop-v0:shop.add_to_cart", "GuiWeb-Shop-v0:shop.open_product",
    "GuiWeb-Shop-v0:shop.search", "GuiWeb-Shop-v0:shop.remove_from_wishlist", "GuiWeb-Shop-v0:shop.price",
    "GuiAndroid-v0:clock.add_alarm", "GuiAndroid-v0:contacts.create_contact", "GuiAndroid-v0:notes.create_note",
    "GuiAndroid-v0:settings.wifi",
]  # fmt: skip
#: First unseen task seed of the CORE stage's held-out split. CORE trains on task seed 100 (``seed_base``, one
#: instance per template), so seeds from here on are instances (targets, page and app contents) never trained on.
CORE_EVAL_START = 1000


@dataclass
class DemoConfig:
    """How much of each stage the demo runs. The defaults are the full demo (about 5 minutes of work on an idle
    2-core machine); :meth:`quick` is the cut-down path the tests run."""

    out: str = "runs/demo"
    """Output folder: ``report.html``, the figures, the oracle demonstrations; scratch work under ``work/``."""
    baseline_episodes: int = 3
    """Episodes per environment and agent in the baselines table."""
    demo_tasks: list[tuple[str, str]] = field(
        default_factory=lambda: [("GuiWeb-Shop-v0", "shop.add_to_wishlist"), ("GuiAndroid-v0", "notes.create_note")]
    )
    """(env id, task template) of each oracle demonstration recorded with screenshots."""
    core_templates: list[str] = field(default_factory=lambda: list(CORE_TEMPLATES))
    """``ENV_ID:template`` of the tasks CORE trains and tests on (split 70/30 by the loop)."""
    core_samples: int = 5
    """Trajectories per task in the CORE iteration (``core_samples - 1`` from the scripted noisy oracle)."""
    grpo_steps: int = 80
    """GRPO steps per run (64 rollouts each)."""
    grpo_seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    """Seeds per reward; the curve is their mean, the band its 95% interval."""
    grpo_eval_seeds: int = 100
    """Held-out layouts the GRPO runs are evaluated on (every ``grpo_steps // 8`` steps)."""
    eval_datasets: list[str] = field(
        default_factory=lambda: ["screenspot", "screenspot_pro", "androidcontrol", "aitz", "gui_odyssey", "gui_r1"]
    )
    """``GuiOffline-v0`` fixtures to score."""
    eval_episodes: int | None = None
    """Episodes per fixture (None: the whole fixture)."""

    # --- CORE held-out split ---
    core_eval_seeds: int = 2
    """Unseen task seeds (``CORE_EVAL_START`` on) per CORE training template, each played once greedily after
    behaviour cloning and after the iteration: CORE's learning figure. Greedy only, so the stage keeps its time."""

    def __post_init__(self) -> None:
        if (self.baseline_episodes < 1 or self.core_samples < 2 or self.grpo_steps < 1 or not self.grpo_seeds
                or self.core_eval_seeds < 1):  # fmt: skip
            raise ValueError(
                "DemoConfig needs baseline_episodes >= 1, core_samples >= 2 (one policy sample plus scripted ones), "
                f"grpo_steps >= 1, a seed and core_eval_seeds >= 1; got {self.baseline_episodes}, "
                f"{self.core_samples}, {self.grpo_steps}, {self.grpo_seeds}, {self.core_eval_seeds}"
            )

    @classmethod
    def quick(cls, out: str = "runs/demo") -> DemoConfig:
        """The same stages cut down to about a minute: 1 baseline episode, 3 CORE templates (1 unseen task seed
        each), 8 GRPO steps on 16 held-out layouts, 2 fixtures."""
        return cls(
            out=out, baseline_episodes=1, core_samples=3, grpo_steps=8, grpo_seeds=[0], grpo_eval_seeds=16,
            eval_episodes=4, core_eval_seeds=1,
            eval_datasets=["screenspot", "androidcontrol"],
            core_templates=[CORE_TEMPLATES[0], CORE_TEMPLATES[3], CORE_TEMPLATES[8]],
        )  # fmt: skip


_NUMERIC = {"mean return", "success", "mean steps", "episodes", "Type", "GR", "SR", "seconds"}


def _table(title: str, columns: tuple[str, ...], rows: list[list[str]]) -> Table:
    table = Table(title=title)
    for col in columns:
        table.add_column(col, justify="right" if col in _NUMERIC else "left")
    for row in rows:
        table.add_row(*row)
    return table


def baseline_rows(episodes: int, console: Console | None = None) -> list[list[str]]:
    """Random and oracle agents on every :data:`DEMO_ENVS` entry: rows of :data:`BASELINE_COLUMNS`."""
    rows = []
    for label, env_id, kwargs in DEMO_ENVS:
        if console is not None:
            console.print(f"  {label}")
        with gym.make(env_id, **kwargs) as env:
            for agent in (RandomAgent(env.action_space, seed=0), OracleAgent(env)):
                trajs = [run_episode(env, agent, seed=s) for s in range(episodes)]
                rows.append([
                    label,
                    agent.name,
                    f"{statistics.fmean(t.total_reward for t in trajs):.3f}",
                    f"{sum(bool(t.success) for t in trajs) / len(trajs):.0%}",
                    f"{statistics.fmean(len(t.steps) for t in trajs):.1f}",
                ])  # fmt: skip
    return rows


def run_demo(episodes: int = 3, console: Console | None = None) -> Table:
    """Play ``episodes`` episodes per environment and agent; print and return the random-vs-oracle table."""
    console = console or Console()
    table = _table(f"guigym baselines ({episodes} episodes each)", BASELINE_COLUMNS, baseline_rows(episodes))
    console.print(table)
    return table


def _oracle_demos(config: DemoConfig, out: Path) -> tuple[str, list[Path]]:
    folders = []
    for env_id, task in config.demo_tasks:
        with gym.make(env_id, render_mode="rgb_array") as env:
            traj = run_episode(env, OracleAgent(env), seed=0, options={"task": task, "seed": 0},
                               record_screenshots=True)  # fmt: skip
            folders.append(traj.save(out / "demos"))
    return f"{len(folders)} oracle episodes recorded with screenshots", folders


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success fraction ``successes / n`` (95% for ``z = 1.96``; Wilson 1927).

    Unlike ``p +- z sqrt(p (1 - p) / n)`` it stays inside [0, 1] and is not empty at 0 / n, which a handful of
    held-out episodes often gives.

    >>> [round(x, 3) for x in wilson_interval(0, 14)]
    [0.0, 0.215]
    >>> [round(x, 3) for x in wilson_interval(7, 14)]
    [0.268, 0.732]
    """
    if n < 1:
        raise ValueError(f"wilson_interval needs n >= 1 episodes, got {n}")
    p, z2 = successes / n, z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def duration_text(seconds: float) -> str:
    """Seconds as minutes and seconds, rounded to the second (seconds alone under a minute).

    >>> duration_text(444.4), duration_text(59.6), duration_text(25.2)
    ('7 min 24 s', '1 min 0 s', '25 s')
    """
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _cpu_cores() -> int:
    """CPU cores this process may run on (a container's share, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _fraction(rate: float | None, n: int) -> str:
    """``k/n = p [lo, hi]`` (95% Wilson interval) for a success fraction over ``n`` episodes; ``-`` for none."""
    if rate is None or n == 0:
        return "-"
    k = round(rate * n)
    lo, hi = wilson_interval(k, n)
    return f"{k}/{n} = {rate:.3f} [{lo:.2f}, {hi:.2f}]"


def plot_core_heldout(metrics: list[dict[str, Any]], n_seeds: int, n_templates: int, png: Path, split: str) -> Path:
    """CORE per iteration: held-out greedy success on unseen task seeds and unseen templates with 95% Wilson bands
    over episodes (left; ``n_seeds`` and ``n_templates`` episodes per point), kept trajectories by source (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    its = [int(m["iteration"]) for m in metrics]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 2]})
    for key, n, label in (("heldout_greedy", n_seeds, f"unseen task seeds ({_plural(n_seeds, 'episode')})"),
                          ("unseen_template_greedy", n_templates, f"unseen templates ({_plural(n_templates, 'episode')})")):  # fmt: skip
        pts = [(i, m[key]) for i, m in zip(its, metrics, strict=True) if m.get(key) is not None and n]
        if not pts:
            continue
        x, y = zip(*pts, strict=True)
        (line,) = ax.plot(x, y, marker="o", label=label)
        band = [wilson_interval(round(v * n), n) for v in y]
        ax.fill_between(x, [b[0] for b in band], [b[1] for b in band], color=line.get_color(), alpha=0.2, lw=0)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(its)
    ax.set_xlabel("iteration (0: behaviour cloning on oracle demos)")
    ax.set_ylabel("held-out greedy success")
    ax.set_title("held-out greedy success (one run seed)\nband: 95% Wilson interval over episodes", fontsize=9)
    fig.suptitle(f"CORE: {split}", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    bottom = np.zeros(len(metrics))
    for key, label in (("kept_oracle", "oracle demonstrations"), ("kept_policy", "policy's own, verified"),
                       ("kept_policy_relabelled", "policy's, relabelled"),
                       ("kept_scripted", "noisy oracle (scripted)")):  # fmt: skip
        values = np.array([float(m.get(key, 0)) for m in metrics])
        bx.bar(its, values, bottom=bottom, label=label)
        bottom += values
    bx.set_xticks(its)
    bx.set_xlabel("iteration")
    bx.set_ylabel("trajectories")
    bx.set_title("kept trajectories by source\n(training data, not a success figure)", fontsize=9)
    bx.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    plt.close(fig)
    return png


def _core(config: DemoConfig, model: Path, out: Path, console: Console) -> tuple[str, dict[str, Any]]:
    """CORE with 1 iteration, evaluated on unseen task seeds and templates after each iteration; copy the two most
    expanded graphs of the last iteration to ``out/graphs`` and draw the held-out figure ``out/core_heldout.png``."""
    from gui_envs.verifiers.graph import StrategyGraph
    from trainers.core.config import CoreConfig
    from trainers.core.loop import finished_iterations, train_core

    run = out / "work" / "core"
    shutil.rmtree(run, ignore_errors=True)
    cfg = CoreConfig(
        model=str(model), envs=sorted({t.split(":")[0] for t in config.core_templates}),
        templates=list(config.core_templates), demo_fraction=0.34, test_fraction=0.3, iterations=1,
        samples_per_task=config.core_samples, scripted_samples=config.core_samples - 1, detour_p=0.6, max_steps=6,
        max_new_tokens=8, output_format="text", batch_size=8, learning_rate=1e-3, device="cpu", output_dir=str(run),
        # The learning figure: every training template on task seeds it never trained on (seed_base is 100),
        # greedily; eval_samples=0 skips the sampled rollouts, which the demo's time has no room for.
        eval_seeds={"start": CORE_EVAL_START, "count": config.core_eval_seeds}, eval_samples=0,
    )  # fmt: skip
    trained = train_core(cfg, console=console)
    metrics, state = trained["metrics"], trained["state"]
    last = finished_iterations(run)[-1]
    graphs = sorted(((StrategyGraph.load(p), p) for p in (last / "graphs").glob("*.json")),
                    key=lambda gp: -gp[0].path_count())  # fmt: skip
    (out / "graphs").mkdir(exist_ok=True)
    for graph, path in graphs[:2]:
        graph.save(out / "graphs" / f"{path.stem}_graph.json")

    seeds = sorted({t.seed for t in state.heldout})
    train_seeds = sorted({t.seed for t in state.train})
    templates = sorted({f"{t.env_id}:{t.template}" for t in state.heldout})
    unseen = sorted({f"{t.env_id}:{t.template}" for t in state.test})
    n_seeds, n_templates = len(state.heldout), len(state.test)
    seed_text = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    split = (f"{len(templates)} training templates x unseen task seed{'s' if len(seeds) > 1 else ''} {seed_text}, "
             f"trained on seed {', '.join(map(str, train_seeds))} only")  # fmt: skip
    bc, final = metrics[0], metrics[-1]
    rows = []
    for m in metrics:
        i = int(m["iteration"])
        data = (f"{_plural(m['kept_oracle'], 'oracle demonstration')} (behaviour cloning)" if i == 0
                else f"the demos + trajectories kept in iteration{'s 1-' if i > 1 else ' '}{i}")  # fmt: skip
        rows.append([str(i), data, _fraction(m.get("heldout_greedy"), n_seeds),
                     _fraction(m.get("unseen_template_greedy"), n_templates), str(m["kept_oracle"]),
                     str(m["kept_policy"]), str(m["kept_policy_relabelled"]), str(m["kept_scripted"]),
                     f"{m['avg_path_count']:.2f}"])  # fmt: skip
    iterations = _plural(len(metrics) - 1, "self-training iteration")
    heldout_row = [
        "CORE", split, "1", f"{bc['heldout_greedy']:.3f} (after behaviour cloning)",
        _fraction(final["heldout_greedy"], n_seeds) + " (95% Wilson, episodes)",
        f"behaviour cloning on {_plural(bc['kept_oracle'], 'oracle demo')}, then {iterations}",
    ]  # fmt: skip
    plot_core_heldout(metrics, n_seeds, n_templates, out / "core_heldout.png", split)
    console.print(f"  held-out split: {', '.join(templates)} on task seeds {seed_text}; unseen templates: "
                  f"{', '.join(unseen) or 'none'}")  # fmt: skip
    unseen_text = (f"; unseen templates {bc['unseen_template_greedy']:.2f} -> {final['unseen_template_greedy']:.2f}"
                   if "unseen_template_greedy" in final else "")  # fmt: skip
    result = (
        f"held-out greedy success on unseen task seeds {seed_text} ({_plural(n_seeds, 'episode')}): "
        f"{bc['heldout_greedy']:.2f} after behaviour cloning -> {final['heldout_greedy']:.2f} after iteration "
        f"{final['iteration']}{unseen_text}; kept {final['kept_policy']} policy / {final['kept_scripted']} scripted "
        "trajectories"
    )
    return result, {"metrics": metrics, "graphs": [p.name for _, p in graphs[:2]], "rows": rows,
                    "heldout_row": heldout_row, "split": split, "unseen_templates": unseen}  # fmt: skip


def _grpo(config: DemoConfig, out: Path, console: Console) -> tuple[str, dict[str, Any]]:
    from agents.tiny_models import build_causal_lm
    from guigym.grpo_compare import Task, compare, curves, mean_ci, plot_heldout, save_curves

    # ClickBox needs the wider tiny model (hidden 128); the task is benchmarks/ssl_grounding.py's, cut down.
    model = build_causal_lm(out / "work" / "tiny-llama-128", hidden_size=128)
    task = Task(env_kwargs={"n_boxes": 2, "min_side": 30, "max_side": 48}, group_size=8, groups_per_step=8,
                steps=config.grpo_steps, eval_count=config.grpo_eval_seeds,
                eval_every=max(1, config.grpo_steps // 8))  # fmt: skip
    results = compare(
        model, ["binary", "ssl"], config.grpo_seeds, task, out / "work" / "grpo",
        on_run=lambda r: console.print(f"  {r.arm} seed {r.seed}: held-out greedy success {r.greedy[0]:.3f} -> "
                                       f"{r.greedy[-1]:.3f}"),
    )  # fmt: skip
    plot_heldout(results, out / "grpo_heldout.png", "GRPO on ClickBox-v0: ssl against binary (held-out layouts)",
                 episodes_per_step=task.group_size * task.groups_per_step)  # fmt: skip
    save_curves(results, task, out / "grpo_curves.json")
    start = {arm: float(mean_ci(curves(runs)[1][:, 0])[0]) for arm, runs in results.items()}
    final = {arm: float(mean_ci(curves(runs)[1][:, -1])[0]) for arm, runs in results.items()}
    final_ci = {arm: float(mean_ci(curves(runs)[1][:, -1])[1]) for arm, runs in results.items()}
    result = ", ".join(f"{arm} {start[arm]:.2f} -> {final[arm]:.2f}" for arm in results)
    n = len(config.grpo_seeds)
    heldout_rows = [
        [f"GRPO, {arm} reward", f"ClickBox-v0, {task.eval_count} unseen layouts", str(n),
         f"{start[arm]:.3f} (untrained)",
         f"{final[arm]:.3f} ± {final_ci[arm]:.3f} (95% t, run seeds)" if n > 1 else f"{final[arm]:.3f}",
         f"{config.grpo_steps} GRPO steps"]
        for arm in results
    ]  # fmt: skip
    return (f"held-out greedy success ({n} seed{'s' if n > 1 else ''}): {result}",
            {"start": start, "final": final, "heldout_rows": heldout_rows})  # fmt: skip


def _eval(config: DemoConfig, out: Path) -> tuple[str, list[list[str]]]:
    from agents.evaluate import evaluate

    fmt = lambda v: "-" if v is None else f"{100 * v:.1f}"  # noqa: E731
    rows, reports = [], []
    for dataset in config.eval_datasets:
        with gym.make("GuiOffline-v0", dataset=dataset) as env:
            n = min(config.eval_episodes or 10**9, len(env.unwrapped.episodes))
            for agent in (OracleAgent(env), RandomAgent(env.action_space, seed=0)):
                report, _ = evaluate(env, agent, n)
                reports.append({"dataset": dataset, **report.to_dict()})
                m = report.metrics
                rows.append([dataset, report.agent, str(n), fmt(m["Type"]), fmt(m["GR"]), fmt(m["SR"]),
                             fmt(report.success_rate)])  # fmt: skip
    (out / "eval.json").write_text(json.dumps(reports, indent=1))
    random_sr = [r[5] for r in rows if r[1] != "oracle"]
    return f"{len(config.eval_datasets)} fixtures; random agent SR {', '.join(random_sr)} (%)", rows


def run_mission(config: DemoConfig | None = None, console: Console | None = None) -> dict[str, Any]:
    """Run every stage; print progress and the summary table; return ``{"summary", "seconds", "report", ...}``.

    Seconds are wall-clock per stage; the report is ``config.out/report.html``.
    """
    import torch

    from agents.tiny_models import build_causal_lm
    from guigym.report import write_report

    started = time.perf_counter()
    config = config or DemoConfig()
    console = console or Console()
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    summary: list[list[str]] = []
    seconds: dict[str, float] = {}
    results: dict[str, Any] = {}
    # The tiny model is faster on one thread (less overhead than work per op); restored on the way out.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    stages = ["baselines", "demos", "core", "grpo", "eval", "report"]

    def stage(name: str, title: str, body: Callable[[], tuple[str, str]]) -> None:
        console.rule(f"[bold]{stages.index(name) + 1}/{len(stages)} {name}[/bold]: {title}")
        t0 = time.perf_counter()
        result, artefacts = body()
        seconds[name] = time.perf_counter() - t0
        summary.append([name, result, artefacts, f"{seconds[name]:.0f}"])
        console.print(f"[green]done[/green] in {seconds[name]:.0f} s: {result}")

    def baselines() -> tuple[str, str]:
        results["baselines"] = rows = baseline_rows(config.baseline_episodes, console)
        console.print(_table(f"baselines ({config.baseline_episodes} episodes each)", BASELINE_COLUMNS, rows))
        solved = {agent: sum(r[3] != "0%" for r in rows if (r[1] == "oracle") == (agent == "oracle"))
                  for agent in ("oracle", "random")}  # fmt: skip
        return (f"envs with a success: oracle {solved['oracle']}/{len(DEMO_ENVS)}, "
                f"random {solved['random']}/{len(DEMO_ENVS)}", "report tables")  # fmt: skip

    def demos() -> tuple[str, str]:
        result, results["demos"] = _oracle_demos(config, out)
        return result, f"{out / 'demos'}/"

    def core() -> tuple[str, str]:
        results["model"] = model = build_causal_lm(out / "work" / "tiny-llama")
        console.print(f"  tiny Llama (2 layers, hidden 32) built from a config in {model}")
        result, results["core"] = _core(config, model, out, console)
        return result, f"{out / 'graphs'}/, core_heldout.png"

    def grpo() -> tuple[str, str]:
        result, results["grpo"] = _grpo(config, out, console)
        return result, "grpo_heldout.png, grpo_curves.json"

    def eval_() -> tuple[str, str]:
        result, rows = _eval(config, out)
        results["eval"] = rows
        console.print(_table("GuiOffline-v0 fixtures (%)", EVAL_COLUMNS, rows))
        return result, "eval.json"

    def report() -> tuple[str, str]:
        core = results["core"]
        tables = {
            # Held-out figures lead: they are what was learnt; oracle and random rows below are reference points.
            "Held-out greedy success (the learning figure: layouts and task seeds never trained on; GRPO: mean ± 95% "
            "CI over run seeds; CORE: one run seed, 95% Wilson interval over held-out episodes)": (
                HELDOUT_COLUMNS, [*results["grpo"]["heldout_rows"], core["heldout_row"]]
            ),
            f"CORE per iteration, held-out first ({core['split']}; unseen templates "
            f"{', '.join(core['unseen_templates']) or 'none'}), then the trajectories kept for training by source": (
                CORE_COLUMNS, core["rows"]
            ),
            "Offline evaluation on the bundled fixtures (%, seed 000 sec. 4.1): reference players, nothing trained "
            "(the scripted oracle scores 100 by construction)": (EVAL_COLUMNS, results["eval"]),
            f"Reference players, not trained: random against the scripted oracle ({_plural(config.baseline_episodes, 'episode')} each)": (BASELINE_COLUMNS, results["baselines"]),
            "Demo stages before this page (seconds: wall clock)": (SUMMARY_COLUMNS, summary),
        }  # fmt: skip
        figures = {
            "GRPO on ClickBox-v0: ssl against binary reward, held-out greedy success (mean of seeds, 95% band)": (
                out / "grpo_heldout.png"
            ),
            "CORE per iteration: held-out greedy success on unseen task seeds and unseen templates (one run seed, "
            "95% Wilson band over episodes); kept trajectories by source": out / "core_heldout.png",
        }
        results["report"] = write_report(out, title="guigym demo", tables=tables, figures=figures, skip=("work",))
        return "curves, tables, GIFs and graph drawings on one page", str(results["report"])

    try:
        stage("baselines", "random and oracle agents on every env family", baselines)
        stage("demos", "oracle demonstrations on the shop (Chromium) and the simulated phone", demos)
        stage("core", "tiny model, strategy graphs from demos, one CORE iteration", core)
        stage("grpo", "GRPO with ssl against binary reward on ClickBox-v0, held-out layouts", grpo)
        stage("eval", "Type / GR / SR on the offline fixtures", eval_)
        stage("report", f"{out / 'report.html'}", report)
    finally:
        torch.set_num_threads(threads)
    total = sum(seconds.values())
    summary.append(["total", "", "", f"{total:.0f}"])
    console.print(_table("guigym demo: summary", SUMMARY_COLUMNS, summary))
    wall = time.perf_counter() - started
    console.print(
        f"the demo took {duration_text(wall)} (wall clock, measured here on {_cpu_cores()} CPU cores; the set-up and "
        "Python's start-up not included)"
    )
    console.print(f"open {results['report']} in a browser")
    return {**results, "summary": summary, "seconds": seconds, "wall_seconds": wall}
