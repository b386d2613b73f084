"""Atomic training checkpoints that survive ``kill -9``, in the layout Hugging Face tools read.

A checkpoint is a folder ``checkpoint-<step>`` under the run's output folder::

    checkpoint-000004/
      model.safetensors, config.json, ...      the model, by save_pretrained   (full fine-tuning)
      adapter_model.safetensors, adapter_config.json   the adapter, by PEFT's save_pretrained   (LoRA)
      tokenizer.json, ... (processor files)    the tokenizer or processor, by save_pretrained
      optimizer.bin, scheduler.bin             accelerate's save_state names: torch.save of the state_dict()s
      random_states_<rank>.pkl                 accelerate's save_state format, one file per process
      state.json                               step counter, data position, number of processes, config

so ``AutoModelForCausalLM.from_pretrained(folder)`` (``AutoModelForImageTextToText`` for a VLM), or for an
adapter ``AutoPeftModelForCausalLM.from_pretrained(folder)``, loads the policy of any checkpoint, and
``Accelerator.load_state(folder)`` reads its optimiser, schedule and random states (the model files being
``save_pretrained``'s, a load pre-hook that empties the model list leaves the weights to ``from_pretrained``).
Resuming from ``checkpoint-<s>`` runs step ``s`` next: ``s`` steps were completed.

**Why the files are written here and not by** ``Accelerator.save_state`` **/** ``load_state`` **themselves.**
The files are the ones save_state writes, under its names and in its formats, but this module writes and reads
them, for four reasons: (1) save_state writes into the folder it is given by path, each rank its own
``random_states_<rank>.pkl``, and fsyncs nothing: a folder written that way and renamed into place can be
renamed before its bytes reach the disk, so a power cut or a kill of the node can leave a complete-looking
checkpoint with empty files; here every file is fsynced before the rename, and rank 0 writes every rank's
random states (gathered by the caller) into one temporary folder that no other process has to know;
(2) ``load_state`` skips a missing or unreadable ``random_states_<rank>.pkl`` with an info-level log line
("Could not load random states"), which would resume a run silently on another sampling stream, not
exactly; here it is a :class:`CheckpointError` naming the file, and so is a checkpoint written by another
number of processes; (3) save_state saves ``Accelerator.get_state_dict(model)`` as ``model.safetensors``: all
weights under the wrapper's names (a LoRA run's frozen base too), which ``from_pretrained`` cannot read; the
model goes through ``save_pretrained`` instead; (4) the SFT and DPO trainers run without an ``Accelerator``.
The optimiser is saved through its ``state_dict()`` whatever it is, so an optimiser that keeps fp32 master
weights in its state saves and restores them like any other state.

**Atomicity.** The folder is written into a temporary folder and renamed into place, then the ``latest``
pointer file is replaced atomically, so a crash at any instant leaves either the previous checkpoint or the
new one, never half of one.

**Temporary folders.** The folder being written is ``.tmp-checkpoint-<step>-<host>-<pid>-<random>``
(:func:`gui_envs.schema.atomic_folder.temp_name`, the mechanism trajectories use). A save killed half-way leaves it
behind; it is removed by :func:`clean_checkpoint_dir`, which :func:`save_checkpoint` and
:func:`latest_checkpoint` (so every resume) run first, once it is stale: its writer's pid no longer runs on
this host, or it is older than :data:`~gui_envs.schema.atomic_folder.STALE_AFTER_S` (an hour: the rule for another
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

from gui_envs.schema.atomic_folder import clean_stale_temporaries, install_folder, temp_name

# accelerate's names (accelerate.utils.constants: OPTIMIZER_NAME, SCHEDULER_NAME, RNG_STATE_NAME, SAFE_WEIGHTS_NAME;
# tests check they still agree), spelled out so that reading a checkpoint does not import accelerate.
OPTIMIZER_FILE = "optimizer.bin"
SCHEDULER_FILE = "scheduler.bin"
RNG_FILE = "random_states_{}.pkl"
WEIGHTS_FILE = "model.safetensors"  # save_pretrained's and save_state's name for a model's weights
ADAPTER_FILE = "adapter_model.safetensors"  # PEFT's save_pretrained name for an adapter's weights
WEIGHTS_INDEX = "model.safetensors.index.json"  # a sharded save_pretrained
STATE_FILE = "state.json"


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
    """This process's generator states (Python, NumPy, torch, CUDA), as accelerate's ``random_states_<rank>.pkl``
    holds them. ``step`` is accelerate's gradient-accumulation counter, which guigym's trainers do not use (the
    resumed step is ``state.json``'s): always 0."""
    state = {
        "step": 0,
        "random_state": random.getstate(),
        "numpy_random_seed": np.random.get_state(),
        "torch_manual_seed": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["torch_cuda_manual_seed"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(saved: dict[str, Any], rank: int = 0, world: int = 1, path: str | Path = "checkpoint") -> None:
    """Restore rank ``rank``'s generator states from a checkpoint's random states (:func:`load_checkpoint`'s
    ``rng``: ``{"ranks": [rank 0's, ...]}``) or one :func:`rng_state`.

    Raises:
        CheckpointError: the checkpoint holds the states of a different number of processes than ``world``
            (a resumed multi-process run would not continue the same samples).
    """
    states = saved["ranks"] if "ranks" in saved else [saved]  # a bare state: a checkpoint of one process
    if len(states) != world:
        raise CheckpointError(
            f"{str(path)!r} holds the random states of {len(states)} process(es) ({RNG_FILE.format('<rank>')}), "
            f"but this run has {world}: "
            f"resume with {len(states)} process(es), as the run that wrote it"
        )
    state = states[rank]
    random.setstate(state["random_state"])
    np.random.set_state(state["numpy_random_seed"])
    torch.set_rng_state(state["torch_manual_seed"])
    if "torch_cuda_manual_seed" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["torch_cuda_manual_seed"])


def is_adapter(model: Any) -> bool:
    """Whether ``model`` is a PEFT model (its checkpoint holds the adapter only)."""
    return hasattr(model, "peft_config") and hasattr(model, "get_base_model")


def save_checkpoint(
    out_dir: str | Path,
    step: int,
    model: Any,
    optimizer: Any,
    scheduler: Any,
    state: dict[str, Any],
    keep: int = 2,
    rng_states: list[dict[str, Any]] | None = None,
    processor: Any = None,
) -> Path:
    """Write ``checkpoint-<step>`` atomically after ``step`` completed steps; keep the newest ``keep``.

    Stale temporary folders of killed saves are removed first (:func:`clean_checkpoint_dir`).

    Args:
        out_dir: the run folder.
        step: completed optimiser steps.
        model: the trained model, unwrapped from DDP: a Hugging Face model (saved with ``save_pretrained``),
            a PEFT model (its adapter, with ``save_pretrained``), or a bare module or state dict (its
            tensors as ``model.safetensors``, the file ``Accelerator.save_state`` writes).
        optimizer: a torch optimiser (its ``state_dict()`` is saved, whatever it holds).
        scheduler: a torch LR scheduler.
        state: JSON-able run state (data position, config, ...); ``step`` and ``num_processes`` are added.
        keep: how many checkpoints to keep (older ones are deleted after the new one is in place).
        rng_states: every process's :func:`rng_state`, in rank order (gathered by the caller); default this
            process's only.
        processor: the tokenizer or processor, saved beside the model with ``save_pretrained`` so that the
            folder loads on its own.

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
    rngs = list(rng_states) if rng_states is not None else [rng_state()]
    run_state = json.dumps({**state, "step": step, "num_processes": len(rngs)}, indent=1, default=str).encode()
    try:
        _save_model(tmp, final, model, processor)
        _write(tmp, final, OPTIMIZER_FILE, lambda fh: torch.save(optimizer.state_dict(), fh))
        _write(tmp, final, SCHEDULER_FILE, lambda fh: torch.save(scheduler.state_dict(), fh))
        for rank, rng in enumerate(rngs):
            _write(tmp, final, RNG_FILE.format(rank), lambda fh, rng=rng: torch.save(rng, fh))
        _write(tmp, final, STATE_FILE, lambda fh: fh.write(run_state))
        _fsync_dir(tmp)
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


def _save_model(tmp: Path, final: Path, model: Any, processor: Any) -> None:
    """The model (or adapter) and processor into ``tmp`` through ``save_pretrained``, then fsynced; a failure is a
    :class:`CheckpointSaveError` naming the weights file."""
    if not hasattr(model, "save_pretrained"):
        tensors = model if isinstance(model, dict) else model.state_dict()
        from safetensors.torch import save

        # safetensors refuses tensors that share storage (tied weights): each is written as its own copy.
        owned = {k: v.detach().cpu().contiguous().clone() for k, v in tensors.items()}
        _write(tmp, final, WEIGHTS_FILE, lambda fh: fh.write(save(owned, metadata={"format": "pt"})))
        return
    name = ADAPTER_FILE if is_adapter(model) else WEIGHTS_FILE
    try:
        model.save_pretrained(tmp)
        if processor is not None:
            processor.save_pretrained(tmp)
        for f in tmp.rglob("*"):
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
    except (OSError, RuntimeError) as exc:
        raise CheckpointSaveError(f"could not write {final / name}: {_cause(exc, tmp)}", final / name) from exc


def _fsync_dir(folder: Path) -> None:
    """Make the folder's entries durable before it is renamed into place (a no-op where directories cannot be
    opened, as on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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
    """Read every file of a checkpoint folder.

    Returns:
        ``model`` (the saved tensors by name: the adapter's under PEFT's names, or the model's), ``adapter``
        (whether they are an adapter's), ``optimizer`` and ``scheduler`` (state dicts), ``rng`` (``{"ranks":
        [each process's random states]}``, for :func:`set_rng_state`) and ``state`` (``state.json``).

    Raises:
        CheckpointError: naming the first missing or unreadable file.
    """
    path = Path(path)
    if (path / "model.pt").is_file() or (path / "rng.pt").is_file():
        raise CheckpointError(
            f"{str(path)!r} is a checkpoint of an earlier guigym (model.pt, rng.pt); resume it with that version"
        )
    state_file = path / STATE_FILE
    _require(state_file)
    try:
        state = json.loads(state_file.read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"checkpoint file {str(state_file)!r} is corrupt ({type(exc).__name__}: {exc})") from exc
    adapter = (path / ADAPTER_FILE).is_file()
    if adapter:
        weights = [path / ADAPTER_FILE]
    elif (path / WEIGHTS_INDEX).is_file():
        index = _read(path / WEIGHTS_INDEX, lambda f: json.loads(f.read_text()))
        weights = [path / name for name in sorted(set(index["weight_map"].values()))]
    else:
        weights = [path / WEIGHTS_FILE]
    rng_files = [path / RNG_FILE.format(rank) for rank in range(int(state.get("num_processes", 1)))]
    for f in [*weights, path / OPTIMIZER_FILE, path / SCHEDULER_FILE, *rng_files]:
        _require(f)
    from safetensors.torch import load_file

    model: dict[str, torch.Tensor] = {}
    for f in weights:
        model.update(_read(f, load_file))
    return {
        "model": model,
        "adapter": adapter,
        "optimizer": _read(path / OPTIMIZER_FILE, _torch_load),
        "scheduler": _read(path / SCHEDULER_FILE, _torch_load),
        "rng": {"ranks": [_read(f, _torch_load) for f in rng_files]},
        "state": state,
    }


def load_model_weights(model: Any, ckpt: dict[str, Any], path: str | Path) -> None:
    """Put a :func:`load_checkpoint`'s weights into ``model`` (unwrapped from DDP): the adapter into a PEFT model,
    else every trainable parameter.

    Raises:
        CheckpointError: the checkpoint lacks some of the model's trainable tensors (another model, or a LoRA
            checkpoint resumed without LoRA or the reverse); the message names the weights file.
    """
    path = Path(path)
    weights = ckpt["model"]
    if is_adapter(model):
        from peft import get_peft_model_state_dict, set_peft_model_state_dict

        expected = set(get_peft_model_state_dict(model))
        named = path / ADAPTER_FILE
    else:
        expected = {n for n, p in model.named_parameters() if p.requires_grad}
        named = path / WEIGHTS_FILE
    missing = expected - set(weights)
    if missing:
        saved = "an adapter" if ckpt.get("adapter") else "a full model"
        raise CheckpointError(
            f"{str(named)!r} lacks {sorted(missing)[:3]} (the checkpoint holds {saved}): it was saved by another "
            "model or LoRA setting; resume with the config that wrote it"
        )
    if is_adapter(model):
        set_peft_model_state_dict(model, weights)
    else:
        model.load_state_dict(weights, strict=False)


def _require(f: Path) -> None:
    if not f.is_file():
        raise CheckpointError(f"checkpoint file {str(f)!r} is missing; the checkpoint is incomplete")


def _torch_load(f: Path) -> Any:
    return torch.load(f, map_location="cpu", weights_only=False)


def _read(f: Path, read: Callable[[Path], Any]) -> Any:
    try:
        return read(f)
    except Exception as exc:
        raise CheckpointError(f"checkpoint file {str(f)!r} is corrupt ({type(exc).__name__}: {exc})") from exc
