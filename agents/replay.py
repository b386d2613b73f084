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


class ReplayAgent(BaseAgent):
    """Answers each step with the recorded output text for ``(episode_id, step)``."""

    name = "replay"

    def __init__(self, path: str | Path) -> None:
        self.outputs: dict[tuple[str, int], str] = {}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    rec = json.loads(line)
                    self.outputs[(str(rec["episode_id"]), int(rec["step"]))] = str(rec["output"])
        self.episode_id = ""
        self.step = 0

    def reset(self, instruction: str = "", info: dict[str, Any] | None = None) -> None:
        self.episode_id = str((info or {}).get("episode_id", ""))
        self.step = 0

    def act(self, observation: Any) -> AgentOutput:
        text = self.outputs.get((self.episode_id, self.step), "")
        self.step += 1
        return AgentOutput(action=text, text=text)
