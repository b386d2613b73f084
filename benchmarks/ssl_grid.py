"""SSL on a grid task: GRPO with the blockwise ``ssl`` reward against ``binary`` on small mazes, held-out success.

The claim (seed 000, section 4.2 "Complex Reasoning" and Table 2; abstract and section 4.3 for "up to 2.5x"): on
maze / Sudoku / ARC, the blockwise sweet-spot reward (App. B.2) gives partial credit to answers that are partly
right, where a binary reward is silent until the whole answer is right, so GRPO learns faster. Measured here:

* **Task**: ``Maze-v0`` in answer mode, ``size=2`` (a 5x5 symbolic grid, 2x2 cells), answered in one step as a
  move string (``U``/``D``/``L``/``R``, one grid square each; revisits allowed, the path must end on the goal).
* **Held-out split** (``--split``): a 2x2 maze has only 40 distinct puzzles (maze x start x goal), so the two
  splits answer different questions, and the output says how many held-out seeds pose a puzzle some training seed
  also poses.

  - ``seed`` (default): plain ``Maze-v0`` reset seeds; GRPO trains on seeds ``0, 1, ...`` and evaluates on
    ``n_eval`` seeds from :data:`EVAL_START` on (its ``eval_seeds`` refuse an overlap). The held-out *seeds* are never
    trained on, but their *puzzles* all occur in training: this measures how fast each reward learns the task's
    puzzle set, not generalisation to unseen mazes.
  - ``puzzle``: every fourth distinct puzzle (in order of first appearance over seeds ``0 .. POOL_SEEDS - 1``) is
    held out; :class:`PuzzleSplitMaze` maps a training seed ``s`` to training puzzle ``s mod 30`` and evaluation seed
    ``EVAL_START + i`` to held-out puzzle ``i``, so no held-out puzzle is ever a training prompt.
* **Policy**: the tiny random-initialised Llama of :mod:`agents.tiny_models` (2 layers, hidden 128), the same
  weights at the start of every run. The prompt is the maze's text grid; answers are sampled from the move letters
  and the end-of-text token only (GRPO's ``constrain_answers``, :class:`MoveFormat`), at most 6 moves (the longest
  shortest path of a 2x2 maze).
* **Arms** (same GRPO loop and hyper-parameters; only the reward wrapper differs): ``binary`` = the env's verifier
  ``C`` (1 for a valid path to the goal, else 0; :class:`gui_envs.reward_wrappers.BinaryReward`); ``ssl`` =
  ``C + alpha * S``, ``S`` the blockwise score of the drawn path against the solution grid (App. B.2, 3x3 blocks,
  tiers 1 / 0.67 / 0.33 / 0; :class:`gui_envs.reward_wrappers.SweetSpotReward`, alpha = 0.2).
* **GRPO**: 8 groups of 8 rollouts per step, lr 1e-3, no KL, one update per batch, one torch thread per run.
* **Metric**: greedy success on the held-out seeds every ``eval_every`` steps (one greedy rollout per seed; one
  sampled rollout per seed is logged too). Per arm: mean and 95 % t-interval over seeds; for each level in
  ``Settings.levels`` the first evaluated step at which a run's held-out greedy success reaches it (a run that never
  does counts as the budget, so the mean is a lower bound, marked ">="), its mean per arm, and the ratio binary /
  ssl (> 1: SSL got there in fewer steps). Baselines on the same held-out seeds: the best single constant answer and
  the uniformly random constrained sampler (both exact, by enumerating every move string).

Measured (``OMP_NUM_THREADS=1 python benchmarks/ssl_grid.py --jobs 3 --steps 250 --eval-every 25``, seed split, 5
seeds x 2 arms x 250 steps, 2 CPU cores shared with other jobs at load 1.4-17, 2026-12-03; plot
``docs/learning/ssl_grid.png``): **no learning in either arm**, so no SSL effect to report. Held-out greedy success
at step 250: binary 0.084 +- 0.027, ssl 0.060 +- 0.068 (95 % CI), both below the best constant answer (0.100;
uniform random 0.0036); no run reached 0.2, so every steps-to-level ratio is 1.00 by construction (both arms at the
budget). The held-out values are 0, 3/50 or 5/50 (1/50 once, mid-run): each policy settles on one move string that
solves a few puzzles, not on reading the maze. (The 2026-12-02 run, ``--jobs 10``, gave binary 0.064 +- 0.051, ssl
0.040 +- 0.068.) A 1-seed puzzle-split pilot (200 steps) stayed at 0 held-out success in both arms.

Run: ``python benchmarks/ssl_grid.py [--split seed|puzzle] [--steps N] [--jobs J]`` (5 seeds x 2 arms, ``J`` runs in
parallel; prints the tables, writes ``benchmarks/out/ssl_grid.png`` and ``.json``, ``ssl_grid_puzzle.*`` for the
puzzle split) or ``--quick`` (1 seed x 2 arms, 4 steps of 8 rollouts: checks the path, not the comparison; about a
minute).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402

import gui_envs  # noqa: E402,F401  (registers Maze-v0)
from agents.parsing import ParseError  # noqa: E402
from gui_envs.grid.maze import MazeEnv  # noqa: E402
from gui_envs.grid.maze_gen import WALL  # noqa: E402

ENV_ID = "SSLGridMaze-v0"
ARMS = ("binary", "ssl")
MOVES = "UDLR"
#: Longest shortest path of a 2x2 maze, in moves (grid squares): the answer budget.
MAX_MOVES = 6
#: Seeds whose puzzles are enumerated to build the two pools (every 2x2 puzzle appears well before this).
POOL_SEEDS = 4000
#: First evaluation seed; training seeds are ``0 .. EVAL_START - 1``.
EVAL_START = 1_000_000
OUT = Path(__file__).resolve().parent / "out"


# ----- the task: mazes split by puzzle -----------------------------------------------------------------------


@lru_cache(maxsize=4)
def puzzle_pools(size: int = 2, hold_every: int = 4) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Representative reset seeds of the training and the held-out puzzles of ``Maze-v0(size)``.

    A puzzle is the maze text with its start and goal. Distinct puzzles are taken in order of first appearance over
    seeds ``0 .. POOL_SEEDS - 1``; every ``hold_every``-th (indices ``hold_every - 1``, ``2 * hold_every - 1``, ...)
    is held out. Returns ``(train_seeds, held_out_seeds)``, one seed per puzzle.
    """
    env = MazeEnv(size=size)
    first: dict[str, int] = {}
    for seed in range(POOL_SEEDS):
        text = env.reset(seed=seed)[0]["text"]
        first.setdefault(text, seed)
    reps = list(first.values())
    held = tuple(s for i, s in enumerate(reps) if i % hold_every == hold_every - 1)
    train = tuple(s for i, s in enumerate(reps) if i % hold_every != hold_every - 1)
    return train, held


class PuzzleSplitMaze(gym.Wrapper[Any, Any, Any, Any]):
    """``Maze-v0`` whose reset seed picks a puzzle from the training pool (seeds below :data:`EVAL_START`) or the
    held-out pool (``EVAL_START + i``: held-out puzzle ``i``), see :func:`puzzle_pools`.

    Args:
        size: maze cells per side.
    """

    def __init__(self, size: int = 2) -> None:
        super().__init__(MazeEnv(size=size))
        self.train_pool, self.held_pool = puzzle_pools(size)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if seed is None:
            return self.env.reset(options=options)
        if seed >= EVAL_START:
            inner = self.held_pool[(seed - EVAL_START) % len(self.held_pool)]
        else:
            inner = self.train_pool[seed % len(self.train_pool)]
        return self.env.reset(seed=inner, options=options)


if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point=PuzzleSplitMaze)


def maze_rows(observation: Any) -> str:
    """The grid lines of a Maze-v0 text rendering (the rows that start with a wall)."""
    text = observation["text"] if isinstance(observation, dict) else str(observation)
    return "\n".join(line for line in text.splitlines() if line.startswith("#"))


@dataclass
class MoveFormat:
    """Prompt: the maze grid (``#`` wall, ``.`` floor, ``S`` start, ``G`` goal), nothing else; answer: move letters.

    The action is the completion's ``U``/``D``/``L``/``R`` letters in order (the env parses a move string); a
    completion without any is the empty answer, which the env rejects.
    """

    name: str = "maze_moves"

    def messages(self, ctx: Any) -> list[dict[str, Any]]:
        return [{"role": "user", "content": maze_rows(ctx.observation)}]

    def parse(self, text: str, observation: Any) -> tuple[str, ParseError | None]:
        return "".join(ch for ch in str(text) if ch in MOVES), None

    def describe(self, action: Any) -> str:
        return str(action)

    def answer_tokens(self, tokenizer: Any) -> list[int]:
        """The four move letters (one token each) and the end-of-turn token, so a model may stop early."""
        ids = []
        for ch in MOVES:
            enc = tokenizer.encode(ch, add_special_tokens=False)
            if len(enc) != 1:
                raise ValueError(f"the tokenizer splits move {ch!r} into {len(enc)} tokens")
            ids.append(int(enc[0]))
        return [*ids, int(tokenizer.eos_token_id)]


# ----- baselines on the held-out puzzles -----------------------------------------------------------------------


def walk_solves(grid: np.ndarray, start: tuple[int, int], goal: tuple[int, int], moves: str) -> bool:
    """Whether the move string walks from ``start`` to ``goal`` on ``grid`` without entering a wall (SSL App. B.4's
    maze conditions for a path given as moves: it starts at the start, each move is one square, no square is a wall,
    the last square is the goal; revisits allowed, as ``Maze-v0`` accepts them). Used for the baselines only, where
    the env would take thousands of steps; a test checks it agrees with the env.

    >>> g = np.array([[1, 1, 1], [1, 2, 1], [1, 3, 1]])
    >>> walk_solves(g, (1, 1), (2, 1), "D"), walk_solves(g, (1, 1), (2, 1), "R")
    (True, False)
    """
    step = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
    r, c = start
    for m in moves:
        r, c = r + step[m][0], c + step[m][1]
        if not (0 <= r < grid.shape[0] and 0 <= c < grid.shape[1]) or grid[r, c] == WALL:
            return False
    return bool(moves) and (r, c) == tuple(goal)


def all_answers(max_moves: int) -> tuple[list[str], np.ndarray]:
    """Every move string of 1..``max_moves`` moves and its probability under a uniformly random constrained sampler
    (each token uniform over the 4 moves and end-of-text; a string shorter than ``max_moves`` ends with the stop)."""
    answers, probs = [], []
    for n in range(1, max_moves + 1):
        for k in range(4**n):
            answers.append("".join(MOVES[(k // 4**i) % 4] for i in range(n)))
            probs.append(0.2 ** (n + 1) if n < max_moves else 0.2**n)
    return answers, np.array(probs)


def baselines(env: gym.Env[Any, Any], seeds: Sequence[int], max_moves: int = MAX_MOVES) -> dict[str, float]:
    """Success on the held-out ``seeds`` of the best single constant answer (over every move string of up to
    ``max_moves`` moves) and of the uniformly random constrained sampler (exact, by enumeration)."""
    answers, probs = all_answers(max_moves)
    hits = np.zeros(len(answers))
    for seed in seeds:
        obs = env.reset(seed=seed)[0]
        grid, start, goal = obs["grid"], tuple(obs["start"]), tuple(obs["goal"])
        hits += [walk_solves(grid, start, goal, a) for a in answers]
    hits /= len(seeds)
    return {"best_constant": float(hits.max()), "random": float(probs @ hits)}


def puzzle_overlap(env: gym.Env[Any, Any], train_seeds: Sequence[int], held_seeds: Sequence[int]) -> float:
    """Fraction of the held-out seeds whose puzzle (maze, start, goal) is also the puzzle of a training seed."""
    seen = {env.reset(seed=s)[0]["text"] for s in train_seeds}
    return float(np.mean([env.reset(seed=s)[0]["text"] in seen for s in held_seeds]))


# ----- runs ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """One comparison: every arm x seed is one GRPO run (the same hyper-parameters in every run)."""

    split: str = "seed"
    """``"seed"``: plain ``Maze-v0`` seeds, evaluation seeds after the training stream; ``"puzzle"``: held-out
    puzzles never trained on (:class:`PuzzleSplitMaze`)."""
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    steps: int = 250
    eval_every: int = 25
    n_eval: int = 50
    """Held-out seeds (the seed split; the puzzle split evaluates each held-out puzzle once)."""
    group_size: int = 8
    groups_per_step: int = 8
    learning_rate: float = 1e-3
    alpha: float = 0.2
    hidden_size: int = 128
    levels: tuple[float, ...] = (0.2, 0.3, 0.5)
    jobs: int = 2

    def env(self) -> tuple[str, dict[str, Any]]:
        """The env id and kwargs the runs train on."""
        return (ENV_ID, {}) if self.split == "puzzle" else ("Maze-v0", {"size": 2})

    def eval_seeds(self) -> list[int]:
        count = len(puzzle_pools()[1]) if self.split == "puzzle" else self.n_eval
        return list(range(EVAL_START, EVAL_START + count))


def run_one(model: str, arm: str, seed: int, s: Settings, out_dir: str) -> dict[str, Any]:
    """One GRPO run; returns its held-out curve (``steps``, ``greedy``, ``sampled`` success) and its CPU seconds."""
    import torch

    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    torch.set_num_threads(1)
    env_id, env_kwargs = s.env()
    held = s.eval_seeds()
    config = GRPOConfig(
        model=model, env_id=env_id, env_kwargs=env_kwargs, reward=arm,
        reward_kwargs={"alpha": s.alpha} if arm == "ssl" else {}, output_format=MoveFormat(), constrain_answers=True,
        group_size=s.group_size, groups_per_step=s.groups_per_step, num_envs=s.group_size * s.groups_per_step,
        num_steps=s.steps, learning_rate=s.learning_rate, max_new_tokens=MAX_MOVES, decoder="loop", device="cpu",
        seed=seed, seed_start=0, num_train_seeds=EVAL_START, eval_seeds={"start": held[0], "count": len(held)},
        eval_every=s.eval_every, eval_samples=1, output_dir=out_dir, progress=False, plot=False,
    )  # fmt: skip
    t0 = time.process_time()
    result = train(config)
    evals = result["eval"]
    return {
        "arm": arm,
        "seed": seed,
        "steps": [e["step"] for e in evals],
        "greedy": [e["eval_greedy_success"] for e in evals],
        "sampled": [e["eval_sampled_success"] for e in evals],
        "train_success": [h["success_rate"] for h in result["history"]],
        "cpu_s": time.process_time() - t0,
    }


def _run(args: tuple[str, str, int, Settings, str]) -> dict[str, Any]:
    return run_one(*args)


def first_reach(steps: Sequence[int], values: Sequence[float], level: float) -> int | None:
    """The first evaluated step whose value is ``>= level``, or ``None``.

    >>> first_reach([0, 10, 20], [0.0, 0.5, 1.0], 0.5)
    10
    """
    return next((st for st, v in zip(steps, values, strict=True) if v >= level), None)


def t_interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of the 95 % Student-t interval over ``values`` (half-width 0 for one value).

    >>> t_interval([1.0, 3.0])[0]
    2.0
    """
    from scipy import stats

    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float(v.mean()), 0.0
    return float(v.mean()), float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))


def summarise(runs: list[dict[str, Any]], s: Settings) -> tuple[str, dict[str, Any]]:
    """The markdown tables (success, and steps to each level) and their numbers."""
    rows, reach_rows, summary = [], [], {}
    for arm in ARMS:
        mine = sorted((r for r in runs if r["arm"] == arm), key=lambda r: r["seed"])
        final = t_interval([r["greedy"][-1] for r in mine])
        sampled = t_interval([r["sampled"][-1] for r in mine])
        auc = t_interval([float(np.mean(r["greedy"])) for r in mine])
        start = float(np.mean([r["greedy"][0] for r in mine]))
        summary[arm] = {"final": final, "final_sampled": sampled, "auc": auc, "start": start, "reach": {}}
        rows.append(
            f"| {arm} | {len(mine)} | {start:.3f} | {final[0]:.3f} ± {final[1]:.3f} | {sampled[0]:.3f} ± "
            f"{sampled[1]:.3f} | {auc[0]:.3f} ± {auc[1]:.3f} |"
        )
        cells = []
        for level in s.levels:
            reach = [first_reach(r["steps"], r["greedy"], level) for r in mine]
            cost = [x if x is not None else s.steps for x in reach]
            missed = sum(x is None for x in reach)
            summary[arm]["reach"][level] = {"per_seed": reach, "mean": float(np.mean(cost)), "missed": missed}
            per_seed = ", ".join("-" if x is None else str(x) for x in reach)
            cells.append(f"{'≥ ' if missed else ''}{np.mean(cost):.0f} ({per_seed})")
        reach_rows.append(f"| {arm} | " + " | ".join(cells) + " |")
    ratios = []
    for level in s.levels:
        b, sl = summary["binary"]["reach"][level], summary["ssl"]["reach"][level]
        ratio = b["mean"] / sl["mean"] if sl["mean"] > 0 else float("nan")
        bound = (
            " (bound: a run that never got there counts as the budget)" if b["missed"] or sl["missed"] else ""
        )
        summary.setdefault("ratio", {})[level] = ratio
        ratios.append(f"success ≥ {level}: binary / ssl = {ratio:.2f}x{bound}")
    table = (
        "| arm | seeds | held-out greedy success at step 0 | final greedy (mean ± 95% CI) | final sampled | mean"
        " greedy over the curve |\n|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        "| arm | " + " | ".join(f"steps to held-out greedy ≥ {lv} (per seed)" for lv in s.levels) + " |\n"
        "|---|"
        + "---|" * len(s.levels)
        + "\n"
        + "\n".join(reach_rows)
        + "\n\nSteps ratio, "
        + "; ".join(ratios)
    )
    return table, summary


def plot(runs: list[dict[str, Any]], path: Path, s: Settings, base: dict[str, float]) -> None:
    """Held-out greedy success against GRPO step: mean and 95 % t-band over seeds per arm, and the baselines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for arm, colour in zip(ARMS, ("tab:gray", "tab:blue"), strict=True):
        mine = [r for r in runs if r["arm"] == arm]
        steps = np.array(mine[0]["steps"])
        stats = [t_interval([r["greedy"][k] for r in mine]) for k in range(len(steps))]
        mean, half = np.array([m for m, _ in stats]), np.array([h for _, h in stats])
        ax.plot(steps, mean, color=colour, label=f"{arm} (n={len(mine)} seeds)")
        ax.fill_between(
            steps, np.clip(mean - half, 0, 1), np.clip(mean + half, 0, 1), color=colour, alpha=0.2
        )
    ax.axhline(base["best_constant"], color="k", ls=":", lw=1, label="best constant answer")
    ax.axhline(base["random"], color="k", ls="--", lw=1, label="uniform random answer")
    ax.set_xlabel("GRPO step (64 episodes each)")
    ax.set_ylabel("held-out greedy success")
    ax.set_ylim(-0.02, 1.02)
    what = "unseen puzzles" if s.split == "puzzle" else "held-out seeds"
    ax.set_title(f"Maze-v0 2x2 move strings, {what}: ssl (blockwise) vs binary", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def quick_settings() -> Settings:
    """The ``--quick`` run: one seed per arm, 4 steps of 8 episodes, 8 held-out seeds (checks the path only)."""
    return Settings(seeds=(0,), steps=4, eval_every=2, n_eval=8, group_size=4, groups_per_step=2, jobs=1)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the comparison, print the tables, write the plot and the JSON; returns what the JSON holds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 seed per arm, 4 steps: checks the path only")
    parser.add_argument("--split", choices=("seed", "puzzle"), default="seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--eval-every", type=int, default=None)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument(
        "--jobs", type=int, default=None, help="runs in parallel (processes, one thread each)"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    s = quick_settings() if args.quick else Settings()
    overrides = {"split": args.split, "seeds": tuple(args.seeds or s.seeds), "steps": args.steps or s.steps,
                 "eval_every": args.eval_every or s.eval_every, "learning_rate": args.lr or s.learning_rate,
                 "jobs": args.jobs or s.jobs}  # fmt: skip
    s = Settings(**{**s.__dict__, **overrides})

    from tqdm.auto import tqdm

    from agents.tiny_models import build_causal_lm

    env_id, env_kwargs = s.env()
    env = gym.make(env_id, **env_kwargs)
    held = s.eval_seeds()
    base = baselines(env, held)
    trained = range(min(s.steps * s.groups_per_step, EVAL_START))
    overlap = puzzle_overlap(env, trained, held)
    with tempfile.TemporaryDirectory() as tmp:
        model = str(build_causal_lm(Path(tmp) / "model", hidden_size=s.hidden_size))
        jobs = [(model, arm, seed, s, str(Path(tmp) / f"{arm}-{seed}")) for seed in s.seeds for arm in ARMS]
        runs = []
        with tqdm(total=len(jobs), desc="ssl_grid runs", unit="run") as bar:
            if s.jobs > 1:
                with ProcessPoolExecutor(s.jobs) as pool:
                    for r in pool.map(_run, jobs):
                        runs.append(r)
                        bar.update(1)
            else:
                for job in jobs:
                    runs.append(_run(job))
                    bar.update(1)
    table, summary = summarise(runs, s)
    print(
        f"Maze-v0 2x2, {s.split} split: {len(held)} held-out seeds; {overlap:.0%} of them pose a puzzle (maze, start,"
        f" goal) that some training seed also poses; {s.steps} steps x {s.groups_per_step * s.group_size} episodes, "
        f"lr {s.learning_rate:g}, alpha {s.alpha:g}, CPU {np.mean([r['cpu_s'] for r in runs]):.0f} s per run"
    )
    print(
        f"Held-out baselines: best constant answer {base['best_constant']:.3f}, uniform random answer {base['random']:.4f}"
    )
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    name = "ssl_grid" if s.split == "seed" else "ssl_grid_puzzle"
    plot(runs, args.out / f"{name}.png", s, base)
    payload = {
        "settings": s.__dict__,
        "baselines": base,
        "overlap": overlap,
        "runs": runs,
        "summary": summary,
    }
    (args.out / f"{name}.json").write_text(json.dumps(payload, indent=1, default=float))
    return payload


if __name__ == "__main__":
    main()
