"""Atomic training checkpoints that survive ``kill -9``.

A checkpoint is a folder ``checkpoint-<step>`` under the run's output folder holding ``model.pt`` (the
trainable parameters: all weights, or the LoRA adapter), ``optimizer.pt``, ``scheduler.pt``, ``rng.pt``
(Python, NumPy, torch and CUDA generator states of every process, ``{"ranks": [rank 0's, rank 1's, ...]}``, so
that each rank of a multi-process run resumes its own sampling stream) and ``state.json`` (the step counter, the data position and
the config). It is written into a temporary folder and renamed into place, then the ``latest`` pointer file
is replaced atomically, so a crash at any instant leaves either the previous checkpoint or the new one,
never half of one. Resuming from ``checkpoint-<s>`` runs step ``s`` next: ``s`` steps were completed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

FILES = ("model.pt", "optimizer.pt", "scheduler.pt", "rng.pt", "state.json")


class CheckpointError(RuntimeError):
    """A checkpoint is missing or unreadable; the message names the file and what to do."""


def rng_state() -> dict[str, Any]:
    """This process's generator states (Python, NumPy, torch, CUDA)."""
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(saved: dict[str, Any], rank: int = 0, world: int = 1, path: str | Path = "rng.pt") -> None:
    """Restore rank ``rank``'s generator states from a checkpoint's ``rng.pt`` (or one :func:`rng_state`).

    Raises:
        CheckpointError: the checkpoint holds the states of a different number of processes than ``world``
            (a resumed multi-process run would not continue the same samples).
    """
    states = saved["ranks"] if "ranks" in saved else [saved]  # a bare state: a checkpoint of one process
    if len(states) != world:
        raise CheckpointError(
            f"{str(path)!r} holds the random states of {len(states)} process(es), but this run has {world}: "
            f"resume with {len(states)} process(es), as the run that wrote it"
        )
    state = states[rank]
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    out_dir: str | Path,
    step: int,
    model_state: dict[str, torch.Tensor],
    optimizer: Any,
    scheduler: Any,
    state: dict[str, Any],
    keep: int = 2,
    rng_states: list[dict[str, Any]] | None = None,
) -> Path:
    """Write ``checkpoint-<step>`` atomically after ``step`` completed steps; keep the newest ``keep``.

    Args:
        out_dir: the run folder.
        step: completed optimiser steps.
        model_state: trainable parameters (see :func:`trainers.policy.trainable_state`).
        optimizer: a torch optimiser.
        scheduler: a torch LR scheduler.
        state: JSON-able run state (data position, config, ...); ``step`` is added.
        keep: how many checkpoints to keep (older ones are deleted after the new one is in place).
        rng_states: every process's :func:`rng_state`, in rank order (gathered by the caller); default this
            process's only.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    final = out / f"checkpoint-{step:06d}"
    tmp = out / f".tmp-checkpoint-{step:06d}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    torch.save(model_state, tmp / "model.pt")
    torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    torch.save(scheduler.state_dict(), tmp / "scheduler.pt")
    torch.save({"ranks": list(rng_states) if rng_states is not None else [rng_state()]}, tmp / "rng.pt")
    (tmp / "state.json").write_text(json.dumps({**state, "step": step}, indent=1, default=str))
    for name in FILES:
        _fsync(tmp / name)
    shutil.rmtree(final, ignore_errors=True)  # a re-run of the same step after a crash
    os.replace(tmp, final)
    pointer = out / "latest.tmp"
    pointer.write_text(final.name)
    _fsync(pointer)
    os.replace(pointer, out / "latest")
    old = sorted(p for p in out.glob("checkpoint-*") if p.is_dir())[:-keep] if keep > 0 else []
    for p in old:
        shutil.rmtree(p, ignore_errors=True)
    return final


def latest_checkpoint(out_dir: str | Path) -> Path:
    """The folder the ``latest`` pointer names.

    Raises:
        CheckpointError: no pointer (nothing to resume: drop ``resume`` or point ``output_dir`` at the run),
            or the folder it names is missing.
    """
    pointer = Path(out_dir) / "latest"
    if not pointer.is_file():
        raise CheckpointError(
            f"cannot resume: {str(pointer)!r} does not exist, so {str(out_dir)!r} holds no checkpoint. "
            "Set output_dir to the run to resume, or resume=false to start a new run."
        )
    path = Path(out_dir) / pointer.read_text().strip()
    if not path.is_dir():
        raise CheckpointError(f"{str(pointer)!r} names {str(path)!r}, which does not exist")
    return path


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read every file of a checkpoint folder: ``model``, ``optimizer``, ``scheduler``, ``rng``, ``state``.

    Raises:
        CheckpointError: naming the first missing or unreadable file.
    """
    path = Path(path)
    out: dict[str, Any] = {}
    for name in FILES:
        if not (path / name).is_file():
            raise CheckpointError(f"checkpoint file {str(path / name)!r} is missing; the checkpoint is incomplete")
    for name in FILES:
        f = path / name
        try:
            if name.endswith(".json"):
                out["state"] = json.loads(f.read_text())
            else:
                out[name[:-3]] = torch.load(f, map_location="cpu", weights_only=False)
        except Exception as exc:
            raise CheckpointError(f"checkpoint file {str(f)!r} is corrupt ({type(exc).__name__}: {exc})") from exc
    return out


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
