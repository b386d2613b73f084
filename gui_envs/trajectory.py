"""Step and Trajectory records, and their on-disk format.

On disk a trajectory is a folder::

    <root>/<trajectory id>/
        trajectory.jsonl     line 1: the header (instruction, env, task, seed, verdict, metadata)
                             lines 2..: one Step each
        step_0000.png        the observation screenshot the step answered, when there was one

A folder appears under its final name only when it is complete: it is written under a temporary name in the
same root and renamed, which is atomic on POSIX filesystems. A killed process therefore leaves at most a
``.tmp-*`` folder, which :func:`load_trajectories` ignores, never a half-written trajectory.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gui_envs.actions import Action

FORMAT_VERSION = 1
TRAJECTORY_FILE = "trajectory.jsonl"


class TrajectoryFormatError(ValueError):
    """A trajectory folder is missing its file or holds records this version cannot read."""


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
            reference answer...; see :mod:`gui_envs.privileged`), for rewards and trainers; no agent reads it.
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
        """The JSON line for this step (without the image pixels)."""
        return {
            "action": self.action.to_dict() if self.action is not None else None,
            "reward": float(self.reward),
            "output_text": self.output_text,
            "image_path": self.image_path,
            "observation_text": self.observation_text,
            "terminated": bool(self.terminated),
            "truncated": bool(self.truncated),
            "info": to_jsonable(self.info),
            "privileged": to_jsonable(self.privileged),
            "action_error": self.action_error,
            "token_ids": self.token_ids,
            "logprobs": self.logprobs,
            "prompt": self.prompt,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Step:
        action = record.get("action")
        return cls(
            action=Action.from_dict(action) if action is not None else None,
            reward=float(record.get("reward", 0.0)),
            output_text=record.get("output_text"),
            image_path=record.get("image_path"),
            observation_text=record.get("observation_text"),
            terminated=bool(record.get("terminated", False)),
            truncated=bool(record.get("truncated", False)),
            info=dict(record.get("info") or {}),
            privileged=dict(record.get("privileged") or {}),
            action_error=record.get("action_error"),
            token_ids=record.get("token_ids"),
            logprobs=record.get("logprobs"),
            prompt=record.get("prompt"),
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
            "seed": self.seed,
            "success": self.success,
            "score": self.score,
            "num_steps": len(self.steps),
            "metadata": to_jsonable(self.metadata),
        }

    def save(self, root: str | os.PathLike[str]) -> Path:
        """Write this trajectory under ``root`` atomically and return its folder."""
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        final = root / self.id
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{self.id}-", dir=root))
        try:
            lines = [json.dumps(self.header(), ensure_ascii=False)]
            for index, step in enumerate(self.steps):
                record = step.to_record()
                if step.screenshot is not None:
                    name = f"step_{index:04d}.png"
                    _write_png(tmp / name, step.screenshot)
                    record["image_path"] = name
                lines.append(json.dumps(record, ensure_ascii=False))
            with open(tmp / TRAJECTORY_FILE, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            if final.exists():
                shutil.rmtree(final)
            os.replace(tmp, final)
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
        """
        folder = Path(folder)
        path = folder / TRAJECTORY_FILE
        if not path.is_file():
            raise TrajectoryFormatError(f"{folder} has no {TRAJECTORY_FILE}; is it a trajectory folder?")
        with open(path, encoding="utf-8") as fh:
            lines = [json.loads(line) for line in fh if line.strip()]
        if not lines:
            raise TrajectoryFormatError(f"{path} is empty")
        header = lines[0]
        version = header.get("format_version")
        if version != FORMAT_VERSION:
            raise TrajectoryFormatError(
                f"{path} has format_version {version!r}; this guigym reads {FORMAT_VERSION}"
            )
        steps = [Step.from_record(r) for r in lines[1:]]
        if load_images:
            for step in steps:
                if step.image_path:
                    step.screenshot = _read_png(folder / step.image_path)
        return cls(
            instruction=header.get("instruction", ""),
            steps=steps,
            env_id=header.get("env_id"),
            task=header.get("task"),
            seed=header.get("seed"),
            success=header.get("success"),
            score=header.get("score"),
            metadata=dict(header.get("metadata") or {}),
            id=header["id"],
        )


def save_trajectories(trajectories: Iterable[Trajectory], root: str | os.PathLike[str]) -> list[Path]:
    """Save each trajectory under ``root``; returns their folders."""
    return [t.save(root) for t in trajectories]


def load_trajectories(root: str | os.PathLike[str], load_images: bool = False) -> list[Trajectory]:
    """Load every complete trajectory under ``root``, sorted by folder name; temporary folders are skipped."""
    root = Path(root)
    if not root.is_dir():
        raise TrajectoryFormatError(f"{root} is not a folder of trajectories")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".tmp-"))
    return [Trajectory.load(p, load_images=load_images) for p in folders if (p / TRAJECTORY_FILE).is_file()]


def to_hf_dataset(trajectories: Sequence[Trajectory], root: str | os.PathLike[str] | None = None) -> Any:
    """Export trajectories as a Hugging Face ``datasets.Dataset`` with one row per step.

    Columns: ``trajectory_id``, ``step``, ``instruction``, ``env_id``, ``task``, ``seed``, ``action`` (JSON
    text), ``output_text``, ``reward``, ``success``, ``image`` (absolute path when ``root`` is given and the
    step has a screenshot on disk, else ``None``).

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
    return datasets.Dataset.from_dict(rows)


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


def _write_png(path: Path, image: np.ndarray) -> None:
    from PIL import Image

    array = np.asarray(image)
    if array.dtype != np.uint8:
        raise ValueError(f"screenshots must be uint8, got {array.dtype}")
    Image.fromarray(array).save(path, format="PNG")


def _read_png(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))
