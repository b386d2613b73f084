"""The evaluation harness behind ``guigym eval``: success rate, Type/GR/SR with breakdowns, pass@k, offsets.

Step metrics come from the env's info (``type_match``, ``grounding``, ``step_success``, as ``GuiOffline-v0``
reports them; seed 000 sec. 4.1); click offsets from each step's privileged target (never shown to the agent). Each is a mean over the steps where it applies (GR:
steps whose recorded action is a pointer action). pass@k uses the unbiased estimator
``1 - C(n - c, k) / C(n, k)`` over ``n`` attempts per episode with ``c`` successes.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from agents.base import Agent
from agents.episode import run_episode
from gui_envs.offline.scoring import score_step
from gui_envs.schema.actions import Action
from gui_envs.schema.trajectory import Step, Trajectory


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` attempts with ``c`` successes.

    >>> pass_at_k(4, 1, 1)
    0.25
    >>> pass_at_k(4, 1, 4)
    1.0
    """
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} attempts per episode, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@dataclass
class EvalReport:
    """What ``guigym eval`` prints and writes (fractions in [0, 1]; offsets in pixels)."""

    env_id: str
    agent: str
    episodes: int
    samples: int
    success_rate: float
    metrics: dict[str, float | None]
    by_platform: dict[str, dict[str, float | None]]
    by_category: dict[str, dict[str, float | None]]
    pass_at_k: dict[str, float]
    click_offsets: list[tuple[float, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def save(self, path: str | Path) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=2)


def _step_metrics(trajs: Sequence[Trajectory]) -> dict[str, float | None]:
    sums: dict[str, list[float]] = {"type": [], "gr": [], "sr": []}
    for traj in trajs:
        for step in traj.steps:
            info = step.info
            if "type_match" in info:
                sums["type"].append(float(info["type_match"]))
            if info.get("grounding") is not None:
                sums["gr"].append(float(info["grounding"]))
            if "step_success" in info:
                sums["sr"].append(float(info["step_success"]))
    out: dict[str, float | None] = {
        k.upper() if k != "type" else "Type": (sum(v) / len(v) if v else None) for k, v in sums.items()
    }
    out["success_rate"] = sum(bool(t.success) for t in trajs) / len(trajs) if trajs else None
    return out


def evaluate(
    env: gym.Env[Any, Any],
    agent: Agent,
    episodes: int,
    samples: int = 1,
    ks: Sequence[int] = (1,),
    seed: int = 0,
) -> tuple[EvalReport, list[Trajectory]]:
    """Run ``samples`` attempts at each of ``episodes`` seeds (``seed + i``) and aggregate."""
    trajs: list[Trajectory] = []
    by_episode: dict[int, list[Trajectory]] = defaultdict(list)
    for i in range(episodes):
        for _ in range(samples):
            traj = run_episode(env, agent, seed=seed + i)
            trajs.append(traj)
            by_episode[i].append(traj)
    first = [group[0] for group in by_episode.values()]  # the step metrics use the first attempt
    metrics = _step_metrics(first)
    groups: dict[str, dict[str, list[Trajectory]]] = {
        "platform": defaultdict(list),
        "category": defaultdict(list),
    }
    for traj in first:
        info = traj.steps[0].info if traj.steps else {}
        groups["platform"][str(info.get("platform", "unknown"))].append(traj)
        groups["category"][str(info.get("category", "unknown"))].append(traj)
    passes = {
        f"pass@{k}": sum(pass_at_k(samples, sum(bool(t.success) for t in g), k) for g in by_episode.values())
        / len(by_episode)
        for k in ks
        if k <= samples
    }
    offsets = [offset for t in first for s in t.steps if (offset := click_offset(s)) is not None]
    report = EvalReport(
        env_id=env.spec.id if env.spec is not None else type(env.unwrapped).__name__,
        agent=getattr(agent, "name", type(agent).__name__),
        episodes=episodes,
        samples=samples,
        success_rate=float(metrics.pop("success_rate") or 0.0),
        metrics=metrics,
        by_platform={k: _step_metrics(v) for k, v in sorted(groups["platform"].items())},
        by_category={k: _step_metrics(v) for k, v in sorted(groups["category"].items())},
        pass_at_k=passes,
        click_offsets=offsets,
    )
    return report, trajs


def save_offset_plot(
    offsets: Sequence[tuple[float, float]], path: str | Path, title: str = "click offsets"
) -> Path:
    """Scatter of predicted minus target centre (pixels; y down, as on screen), as in SSL Fig. 7."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 4))
    if offsets:
        xs, ys = zip(*offsets, strict=True)
        ax.scatter(xs, ys, s=12, alpha=0.7)
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.invert_yaxis()
    ax.set_xlabel("dx (px)")
    ax.set_ylabel("dy (px)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def click_offset(step: Step) -> tuple[float, float] | None:
    """Where a pointer step's click landed relative to its target's centre, ``(dx, dy)`` screenshot pixels.

    Read from the step's privileged target (``target_action`` / ``target_bbox``, recorded by
    :func:`agents.episode.run_episode`); ``None`` for steps without a point or without a recorded target.
    """
    target = step.privileged.get("target_action")
    predicted = step.info.get("prediction")  # the env's parse of the output; agents may send text
    action = Action.from_dict(predicted) if isinstance(predicted, dict) else step.action
    if action is None or target is None:
        return None
    size = step.info.get("screen_size")
    result = score_step(action, Action.from_dict(target), step.privileged.get("target_bbox"), size)
    return None if result.offset is None else (float(result.offset[0]), float(result.offset[1]))
