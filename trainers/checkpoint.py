"""Atomic training checkpoints that survive ``kill -9``.

A checkpoint is a folder ``checkpoint-<step>`` under the run's output folder holding ``model.pt`` (the
trainable parameters: all weights, or the LoRA adapter), ``optimizer.pt``, ``scheduler.pt``, ``rng.pt``
(Python, NumPy, torch and CUDA generator states of every process, ``{"ranks": [rank 0's, rank 1's, ...]}``, so
that each rank of a multi-process run resumes its own sampling stream) and ``state.json`` (the step counter, the data position and
the config). It is written into a temporary folder and renamed into place, then the ``latest`` pointer file
is replaced atomically, so a crash at any instant leaves either the previous checkpoint or the new one,
never half of one. Resuming from ``checkpoint-<s>`` runs step ``s`` next: ``s`` steps were completed.

**Temporary folders.** The folder being written is ``.tmp-checkpoint-<step>-<host>-<pid>-<random>``
(:func:`gui_envs.atomic_folder.temp_name`, the mechanism trajectories use). A save killed half-way leaves it
behind; it is removed by :func:`clean_checkpoint_dir`, which :func:`save_checkpoint` and
:func:`latest_checkpoint` (so every resume) run first, once it is stale: its writer's pid no longer runs on
this host, or it is older than :data:`~gui_envs.atomic_folder.STALE_AFTER_S` (an hour: the rule for another
host's folders and for the ``.tmp-checkpoint-<step>-<pid>`` names of earlier versions). A live writer's folder
is never touched. A save that fails (a full disk...) removes its own folder and raises
:class:`CheckpointSaveError` naming the file and the cause; the previous checkpoint stays the latest.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch

from gui_envs.atomic_folder import clean_stale_temporaries, install_folder, temp_name

FILES = ("model.pt", "optimizer.pt", "scheduler.pt", "rng.pt", "state.json")


class CheckpointError(RuntimeError):
    """A checkpoint is missing, unreadable or could not be written; the message names the file and what to do."""


class CheckpointSaveError(CheckpointError):
    """A checkpoint file could not be written (a full disk, a quota, a read-only folder...).

    The message names the file and the cause; the folder being written was removed and the ``latest``
    pointer still names the previous checkpoint.

    Attributes:
        path: the checkpoint file (as it would have been named in place) that could not be written.
    """

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


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

    Stale temporary folders of killed saves are removed first (:func:`clean_checkpoint_dir`).

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

    Raises:
        CheckpointSaveError: a file could not be written; it names the file and the cause (``No space left on
            device``...). Nothing of the new checkpoint is left and the previous one is still the latest.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean_checkpoint_dir(out)
    final = out / f"checkpoint-{step:06d}"
    tmp = out / temp_name("tmp", final.name)
    tmp.mkdir()
    rng = {"ranks": list(rng_states) if rng_states is not None else [rng_state()]}
    run_state = json.dumps({**state, "step": step}, indent=1, default=str).encode()
    try:
        _write(tmp, final, "model.pt", lambda fh: torch.save(model_state, fh))
        _write(tmp, final, "optimizer.pt", lambda fh: torch.save(optimizer.state_dict(), fh))
        _write(tmp, final, "scheduler.pt", lambda fh: torch.save(scheduler.state_dict(), fh))
        _write(tmp, final, "rng.pt", lambda fh: torch.save(rng, fh))
        _write(tmp, final, "state.json", lambda fh: fh.write(run_state))
        install_folder(tmp, final)  # replaces a folder of the same step left by a run killed before its pointer
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    pointer = out / "latest.tmp"
    try:
        _write(out, out, "latest.tmp", lambda fh: fh.write(final.name.encode()))
        os.replace(pointer, out / "latest")
    except BaseException:
        pointer.unlink(missing_ok=True)
        raise
    old = sorted(p for p in out.glob("checkpoint-*") if p.is_dir())[:-keep] if keep > 0 else []
    for p in old:
        shutil.rmtree(p, ignore_errors=True)
    return final


def clean_checkpoint_dir(out_dir: str | Path) -> list[Path]:
    """Remove the stale temporary folders of killed saves from a run folder (see the module docstring).

    Run by :func:`save_checkpoint` and :func:`latest_checkpoint`; a trainer may call it when a run starts.
    Never raises on a file system error. Returns the folders removed (or, for an orphaned ``.old-*``, put back).
    """
    return clean_stale_temporaries(out_dir)


def _write(folder: Path, named: Path, name: str, write: Callable[[IO[bytes]], Any]) -> None:
    """Write ``folder/name`` durably with ``write(file)``; a failure is a :class:`CheckpointSaveError` naming
    ``named/name``, the file's name once in place.

    torch writes through our file object rather than a path: its own writer turns a full disk into
    ``unexpected pos 832 vs 726``, while Python's file raises ``OSError(ENOSPC)`` with the system's words.
    """
    path = folder / name
    try:
        with open(path, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
    except (OSError, RuntimeError) as exc:
        raise CheckpointSaveError(f"could not write {named / name}: {_cause(exc, folder)}", named / name) from exc


def _cause(exc: BaseException, folder: Path) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return f"{type(exc).__name__}: {exc}"
    return f"{type(exc).__name__}: {exc} ({free / 2**20:.1f} MiB free on that disk)"


def latest_checkpoint(out_dir: str | Path) -> Path:
    """The folder the ``latest`` pointer names, after removing stale temporary folders (:func:`clean_checkpoint_dir`).

    Raises:
        CheckpointError: no pointer (nothing to resume: drop ``resume`` or point ``output_dir`` at the run),
            or the folder it names is missing.
    """
    clean_checkpoint_dir(out_dir)
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

