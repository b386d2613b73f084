"""Which of a set of processes still run: what the browser tests check after a crash or a ``close``."""

from __future__ import annotations

from collections.abc import Iterable

import psutil


def alive(pids: Iterable[int]) -> list[int]:
    """The PIDs of ``pids`` that still run (zombies, exited and reaped, do not count)."""
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            continue
    return out
