"""Two processes under ``accelerate launch``: two GRPO steps, both ranks end with identical weights.

accelerate 1.x runs ``--cpu --num_processes 2`` as ONE process unless it is given an MPI host file, so the test
launches with ``--multi_gpu``: torchrun starts two workers, which on a CPU-only host join a gloo process
group; the trainer's ``Accelerator`` then wraps the policy in CPU DDP.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _launch(cfg: dict[str, object], path: Path) -> None:
    """``accelerate launch`` two CPU processes of ``accelerate_entry.py`` on the config ``cfg``."""
    launcher = shutil.which("accelerate") or str(Path(sys.executable).parent / "accelerate")
    if not Path(launcher).exists():
        pytest.skip("accelerate's launcher is not installed")
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [launcher, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
           "--dynamo_backend", "no", str(ROOT / "tests/trainers/accelerate_entry.py"), str(path)]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]


def _config(model: Path, out: Path, **kw: object) -> dict[str, object]:
    cfg = {
        "model": str(model), "env_id": "ClickGrid-v0", "output_format": "cell", "group_size": 4,
        "groups_per_step": 2, "num_envs": 4, "num_steps": 2, "max_new_tokens": 2, "learning_rate": 1e-2,
        "reward": "continuous", "weight_decay": 0.0,
        "device": "cpu", "progress": False, "plot": False, "output_dir": str(out),
    }  # fmt: skip
    return {**cfg, **kw}


# micro_batch_tokens=1: one sample per micro-batch, gradients accumulated without DDP's all-reduce until the last.
@pytest.mark.parametrize("extra", [{}, {"micro_batch_tokens": 1}], ids=["one-pass", "micro-batches"])
def test_two_processes_two_steps_identical_weights(tiny_lm_path: Path, tmp_path: Path, extra: dict) -> None:
    _launch(_config(tiny_lm_path, tmp_path / "run", **extra), tmp_path / "c.yaml")
    a = torch.load(tmp_path / "run/weights-rank0.pt")
    b = torch.load(tmp_path / "run/weights-rank1.pt")
    from safetensors.torch import load_file

    initial = load_file(tiny_lm_path / "model.safetensors")
    assert a.keys() == b.keys()
    changed = 0
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=0, atol=0, msg=name)
        changed += name in initial and not torch.equal(a[name], initial[name])
    assert changed > 0  # the gradients (no weight decay) moved the weights, on both ranks alike


def test_two_process_resume_continues_identically(tiny_lm_path: Path, tmp_path: Path) -> None:
    # Uninterrupted: 2 steps, a checkpoint after each. Resumed: from the step-1 checkpoint alone, step 2 again.
    # Rank 1 samples from its own random stream, so its state must come back too (not rank 0's).
    _launch(_config(tiny_lm_path, tmp_path / "full", save_every=1), tmp_path / "full.yaml")
    rng = [torch.load(tmp_path / f"full/checkpoint-000001/random_states_{r}.pkl", weights_only=False) for r in (0, 1)]
    assert not torch.equal(rng[0]["torch_manual_seed"], rng[1]["torch_manual_seed"])
    resumed = tmp_path / "resumed"
    shutil.copytree(tmp_path / "full/checkpoint-000001", resumed / "checkpoint-000001")
    (resumed / "latest").write_text("checkpoint-000001")
    _launch(_config(tiny_lm_path, resumed, resume=True), tmp_path / "resumed.yaml")
    for rank in (0, 1):
        full = torch.load(tmp_path / f"full/weights-rank{rank}.pt")
        again = torch.load(resumed / f"weights-rank{rank}.pt")
        for name in full:
            torch.testing.assert_close(again[name], full[name], rtol=0, atol=0, msg=name)
    steps = [json.loads(line)["step"] for line in (resumed / "metrics.jsonl").read_text().splitlines()]
    assert steps == [2]  # the resumed run did step 2 only: nothing repeated, nothing skipped


@pytest.mark.parametrize("strategy", ["FSDP", "DEEPSPEED", "MEGATRON_LM"])
def test_a_sharded_strategy_is_refused_before_any_work(strategy: str) -> None:
    from accelerate.utils import DistributedType

    from trainers.grpo import refuse_sharded_strategies

    with pytest.raises(NotImplementedError, match=f"asked for {strategy}.*--use_fsdp"):
        refuse_sharded_strategies(DistributedType[strategy])
    for whole_weights in ("NO", "MULTI_CPU", "MULTI_GPU"):
        refuse_sharded_strategies(DistributedType[whole_weights])
