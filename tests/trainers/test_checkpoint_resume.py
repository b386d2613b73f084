"""Checkpoints: a run killed with SIGKILL and resumed equals an uninterrupted run; bad checkpoints are named."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


# bf16: the optimiser steps fp32 master weights (trainers.precision), which the checkpoint must carry.
@pytest.mark.parametrize("overrides", [(), ("dtype=bfloat16", "master_weights=true")], ids=["fp32", "bf16-master"])
def test_kill_9_and_resume_matches_an_uninterrupted_run(
    tmp_path: Path, tiny_lm_path: Path, overrides: tuple[str, ...]
) -> None:
    whole = _popen(_config(tmp_path, tiny_lm_path, "whole"), *overrides)
    killed_cfg = _config(tmp_path, tiny_lm_path, "killed")
    victim = _popen(killed_cfg, *overrides)
    pointer = tmp_path / "killed" / "latest"
    deadline = time.time() + 240
    while not (pointer.exists() and pointer.read_text().strip() >= "checkpoint-000003"):
        assert victim.poll() is None and time.time() < deadline, "the run ended before it could be killed"
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait() == -signal.SIGKILL
    done_at_kill = int(pointer.read_text().strip().split("-")[1])
    assert done_at_kill < 12
    resumed = _popen(killed_cfg, *overrides, "resume=true")
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
    (path / "optimizer.bin").write_bytes(b"not a torch file")
    with pytest.raises(CheckpointError, match=r"optimizer\.bin.*corrupt"):
        load_checkpoint(path)
    (path / "random_states_0.pkl").unlink()
    with pytest.raises(CheckpointError, match=r"random_states_0\.pkl.*missing"):
        load_checkpoint(path)


# ----- temporary folders of killed saves, failed saves ---------------------------------------------------------
def _tiny_training_state() -> tuple[torch.nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 4)).sum().backward()
    opt.step()  # AdamW holds state now, as in a run
    return model, opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)


def _temporaries(out: Path) -> list[str]:
    return sorted(p.name for p in out.glob(".tmp-checkpoint-*"))


def _run_that_saves(out: Path, ready: Any, training: tuple[Any, Any, Any]) -> None:
    """A run (in a forked process): resume from ``out`` when it holds a checkpoint (which cleans it first),
    say so, then save checkpoints back to back, so that a kill at a random instant lands inside a save most
    of the time."""
    torch.set_num_threads(1)  # a forked child must not use the parent's thread pool
    model, opt, sched = training
    try:
        step = load_checkpoint(latest_checkpoint(out))["state"]["step"]
    except CheckpointError:
        step = 0
    ready.set()
    for s in range(step + 1, step + 100_000):
        save_checkpoint(out, s, model.state_dict(), opt, sched, {"data_position": s})


def test_saves_killed_at_random_points_leave_no_temporary_folder(tmp_path: Path) -> None:
    import multiprocessing
    import random

    ctx = multiprocessing.get_context("fork")  # a run per trial without a fresh interpreter's torch import
    model = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(4)])
    opt = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 256)).sum().backward()
    opt.step()  # AdamW holds state, as in a run: about 3 MB a checkpoint
    training = (model, opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0))
    rng = random.Random(23)
    out = tmp_path / "run"
    left_behind = 0
    for trial in range(8):
        ready = ctx.Event()
        victim = ctx.Process(target=_run_that_saves, args=(out, ready, training))
        victim.start()  # the next run: it resumes from the folder, which cleans it first
        try:
            assert ready.wait(60), "the run did not start"
            assert not [n for n in _temporaries(out) if f"-{victim.pid}-" not in n], (trial, _temporaries(out))
            if trial == 0:
                while not (out / "latest").exists():  # one complete checkpoint before the first kill
                    time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.2))
        finally:
            os.kill(victim.pid, signal.SIGKILL)  # type: ignore[arg-type]
            victim.join()
        assert victim.exitcode == -signal.SIGKILL
        left_behind += bool(_temporaries(out))
        if trial % 2:  # the other way in: open the folder to resume, without starting a run
            latest = latest_checkpoint(out)
            assert _temporaries(out) == []
            assert load_checkpoint(latest)["state"]["step"] == int(latest.name.split("-")[1])
    latest = latest_checkpoint(out)
    assert _temporaries(out) == [] and not list(out.glob(".old-*"))
    assert load_checkpoint(latest)["state"]["step"] == int(latest.name.split("-")[1]) >= 1
    assert left_behind >= 2, "the kills never landed inside a save: the test proved nothing"


def test_only_stale_temporary_folders_are_removed(tmp_path: Path) -> None:
    from gui_envs.schema.atomic_folder import STALE_AFTER_S, temp_name

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    live = tmp_path / temp_name("tmp", "checkpoint-000004")  # this process is writing it
    gone = tmp_path / temp_name("tmp", "checkpoint-000003").replace(f"-{os.getpid()}-", f"-{dead.stdout.strip()}-")
    legacy_old, legacy_new = tmp_path / ".tmp-checkpoint-000002-999999", tmp_path / ".tmp-checkpoint-000005-999999"
    for folder in (live, gone, legacy_old, legacy_new):
        folder.mkdir()
        (folder / "model.pt").write_bytes(b"half")
    hours_ago = time.time() - STALE_AFTER_S - 60
    os.utime(legacy_old, (hours_ago, hours_ago))
    with pytest.raises(CheckpointError, match="latest"):
        latest_checkpoint(tmp_path)  # opening the folder cleans it, even when it holds no checkpoint
    assert _temporaries(tmp_path) == sorted([live.name, legacy_new.name])


@pytest.mark.parametrize(
    "failure",
    [OSError(28, "No space left on device"), RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 832 vs 726")],
    ids=["ENOSPC", "torch-writer"],
)
def test_a_failed_save_names_the_file_and_keeps_the_previous_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    import trainers.checkpoint as checkpoint

    model, opt, sched = _tiny_training_state()
    previous = save_checkpoint(tmp_path, 11, model.state_dict(), opt, sched, {"data_position": 11})
    real_save = torch.save

    def save_until_the_disk_fills(obj: object, f: object) -> None:
        if getattr(f, "name", "").endswith("optimizer.bin"):  # the model went through: the failure is mid-save
            f.write(b"PK\x03\x04 half a file")  # type: ignore[union-attr]
            raise failure
        real_save(obj, f)  # type: ignore[arg-type]

    monkeypatch.setattr(checkpoint.torch, "save", save_until_the_disk_fills)
    with pytest.raises(checkpoint.CheckpointSaveError) as info:
        save_checkpoint(tmp_path, 12, model.state_dict(), opt, sched, {"data_position": 12})
    message = str(info.value)
    assert message.startswith(f"could not write {tmp_path / 'checkpoint-000012' / 'optimizer.bin'}: "), message
    assert ("No space left on device" in message) if isinstance(failure, OSError) else ("MiB free" in message)
    assert info.value.path == tmp_path / "checkpoint-000012" / "optimizer.bin"
    assert _temporaries(tmp_path) == [] and not (tmp_path / "checkpoint-000012").exists()
    assert latest_checkpoint(tmp_path) == previous and load_checkpoint(previous)["state"]["step"] == 11


def test_a_full_disk_is_reported_by_the_system_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real thing: the kernel's ENOSPC (``/dev/full``), through torch's own writer."""
    import builtins

    import trainers.checkpoint as checkpoint

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    model, opt, sched = _tiny_training_state()
    previous = save_checkpoint(tmp_path, 1, model.state_dict(), opt, sched, {})

    def full_disk_open(path: Path, mode: str = "r", *args: object) -> object:
        return builtins.open("/dev/full" if Path(path).name == "model.safetensors" else path, mode, *args)  # type: ignore[call-overload]

    monkeypatch.setattr(checkpoint, "open", full_disk_open, raising=False)
    with pytest.raises(checkpoint.CheckpointSaveError, match=r"could not write .*checkpoint-000002/model\.safetensors: No space left on device$"):
        save_checkpoint(tmp_path, 2, model.state_dict(), opt, sched, {})
    assert _temporaries(tmp_path) == [] and latest_checkpoint(tmp_path) == previous
