"""Preference pairs from env layouts, for DPO without a MobileIPL run first (``guigym pairs``).

One pair per ``ClickBox-v0`` layout: the ``box`` output format's prompt, the answer that names the target box's
cell as *chosen*, and the answer that names another listed box's cell as *rejected*. Each pair records its env
reset seed, so a held-out split by seed can be checked (:func:`trainers.dpo.split_check`). Layouts where both
boxes share a cell give no pair.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import gymnasium as gym

import gui_envs  # noqa: F401  (registers ClickBox-v0)
from agents.prompts.box import BoxFormat
from agents.prompts.formats import PromptContext
from agents.prompts.observation import element_list
from gui_envs.schema.actions import Action
from trainers.dpo import PairSample, export_pairs


def box_pairs(seeds: Iterable[int], n_boxes: int = 2) -> list[PairSample]:
    """The pairs of the ``ClickBox-v0`` layouts at reset seeds ``seeds`` (``n_boxes`` boxes each)."""
    env = gym.make("ClickBox-v0", n_boxes=n_boxes)
    fmt = BoxFormat()
    out = []
    try:
        for seed in seeds:
            obs, _ = env.reset(seed=seed)
            target = env.unwrapped.privileged()["target_element"]  # type: ignore[attr-defined]
            other = next(b for b in element_list(obs["elements"]) if b["id"] != target)
            x0, y0, x1, y1 = other["bbox"]
            chosen = fmt.answer_text(env.unwrapped.oracle_action(), obs)  # type: ignore[attr-defined]
            rejected = fmt.answer_text(Action.click((x0 + x1) / 2, (y0 + y1) / 2), obs)
            if chosen != rejected:
                prompt = fmt.messages(PromptContext(obs, obs["instruction"], [], False))
                out.append(PairSample(prompt, chosen, rejected, seed=seed))
    finally:
        env.close()
    return out


def write_box_pairs(path: str | Path, n: int, seed_start: int = 0, n_boxes: int = 2) -> tuple[Path, int]:
    """Write the pairs of seeds ``seed_start .. seed_start + n - 1`` to ``path`` (Parquet, TRL's format plus a
    ``seed`` column); returns the file and the number of pairs (at most ``n``)."""
    pairs = box_pairs(range(seed_start, seed_start + n), n_boxes=n_boxes)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return export_pairs(pairs, path), len(pairs)
