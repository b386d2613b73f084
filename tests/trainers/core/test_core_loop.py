"""The CORE loop, cut down: three shop tasks plus one held out, behaviour cloning and one iteration, the tiny
model, and the scripted noisy oracle so that expansion and extrapolation really happen. The run is killed with
``kill -9`` in the middle of iteration 1 (through ``guigym train core``) and resumed; the assertions are made on
the resumed run's artefacts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gui_envs.schema.trajectory import load_trajectories
from gui_envs.verifiers.graph import StrategyGraph
from trainers.core.config import CoreConfig
from trainers.core.loop import finished_iterations, train_core

pytest.importorskip("playwright")
ROOT = Path(__file__).resolve().parents[3]

TEMPLATES = ["shop.add_to_wishlist", "shop.add_to_cart", "shop.open_product", "shop.search"]


def _config(model: Path, out: Path) -> dict:
    return {
        "model": str(model), "envs": ["GuiWeb-Shop-v0"], "templates": [f"GuiWeb-Shop-v0:{t}" for t in TEMPLATES],
        "demo_fraction": 0.5, "test_fraction": 0.25, "iterations": 1, "samples_per_task": 4, "scripted_samples": 3,
        "detour_p": 0.6, "max_steps": 5, "max_new_tokens": 8, "output_format": "text", "batch_size": 8,
        "learning_rate": 1e-3, "eval_samples": 0, "device": "cpu", "output_dir": str(out), "draw_graphs": True,
    }  # fmt: skip


def _kill_mid_iteration(cfg_path: Path, out: Path) -> None:
    """Run ``guigym train core`` and ``kill -9`` it once iteration 0 is installed and iteration 1 has begun."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "guigym.cli", "train", "core", "--config", str(cfg_path)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip
    deadline = time.time() + 150
    try:
        while time.time() < deadline and proc.poll() is None:
            if (out / "iter_00").is_dir() and list(out.glob(".tmp-iter_01-*")):
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:] if proc.stderr else "exited"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its Chromium, as a crash would
        proc.wait()


def test_core_loop_runs_every_stage_and_resumes_after_kill(tiny_lm_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "core"
    cfg_path = tmp_path / "core.yaml"
    cfg_path.write_text(yaml.safe_dump(_config(tiny_lm_path, out)))
    _kill_mid_iteration(cfg_path, out)
    assert [p.name for p in finished_iterations(out)] == ["iter_00"]
    assert list(out.glob(".tmp-iter_01-*")), "the kill left iteration 1 half-built"
    iter0 = (out / "iter_00" / "state.json").stat().st_ino

    result = train_core(CoreConfig.from_yaml(cfg_path, ["resume=true"]))
    metrics, state = result["metrics"], result["state"]

    # Resume: iteration 0 untouched, iteration 1 built once, the killed one's temporary folder gone.
    assert [p.name for p in finished_iterations(out)] == ["iter_00", "iter_01"]
    assert (out / "iter_00" / "state.json").stat().st_ino == iter0
    assert not list(out.glob(".tmp-*"))
    assert [m["iteration"] for m in metrics] == [0, 1]
    assert [json.loads(line)["iteration"] for line in (out / "metrics.jsonl").read_text().splitlines()] == [
        0,
        1,
    ]
    ids = [t.id for p in finished_iterations(out) for t in load_trajectories(p / "dataset")]
    assert len(ids) == len(set(ids))

    bc, it1 = metrics
    # Behaviour cloning: the demos were abstracted into label functions that pass on them, and SFT stepped.
    assert bc["syntheses"] >= 2 and bc["osr"] == 1.0 and bc["demos_success"] == 1.0 and bc["sft_steps"] >= 1
    assert bc["avg_path_count"] == 1.0  # linear graphs from one demonstration each
    # Iteration 1: real samples, classified against real graphs, graphs expanded, tasks mined, SFT stepped.
    n_train, n_test = len(state.train), len(state.test)
    assert it1["sampled"] == 4 * n_train + 1 * n_test
    samples = load_trajectories(out / "iter_01" / "samples")
    assert len(samples) == it1["sampled"] and {t.metadata["sampler"] for t in samples} == {
        "policy",
        "scripted",
    }
    assert it1["fully"] + it1["partially"] + it1["failed"] >= 1
    assert it1["expanded"] >= 1, it1
    assert it1["new_success"] + it1["new_failure"] >= 1, it1
    assert it1["kept"] >= 1 and it1["sft_steps"] >= 1
    assert (out / "iter_01" / "sft" / "final" / "config.json").is_file()
    assert (out / "metrics.png").is_file() and (out / "iter_01" / "new_tasks.jsonl").read_text().strip()
    graph_files = sorted((out / "iter_01" / "graphs").glob("*.json"))
    assert graph_files and all(p.with_suffix(".png").is_file() for p in graph_files)
    # The demonstrated tasks all search for a product by its several-word name: a second route exists (a
    # one-word search), and after iteration 1 their graphs hold more than one path on average.
    demo_graphs = [
        StrategyGraph.load(out / "iter_01" / "graphs" / f"{k.replace('|', '_')}.json") for k in state.demo
    ]
    average = StrategyGraph.average_path_count(demo_graphs)
    print(f"average path count of the demonstrated tasks after iteration 1: {average:.2f}")
    assert average > 1.0
