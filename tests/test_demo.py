"""``guigym demo --quick``: every stage of the demo runs, cut down, and leaves its artefacts; the report page
references them and opens in headless Chromium with every image loaded and no console error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gui_envs.verifiers.graph import StrategyGraph
from guigym.cli import app
from guigym.demo import CORE_EVAL_START, DemoConfig
from tests.test_report import open_in_chromium

pytest.importorskip("playwright")
pytest.importorskip("transformers")


def test_quick_demo_runs_every_stage_and_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--quick", "--out", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    summary = result.output.split("guigym demo: summary")[-1]
    for stage in ("baselines", "demos", "core", "grpo", "eval", "report", "total"):
        assert stage in summary, stage
    # Each table once: the GRPO stage's runs share one memory plan, printed by the first run only.
    for title in ("baselines (1 episode", "memory plan per device", "GuiOffline-v0 fixtures", "guigym demo: summary"):
        assert result.output.count(title) == 1, title
    assert re.search(r"the demo took (\d+ min )?\d+ s \(wall clock, measured here on \d+ CPU cores", summary)

    # Oracle demonstrations on the shop and the phone, with screenshots.
    demos = sorted((out / "demos").glob("*/trajectory.jsonl"))
    assert len(demos) == 2
    envs = {json.loads(p.read_text().splitlines()[0])["env_id"] for p in demos}
    assert envs == {"GuiWeb-Shop-v0", "GuiAndroid-v0"}
    assert all(list(p.parent.glob("*.png")) for p in demos)
    # CORE: a strategy graph and its drawing, and the held-out figure per iteration.
    graphs = list((out / "graphs").glob("*_graph.json"))
    assert graphs and StrategyGraph.load(graphs[0]).codes
    assert list((out / "work" / "core" / "iter_01" / "graphs").glob("*.png"))
    assert (out / "core_heldout.png").stat().st_size > 0
    # CORE's held-out split: every training template on task seeds it never trained on, played after each iteration.
    state = json.loads((out / "work" / "core" / "iter_01" / "state.json").read_text())
    quick = DemoConfig.quick()
    heldout_seeds = {t["seed"] for t in state["heldout"]}
    assert heldout_seeds == set(range(CORE_EVAL_START, CORE_EVAL_START + quick.core_eval_seeds))
    assert heldout_seeds.isdisjoint(t["seed"] for t in state["train"])
    assert {t["template"] for t in state["heldout"]} == {t["template"] for t in state["train"]}
    n_heldout = len(state["heldout"])
    core_log = [json.loads(line) for line in (out / "work" / "core" / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in core_log] == [0, 1]
    assert all((r["heldout_greedy"] * n_heldout) % 1 == 0 for r in core_log)
    # GRPO: per reward and seed, held-out greedy success before training and every few steps up to the last.
    runs = json.loads((out / "grpo_curves.json").read_text())["runs"]
    assert set(runs) == {"binary", "ssl"} and all(len(r) == len(quick.grpo_seeds) for r in runs.values())
    for run in (r for rs in runs.values() for r in rs):
        assert run["eval_steps"][0] == 0 and run["eval_steps"][-1] == quick.grpo_steps
        assert all(0 <= g <= 1 and (g * quick.grpo_eval_seeds) % 1 == 0 for g in run["greedy"])
    assert (out / "grpo_heldout.png").stat().st_size > 0
    # Offline evaluation: Type / GR / SR per fixture and agent; the oracle scores 100.
    reports = json.loads((out / "eval.json").read_text())
    assert {(r["dataset"], r["agent"]) for r in reports} >= {("screenspot", "oracle"), ("androidcontrol", "random")}
    assert all(set(r["metrics"]) >= {"Type", "GR", "SR"} for r in reports)
    assert all(r["metrics"]["SR"] == 1.0 for r in reports if r["agent"] == "oracle")

    page = out / "report.html"
    text = page.read_text()
    for needle in ("Type", "GR", "SR", "GRPO on ClickBox-v0", "CORE per iteration, held-out first", "Strategy graphs",
                   "data:image/gif;base64", "Demo stages before this page"):  # fmt: skip
        assert needle in text, needle
    # The page leads with the held-out figure, and the two oracle recordings read as demonstrations, not success.
    assert text.index("Held-out greedy success") < min(text.index("Offline evaluation"), text.index("Reference players"))
    assert "2 oracle demonstrations (oracle, scripted from privileged state; not a learning figure)" in text
    assert "success rate" not in text
    # CORE's line in the held-out table reports its held-out figure (the last iteration's, k/n episodes on the
    # unseen seeds), ahead of the per-iteration table that counts the kept (training) trajectories; the training
    # rollouts' success is not on the page.
    core = re.search(
        rf"<td>CORE</td><td>(\d+) training templates x unseen task seeds? {CORE_EVAL_START}[^<]*</td><td>1</td>"
        r"<td>\d\.\d{3} \(after behaviour cloning\)</td><td>(\d+)/(\d+) = (\d\.\d{3}) ",
        text,
    )
    assert core is not None, "no CORE held-out figure in the report's held-out table"
    k, n, rate = int(core[2]), int(core[3]), float(core[4])
    assert n == n_heldout == int(core[1]) * quick.core_eval_seeds and rate == round(k / n, 3)
    assert rate == round(core_log[-1]["heldout_greedy"], 3)
    assert core.start() < text.index("kept: oracle demos") < text.index("Offline evaluation")
    for training_figure in ("train_success", "generalisation", "overall", "core_metrics"):
        assert training_figure not in text, training_figure
    assert "iter_01" not in text  # the scratch folder (CORE samples, checkpoints) stays out of the page
    assert len(list((out / "report_gifs").glob("*.gif"))) == 2

    loaded = open_in_chromium(page)
    # 2 figures, 1 graph drawing per copied graph, and per episode a GIF, the steps and the final screen
    assert len(loaded["widths"]) >= 2 + len(graphs) + 2 * 3
    assert all(w > 0 for w in loaded["widths"]), loaded["widths"]
    assert loaded["errors"] == []
