"""Step and Trajectory records, and their on-disk format.

On disk a trajectory is a folder::

    <root>/<trajectory id>/
        trajectory.jsonl     line 1: the header (instruction, env, task, seed, verdict, metadata)
                             lines 2..: one Step each
        step_0000.png        the observation screenshot the step answered, when there was one

A folder appears under its final name only when it is complete: it is written under a temporary name in the
same root (``.tmp-<id>-<host>-<pid>-<random>``) and renamed, which is atomic on POSIX filesystems. Saving an
id that exists swaps the two folders in one atomic exchange where the system has one (Linux ``renameat2``),
else by two renames that keep the old folder (as ``.old-*``) until the new one is in place. A killed
process therefore leaves at most a ``.tmp-*`` or ``.old-*`` folder, never a half-written or lost trajectory.
Such folders are *stale* once their writer is gone: its pid is dead on this host, or the folder is older
than :data:`STALE_AFTER_S`; :func:`clean_stale_temporaries` (run by :func:`load_trajectories` and
:func:`save_trajectories`) removes them, and puts a stale ``.old-*`` folder back when its id is missing.

The JSONL is strict JSON (no ``NaN`` tokens): a non-finite reward, score or log-probability is written as
the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` and read back as the float; a non-finite number
anywhere else (``info``, ``privileged``, ``metadata``) is written as ``null``. Files from before strict JSON
hold bare ``NaN`` / ``Infinity`` / ``-Infinity`` tokens; they load by the same rule (the float in a reward,
score or log-probability, ``None`` in ``info``, ``privileged`` and ``metadata``), and a bare token anywhere
else (a seed, a flag) is a :class:`TrajectoryFormatError`. Text is UTF-8; a line
holding a lone surrogate (which UTF-8 cannot encode) is written with ``\\uXXXX`` escapes instead, so every
string saves and loads back equal. The header's ``num_steps`` detects a lost last line. Every malformed
file raises :class:`TrajectoryFormatError` naming the file and line.
"""

from __future__ import annotations

import json
import logging
import math
import numbers
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from gui_envs.schema.actions import Action, InvalidActionError
from gui_envs.schema.atomic_folder import STALE_AFTER_S, clean_stale_temporaries, install_folder, temp_name

__all__ = [
    "FORMAT_VERSION",
    "STALE_AFTER_S",
    "TRAJECTORY_FILE",
    "Step",
    "Trajectory",
    "TrajectoryFormatError",
    "clean_stale_temporaries",
    "load_trajectories",
    "save_trajectories",
    "to_hf_dataset",
    "to_jsonable",
]

FORMAT_VERSION = 1
TRAJECTORY_FILE = "trajectory.jsonl"
#: File name of the screen after the last action (``Trajectory.final_screenshot``), beside the step images.
FINAL_IMAGE = "final.png"
logger = logging.getLogger(__name__)
_FLOAT_MARKERS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
#: The record keys whose values are free-form JSON (non-finite numbers are ``null`` there).
_FREE_FORM = ("info", "privileged", "metadata")


class TrajectoryFormatError(ValueError):
    """A trajectory folder is missing its file or holds records this version cannot read.

    Attributes:
        reason: what is wrong, without the location.
        path: the file (or folder) at fault, when known.
        line: the 1-based line of ``path`` at fault, when known.
    """

    def __init__(self, reason: str, path: str | os.PathLike[str] | None = None, line: int | None = None):
        where = f"{path}:{line}: " if path is not None and line is not None else f"{path}: " if path else ""
        super().__init__(where + reason)
        self.reason = reason
        self.path = path
        self.line = line


@dataclass
class Step:
    """One step of an episode.

    Attributes:
        action: the parsed action, or ``None`` when the model output did not parse.
        reward: the reward the env returned for this step.
        output_text: the raw model output that produced the action.
        screenshot: the observation image the action answered, (H, W, 3) uint8, in memory only; on disk it
            becomes ``image_path``.
        image_path: file name of the saved screenshot, relative to the trajectory folder.
        observation_text: a text rendering of the observation (for text-only agents), if any.
        terminated: the episode ended by reaching a terminal state at this step.
        truncated: the episode was cut off (step limit) at this step.
        info: the JSON-safe part of the env's ``info``.
        privileged: the env's privileged facts about the state the action was taken in (target box,
            reference answer...; see :mod:`gui_envs.schema.privileged`), for rewards and trainers; no agent reads it.
        action_error: why the action was rejected, if it was.
        token_ids: generated token ids, for trainers.
        logprobs: log-probabilities of ``token_ids`` under the sampling policy.
        prompt: the prompt the model saw, for trainers.
    """

    action: Action | None
    reward: float = 0.0
    output_text: str | None = None
    screenshot: np.ndarray | None = None
    image_path: str | None = None
    observation_text: str | None = None
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    privileged: dict[str, Any] = field(default_factory=dict)
    action_error: str | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt: str | None = None

    def to_record(self) -> dict[str, Any]:
        """The JSON line for this step (without the image pixels); strict JSON, see the module docstring."""
        return {
            "action": self.action.to_dict() if self.action is not None else None,
            "reward": _encode_float(self.reward),
            "output_text": self.output_text,
            "image_path": self.image_path,
            "observation_text": self.observation_text,
            "terminated": bool(self.terminated),
            "truncated": bool(self.truncated),
            "info": to_jsonable(self.info),
            "privileged": to_jsonable(self.privileged),
            "action_error": self.action_error,
            "token_ids": [int(t) for t in self.token_ids] if self.token_ids is not None else None,
            "logprobs": [_encode_float(v) for v in self.logprobs] if self.logprobs is not None else None,
            "prompt": self.prompt,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Step:
        """Inverse of :meth:`to_record`; ``action`` and ``reward`` are required.

        Raises:
            TrajectoryFormatError: for a missing key or a value of the wrong type (without the location;
                :meth:`Trajectory.load` adds the file and line).
        """
        if not isinstance(record, Mapping):
            raise TrajectoryFormatError(f"a step must be a JSON object, got {type(record).__name__}")
        for key in ("action", "reward"):
            if key not in record:
                raise TrajectoryFormatError(f"the step has no {key!r}; every step line needs one")
        action = record["action"]
        if action is not None:
            try:
                action = Action.from_dict(action)
            except InvalidActionError as exc:
                raise TrajectoryFormatError(f"bad action: {exc}") from exc
        logprobs = _typed(record, "logprobs", list)
        token_ids = _typed(record, "token_ids", list)
        if token_ids is not None and not all(_is_int(t) for t in token_ids):
            raise TrajectoryFormatError("token_ids must be a list of integers")
        image_path = _typed(record, "image_path", str)
        if image_path is not None and not _is_inside(image_path):
            raise TrajectoryFormatError(f"image_path {image_path!r} must be a file name inside the folder")
        return cls(
            action=action,
            reward=_decode_float(record["reward"], "reward"),
            output_text=_typed(record, "output_text", str),
            image_path=image_path,
            observation_text=_typed(record, "observation_text", str),
            terminated=_typed(record, "terminated", bool) or False,
            truncated=_typed(record, "truncated", bool) or False,
            info=_typed(record, "info", dict) or {},
            privileged=_typed(record, "privileged", dict) or {},
            action_error=_typed(record, "action_error", str),
            token_ids=token_ids,
            logprobs=[_decode_float(v, "logprobs") for v in logprobs] if logprobs is not None else None,
            prompt=_typed(record, "prompt", str),
        )


@dataclass
class Trajectory:
    """One episode: the instruction, its steps and the final verdict.

    Attributes:
        instruction: the task as the agent read it.
        steps: the steps in order.
        env_id: the gymnasium id the episode ran in.
        task: the task name, for envs that have several.
        seed: the seed passed to ``reset``.
        success: the final verdict, judged from app state by the env's task.
        score: the final task score in [0, 1] (1 for success), when the env gives one.
        metadata: anything else (agent name, group id, sampling parameters).
        id: a unique id, used as the folder name.
        final_screenshot: the screen after the last action, (H, W, 3) uint8, in memory only; on disk it is
            ``final.png``, named by the header's ``final_image`` (no step holds it: each step keeps the
            screen its action answered).
    """

    instruction: str
    steps: list[Step] = field(default_factory=list)
    env_id: str | None = None
    task: str | None = None
    seed: int | None = None
    success: bool | None = None
    score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    final_screenshot: np.ndarray | None = None

    @property
    def total_reward(self) -> float:
        return float(sum(s.reward for s in self.steps))

    def header(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "id": self.id,
            "instruction": self.instruction,
            "env_id": self.env_id,
            "task": self.task,
            "seed": int(self.seed) if isinstance(self.seed, numbers.Integral) else self.seed,
            "success": bool(self.success) if self.success is not None else None,
            "score": _encode_float(self.score) if self.score is not None else None,
            "num_steps": len(self.steps),
            "metadata": to_jsonable(self.metadata),
            "final_image": FINAL_IMAGE if self.final_screenshot is not None else None,
        }

    def save(self, root: str | os.PathLike[str]) -> Path:
        """Write this trajectory under ``root`` atomically and return its folder.

        Re-saving an existing id replaces it atomically too (see the module docstring): at every instant
        the folder ``root/<id>`` holds the old trajectory or the new one, or (only where the system has no
        atomic exchange, between two renames) the old one waits as ``.old-*`` for
        :func:`clean_stale_temporaries` to put it back.

        Raises:
            TrajectoryFormatError: when ``id`` cannot be a folder name (empty, a path, or starting with ".").
        """
        if not isinstance(self.id, str) or not _is_folder_name(self.id):
            raise TrajectoryFormatError(
                f"trajectory id {self.id!r} cannot be a folder name: use a non-empty name without '/', "
                "'\\' or NUL that does not start with '.'"
            )
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        final = root / self.id
        tmp = root / temp_name("tmp", self.id)
        tmp.mkdir()
        try:
            lines = [_dumps(self.header())]
            for index, step in enumerate(self.steps):
                record = step.to_record()
                if step.screenshot is not None:
                    name = f"step_{index:04d}.png"
                    _write_png(tmp / name, step.screenshot)
                    record["image_path"] = name
                lines.append(_dumps(record))
            if self.final_screenshot is not None:
                _write_png(tmp / FINAL_IMAGE, self.final_screenshot)
            with open(tmp / TRAJECTORY_FILE, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            install_folder(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final

    @classmethod
    def load(cls, folder: str | os.PathLike[str], load_images: bool = False) -> Trajectory:
        """Read a trajectory folder written by :meth:`save`.

        Args:
            folder: the trajectory's folder.
            load_images: also read each step's PNG into ``Step.screenshot``.

        Raises:
            TrajectoryFormatError: for any malformed content, naming the file and line: not UTF-8, not
                JSON, a missing key, a value of the wrong type, fewer or more steps than the header's
                ``num_steps`` (a lost last line), an unreadable image.
        """
        folder = Path(folder)
        path = folder / TRAJECTORY_FILE
        if not path.is_file():
            raise TrajectoryFormatError(f"{folder} has no {TRAJECTORY_FILE}; is it a trajectory folder?")
        records = _read_records(path)
        if not records:
            raise TrajectoryFormatError("the file is empty; it needs a header line", path)
        header_line, header = records[0]
        try:
            fields = _header_fields(header)
        except TrajectoryFormatError as exc:
            raise TrajectoryFormatError(exc.reason, path, header_line) from exc
        steps: list[Step] = []
        for line, record in records[1:]:
            try:
                step = Step.from_record(record)
                if load_images and step.image_path:
                    step.screenshot = _read_png(folder / step.image_path)
            except TrajectoryFormatError as exc:
                raise TrajectoryFormatError(exc.reason, path, line) from exc
            steps.append(step)
        num_steps = fields.pop("num_steps")
        if num_steps != len(steps):
            raise TrajectoryFormatError(
                f"the header announces {num_steps} steps but the file holds {len(steps)}: lines were lost "
                "or added after it was saved",
                path,
                records[-1][0],
            )
        final = None
        if load_images and header.get("final_image") == FINAL_IMAGE and (folder / FINAL_IMAGE).is_file():
            try:
                final = _read_png(folder / FINAL_IMAGE)
            except TrajectoryFormatError as exc:
                raise TrajectoryFormatError(exc.reason, folder / FINAL_IMAGE) from exc
        return cls(steps=steps, final_screenshot=final, **fields)


def save_trajectories(trajectories: Iterable[Trajectory], root: str | os.PathLike[str]) -> list[Path]:
    """Save each trajectory under ``root``, after removing stale temporary folders; returns their folders."""
    if Path(root).is_dir():
        clean_stale_temporaries(root)
    return [t.save(root) for t in trajectories]


def load_trajectories(
    root: str | os.PathLike[str],
    load_images: bool = False,
    on_error: Literal["raise", "skip"] = "raise",
    errors: list[TrajectoryFormatError] | None = None,
) -> list[Trajectory]:
    """Load every complete trajectory under ``root``, sorted by folder name.

    Stale temporary folders are cleaned first (:func:`clean_stale_temporaries`); live ones are skipped, as
    are sub-folders without a ``trajectory.jsonl``.

    Args:
        root: the folder that holds one sub-folder per trajectory.
        load_images: also read each step's PNG.
        on_error: ``"raise"`` the first :class:`TrajectoryFormatError`, or ``"skip"`` bad folders (each is
            logged as a warning and appended to ``errors``).
        errors: receives the skipped folders' errors when ``on_error="skip"``.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    root = Path(root)
    if not root.is_dir():
        raise TrajectoryFormatError(f"{root} is not a folder of trajectories")
    clean_stale_temporaries(root)
    folders = sorted(
        p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".tmp-", ".old-"))
    )
    out = []
    for folder in folders:
        if not (folder / TRAJECTORY_FILE).is_file():
            continue
        try:
            out.append(Trajectory.load(folder, load_images=load_images))
        except TrajectoryFormatError as exc:
            if on_error == "raise":
                raise
            logger.warning("skipping the trajectory folder %s: %s", folder, exc)
            if errors is not None:
                errors.append(exc)
    return out


def to_hf_dataset(trajectories: Sequence[Trajectory], root: str | os.PathLike[str] | None = None) -> Any:
    """Export trajectories as a Hugging Face ``datasets.Dataset`` with one row per step.

    Columns: ``trajectory_id``, ``step``, ``instruction``, ``env_id``, ``task``, ``seed``, ``action`` (JSON
    text), ``output_text``, ``reward``, ``success``, ``image`` (with ``root``: a ``datasets.Image`` feature, the
    step's screenshot file, ``None`` for a step without one; without ``root``: ``None``).

    Raises:
        ImportError: when ``datasets`` is not installed (``pip install guigym[train]``).
    """
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("to_hf_dataset needs the 'datasets' package: pip install 'guigym[train]'") from exc
    rows: dict[str, list[Any]] = {
        k: []
        for k in (
            "trajectory_id",
            "step",
            "instruction",
            "env_id",
            "task",
            "seed",
            "action",
            "output_text",
            "reward",
            "success",
            "image",
        )
    }
    for traj in trajectories:
        for index, step in enumerate(traj.steps):
            rows["trajectory_id"].append(traj.id)
            rows["step"].append(index)
            rows["instruction"].append(traj.instruction)
            rows["env_id"].append(traj.env_id)
            rows["task"].append(traj.task)
            rows["seed"].append(traj.seed)
            rows["action"].append(step.action.to_json() if step.action is not None else None)
            rows["output_text"].append(step.output_text)
            rows["reward"].append(float(step.reward))
            rows["success"].append(traj.success)
            image = None
            if root is not None and step.image_path:
                image = str((Path(root) / traj.id / step.image_path).resolve())
            rows["image"].append(image)
    dataset = datasets.Dataset.from_dict(rows)
    if root is not None:
        # A ``datasets.Image`` feature: rows decode to PIL images, and ``push_to_hub`` / ``save_to_disk`` embed the
        # files, where a path string would point at this machine's disk.
        dataset = dataset.cast_column("image", datasets.Image())
    return dataset


def to_jsonable(value: Any, max_array: int = 4096) -> Any:
    """Convert ``value`` to something ``json.dumps`` accepts.

    numpy scalars become Python numbers, small arrays become lists, large arrays (more than ``max_array``
    elements, such as screenshots) are replaced by a short description, actions by their dict form, and
    anything unknown by its ``repr``. Non-finite floats become ``None`` so the output stays strict JSON.
    """
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.generic):
        return to_jsonable(value.item(), max_array)
    if isinstance(value, np.ndarray):
        if value.size > max_array:
            return {"ndarray": {"shape": list(value.shape), "dtype": str(value.dtype)}}
        return to_jsonable(value.tolist(), max_array)
    if isinstance(value, Action):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v, max_array) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v, max_array) for v in value]
    return repr(value)


def _dumps(record: dict[str, Any]) -> str:
    """One strict-JSON line; ``\\uXXXX`` escapes only when the text holds a lone surrogate."""
    line = json.dumps(record, ensure_ascii=False, allow_nan=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-8 cannot encode a lone surrogate (a model may emit half a pair); the escaped form is lossless.
        line = json.dumps(record, ensure_ascii=True, allow_nan=False)
    return line


def _read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for each non-blank line; raises :class:`TrajectoryFormatError` otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TrajectoryFormatError(f"cannot read the file: {exc}", path) from exc
    records = []
    for line, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TrajectoryFormatError(f"the line is not UTF-8 ({exc})", path, line) from exc
        try:
            # NaN tokens are still read: files written before strict JSON hold them.
            record, bare = _loads(text)
        except (ValueError, RecursionError) as exc:
            raise TrajectoryFormatError(
                f"the line is not JSON ({exc}); the file was cut short or edited by hand", path, line
            ) from exc
        if not isinstance(record, dict):
            raise TrajectoryFormatError(f"each line must be a JSON object, got {type(record).__name__}", path, line)
        if bare:
            # What the strict writer would have stored: null in the free-form dicts (reward, score and
            # log-probabilities keep the float; a token in a typed field fails its type check).
            record.update({k: to_jsonable(record[k]) for k in _FREE_FORM if isinstance(record.get(k), dict)})
        records.append((line, record))
    return records


def _loads(text: str) -> tuple[Any, bool]:
    """``json.loads(text)``, and whether the text held a bare ``NaN`` / ``Infinity`` / ``-Infinity`` token."""
    bare: list[str] = []

    def constant(name: str) -> float:
        bare.append(name)
        return _FLOAT_MARKERS[name]

    return json.loads(text, parse_constant=constant), bool(bare)


def _header_fields(header: dict[str, Any]) -> dict[str, Any]:
    """The :class:`Trajectory` fields (plus ``num_steps``) of a header record, type-checked."""
    version = header.get("format_version")
    if version != FORMAT_VERSION:
        raise TrajectoryFormatError(f"format_version is {version!r}; this guigym reads {FORMAT_VERSION}")
    for key in ("id", "instruction", "num_steps"):
        if key not in header:
            raise TrajectoryFormatError(f"the header has no {key!r}")
    num_steps = header["num_steps"]
    if not _is_int(num_steps) or num_steps < 0:
        raise TrajectoryFormatError(f"num_steps must be a non-negative integer, got {num_steps!r}")
    seed = header.get("seed")
    if seed is not None and not _is_int(seed):
        raise TrajectoryFormatError(f"seed must be an integer or null, got {seed!r}")
    score = header.get("score")
    return {
        "id": _typed(header, "id", str),
        "instruction": _typed(header, "instruction", str),
        "env_id": _typed(header, "env_id", str),
        "task": _typed(header, "task", str),
        "seed": seed,
        "success": _typed(header, "success", bool),
        "score": _decode_float(score, "score") if score is not None else None,
        "metadata": _typed(header, "metadata", dict) or {},
        "num_steps": num_steps,
    }


def _typed(record: Mapping[str, Any], key: str, kind: type) -> Any:
    """``record[key]`` when it is a ``kind`` or null/missing (``None``); raises otherwise."""
    value = record.get(key)
    if value is not None and (not isinstance(value, kind) or (kind is not bool and isinstance(value, bool))):
        raise TrajectoryFormatError(f"{key} must be {kind.__name__} or null, got {type(value).__name__}")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _encode_float(value: float) -> float | str:
    """A float as strict JSON: itself when finite, else ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"``."""
    value = float(value)
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _decode_float(value: Any, key: str) -> float:
    if isinstance(value, str) and value in _FLOAT_MARKERS:
        return _FLOAT_MARKERS[value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TrajectoryFormatError(f"{key} must be a number, got {value!r}")
    return float(value)


def _is_inside(name: str) -> bool:
    """A relative path that stays inside the trajectory folder."""
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts and "\x00" not in name


def _is_folder_name(name: str) -> bool:
    return bool(name) and not name.startswith(".") and not any(c in name for c in "/\\\x00")


def _write_png(path: Path, image: np.ndarray) -> None:
    from PIL import Image

    array = np.asarray(image)
    if array.dtype != np.uint8:
        raise ValueError(f"screenshots must be uint8, got {array.dtype}")
    Image.fromarray(array).save(path, format="PNG")


def _read_png(path: Path) -> np.ndarray:
    from PIL import Image

    try:
        with Image.open(path) as img:
            return np.asarray(img.convert("RGB"))
    except Exception as exc:  # PIL raises OSError, ValueError, SyntaxError... for a damaged file
        raise TrajectoryFormatError(f"cannot read the image {path}: {type(exc).__name__}: {exc}") from exc
