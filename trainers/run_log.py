"""Per-step training logs: one JSON line per step, and a learning-curve PNG drawn from them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class RunLog:
    """Append-only ``metrics.jsonl``; on resume, records of steps after the checkpoint are dropped first,
    so the log never holds a step twice.

    Args:
        path: the JSONL file.
        start_step: steps already completed (records carry the 1-based ``step``; those ``<= start_step`` stay).
    """

    def __init__(self, path: str | Path, start_step: int = 0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = [r for r in read_log(self.path) if r.get("step", -1) <= start_step] if self.path.exists() else []
        self.path.write_text("".join(json.dumps(r) + "\n" for r in kept))

    def write(self, record: dict[str, Any]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL log (a torn last line, from a kill mid-write, is skipped)."""
    out = []
    for line in Path(path).read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def panel_title(names: Sequence[str]) -> str:
    """A panel's title: its one key, ``success`` for a panel of success curves (training beside held-out), else
    the keys joined.

    >>> panel_title(["reward_margin", "eval_reward_margin"])
    'reward_margin / eval_reward_margin'
    """
    if len(names) > 1 and all("success" in n for n in names):
        return "success"
    return " / ".join(names)


def plot_curve(
    log: str | Path,
    png: str | Path,
    keys: Sequence[str | Sequence[str]] = ("reward_mean", "success_rate"),
    xlabel: str = "step",
) -> Path:
    """Draw ``keys`` against ``step`` from a JSONL log into ``png``, one panel per entry (``xlabel`` names what a
    step counts). An entry that is a sequence of keys shares one panel, with a legend: a held-out curve drawn on
    the same axes as the training curve it is compared with."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read_log(log)
    fig, axes = plt.subplots(1, len(keys), figsize=(4.5 * len(keys), 3.2), squeeze=False)
    for ax, entry in zip(axes[0], keys, strict=True):
        names = [entry] if isinstance(entry, str) else list(entry)
        for key in names:
            pts = [(r["step"], r[key]) for r in records if r.get(key) is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker=".", label=key)
        if len(names) > 1:
            ax.legend(fontsize=7)
        ax.set_xlabel(xlabel)
        ax.set_title(panel_title(names))
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    plt.close(fig)
    return Path(png)
