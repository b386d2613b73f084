"""Every command in README.md and docs/*.md runs as written.

Each fenced ``bash`` block is read line by line (a trailing backslash joins lines; comments and blank lines are
dropped) and each ``python`` block whole; they run in document order, one fresh folder per document, with
``configs/``, ``benchmarks/`` and ``examples/`` linked in so that paths read as from the repository root, and with
``guigym`` and ``python`` from this interpreter's environment. A line made later in a document may use what an
earlier one made (the tiny model, recorded demonstrations), as a reader following the page would.

What is not run as written is listed, with the reason, by :func:`test_the_skip_and_cut_lists_are_printed` (on the
terminal, also under ``-q``):

* **skipped**: a block whose fence follows ``<!-- doc-commands: skip (REASON) -->`` in the document: it needs a GPU,
  a device, a hub model, a download, or is a long benchmark;
* **cut down**: a line that starts with a key of :data:`CUT_DOWN` runs with the extra arguments listed there (fewer
  steps, epochs or seeds), so that the whole test stays within a few minutes on 2 cores. Nothing else is changed.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"<!--\s*doc-commands:\s*skip\s*\((.+?)\)\s*-->")
FENCE = re.compile(r"^```(\w*)\s*$")
SECONDS_PER_COMMAND = 300

#: Line start -> the arguments added to it. Training lines run a step or an epoch (the configs' own values stay);
#: ``guigym train core`` runs behaviour cloning and its held-out evaluation without a self-training iteration
#: (``tests/trainers/core`` runs iterations).
CUT_DOWN: dict[str, list[str]] = {
    "guigym train grpo --config configs/grpo_tiny_heldout.yaml": [
        "--set", "num_steps=2", "--set", "eval_every=1", "--set", "eval_seeds={start: 100000, count: 8}",
        "--set", "groups_per_step=2", "--set", "num_envs=32", "--set", "progress=false",
    ],
    "guigym train grpo --config configs/grpo_tiny_cpu.yaml": [
        "--set", "num_steps=1", "--set", "groups_per_step=2", "--set", "num_envs=8", "--set", "progress=false",
    ],
    "guigym train sft": ["--set", "epochs=1"],
    "guigym train dpo": ["--set", "epochs=1", "--set", "progress=false"],
    "guigym train ipl": ["--set", "rounds=1", "--set", "warmup_sft_epochs=1", "--set", "max_new_tokens=8",
                         "--set", "eval_seeds=null", "--set", "steps_per_round=2", "--set", "progress=false"],
    "guigym train core": ["--set", "iterations=0", "--set", "bc_epochs=1"],
    "guigym train trl": ["--set", "trl.max_steps=2", "--set", "trl.per_device_train_batch_size=16"],
}  # fmt: skip


@dataclass(frozen=True)
class Command:
    """One runnable unit of a document: a shell line or a Python block."""

    document: str
    line: int
    kind: str  # "bash" or "python"
    text: str
    skip: str | None = None

    @property
    def where(self) -> str:
        return f"{self.document}:{self.line}"

    def cut(self) -> list[str]:
        """The arguments :data:`CUT_DOWN` adds to this line (none for most)."""
        if self.kind != "bash":
            return []
        return next((extra for start, extra in CUT_DOWN.items() if self.text.startswith(start)), [])


def extract(path: Path) -> list[Command]:
    """The commands of one Markdown document, in order."""
    name = str(path.relative_to(ROOT))
    lines = path.read_text().splitlines()
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        previous = next((line for line in reversed(lines[:i]) if line.strip()), "")
        marked = MARKER.search(previous)
        skip = marked.group(1) if marked else None
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        body = lines[i + 1 : end]
        if fence.group(1) == "python":
            commands.append(Command(name, i + 2, "python", "\n".join(body) + "\n", skip))
        elif fence.group(1) in ("bash", "sh", "shell"):
            pending, start = "", 0
            for k, line in enumerate(body):
                if not pending:
                    start = i + 2 + k
                pending += line.rstrip()
                if pending.endswith("\\"):
                    pending = pending[:-1] + " "
                    continue
                text = " ".join(pending.split())
                pending = ""
                if text and not text.startswith("#"):
                    commands.append(Command(name, start, "bash", text, skip))
        else:
            assert fence.group(1) in ("", "text", "yaml", "json", "jsonl"), f"{name}:{i + 1}: fence {fence.group(1)!r}"
            assert not skip, f"{name}:{i + 1}: a skip marker over a block that is not run"
        i = end + 1
    return commands


ALL = {str(doc.relative_to(ROOT)): extract(doc) for doc in DOCUMENTS}


def _environment(folder: Path) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]), "OMP_NUM_THREADS": "1",
            "MPLBACKEND": "Agg", "HOME": os.environ.get("HOME", str(folder))}  # fmt: skip


def split_comment(line: str) -> tuple[str, str]:
    """A shell line's code and its trailing ``# comment`` (with the space before it), so that cut-down arguments
    go before the comment: appended after it they would be part of the comment, and the line would run uncut.

    >>> split_comment('guigym train ipl --config c.yaml # MobileIPL rounds')
    ('guigym train ipl --config c.yaml', ' # MobileIPL rounds')
    >>> split_comment('echo "a # b" x#y')
    ('echo "a # b" x#y', '')
    """
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i > 0 and line[i - 1].isspace():
            return line[:i].rstrip(), " " + line[i:]
    return line, ""


def _run(command: Command, folder: Path) -> subprocess.CompletedProcess[str]:
    env = _environment(folder)
    if command.kind == "python":
        args = [sys.executable, "-c", command.text]
    else:
        cut = command.cut()
        # guigym's entry point may not be on PATH (a checkout used without installing it): the module is the same.
        text = command.text
        if text.startswith("guigym "):
            text = f"{shlex.quote(sys.executable)} -m guigym.cli " + text[len("guigym ") :]
        code, comment = split_comment(text)
        args = ["bash", "-c", code + "".join(f" {shlex.quote(a)}" for a in cut) + comment]
    return subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, timeout=SECONDS_PER_COMMAND,
                          stdin=subprocess.DEVNULL, check=False)  # fmt: skip


def test_cut_down_arguments_go_before_a_trailing_comment() -> None:
    """README's ``guigym train ipl ... # MobileIPL rounds`` ran all three rounds (121 s in CI) while the cut list
    said one: its arguments had been appended after the comment."""
    assert split_comment("guigym train ipl --config c.yaml # MobileIPL rounds") == (
        "guigym train ipl --config c.yaml", " # MobileIPL rounds")
    assert split_comment("echo 'a # b' \"c # d\" x#y") == ("echo 'a # b' \"c # d\" x#y", "")
    assert split_comment("ls # one # two") == ("ls", " # one # two")
    for commands in ALL.values():
        for c in commands:
            if c.cut():
                code, _ = split_comment(c.text)
                assert "#" not in code.split()[-1], c.where


def test_the_readme_first_screen_holds_the_set_up_and_the_three_jobs() -> None:
    first = "\n".join((ROOT / "README.md").read_text().splitlines()[:60])
    for needle in ("./run demo", "./run test", "run_episode(", "guigym train grpo", "held-out", "guigym train core"):
        assert needle in first, needle


def test_every_document_has_its_commands_found() -> None:
    readme = ALL["README.md"]
    assert sum(c.kind == "python" for c in readme) >= 6 and sum(c.kind == "bash" for c in readme) >= 25
    # Every cut-down rule still matches a line, so none lingers after its line is gone.
    lines = [c.text for cs in ALL.values() for c in cs if c.kind == "bash" and not c.skip]
    for start in CUT_DOWN:
        assert any(line.startswith(start) for line in lines), f"CUT_DOWN {start!r} matches no line"


def test_the_skip_and_cut_lists_are_printed(capsys: pytest.CaptureFixture[str]) -> None:
    skipped = [c for cs in ALL.values() for c in cs if c.skip]
    cut = [c for cs in ALL.values() for c in cs if not c.skip and c.cut()]
    assert skipped and cut
    with capsys.disabled():
        print("\ndocument commands not run as written:")
        for c in skipped:
            print(f"  skipped  {c.where}: {c.text.splitlines()[0][:90]}  ({c.skip})")
        for c in cut:
            print(f"  cut down {c.where}: {c.text[:70]} + {' '.join(c.cut())}")


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the whole document in one test (its lines build on each other); each line has 300 s
@pytest.mark.parametrize("document", sorted(name for name, cs in ALL.items() if any(not c.skip for c in cs)))
def test_document_commands_run_as_written(
    document: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for shared in ("configs", "benchmarks", "examples"):
        (tmp_path / shared).symlink_to(ROOT / shared)
    for command in ALL[document]:
        if command.skip:
            continue
        before = {p.name for p in tmp_path.iterdir()}
        start = time.perf_counter()
        proc = _run(command, tmp_path)
        with capsys.disabled():  # each line's time, so a slow line shows where CI's minutes go
            print(f"\n  {time.perf_counter() - start:6.1f} s  {command.where}: {command.text.splitlines()[0][:80]}", end="")
        assert proc.returncode == 0, (
            f"{command.where}: {command.text}\n--- stdout ---\n{proc.stdout[-2000:]}\n--- stderr ---\n{proc.stderr[-3000:]}"
        )
        if command.kind == "python":  # a Python block writes under runs/ only, as the README promises
            written = {p.name for p in tmp_path.iterdir()} - before - {"runs"}
            assert not written, f"{command.where} wrote outside runs/: {sorted(written)}"


def test_the_readme_gpu_core_command_passes_its_split_check(tmp_path: Path) -> None:
    # Skipped above (a GPU and a hub model): its overrides on core_tiny.yaml must still make a valid run, whose
    # held-out templates stay out of training (`templates=[]` once overlapped `test_templates` and was refused).
    from trainers.core.config import CoreConfig
    from trainers.core.loop import split_tasks, template_names

    line = next(c for c in ALL["README.md"] if c.text.startswith("guigym train core") and "--set model=" in c.text)
    words = shlex.split(line.text)
    config = ROOT / words[words.index("--config") + 1]
    overrides = [words[k + 1] for k, w in enumerate(words) if w == "--set"]
    overrides = [o for o in overrides if not o.startswith(("model=", "device="))] + [f"model={tmp_path}", "device=cpu"]
    cfg = CoreConfig.from_yaml(config, overrides)
    train, test, _ = split_tasks(cfg, template_names(cfg))
    held = set(cfg.test_templates)
    assert held and {f"{t.env_id}:{t.template}" for t in test} == held
    assert not {f"{t.env_id}:{t.template}" for t in train} & held and len(train) > len(test)
