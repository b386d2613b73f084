"""Checkpoints: a run killed with SIGKILL and resumed equals an uninterrupted run; bad checkpoints are named."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from trainers.checkpoint import CheckpointError, latest_checkpoint, load_checkpoint, save_checkpoint

ROOT = Path(__file__).resolve().parents[2]
RUN = "from trainers.grpo import train; from trainers.grpo_config import GRPOConfig; import sys; train(GRPOConfig.from_yaml(sys.argv[1], sys.argv[2:]))"


def _config(tmp: Path, model: Path, out: str) -> Path:
    cfg = {
        "model": str(model), "env_id": "ClickGrid-v0", "output_format": "cell", "group_size": 4,
        "groups_per_step": 2, "num_envs": 8, "num_steps": 12, "max_new_tokens": 2, "learning_rate": 1e-2,
        "device": "cpu", "deterministic": True, "save_every": 1, "progress": False, "plot": False,
        "output_dir": str(tmp / out), "epochs": 2,
    }  # fmt: skip
    path = tmp / f"{out}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _popen(config: Path, *overrides: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", RUN, str(config), *overrides], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip


def _weights(run: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(run / "final" / "model.safetensors")


def test_kill_9_and_resume_matches_an_uninterrupted_run(tmp_path: Path, tiny_lm_path: Path) -> None:
    whole = _popen(_config(tmp_path, tiny_lm_path, "whole"))
    killed_cfg = _config(tmp_path, tiny_lm_path, "killed")
    victim = _popen(killed_cfg)
    pointer = tmp_path / "killed" / "latest"
    deadline = time.time() + 240
    while not (pointer.exists() and pointer.read_text().strip() >= "checkpoint-000003"):
        assert victim.poll() is None and time.time() < deadline, "the run ended before it could be killed"
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait() == -signal.SIGKILL
    done_at_kill = int(pointer.read_text().strip().split("-")[1])
    assert done_at_kill < 12
    resumed = _popen(killed_cfg, "resume=true")
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
    assert whole.wait(timeout=300) == 0, whole.stderr.read().decode()[-2000:]  # type: ignore[union-attr]

    steps = [json.loads(line)["step"] for line in (tmp_path / "killed" / "metrics.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 13))  # no step logged twice, none skipped
    a, b = _weights(tmp_path / "whole"), _weights(tmp_path / "killed")
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=0, atol=0, msg=name)
    ref = [json.loads(x) for x in (tmp_path / "whole" / "metrics.jsonl").read_text().splitlines()]
    got = [json.loads(x) for x in (tmp_path / "killed" / "metrics.jsonl").read_text().splitlines()]
    assert [r["reward_mean"] for r in ref] == [r["reward_mean"] for r in got]


def test_missing_checkpoint_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="latest"):
        latest_checkpoint(tmp_path)


def test_corrupt_checkpoint_names_the_file(tmp_path: Path) -> None:
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.AdamW(model.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    path = save_checkpoint(tmp_path, 3, model.state_dict(), opt, sched, {"data_position": 6})
    assert latest_checkpoint(tmp_path) == path
    assert load_checkpoint(path)["state"]["step"] == 3
    (path / "optimizer.pt").write_bytes(b"not a torch file")
    with pytest.raises(CheckpointError, match="optimizer.pt.*corrupt"):
        load_checkpoint(path)
    (path / "rng.pt").unlink()
    with pytest.raises(CheckpointError, match="rng.pt.*missing"):
        load_checkpoint(path)
