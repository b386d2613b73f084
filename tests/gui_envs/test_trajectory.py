"""Trajectory records: round trip through JSONL + PNG, atomic writes, Hugging Face export."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from gui_envs.schema import atomic_folder
from gui_envs.schema.actions import Action
from gui_envs.schema.trajectory import (
    STALE_AFTER_S,
    Step,
    Trajectory,
    TrajectoryFormatError,
    clean_stale_temporaries,
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
        from gui_envs.schema.actions import Action
        from gui_envs.schema.trajectory import Step, Trajectory
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
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    assert leftovers, "the kill should have interrupted a save in progress"
    for traj in load_trajectories(tmp_path):
        assert len(traj.steps) == 400
    # The writer's pid is dead, so its temporary folder was stale and loading removed it.
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


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
    import datasets

    # Images are a datasets.Image feature (decoded to PIL), not path strings that only this disk can resolve.
    assert isinstance(ds.features["image"], datasets.Image)
    assert ds[0]["image"].size == (traj.steps[0].screenshot.shape[1], traj.steps[0].screenshot.shape[0])
    assert ds[1]["image"] is None


# ----- trajectories that survive anything (issue 9, point 7) --------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_resave_replaces_the_folder_in_both_install_paths(tmp_path: Path, monkeypatch) -> None:
    traj = _trajectory()
    traj.save(tmp_path)
    traj.steps = traj.steps[:1]
    traj.save(tmp_path)  # the atomic exchange where the system has one
    assert len(Trajectory.load(tmp_path / traj.id).steps) == 1
    monkeypatch.setattr(atomic_folder, "_exchange", lambda a, b: False)
    traj.steps = []
    traj.save(tmp_path)  # two renames, the old folder kept until the new one is in place
    assert len(Trajectory.load(tmp_path / traj.id).steps) == 0
    assert [p.name for p in tmp_path.iterdir()] == [traj.id]


def test_killed_resave_never_loses_the_trajectory(tmp_path: Path) -> None:
    """SIGKILL a process that re-saves one id over and over: the id always loads, as one of its versions."""
    script = textwrap.dedent(
        f"""
        import numpy as np, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from gui_envs.schema.actions import Action
        from gui_envs.schema.trajectory import Step, Trajectory
        rng = np.random.default_rng(0)
        shot = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
        versions = [[Step(action=Action.click(1, 2), screenshot=shot)] * n for n in (5, 7)]
        Trajectory(instruction="x", steps=versions[0], id="same").save({str(tmp_path)!r})
        print("ready", flush=True)
        i = 0
        while True:
            Trajectory(instruction="x", steps=versions[i % 2], id="same").save({str(tmp_path)!r})
            i += 1
        """
    )
    for delay in (0.3, 0.55, 0.8):
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        (loaded,) = load_trajectories(tmp_path)
        assert loaded.id == "same" and len(loaded.steps) in (5, 7)
        assert [p.name for p in tmp_path.iterdir()] == ["same"]


def test_stale_temporary_folders_are_cleaned_and_an_orphaned_old_copy_restored(tmp_path: Path) -> None:
    host = atomic_folder.temp_name("tmp", "x").split("-")[2]  # .tmp-x-<host>-<pid>-<random>
    dead, alive = _dead_pid(), os.getpid()
    good = _trajectory()
    good.save(tmp_path)
    # A writer killed between its two renames: only the old copy exists, under .old-*.
    orphan = _trajectory()
    orphan.save(tmp_path)
    os.rename(tmp_path / orphan.id, tmp_path / f".old-{orphan.id}-{host}-{dead}-0123abcd")
    names = {
        "dead": f".tmp-{good.id}-{host}-{dead}-0123abcd",  # stale: its writer is gone
        "alive": f".tmp-{good.id}-{host}-{alive}-0123abcd",  # a save in progress in this process
        "other_host": f".tmp-{good.id}-ffffffff-{dead}-0123abcd",  # cannot check the pid: age decides
        "old_format": f".tmp-{good.id}-k2j4_x9a",  # written by the previous version: age decides
        "ancient": f".tmp-{good.id}-0000abcd-1-0123abcd",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
    two_hours_ago = time.time() - 2 * STALE_AFTER_S
    os.utime(tmp_path / names["ancient"], (two_hours_ago, two_hours_ago))
    loaded = load_trajectories(tmp_path)
    assert sorted(t.id for t in loaded) == sorted([good.id, orphan.id])
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {good.id, orphan.id, names["alive"], names["other_host"], names["old_format"]}
    # An hour later everything left over is stale.
    clean_stale_temporaries(tmp_path, now=time.time() + 2 * STALE_AFTER_S)
    assert {p.name for p in tmp_path.iterdir()} == {good.id, orphan.id}


def _corrupt(folder: Path, how: str) -> int:
    """Damage a saved ``_trajectory()`` folder by hand; returns the line the error must name."""
    path = folder / "trajectory.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]  # header + 3 steps

    def edit(index: int, change) -> None:  # type: ignore[no-untyped-def]
        record = json.loads(lines[index])
        change(record)
        lines[index] = json.dumps(record).encode()

    if how == "truncated_last_line":
        lines[3] = lines[3][: len(lines[3]) // 2]
        line = 4
    elif how == "dropped_last_line":
        del lines[3]
        line = 3
    elif how == "reward_is_text":
        edit(2, lambda r: r.update(reward="high"))
        line = 3
    elif how == "seed_is_text":
        edit(0, lambda r: r.update(seed="7"))
        line = 1
    elif how == "token_ids_not_ints":
        edit(1, lambda r: r.update(token_ids=["a"]))
        line = 2
    elif how == "info_is_a_list":
        edit(1, lambda r: r.update(info=[1]))
        line = 2
    elif how == "privileged_is_text":
        edit(1, lambda r: r.update(privileged="answer"))
        line = 2
    elif how == "missing_reward":
        edit(2, lambda r: r.pop("reward"))
        line = 3
    elif how == "missing_id":
        edit(0, lambda r: r.pop("id"))
        line = 1
    elif how == "bad_action":
        edit(1, lambda r: r.update(action={"type": "click", "point": [1e300, 0]}))
        line = 2
    elif how == "escaping_image_path":
        edit(1, lambda r: r.update(image_path="../../etc/passwd"))
        line = 2
    elif how == "line_is_a_list":
        lines[2] = b"[1, 2]"
        line = 3
    elif how == "not_utf8":
        lines[2] = lines[2].replace(b"garbage", b"garb\xff\xfege")
        line = 3
    elif how == "bad_image":
        (folder / "step_0000.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
        line = 2
    else:
        raise AssertionError(how)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return line


@pytest.mark.parametrize(
    "how",
    [
        "truncated_last_line",
        "dropped_last_line",
        "reward_is_text",
        "seed_is_text",
        "token_ids_not_ints",
        "info_is_a_list",
        "privileged_is_text",
        "missing_reward",
        "missing_id",
        "bad_action",
        "escaping_image_path",
        "line_is_a_list",
        "not_utf8",
        "bad_image",
    ],
)
def test_every_corruption_raises_trajectory_format_error_with_file_and_line(tmp_path: Path, how: str) -> None:
    folder = _trajectory().save(tmp_path)
    line = _corrupt(folder, how)
    with pytest.raises(TrajectoryFormatError) as info:
        Trajectory.load(folder, load_images=True)
    path = folder / "trajectory.jsonl"
    assert (Path(info.value.path), info.value.line) == (path, line)
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_load_trajectories_can_skip_and_report_bad_folders(tmp_path: Path, caplog) -> None:
    good, bad = _trajectory(), _trajectory()
    good.save(tmp_path)
    _corrupt(bad.save(tmp_path), "truncated_last_line")
    with pytest.raises(TrajectoryFormatError):
        load_trajectories(tmp_path)
    errors: list[TrajectoryFormatError] = []
    loaded = load_trajectories(tmp_path, on_error="skip", errors=errors)
    assert [t.id for t in loaded] == [good.id]
    assert len(errors) == 1 and errors[0].path == tmp_path / bad.id / "trajectory.jsonl"
    assert bad.id in caplog.text
    with pytest.raises(ValueError, match="on_error"):
        load_trajectories(tmp_path, on_error="ignore")  # type: ignore[arg-type]


def _reject_constant(token: str) -> None:
    raise AssertionError(f"non-strict JSON token {token}")


def test_non_finite_numbers_are_written_as_strict_json(tmp_path: Path) -> None:
    traj = Trajectory(
        instruction="x",
        steps=[Step(action=None, reward=float("nan"), logprobs=[-0.5, float("-inf")]), Step(None, float("inf"))],
        score=float("nan"),
    )
    folder = traj.save(tmp_path)
    for raw in (folder / "trajectory.jsonl").read_text().splitlines():
        json.loads(raw, parse_constant=_reject_constant)
    loaded = Trajectory.load(folder)
    assert math.isnan(loaded.steps[0].reward) and loaded.steps[1].reward == math.inf
    assert loaded.steps[0].logprobs == [-0.5, -math.inf] and math.isnan(loaded.score)


def test_files_from_the_previous_writer_still_load(tmp_path: Path) -> None:
    """The previous writer put bare NaN tokens in the JSONL; they still read."""
    folder = tmp_path / "old"
    folder.mkdir()
    header = {"format_version": 1, "id": "old", "instruction": "x", "num_steps": 1, "metadata": {}}
    step = '{"action": {"type": "wait"}, "reward": NaN, "terminated": true}'
    (folder / "trajectory.jsonl").write_text(json.dumps(header) + "\n" + step + "\n")
    (loaded,) = load_trajectories(tmp_path)
    assert math.isnan(loaded.steps[0].reward) and loaded.steps[0].action == Action("wait")


def test_non_finite_round_trip_follows_one_rule(tmp_path: Path) -> None:
    """Reward, score and log-probabilities keep the float (as a marker string on disk); elsewhere it is null."""
    nan = float("nan")
    traj = Trajectory(
        instruction="x",
        steps=[Step(Action("wait"), reward=np.float32(nan), logprobs=[np.float64(-np.inf)],  # type: ignore[arg-type]
                    info={"r": nan, "nested": [np.inf, 1.5]}, privileged={"p": np.array([np.nan, 2.0])})],
        score=-math.inf,
        metadata={"m": nan},
    )  # fmt: skip
    first = traj.save(tmp_path / "a")
    text = (first / "trajectory.jsonl").read_text()
    for raw in text.splitlines():
        json.loads(raw, parse_constant=_reject_constant)
    loaded = Trajectory.load(first)
    step = loaded.steps[0]
    assert math.isnan(step.reward) and step.logprobs == [-math.inf] and loaded.score == -math.inf
    assert step.info == {"r": None, "nested": [None, 1.5]} and step.privileged == {"p": [None, 2.0]}
    assert loaded.metadata == {"m": None}
    again = loaded.save(tmp_path / "b")  # a second round trip changes nothing
    assert (again / "trajectory.jsonl").read_text() == text


def test_bare_non_finite_tokens_load_by_the_same_rule(tmp_path: Path) -> None:
    header = {"format_version": 1, "id": "old", "instruction": "x", "num_steps": 1}
    step = '{"action": {"type": "wait"}, "reward": -Infinity, "logprobs": [NaN], "info": {"r": NaN, "l": [Infinity]}}'
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "trajectory.jsonl").write_text(json.dumps({**header, "score": 0.5})[:-1] + ', "metadata": {"m": NaN}}\n' + step + "\n")
    loaded = Trajectory.load(folder)
    assert loaded.steps[0].reward == -math.inf and math.isnan(loaded.steps[0].logprobs[0])  # type: ignore[index]
    assert loaded.steps[0].info == {"r": None, "l": [None]} and loaded.metadata == {"m": None}
    # A bare token where the format holds no number at all is rejected, naming the file and line.
    (folder / "trajectory.jsonl").write_text(json.dumps(header)[:-1] + ', "seed": NaN}\n' + step + "\n")
    with pytest.raises(TrajectoryFormatError, match=r"trajectory.jsonl:1: seed must be an integer"):
        Trajectory.load(folder)
    (folder / "trajectory.jsonl").write_text(json.dumps(header) + "\n" + step.replace("}}", '}, "terminated": NaN}') + "\n")
    with pytest.raises(TrajectoryFormatError, match=r"trajectory.jsonl:2: terminated must be bool"):
        Trajectory.load(folder)


def test_any_string_saves_and_loads_back_equal(tmp_path: Path) -> None:
    odd = "half a pair \ud83d, NUL \x00, café, 漢字"
    traj = Trajectory(
        instruction=odd,
        steps=[Step(action=Action.type_text(odd), output_text=odd, info={odd: odd}, prompt=odd)],
        metadata={"note": odd},
    )
    folder = traj.save(tmp_path)
    loaded = Trajectory.load(folder)
    assert loaded.instruction == odd and loaded.metadata == {"note": odd}
    step = loaded.steps[0]
    assert step.action == Action.type_text(odd) and step.output_text == odd and step.info == {odd: odd}
    # Only lines that need it are escaped: other text stays readable.
    Trajectory(instruction="café", id="plain").save(tmp_path)
    assert "café" in (tmp_path / "plain" / "trajectory.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("bad_id", ["", "../escape", "a/b", ".tmp-x", ".hidden", "nul\x00"])
def test_ids_that_are_not_folder_names_are_refused(tmp_path: Path, bad_id: str) -> None:
    with pytest.raises(TrajectoryFormatError, match="folder name"):
        Trajectory(instruction="x", id=bad_id).save(tmp_path / "root")
    assert not (tmp_path / "escape").exists()
