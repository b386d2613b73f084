"""``benchmarks/trl_clickgrid.py --quick``: both trainers run on ClickGrid-v0 and the table prints (issue 25)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[3]


def test_quick_benchmark_runs_both_sides(tmp_path: Path) -> None:
    out = tmp_path / "curves.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "trl_clickgrid.py"), "--quick", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| steps | guigym | trl |" in proc.stdout
    curves = json.loads(out.read_text())
    for side in ("guigym", "trl"):
        assert len(curves[side]) == 3 and all(0.0 <= s <= 1.0 for s in curves[side])
        # 2 groups x 4 rollouts: success is a multiple of 1/8
        assert all(abs(s * 8 - round(s * 8)) < 1e-6 for s in curves[side])
