"""``guigym tasks ENV_ID``: the task templates an env draws from, with an example instruction each.

The example is the template's instruction at task seed 0, built on the seeded app state without starting a
browser (the sites and apps are SQLite state in this process).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class NoTasksError(ValueError):
    """The env has no named task templates (a grid puzzle, a grounding env, an offline dataset)."""


def task_rows(env_id: str, env_kwargs: dict[str, Any] | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """One row per template of ``env_id``'s pool: ``name``, ``where`` (site or app), ``difficulty`` (rough
    oracle steps; ``None`` when the family does not grade it), ``kind`` (``state`` / ``answer`` / ``infeasible``
    by how it is judged) and ``example`` (the instruction at task seed ``seed``).

    Raises:
        NoTasksError: the env has no task templates.
    """
    env = gym.make(env_id, **(env_kwargs or {}))
    try:
        core = env.unwrapped
        names = getattr(core, "task_names", None)
        registry = getattr(core, "registry", None)
        if not names or registry is None:
            raise NoTasksError(
                f"{env_id} has no named tasks: each reset draws its episode from the seed "
                "(`guigym run ENV_ID --seed N`); `guigym tasks` lists the templates of GuiWeb-* and GuiAndroid-* ids"
            )
        rows = []
        for name in names:
            cls = registry[name]
            try:
                task = core.example_task(cls, seed)
                example = task.instruction if task is not None else "(judged only on the simulated phone)"
            except Exception as exc:  # noqa: BLE001 - a listing shows what it can; the error names the template
                example = f"(no example: {type(exc).__name__}: {exc})"
            kind = "infeasible" if "infeasible" in name else ("answer" if cls.requires_stop else "state")
            rows.append({
                "name": name,
                "where": getattr(cls, "site", None) or name.split(".")[0],
                "difficulty": getattr(cls, "difficulty", None),
                "kind": kind,
                "example": example,
            })
        return rows
    finally:
        env.close()


__all__ = ["NoTasksError", "task_rows"]
