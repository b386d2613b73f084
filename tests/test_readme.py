"""Every Python block of README.md runs as written, each in a fresh interpreter started in an empty folder
(so whatever a snippet writes lands under that folder's ``runs/``, as the README promises)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKS[index]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, f"README block {index}:\n{BLOCKS[index]}\n--- stderr ---\n{proc.stderr[-3000:]}"
    written = [p for p in tmp_path.iterdir() if p.name != "runs"]
    assert written == [], f"README block {index} wrote outside runs/: {written}"
