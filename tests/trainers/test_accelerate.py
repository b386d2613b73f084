"""Two processes under ``accelerate launch``: two GRPO steps, both ranks end with identical weights.

accelerate 1.x runs ``--cpu --num_processes 2`` as ONE process unless it is given an MPI host file, so the test
launches with ``--multi_gpu``: torchrun starts two workers, which on a CPU-only host join a gloo process
group; the trainer's ``Accelerator`` then wraps the policy in CPU DDP.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_two_processes_two_steps_identical_weights(tiny_lm_path: Path, tmp_path: Path) -> None:
    launcher = shutil.which("accelerate") or str(Path(sys.executable).parent / "accelerate")
    if not Path(launcher).exists():
        pytest.skip("accelerate's launcher is not installed")
    cfg = {
        "model": str(tiny_lm_path), "env_id": "ClickGrid-v0", "output_format": "cell", "group_size": 4,
        "groups_per_step": 2, "num_envs": 4, "num_steps": 2, "max_new_tokens": 2, "learning_rate": 1e-2,
        "reward": "continuous", "weight_decay": 0.0,
        "device": "cpu", "progress": False, "plot": False, "output_dir": str(tmp_path / "run"),
    }  # fmt: skip
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [launcher, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
           "--dynamo_backend", "no", str(ROOT / "tests/trainers/accelerate_entry.py"), str(path)]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
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
