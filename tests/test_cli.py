"""The guigym command: envs, run (with recording) and helpful errors."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from gui_envs.schema.trajectory import load_trajectories
from guigym.cli import app

runner = CliRunner()


def test_envs_lists_grid_ids() -> None:
    result = runner.invoke(app, ["envs"])
    assert result.exit_code == 0, result.output
    for env_id in ("Maze-v0", "Sudoku-v0", "Arc-v0"):
        assert env_id in result.output


def test_run_random_sudoku_prints_a_table() -> None:
    result = runner.invoke(app, ["run", "Sudoku-v0", "--agent", "random", "--episodes", "3"])
    assert result.exit_code == 0, result.output
    assert "Sudoku-v0 / random agent" in result.output
    assert "mean" in result.output


def test_run_oracle_records_trajectories(tmp_path: Path) -> None:
    out = tmp_path / "maze"
    result = runner.invoke(
        app,
        [
            "run",
            "Maze-v0",
            "--agent",
            "oracle",
            "-n",
            "2",
            "-k",
            "mode=navigate",
            "-k",
            "size=5",
            "--record",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    trajs = load_trajectories(out, load_images=True)
    assert len(trajs) == 2
    for traj in trajs:
        assert traj.success is True and traj.env_id == "Maze-v0"
        assert traj.steps and all(s.screenshot is not None for s in traj.steps)


def test_unknown_env_suggests_close_ids() -> None:
    result = runner.invoke(app, ["run", "Maze-v1"])
    assert result.exit_code != 0
    assert "Maze-v0" in result.output


def test_bad_kwarg_is_a_usage_error() -> None:
    result = runner.invoke(app, ["run", "Maze-v0", "-k", "novalue"])
    assert result.exit_code != 0
    assert "KEY=VALUE" in result.output


def test_train_with_a_missing_local_model_is_one_clear_line(tmp_path: Path, monkeypatch) -> None:
    """A config whose model folder was never built fails at once, naming the path, instead of asking a hub."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    config = Path(__file__).resolve().parents[1] / "configs" / "grpo_tiny_cpu.yaml"
    result = runner.invoke(app, ["train", "grpo", "--config", str(config)])
    assert result.exit_code == 1
    assert "'runs/tiny-llama' does not exist" in result.output
    assert "Traceback" not in result.output
