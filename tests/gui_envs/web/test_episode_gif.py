"""Recorded GuiWeb episodes replay into a GIF."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from agents import OracleAgent
from agents.episode import run_episode
from gui_envs.web.env import GuiWebEnv
from guigym.episode_gif import main, trajectory_to_gif


def test_record_and_replay(web_env: GuiWebEnv, tmp_path: Path) -> None:
    traj = run_episode(
        web_env, OracleAgent(web_env), options={"task": "shop.calories", "seed": 0}, record_screenshots=True
    )
    assert traj.success
    folder = traj.save(tmp_path / "runs")
    assert len(list(folder.glob("step_*.png"))) == len(traj.steps)
    gif = trajectory_to_gif(folder, tmp_path / "x.gif")
    with Image.open(gif) as im:
        assert im.n_frames == len(traj.steps) + 1  # the steps, then the screen after the last action
    assert main([str(folder), str(tmp_path / "y.gif")]) == 0
    assert main([str(tmp_path), str(tmp_path / "z.gif")]) == 1  # not a trajectory folder: a message, no crash


def test_cli_records_oracle_episodes_with_screenshots(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gui_envs.schema.trajectory import load_trajectories
    from guigym.cli import app

    out = tmp_path / "x"
    result = CliRunner().invoke(
        app, ["run", "GuiWeb-v0", "--agent", "oracle", "--episodes", "5", "--record", str(out)]
    )
    assert result.exit_code == 0, result.output
    trajs = load_trajectories(out, load_images=True)
    assert len(trajs) == 5
    for traj in trajs:
        assert traj.success is True
        assert traj.steps and all(
            step.screenshot is not None and step.screenshot.any() for step in traj.steps
        )
