"""``guigym eval`` on the GUI-R1 fixture with replayed outputs: Type/GR/SR and breakdowns computed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.evaluate import pass_at_k
from guigym.cli import app

# Fixture (gui_envs/offline/fixtures.py, gui_r1):
#   r0 web    click, box (10, 10, 50, 40)      -> predict click (20, 20): in the box. Type, GR, SR hit.
#   r1 web    type "new york"                  -> predict type "york city": token-set F1 = 0.5. Type, SR hit.
#   r2 mobile click, point (100, 200), 200x400 -> predict click (140, 200): 40/200 = 0.2 > 0.14. Type only.
OUTPUTS = {
    "r0": '<think>cart</think><answer>[{"action": "click", "point": [20, 20], "input_text": ""}]</answer>',
    "r1": '<answer>[{"action": "type", "point": [-100, -100], "input_text": "york city"}]</answer>',
    "r2": '<answer>[{"action": "click", "point": [140, 200], "input_text": ""}]</answer>',
}


def test_eval_matches_hand_computed_values(tmp_path: Path) -> None:
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "\n".join(json.dumps({"episode_id": k, "step": 0, "output": v}) for k, v in OUTPUTS.items())
    )
    report, plot = tmp_path / "report.json", tmp_path / "offsets.png"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "GuiOffline-v0",
            "-k",
            "dataset=gui_r1",
            "--agent",
            f"replay:{preds}",
            "--report",
            str(report),
            "--plot",
            str(plot),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["episodes"] == 3
    assert data["metrics"] == pytest.approx({"Type": 1.0, "GR": 0.5, "SR": 2 / 3})
    assert data["success_rate"] == pytest.approx(2 / 3)
    assert data["by_platform"]["web"] == pytest.approx(
        {"Type": 1.0, "GR": 1.0, "SR": 1.0, "success_rate": 1.0}
    )
    assert data["by_platform"]["mobile"] == pytest.approx(
        {"Type": 1.0, "GR": 0.0, "SR": 0.0, "success_rate": 0.0}
    )
    assert sorted(data["by_category"]) == ["mobile", "web"]
    assert data["pass_at_k"] == {"pass@1": pytest.approx(2 / 3)}
    # Offsets: predicted minus target centre. r0: (20, 20) - (30, 25); r2: (140, 200) - (100, 200).
    assert data["click_offsets"] == [[-10.0, -5.0], [40.0, 0.0]]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "66.7" in result.output


def test_oracle_is_perfect_on_a_multi_step_dataset() -> None:
    result = CliRunner().invoke(
        app, ["eval", "GuiOffline-v0", "-k", "dataset=gui_odyssey", "--agent", "oracle"]
    )
    assert result.exit_code == 0, result.output
    assert "100.0" in result.output


def test_pass_at_k() -> None:
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)
