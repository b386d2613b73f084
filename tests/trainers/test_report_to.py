"""``report_to``: a GRPO run's TensorBoard event files and offline W&B run hold the scalars of its JSONL log,
under TRL's names, at the same steps; a resumed run's TensorBoard drops the steps after its checkpoint; unknown
names and missing packages are clear errors."""

from __future__ import annotations

import json
import math
import re
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from trainers.config_io import ConfigError
from trainers.grpo import train
from trainers.grpo_config import GRPOConfig
from trainers.run_log import RunLog, check_report_to, read_log, reported_name


def _tensorboard(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar tag of the event files under ``folder``: ``[(step, value), ...]``, as TensorBoard reads them."""
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator

    acc = EventAccumulator(str(folder), size_guidance={SCALARS: 0})  # 0: keep every event
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _wandb_history(run_file: Path) -> list[dict[str, Any]]:
    """The history rows of an offline W&B run's ``run-<id>.wandb`` file.

    The file is W&B's transaction log: a 7-byte header (``:W&B``, magic, version), then LevelDB-log records in
    32 KiB blocks (7-byte record header: CRC32, length, type FULL=1 / FIRST=2 / MIDDLE=3 / LAST=4), each
    record a ``wandb_internal_pb2.Record`` protobuf. wandb 0.31 has no Python reader for it (``wandb sync``
    reads it in Go), hence these lines.
    """
    from wandb.proto import wandb_internal_pb2 as pb

    data = run_file.read_bytes()
    assert data[:4] == b":W&B", run_file
    pos, block, buf, rows = 7, 32768, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # a block's tail too short for a header is zero padding
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        buf += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # FULL or LAST: a whole record
            record = pb.Record()
            record.ParseFromString(buf)
            buf = b""
            if record.HasField("history"):
                rows.append(
                    {(i.key or "/".join(i.nested_key)): json.loads(i.value_json) for i in record.history.item}
                )
    return rows


def _expected(log: list[dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """The JSONL log's numbers by reported name: ``[(step, value), ...]``."""
    out: dict[str, list[tuple[int, float]]] = {}
    for record in log:
        for key, value in record.items():
            if key != "step" and isinstance(value, int | float) and not isinstance(value, bool):
                out.setdefault(reported_name(key), []).append((record["step"], float(value)))
    return out


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_tensorboard_and_wandb_hold_the_jsonl_scalars(
    tiny_lm_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    torch.set_num_threads(1)
    out = tmp_path / "run"
    config = GRPOConfig(model=str(tiny_lm_path), env_id="ClickGrid-v0", output_format="cell", reward="continuous",
                        group_size=4, groups_per_step=2, num_envs=4, num_steps=2, max_new_tokens=3,
                        learning_rate=1e-2, device="cpu", output_dir=str(out), progress=False, plot=False, beta=0.05,
                        eval_seeds={"start": 2_000_000, "count": 2}, eval_samples=0,
                        report_to=["tensorboard", "wandb"])  # fmt: skip
    train(config)
    log = read_log(out / "metrics.jsonl")
    assert [r["step"] for r in log] == [0, 1, 2]  # the untrained policy's held-out point, then two steps
    expected = _expected(log)
    # TRL's names where the metric is TRL's, Trainer's train/ and eval/ prefixes, guigym's names otherwise.
    for name in ("train/reward", "train/reward_std", "train/kl", "train/entropy", "train/loss", "train/learning_rate",
                 "train/clip_ratio/region_mean", "train/completions/mean_length", "train/success_rate",
                 "eval/greedy_success"):  # fmt: skip
        assert name in expected, (name, sorted(expected))

    board = _tensorboard(out / "runs")
    assert board.keys() == expected.keys()
    for name, points in expected.items():
        # TensorBoard keeps float32 values.
        want = [(s, float(np.float32(v))) for s, v in points]
        got = board[name]
        assert [s for s, _ in got] == [s for s, _ in want], name
        assert all(_same(g, w) for (_, g), (_, w) in zip(got, want, strict=True)), (name, got, want)

    [run_file] = (out / "wandb").glob("offline-run-*/run-*.wandb")
    history = _wandb_history(run_file)
    assert [row["_step"] for row in history] == [0, 1, 2]
    assert [row["train/global_step"] for row in history] == [0, 1, 2]
    for name, points in expected.items():
        got = [(row["_step"], float(row[name])) for row in history if name in row]
        assert [s for s, _ in got] == [s for s, _ in points], name
        assert all(_same(g, w) for (_, g), (_, w) in zip(got, points, strict=True)), (name, got, points)


def test_a_resumed_log_replaces_the_steps_after_the_checkpoint_in_tensorboard(tmp_path: Path) -> None:
    first = RunLog(tmp_path / "metrics.jsonl", 0, ["tensorboard"])
    for step in range(1, 5):
        first.write({"step": step, "reward_mean": float(step)})
    first.close()  # a killed run: it logged steps 3 and 4 after its step-2 checkpoint
    again = RunLog(tmp_path / "metrics.jsonl", 2, "tensorboard")
    for step in (3, 4, 5):
        again.write({"step": step, "reward_mean": 10.0 * step})
    again.close()
    points = [(1, 1.0), (2, 2.0), (3, 30.0), (4, 40.0), (5, 50.0)]
    assert [(r["step"], r["reward_mean"]) for r in read_log(tmp_path / "metrics.jsonl")] == points
    assert _tensorboard(tmp_path / "runs") == {"train/reward": points}


def test_report_to_names_are_checked() -> None:
    assert check_report_to("none") == [] and check_report_to([]) == [] and check_report_to(None) == []
    assert check_report_to("wandb") == ["wandb"]
    assert check_report_to(["tensorboard", "wandb", "tensorboard"]) == ["tensorboard", "wandb"]
    with pytest.raises(
        ConfigError, match=r"report_to=\['tensorbord'\]: unknown \['tensorbord'\]; use a list of"
    ):
        GRPOConfig(model="m", report_to=["tensorbord"])
    from trainers.dpo_config import DPOConfig
    from trainers.sft_config import SFTConfig

    with pytest.raises(ConfigError, match="unknown"):
        SFTConfig(model="m", data="d", report_to=["mlflow"])
    assert DPOConfig(model="m", data="d", report_to="none").report_to == []
    assert GRPOConfig.from_yaml(None, ["model=m", "report_to=[tensorboard]"]).report_to == ["tensorboard"]


@pytest.mark.parametrize(
    ("name", "module", "extra"),
    [("wandb", "wandb", "guigym[wandb]"), ("tensorboard", "torch.utils.tensorboard", "guigym[train]")],
)
def test_a_missing_reporter_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, module: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # what an environment without the package raises on import
    message = f"report_to=['{name}'] needs the {name} package, which is not installed: pip install '{extra}'"
    with pytest.raises(ImportError, match=re.escape(message)):
        RunLog(tmp_path / "metrics.jsonl", 0, [name])
    assert not (tmp_path / "metrics.jsonl").exists()  # refused before the log was touched
    with pytest.raises(ImportError, match=re.escape(message)):
        train(GRPOConfig(model=str(tmp_path / "no-model-needed"), device="cpu", report_to=[name],
                         output_dir=str(tmp_path / "run")))  # fmt: skip


def test_a_panel_for_a_key_never_logged_says_so(tmp_path: Path) -> None:
    import warnings

    from trainers.run_log import plot_curve

    log = tmp_path / "log.jsonl"
    log.write_text('{"step": 1, "loss": 2.0}\n{"step": 2, "loss": 1.5}\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warned "No artists with labels found" for the empty panel
        png = plot_curve(log, tmp_path / "curve.png", ["loss", ("heldout_greedy", "heldout_sampled")])
    assert Path(png).stat().st_size > 0
