"""Trajectory records: round trip through JSONL + PNG, atomic writes, Hugging Face export."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from gui_envs.actions import Action
from gui_envs.trajectory import (
    Step,
    Trajectory,
    TrajectoryFormatError,
    load_trajectories,
    to_hf_dataset,
    to_jsonable,
)


def _trajectory() -> Trajectory:
    rng = np.random.default_rng(0)
    shot = rng.integers(0, 256, size=(24, 32, 3), dtype=np.uint8)
    return Trajectory(
        instruction="add the red mug to the wishlist",
        env_id="GuiWeb-v0",
        task="shop.wishlist",
        seed=7,
        steps=[
            Step(
                action=Action.click(10, 12.5),
                reward=0.0,
                output_text='<answer>[{"action": "click", "point": [10, 12.5]}]</answer>',
                screenshot=shot,
                info={"bbox": np.array([1, 2, 3, 4]), "nan": float("nan"), "big": np.zeros((100, 100))},
                token_ids=[1, 2, 3],
                logprobs=[-0.1, -0.2, -0.3],
            ),
            Step(action=None, reward=-0.1, output_text="garbage", action_error="no_json"),
            Step(action=Action.stop("done"), reward=1.0, terminated=True),
        ],
        success=True,
        score=1.0,
        metadata={"agent": "oracle", "group": np.int64(3)},
    )


def test_round_trip_with_images(tmp_path: Path) -> None:
    traj = _trajectory()
    folder = traj.save(tmp_path)
    assert (folder / "step_0000.png").is_file()
    loaded = Trajectory.load(folder, load_images=True)
    assert loaded.id == traj.id and loaded.instruction == traj.instruction
    assert loaded.success is True and loaded.seed == 7 and loaded.metadata == {"agent": "oracle", "group": 3}
    assert [s.action for s in loaded.steps] == [s.action for s in traj.steps]
    assert [s.reward for s in loaded.steps] == [0.0, -0.1, 1.0]
    np.testing.assert_array_equal(loaded.steps[0].screenshot, traj.steps[0].screenshot)
    assert loaded.steps[0].info["bbox"] == [1, 2, 3, 4]
    assert loaded.steps[0].info["nan"] is None
    assert loaded.steps[0].info["big"] == {"ndarray": {"shape": [100, 100], "dtype": "float64"}}
    assert loaded.steps[0].logprobs == [-0.1, -0.2, -0.3]
    assert loaded.steps[1].action_error == "no_json"
    assert loaded.total_reward == pytest.approx(0.9)
    # Saving the loaded copy again gives identical records.
    again = Trajectory.load(loaded.save(tmp_path / "again"))
    assert [s.to_record() for s in again.steps] == [s.to_record() for s in loaded.steps]


def test_load_trajectories_skips_temporary_folders(tmp_path: Path) -> None:
    a, b = _trajectory(), _trajectory()
    a.save(tmp_path)
    b.save(tmp_path)
    (tmp_path / ".tmp-dead-123").mkdir()
    (tmp_path / ".tmp-dead-123" / "trajectory.jsonl").write_text('{"format_version": 1, "id": "x"')
    assert sorted(t.id for t in load_trajectories(tmp_path)) == sorted([a.id, b.id])


def test_bad_folders_raise_named_errors(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryFormatError):
        Trajectory.load(tmp_path)
    (tmp_path / "trajectory.jsonl").write_text(json.dumps({"format_version": 99, "id": "x"}) + "\n")
    with pytest.raises(TrajectoryFormatError, match="format_version"):
        Trajectory.load(tmp_path)
    with pytest.raises(TrajectoryFormatError):
        load_trajectories(tmp_path / "missing")


def test_killed_writer_leaves_no_half_written_trajectory(tmp_path: Path) -> None:
    """SIGKILL a process in the middle of saving a big trajectory: only complete folders ever appear."""
    script = textwrap.dedent(
        f"""
        import numpy as np, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from gui_envs.actions import Action
        from gui_envs.trajectory import Step, Trajectory
        rng = np.random.default_rng(0)
        steps = [Step(action=Action.click(1, 2), screenshot=rng.integers(0, 256, (400, 400, 3), dtype=np.uint8))
                 for _ in range(400)]
        print("ready", flush=True)
        i = 0
        while True:
            Trajectory(instruction="x", steps=steps, id=f"t{{i:05d}}").save({str(tmp_path)!r})
            i += 1
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    time.sleep(1.0)  # well inside the first save, which writes 400 PNGs
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for traj in load_trajectories(tmp_path):
        assert len(traj.steps) == 400
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    assert leftovers, "the kill should have interrupted a save in progress"


def test_to_jsonable_handles_numpy_and_actions() -> None:
    value = {"a": np.float32(0.5), "b": (1, 2), "c": Action.click(1, 2), "d": object(), 3: float("inf")}
    out = to_jsonable(value)
    json.dumps(out)
    assert out["a"] == 0.5 and out["b"] == [1, 2] and out["c"] == {"type": "click", "point": [1.0, 2.0]}
    assert out["3"] is None


def test_export_to_hf_dataset(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    traj = _trajectory()
    traj.save(tmp_path)
    ds = to_hf_dataset(load_trajectories(tmp_path), root=tmp_path)
    assert len(ds) == 3
    assert ds[0]["instruction"] == traj.instruction
    assert Action.from_json(ds[0]["action"]) == Action.click(10, 12.5)
    assert ds[1]["action"] is None
    assert Path(ds[0]["image"]).is_file() and ds[1]["image"] is None
