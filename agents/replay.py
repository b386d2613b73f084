"""Replays recorded model outputs: evaluate predictions made elsewhere (a cluster, a paper's release).

The predictions file is JSON lines ``{"episode_id": ..., "step": k, "output": "<model text>"}``; episodes
are matched by the env's ``info["episode_id"]`` (``GuiOffline-v0`` sets it), steps by their index. A missing
prediction is an empty output, which the env scores as malformed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.base import AgentOutput, BaseAgent

#: The keys of every line of a predictions file.
REPLAY_KEYS: tuple[str, ...] = ("episode_id", "step", "output")


class ReplayFormatError(ValueError):
    """A predictions line is not a JSON object with :data:`REPLAY_KEYS`; the message names the line."""


class ReplayAgent(BaseAgent):
    """Answers each step with the recorded output text for ``(episode_id, step)``."""

    name = "replay"

    def __init__(self, path: str | Path) -> None:
        self.outputs: dict[tuple[str, int], str] = {}
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    self.outputs.update([_prediction(line, path, number)])
        self.episode_id = ""
        self.step = 0

    def reset(self, instruction: str = "", info: dict[str, Any] | None = None) -> None:
        self.episode_id = str((info or {}).get("episode_id", ""))
        self.step = 0

    def act(self, observation: Any) -> AgentOutput:
        text = self.outputs.get((self.episode_id, self.step), "")
        self.step += 1
        return AgentOutput(action=text, text=text)


def _prediction(line: str, path: str | Path, number: int) -> tuple[tuple[str, int], str]:
    """``((episode_id, step), output)`` of one predictions line; :class:`ReplayFormatError` naming the line
    otherwise (a JSON array file, a file of another tool's keys), instead of a bare ``KeyError: 'output'``."""
    where = f"{path} line {number}"
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        message = f"{where} is not JSON ({exc.msg}); each line is a JSON object with {REPLAY_KEYS}"
        raise ReplayFormatError(message) from None
    missing = [k for k in REPLAY_KEYS if k not in rec] if isinstance(rec, dict) else list(REPLAY_KEYS)
    if missing:
        raise ReplayFormatError(f"{where} lacks {missing}; each line is a JSON object with {REPLAY_KEYS}")
    try:
        return (str(rec["episode_id"]), int(rec["step"])), str(rec["output"])
    except (TypeError, ValueError):
        raise ReplayFormatError(f"{where}: step must be an integer, got {rec['step']!r}") from None
