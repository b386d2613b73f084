"""README's "Training from the shell" block runs as written: each line that makes a model or data, then each
``guigym train`` line cut down to a step or an epoch (one ``--set`` more per line, below), in a fresh folder.

The lines are read from README.md itself, so the README and this test cannot drift apart. ``guigym train core``
is the one line not run here (minutes on Chromium even cut down); ``tests/trainers/core`` runs its loop.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guigym.cli import app

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.search(
    r"\*\*Training from the shell\.\*\*.*?```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S
)
LINES = [shlex.split(line, comments=True) for line in BLOCK.group(1).splitlines()] if BLOCK else []

#: The extra ``--set`` each train line gets, so that it finishes in seconds on CPU (the configs' own values
#: stay: these only shorten the run).
CUT_DOWN = {
    "grpo": ["num_steps=1", "groups_per_step=2", "num_envs=8", "progress=false"],
    "sft": ["epochs=1"],
    "dpo": ["epochs=1", "progress=false"],
    "ipl": ["rounds=1", "warmup_sft_epochs=1", "max_new_tokens=8", "eval_seeds=null", "progress=false"],
}
SKIPPED = {"core"}


def test_the_block_makes_the_data_of_every_train_line() -> None:
    assert LINES and all(words[0] == "guigym" for words in LINES)
    trained = [words[2] for words in LINES if words[1] == "train"]
    assert sorted(trained) == sorted([*CUT_DOWN, *SKIPPED])


@pytest.mark.slow
def test_readme_train_lines_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for words in LINES:
        args = words[1:]
        if args[0] == "train":
            if args[1] in SKIPPED:
                continue
            args = [*args, *(f"--set={kv}" for kv in CUT_DOWN[args[1]])]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, f"{shlex.join(words)}\n{result.output[-3000:]}\n{result.exception!r}"
    for made in ("runs/tiny-llama", "runs/demos", "runs/box-pairs/train.parquet", "runs/android-demos"):
        assert (tmp_path / made).exists(), made
    for run in ("grpo-tiny", "sft-tiny", "dpo-tiny", "ipl-tiny"):
        assert any((tmp_path / "runs" / run).iterdir()), run
