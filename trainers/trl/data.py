"""Dataset rows for TRL: one row per seed, ``{"prompt", "env_id", "seed"[, "task"]}``.

TRL passes each row to the rollout slot's ``reset(**row)`` (:class:`trainers.trl.env.GuiGymEnvironment`), which
starts the env at the row's seed and appends the first observation to the prompt; the prompt itself carries
only what does not depend on the episode (the tool-use preamble in ``tools`` mode, nothing in ``text`` mode,
where the answer format's own prompt is the observation).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trainers.trl.config import GuiGymTRLConfig
from trainers.trl.env import DEFAULT_SYSTEM_PROMPT


def dataset_rows(config: GuiGymTRLConfig, seeds: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """One row per seed (default ``range(*config.seeds)``), in order.

    >>> dataset_rows(GuiGymTRLConfig(action_mode="text"), seeds=[3])
    [{'prompt': [{'role': 'user', 'content': ''}], 'env_id': 'ClickGrid-v0', 'seed': 3}]
    """
    if config.action_mode == "text":
        preamble = ""
    else:
        preamble = DEFAULT_SYSTEM_PROMPT if config.system_prompt is None else config.system_prompt
    seeds = range(*config.seeds) if seeds is None else seeds
    rows = []
    for seed in seeds:
        row: dict[str, Any] = {
            "prompt": [{"role": "user", "content": preamble}],
            "env_id": config.env_id,
            "seed": int(seed),
        }
        if config.task is not None:
            row["task"] = config.task
        rows.append(row)
    return rows


def build_dataset(config: GuiGymTRLConfig, seeds: Iterable[int] | None = None) -> Any:
    """:func:`dataset_rows` as a ``datasets.Dataset``."""
    from datasets import Dataset

    return Dataset.from_list(dataset_rows(config, seeds))
