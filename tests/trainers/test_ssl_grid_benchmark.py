"""``benchmarks/ssl_grid.py``: its task pieces (puzzle split, move format, baselines), its summary arithmetic by hand,
and the ``--quick`` run end to end (GRPO with ``ssl`` and ``binary`` on Maze-v0, held-out evaluation, table, plot)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401  (registers Maze-v0)
from agents.tiny_models import build_tokenizer
from benchmarks.ssl_grid import (
    EVAL_START,
    MOVES,
    MoveFormat,
    PuzzleSplitMaze,
    Settings,
    main,
    puzzle_pools,
    summarise,
    walk_solves,
)


def test_walk_solves_agrees_with_the_env_verifier() -> None:
    env = gym.make("Maze-v0", size=2)
    rng = np.random.default_rng(0)
    for seed in range(40):
        obs = env.reset(seed=seed)[0]
        path = env.unwrapped.privileged()["solution_path"]  # (row, col) squares from start to goal
        letters = {(-1, 0): "U", (1, 0): "D", (0, -1): "L", (0, 1): "R"}
        solution = "".join(letters[(b[0] - a[0], b[1] - a[1])] for a, b in zip(path, path[1:], strict=False))
        for moves in [solution, *("".join(rng.choice(list(MOVES), rng.integers(1, 7))) for _ in range(10))]:
            env.reset(seed=seed)
            verdict = bool(env.step(moves)[4]["success"])
            assert walk_solves(obs["grid"], tuple(obs["start"]), tuple(obs["goal"]), moves) == verdict, (
                seed,
                moves,
            )


def test_puzzle_split_never_trains_on_a_held_out_puzzle() -> None:
    train, held = puzzle_pools()
    assert (len(train), len(held)) == (30, 10)  # 40 distinct 2x2 puzzles, every fourth held out
    env = PuzzleSplitMaze()
    train_text = {env.reset(seed=s)[0]["text"] for s in range(200)}
    held_text = {env.reset(seed=EVAL_START + i)[0]["text"] for i in range(len(held))}
    assert len(train_text) == 30 and len(held_text) == 10 and not train_text & held_text


def test_move_format_reads_moves_and_names_its_tokens() -> None:
    fmt = MoveFormat()
    assert fmt.parse("RxD<|im_end|>", None) == ("RD", None)
    tok = build_tokenizer()
    ids = fmt.answer_tokens(tok)
    assert [tok.decode([i]) for i in ids[:4]] == list(MOVES) and ids[4] == tok.eos_token_id


def test_summary_steps_and_ratio_by_hand() -> None:
    s = Settings(seeds=(0, 1), steps=100, levels=(0.5,))
    curve = {"steps": [0, 25, 50, 75, 100], "sampled": [0.0] * 5}
    runs = [
        {"arm": "binary", "seed": 0, "greedy": [0, 0, 0.5, 0.6, 0.7], **curve},  # reaches 0.5 at 50
        {"arm": "binary", "seed": 1, "greedy": [0, 0, 0, 0, 0.4], **curve},  # never: counts as 100
        {"arm": "ssl", "seed": 0, "greedy": [0, 0.5, 0.6, 0.6, 0.6], **curve},  # 25
        {"arm": "ssl", "seed": 1, "greedy": [0, 0, 0.5, 0.6, 0.8], **curve},  # 50
    ]
    table, summary = summarise(runs, s)
    assert summary["binary"]["reach"][0.5] == {"per_seed": [50, None], "mean": 75.0, "missed": 1}
    assert summary["ssl"]["reach"][0.5]["mean"] == 37.5
    assert summary["ratio"][0.5] == pytest.approx(2.0)  # 75 / 37.5
    # Final greedy: binary (0.7, 0.4): mean 0.55, half-width t_{0.975, 1} * std / sqrt(2) = 12.706 * 0.212132 / 1.414214.
    assert summary["binary"]["final"][0] == pytest.approx(0.55)
    assert summary["binary"]["final"][1] == pytest.approx(12.7062 * 0.15, rel=1e-4)
    assert "≥ 75 (50, -)" in table and "binary / ssl = 2.00x (bound" in table


def test_quick_run_writes_table_plot_and_curves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    torch.set_num_threads(1)
    payload = main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "| binary | 1 |" in out and "| ssl | 1 |" in out and "binary / ssl" in out
    assert (tmp_path / "ssl_grid.png").stat().st_size > 0
    saved = json.loads((tmp_path / "ssl_grid.json").read_text())
    assert [r["arm"] for r in saved["runs"]] == ["binary", "ssl"]
    for run in payload["runs"]:
        assert run["steps"] == [0, 2, 4]  # before training, every eval_every steps, after the last
        assert all(0.0 <= v <= 1.0 for v in run["greedy"] + run["sampled"])
    assert 0.0 < saved["baselines"]["random"] < saved["baselines"]["best_constant"] <= 1.0
