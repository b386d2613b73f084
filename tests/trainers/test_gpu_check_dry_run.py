"""``bash benchmarks/gpu_check.sh --cpu-dry-run``: the GPU check's one command end to end on CPU, as a borrowed
GPU machine would run it, so that it cannot die there on an import or a missing file.

The wheel folder comes first from ``benchmarks/gpu_wheels.py download`` (PyPI; nothing is fetched when the pinned
wheels are already there); the script installs them into a fresh empty ``--target`` with no index and runs
Python with ``-S`` over a stand-in for the GPU image's packages. Then the GRPO part (the 3B SSL config's path,
cut to a tiny size, bf16 with fp32 masters, on ClickBox-v0 at 1280 x 720) and TRL's one step."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_cpu_dry_run_installs_the_wheels_and_runs_the_check_end_to_end(tmp_path: Path) -> None:
    wheels = ROOT / ".gpu-wheels"
    fetched = subprocess.run([sys.executable, "benchmarks/gpu_wheels.py", "download", "--dir", str(wheels)],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    size = re.search(r"= ([\d.]+) MiB of the 64 MiB", fetched.stdout)
    assert size and float(size.group(1)) < 64, fetched.stdout  # the working tree plus the wheels travel

    env = {**os.environ, "PYTHON": sys.executable, "GPU_CHECK_OUT": str(tmp_path), "OMP_NUM_THREADS": "2"}
    env.pop("PYTHONPATH", None)  # the script sets its own: the fresh target and guigym's source
    run = subprocess.run(["bash", "benchmarks/gpu_check.sh", "--cpu-dry-run"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=540)  # fmt: skip
    out = run.stdout
    assert run.returncode == 0, out[-4000:] + run.stderr[-4000:]
    # The carried packages came from the fresh target, under -S (no site-packages of this interpreter).
    target = re.search(r"gpu_wheels install: \d+ packages from \S+ into (\S+), no index", out)
    assert target, out
    for name in ("trl", "datasets", "gymnasium"):
        assert re.search(rf"gpu_wheels check: {name} \S+ from {re.escape(target.group(1))}/{name}\n", out), name
    assert "site-packages off (-S)" in out
    # GRPO: every phase of the step, with the plan's figure beside it; the masters moved as fp32 would.
    assert "ClickBox-v0 {'viewport': [1280, 720]}" in out and "bfloat16" in out
    for phase in ("rollout", "log-probs", "update"):
        assert re.search(rf"\| 1 \| {phase} \| [\d.]+ \|.*\| n/a \| [\d.]+ \| n/a \|", out), phase
    moved = re.search(r"bfloat16 weights ([\d.]+)% .* fp32 masters ([\d.]+)%", out)
    assert moved, out
    assert float(moved.group(2)) > 90 and float(moved.group(1)) < float(moved.group(2))
    # TRL's one step on the (tiny) 3B text architecture, without a browser.
    assert "trl_gpu_check: configs/trl/grpo_clickbox_gpu_check.yaml" in out and "ClickBox-v0 tools" in out
    assert re.search(r"\| 1 \| [\d.]+ \| [\d.]+ \|", out.split("trl_gpu_check:")[1])
    assert "gpu_check: done in" in out and "(CPU dry run)" in out
