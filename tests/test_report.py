"""``guigym report`` on a recorded GuiWeb run: the HTML page and a GIF per episode; every image of the page
loads in headless Chromium and the page logs no console error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gui_envs.browser.session import BrowserSession, SessionHandles
from gui_envs.schema.trajectory import Trajectory
from gui_envs.verifiers.graph import StrategyGraph
from guigym.cli import app
from guigym.report import ReportError, episode_summary, write_report

runner = CliRunner()


def open_in_chromium(page_path: Path) -> dict[str, Any]:
    """Load the page; return the images' natural widths, their count and the console errors."""

    def work(h: SessionHandles) -> dict[str, Any]:
        errors: list[str] = []
        h.page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        h.page.on("pageerror", lambda exc: errors.append(str(exc)))
        h.page.goto(page_path.resolve().as_uri(), wait_until="load")
        widths = h.page.evaluate("() => Array.from(document.images, i => i.complete ? i.naturalWidth : 0)")
        return {"widths": widths, "errors": errors}

    with BrowserSession() as session:
        return session.call(work, timeout_s=60.0)


def test_report_on_a_recorded_web_run(tmp_path: Path) -> None:
    run = tmp_path / "web"
    recorded = runner.invoke(
        app, ["run", "GuiWeb-Shop-v0", "-a", "oracle", "-n", "1", "--task", "shop.add_to_wishlist", "--record", str(run)]
    )
    assert recorded.exit_code == 0, recorded.output
    # A strategy graph and a training log beside the episodes, as a CORE or GRPO run leaves them.
    graph = StrategyGraph("shop.add_to_wishlist")
    graph.codes = {0: "on_page('shop')", 1: "clicked('Add to wishlist')"}
    graph.add_edge(0, 1)
    graph.save(run / "strategy_graph.json")
    (run / "metrics.jsonl").write_text("\n".join(json.dumps({"step": s, "reward_mean": s / 4, "success_rate": s / 8}) for s in range(5)))

    result = runner.invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    page = run / "report.html"
    text = page.read_text()
    gifs = list((run / "report_gifs").glob("*.gif"))
    assert len(gifs) == 1
    for needle in ("Add the", "success", "Strategy graphs", "Training curves", "data:image/gif;base64", "&quot;type&quot;: &quot;click&quot;"):
        assert needle in text, needle
    assert "src=\"http" not in text and "src=\"file" not in text  # self-contained: every image is a data URI

    loaded = open_in_chromium(page)
    steps = json.loads(next(run.glob("*/trajectory.jsonl")).read_text().splitlines()[0])["num_steps"]
    # one GIF, one screenshot per step, the final screen, the graph and the curve
    assert len(loaded["widths"]) == 1 + steps + 1 + 2
    assert all(w > 0 for w in loaded["widths"]), loaded["widths"]
    assert loaded["errors"] == []


def test_report_on_a_folder_without_runs_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="guigym run ENV_ID --record"):
        write_report(tmp_path)
    result = runner.invoke(app, ["report", str(tmp_path / "missing")])
    assert result.exit_code == 1 and "is not a folder" in result.output


def test_the_episode_line_names_each_agent_and_labels_oracle_recordings_as_demonstrations() -> None:
    def episode(agent: str, success: bool) -> Trajectory:
        t = Trajectory("open the note", metadata={"agent": agent})
        t.success = success
        return t

    lines = episode_summary([episode("oracle", True), episode("lm", False), episode("lm", True), episode("oracle", True)])
    assert lines == [
        "2 oracle demonstrations (oracle, scripted from privileged state; not a learning figure): success 100%",
        "2 episodes by lm: success 50%",
    ]
