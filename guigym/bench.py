"""``guigym bench``: every ``benchmarks/`` script in its quick mode, one summary table.

Each script with a ``--quick`` flag runs as ``python SCRIPT --quick`` in a subprocess (so one crash or hang
costs only its own row); its own table is printed as it finishes, and the summary gives, per script, the
status, the wall time in seconds and the last line it printed. Scripts without a quick mode are listed as
skipped: their full runs take minutes to hours.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gui_envs.schema.errors import did_you_mean

#: The project's benchmark folder (beside the ``guigym`` package in a source checkout).
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@dataclass
class BenchResult:
    """One script's outcome: ``status`` is ``ok``, ``failed (exit N)``, ``timed out`` or ``skipped``."""

    script: str
    status: str
    seconds: float
    last_line: str


def has_quick_mode(script: Path) -> bool:
    """Whether the script takes ``--quick`` (read from its source, so nothing runs to find out)."""
    return '"--quick"' in script.read_text(encoding="utf-8", errors="replace")


class UnknownBenchmarkError(ValueError):
    """``only`` names a script the benchmark folder does not have (a typo would otherwise run nothing, exit 0)."""


class BenchmarkFolderError(ValueError):
    """The benchmark folder does not exist (it would otherwise run nothing and print an empty table, exit 0)."""


def run_benchmarks(
    folder: Path = BENCHMARKS, only: list[str] | None = None, timeout_s: float = 600.0,
    console: Console | None = None,
) -> list[BenchResult]:
    """Run every ``*.py`` in ``folder`` (or the names in ``only``, without ``.py``) with ``--quick``.

    Args:
        folder: the benchmark scripts' folder.
        only: script stems to run; default all. A stem the folder lacks raises :class:`UnknownBenchmarkError`
            before anything runs.
        timeout_s: per-script limit in seconds.
        console: where each script's own output is echoed (``None``: not echoed).
    """
    if not folder.is_dir():
        raise BenchmarkFolderError(f"benchmark folder {str(folder)!r} is not a folder (default: {BENCHMARKS})")
    known = sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_"))
    unknown = sorted(set(only or ()) - set(known))
    if unknown:
        raise UnknownBenchmarkError(
            f"no benchmark named {', '.join(unknown)} in {folder}; choose from {', '.join(known)}."
            + did_you_mean(unknown[0], known)
        )
    results = []
    # COLUMNS: rich draws a piped script's tables 80 wide, wrapping every row; 160 keeps a row on one line.
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(folder.parent), os.environ.get("PYTHONPATH", "")]),
        "COLUMNS": "160",
    }
    for script in sorted(folder.glob("*.py")):
        if script.name.startswith("_") or (only and script.stem not in only):
            continue
        if not has_quick_mode(script):
            results.append(BenchResult(script.stem, "skipped", 0.0, "no --quick mode"))
            continue
        if console is not None:
            console.rule(script.stem)
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=timeout_s,
                env=env, cwd=folder.parent,
            )
            status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
            output = proc.stdout + (proc.stderr if proc.returncode else "")
        except subprocess.TimeoutExpired as exc:
            status, output = "timed out", str(exc.stdout or "")
        seconds = time.perf_counter() - start
        if console is not None:
            console.print(output.rstrip(), markup=False, highlight=False)
        results.append(BenchResult(script.stem, status, seconds, _last_line(output)))
    return results


def _last_line(output: str) -> str:
    """The last printed line that is not a table border, without cell borders, squeezed to 100 characters."""
    for line in reversed(output.splitlines()):
        text = line.strip()
        if text and not all(ch == " " or "\u2500" <= ch <= "\u257f" for ch in text):
            # A table row: cell borders become spaces, so the row reads as its values.
            plain = "".join(" " if "\u2500" <= ch <= "\u257f" else ch for ch in text)
            return " ".join(plain.split())[:100]
    return ""


def results_table(results: list[BenchResult]) -> Table:
    """The one summary table."""
    table = Table(title="guigym benchmarks (quick mode)")
    for col, justify in (("script", "left"), ("status", "left"), ("seconds", "right"), ("last line", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for r in results:
        table.add_row(r.script, r.status, f"{r.seconds:.1f}", r.last_line)
    return table


__all__ = [
    "BENCHMARKS",
    "BenchResult",
    "BenchmarkFolderError",
    "UnknownBenchmarkError",
    "has_quick_mode",
    "results_table",
    "run_benchmarks",
]
