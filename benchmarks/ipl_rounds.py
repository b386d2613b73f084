"""MobileIPL (seed 003) in miniature: held-out task success of the CoaT policy across IPL rounds, from the warm-up
SFT policy (round 0) on.

* **Task**: ``GuiAndroid-v0`` on the simulated phone, the Settings switch templates of ``configs/ipl_tiny_cpu.yaml``
  (``env_kwargs.tasks``): open Settings, tap the right page, tap the right switch (three steps, judged from the
  app's database). Training data: ``n`` oracle episodes, the same number per template (:func:`balanced_seeds`:
  the first reset seeds from 0 on that keep the count equal; seeds ``0 .. 8`` themselves drew no Wi-Fi episode);
  held-out: the config's ``eval_seeds`` (1000 .. 1011, 4 per template), never trained on. The templates are
  shared, so "held out" means unseen episodes (seeds, switch states), not unseen tasks. What this cannot show:
  the text-only CoaT policy reads no screen content (the compact description turn carries no element list) and
  the Settings layout is fixed, so it acts from the instruction and its history alone; targets that move with
  the seed would be out of its reach.
* **Policy**: the tiny 2-layer Llama of :func:`agents.tiny_models.build_causal_lm` (hidden size 64, the same
  initial weights for every run), text only, the compact CoaT prompts (``prompt_style: compact``); decisions
  name the element (``click the 'Wi-Fi' switch``) and the grounding turn writes the box on 0-1000.
* **Loop**: :func:`trainers.ipl.train_ipl` as configured: CoaT SFT warm-up, then rounds of K-ary CoaT trees
  (K^3 leaves), rule-based leaf values, beta / gamma pairs and T-DPO with the SFT term on the chosen side; the
  config's two additions for a tiny model (``gamma_reasoning``: gamma pairs at the description and thought turns
  too; ``rehearsal``: one correct path of each alpha or beta tree as zero-DPO-gradient pairs, so the SFT term
  rehearses it) are documented in :class:`trainers.ipl_config.IPLConfig`.
* **Per round**: held-out greedy task success (mean over run seeds, 95% t interval), greedy step accuracy on the
  held-out oracle steps, the chosen-over-rejected log-prob margin on the fixed held-out pairs (trees the warm-up
  policy grew on the held-out steps; nats, summed over the turn's tokens), ``Acc_S`` of the round's trees, and
  tree counts by class and pair counts by kind.

Measured (the default 5 run seeds, ``--jobs 2``, ``configs/ipl_tiny_cpu.yaml`` as committed: T-DPO at 1e-4 then
1e-5; 9 balanced demos ordered by reset seed, 12 held-out episodes; 2026-12-02, load 10-16 on 2 cores): held-out
greedy success 0.517 +- 0.465 (warm-up), 0.817 +- 0.212, 0.817 +- 0.212, 0.867 +- 0.227 (rounds 1-3); held-out
pair margin 6.57 +- 2.13, 10.20 +- 2.99, 10.27 +- 2.93, 10.36 +- 2.99 nats; step accuracy 0.722 -> 0.894. Per seed
(warm-up -> round 3): 0.333 -> 0.667, 0.583 -> 1.000, 1.000 -> 1.000, 0.000 -> 1.000, 0.667 -> 0.667: above the
warm-up in 3 of 5 seeds, never below it (one starts at the ceiling); mean gain +0.350, 95% t interval +-0.51 at 5
seeds, so not yet significant. Plot: ``docs/learning/ipl_rounds.png``. An earlier 3-seed run (demos in folder-id
order) gave 0.444 -> 0.694; with T-DPO at 3e-4 (then 3e-5) the same 3 seeds went 0.417 -> 0.139 -> 0.278 -> 0.444
(round 1 drifted on 2 of 3).

Run: ``python benchmarks/ipl_rounds.py --jobs 2`` (5 run seeds x the config's 3 rounds; about 3 minutes a run on
an idle core, 40 under a load of 30 on 2 cores), or ``--quick`` (1 seed, 1 round, a cut-down run: checks the path, not
the effect; about 20 s to a minute). Prints markdown tables; writes ``benchmarks/out/ipl_rounds.png`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "ipl_tiny_cpu.yaml"
#: The cut-down run of ``--quick`` (and of the acceptance test's smallest settings).
QUICK = ["rounds=1", "k=2", "steps_per_round=2", "warmup_sft_epochs=1", "eval_seeds={start: 1000, count: 2}",
         "max_new_tokens=16"]  # fmt: skip
#: The acceptance test's cut-down run (``tests/trainers/test_ipl.py``): the full run's demos, warm-up and round 1
#: (the same policies as run seed 0 of the full run), held-out play on 6 of its 12 episodes (2 per template).
CUTDOWN = ["rounds=1", "eval_seeds={start: 1000, count: 6}"]
CUTDOWN_DEMOS = 9
KEYS = ("eval_greedy_success", "eval_step_accuracy", "eval_pair_margin")


def balanced_seeds(env: Any, n: int, templates: list[str], start: int = 0) -> list[int]:
    """The first reset seeds from ``start`` on whose drawn template keeps the count per template equal: ``n``
    seeds, ``ceil(n / len(templates))`` at most per template.

    Why: seeds ``0 .. n-1`` draw the template at random, and with 3 templates and 9 seeds that can leave one out
    (seeds 0..8 of ``configs/ipl_tiny_cpu.yaml`` drew Dark theme 7 times, Bluetooth twice and Wi-Fi never), so a
    held-out Wi-Fi episode asks for a page and a switch the policy never saw. Which seeds are kept depends only
    on the env's template draw, never on the held-out split.
    """
    per = -(-n // len(templates))
    counts = dict.fromkeys(templates, 0)
    seeds: list[int] = []
    seed = start
    while len(seeds) < n:
        _, info = env.reset(seed=seed)
        task = str(info.get("task"))
        if task not in counts:
            raise ValueError(f"reset seed {seed} drew template {task!r}, not one of {templates}")
        if counts[task] < per:
            counts[task] += 1
            seeds.append(seed)
        seed += 1
        if seed - start > 100 * n:
            raise RuntimeError(f"no balanced set of {n} seeds among {start} .. {seed}: counts {counts}")
    return seeds


def record_demos(config: Any, n: int, out: Path) -> Path:
    """``n`` oracle episodes of the config's env, the same number per template of ``env_kwargs.tasks``
    (:func:`balanced_seeds`, from reset seed 0 on), saved under ``out``."""
    import gymnasium as gym

    import gui_envs  # noqa: F401
    from agents import OracleAgent
    from trainers.rollout import RolloutConfig, collect_groups

    env = gym.make(str(config.env_id), **dict(config.env_kwargs))
    try:
        templates = list(dict(config.env_kwargs).get("tasks") or [])
        seeds = balanced_seeds(env, n, templates) if templates else list(range(n))
        rollout = RolloutConfig(
            max_steps=config.eval_max_steps, record_screenshots=True, progress=False, save_dir=out
        )
        trajs = [t for g in collect_groups([env], OracleAgent(env), seeds, 1, rollout) for t in g]
    finally:
        env.close()
    if not all(t.success for t in trajs):
        raise RuntimeError("an oracle demonstration failed; the benchmark needs successful demos")
    return out


def mean_ci(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% t interval (0 for a single value)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float(v.mean()), 0.0
    return float(v.mean()), float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))


def run_one(seed: int, model: Path, demos: Path, overrides: list[str], work: Path) -> dict[str, Any]:
    """One IPL run: ``{"seed", "heldout": [round 0..R], "rounds": [round 1..R]}``."""
    import torch

    from trainers.ipl import train_ipl
    from trainers.ipl_config import IPLConfig

    torch.set_num_threads(1)
    cfg = IPLConfig.from_yaml(CONFIG, [f"model={model}", f"data={demos}", f"seed={seed}",
                                       f"output_dir={work / f'run-{seed}'}", "progress=false", *overrides])  # fmt: skip
    res = train_ipl(cfg)
    last = res["heldout"][-1]
    print(f"seed {seed}: held-out greedy success {res['heldout'][0]['eval_greedy_success']:.3f} (warm-up) -> "
          f"{last['eval_greedy_success']:.3f} (round {last['step']})", flush=True)  # fmt: skip
    return {"seed": seed, "heldout": res["heldout"], "rounds": res["rounds"]}


def run(
    seeds: list[int], overrides: list[str], n_demos: int, work: Path, hidden: int = 64, jobs: int = 1
) -> list[dict[str, Any]]:
    """One IPL run per seed on the same demos and initial weights, ``jobs`` at a time (processes; each run's
    env drives its own Chromium); results in seed order."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from agents.tiny_models import build_causal_lm
    from trainers.ipl_config import IPLConfig

    model = build_causal_lm(work / "tiny-llama", hidden_size=hidden)
    base = IPLConfig.from_yaml(CONFIG, [f"model={model}", "data=unused", *overrides])
    demos = record_demos(base, n_demos, work / "demos")
    if jobs <= 1:
        return [run_one(seed, model, demos, overrides, work) for seed in seeds]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(run_one, seed, model, demos, overrides, work) for seed in seeds]
        return [f.result() for f in futures]


def table(runs: list[dict[str, Any]]) -> str:
    """The per-round markdown table over run seeds."""
    n_rounds = min(len(r["heldout"]) for r in runs)
    head = ("| round | seeds | held-out success (greedy) | held-out step acc. | held-out pair margin (nats) | Acc_S "
            "| trees alpha / beta / gamma | pairs rehearsal / beta / gamma |")  # fmt: skip
    lines = [head, "|" + " --- |" * 8]
    for r in range(n_rounds):
        cells = []
        for key in KEYS:
            vals = [run["heldout"][r][key] for run in runs if key in run["heldout"][r]]
            cells.append("n/a" if not vals else "{:.3f} ± {:.3f}".format(*mean_ci(vals)))
        if r == 0:
            acc, trees, pairs = "(warm-up)", "", ""
        else:
            recs = [run["rounds"][r - 1] for run in runs]
            acc = "{:.3f} ± {:.3f}".format(*mean_ci([x["acc_s"] for x in recs]))
            trees = " / ".join(
                f"{np.mean([x[f'trees_{k}'] for x in recs]):.1f}" for k in ("alpha", "beta", "gamma")
            )
            pairs = " / ".join(
                f"{np.mean([x.get(f'pairs_{k}', 0) for x in recs]):.1f}"
                for k in ("rehearsal", "beta", "gamma")
            )
        lines.append(f"| {r} | {len(runs)} | {' | '.join(cells)} | {acc} | {trees} | {pairs} |")
    return "\n".join(lines)


def plot(runs: list[dict[str, Any]], png: Path) -> Path:
    """Held-out success, step accuracy, pair margin and Acc_S against the round, mean with a 95% band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_rounds = min(len(r["heldout"]) for r in runs)
    panels = [
        (k, [[run["heldout"][r].get(k, np.nan) for r in range(n_rounds)] for run in runs]) for k in KEYS
    ]
    panels.append(("acc_s", [[np.nan] + [x["acc_s"] for x in run["rounds"]][: n_rounds - 1] for run in runs]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.2), squeeze=False)
    xs = np.arange(n_rounds)
    for ax, (name, rows) in zip(axes[0], panels, strict=True):
        m, h = [], []
        for col in np.asarray(rows, dtype=float).T:
            col = col[np.isfinite(col)]
            mu, half = mean_ci(list(col)) if col.size else (np.nan, 0.0)
            m.append(mu)
            h.append(half)
        m_arr, h_arr = np.asarray(m), np.asarray(h)
        ax.plot(xs, m_arr, marker="o")
        ax.fill_between(xs, m_arr - h_arr, m_arr + h_arr, alpha=0.25)
        ax.set_title(f"{name} ({len(runs)} seeds, 95% CI)", fontsize=9)
        ax.set_xlabel("IPL round (0: warm-up SFT)")
        ax.set_xticks(xs)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="run seeds (0 .. n-1)")
    parser.add_argument(
        "--demos", type=int, default=9, help="oracle training episodes (reset seeds 0 .. n-1)"
    )
    parser.add_argument(
        "--set", action="append", default=[], help="IPLConfig override KEY=VALUE (repeatable)"
    )
    parser.add_argument("--quick", action="store_true", help="1 seed, 1 round, a cut-down run: the path only")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (processes)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    args = parser.parse_args(argv)
    seeds = [0] if args.quick else list(range(args.seeds))
    overrides = [*(QUICK if args.quick else []), *args.set]
    demos = 2 if args.quick else args.demos
    name = "ipl_rounds_quick" if args.quick else "ipl_rounds"
    with tempfile.TemporaryDirectory() as tmp:
        runs = run(seeds, overrides, demos, Path(tmp), jobs=args.jobs)
    print(f"\n## MobileIPL rounds: held-out task success ({CONFIG.name}, overrides {overrides or 'none'}, "
          f"{demos} demos)\n")  # fmt: skip
    print(table(runs))
    first = [r["heldout"][0]["eval_greedy_success"] for r in runs]
    last = [r["heldout"][-1]["eval_greedy_success"] for r in runs]
    print(f"\nlast round above warm-up in {sum(b > a for a, b in zip(first, last, strict=True))} of {len(runs)} seeds; "
          f"mean gain {np.mean(last) - np.mean(first):+.3f}")  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.json").write_text(
        json.dumps({"overrides": overrides, "runs": runs}, indent=1, default=str)
    )
    print(f"plot: {plot(runs, args.out / f'{name}.png')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
