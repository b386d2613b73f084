"""The one episode loop: run an agent in env slots and record each episode as a Trajectory.

:func:`play` runs one episode in each of ``len(seeds)`` env slots, multi-turn, until every slot is done:

    active = [True] * n                                  # (n,) mask of slots still running
    obs, info = reset(seeds)
    while any(active):
        outs = act(agent, obs[active])                   # ONE batched model call (or act() for one slot)
        privileged = privileged_of(slots[active])        # BEFORE the step: the state the action answers
        obs[active], reward, terminated, truncated, info = step(outs.action)
        active &= ~(terminated | truncated | steps == max_steps)

and records every step (prompt, output text, token ids, log-probs, action, reward, info, screenshot, and the
env's privileged facts about the state the action answered) in the shared
:class:`~gui_envs.schema.trajectory.Trajectory` format. The agent is handed the observations and, at reset,
:func:`~gui_envs.schema.privileged.public_info` of the reset info, nothing else: the privileged facts are read for the
record only (:attr:`~gui_envs.schema.trajectory.Step.privileged`), after the agent has chosen its action.

Two callers share it: :func:`run_episode` (one env, one episode, an agent that keeps its own episode state)
and :func:`trainers.rollout.collect_episodes` (many slots, one batched model call per step). Env slots are
:class:`EnvWorkers`; :class:`ListWorkers` holds envs of this process (the trainers add vector envs and Ray).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import Agent, AgentOutput
from gui_envs.schema.actions import Action
from gui_envs.schema.privileged import privileged_of, public_info
from gui_envs.schema.trajectory import Step, Trajectory
from gui_envs.schema.upcoming import announce

StepResult = tuple[Any, float, bool, bool, dict[str, Any]]


class EnvWorkers:
    """A fixed set of env slots the episode loop resets and steps by index.

    Attributes:
        num_envs: number of slots.
        env_ids: the gymnasium id of each slot's env (``None`` when unknown).
    """

    num_envs: int
    env_ids: list[str | None]

    def reset(
        self, seeds: Sequence[int | None], n: int, options: dict[str, Any] | None = None
    ) -> list[tuple[Any, dict[str, Any]]]:
        """Reset slots ``0..n-1`` with ``seeds[:n]`` (and ``options``, the same for each); returns their
        ``(obs, info)``."""
        raise NotImplementedError

    def step(self, actions: dict[int, Any]) -> dict[int, StepResult]:
        """Step the given slots (all at once where the backend allows) and return their results."""
        raise NotImplementedError

    def screenshots(self, indices: Sequence[int], observations: Sequence[Any]) -> dict[int, np.ndarray]:
        """The screenshot each slot's current observation shows (observation ``screenshot`` or render)."""
        out = {}
        for i, obs in zip(indices, observations, strict=True):
            shot = obs.get("screenshot") if isinstance(obs, dict) else None
            if isinstance(shot, np.ndarray):
                out[i] = shot
        return out

    def privileged(self, indices: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Each slot's privileged facts about its current state (:mod:`gui_envs.schema.privileged`)."""
        raise NotImplementedError

    def announce(self, plans: Sequence[Sequence[int | None]]) -> None:
        """Tell each slot its next reset seeds, in order (``plans[i]`` for slot ``i``), so that envs that prepare
        their starts prepare those (:mod:`gui_envs.schema.upcoming`). Only a hint: by default nothing is done."""

    def close(self) -> None:
        """Release the envs."""


class ListWorkers(EnvWorkers):
    """Slots backed by a list of envs in this process, stepped one after another."""

    def __init__(self, envs: Sequence[gym.Env[Any, Any]]) -> None:
        if not envs:
            raise ValueError("need at least one env")
        self.envs = list(envs)
        self.num_envs = len(self.envs)
        self.env_ids = [e.spec.id if e.spec is not None else None for e in self.envs]

    def reset(
        self, seeds: Sequence[int | None], n: int, options: dict[str, Any] | None = None
    ) -> list[tuple[Any, dict[str, Any]]]:
        return [self.envs[i].reset(seed=seeds[i], options=options) for i in range(n)]

    def step(self, actions: dict[int, Any]) -> dict[int, StepResult]:
        return {i: self.envs[i].step(a) for i, a in actions.items()}

    def privileged(self, indices: Sequence[int]) -> dict[int, dict[str, Any]]:
        return {i: privileged_of(self.envs[i]) for i in indices}

    def announce(self, plans: Sequence[Sequence[int | None]]) -> None:
        for env, plan in zip(self.envs, plans, strict=False):
            announce(env, plan)

    def screenshots(self, indices: Sequence[int], observations: Sequence[Any]) -> dict[int, np.ndarray]:
        out = super().screenshots(indices, observations)
        for i in indices:
            if i not in out and self.envs[i].render_mode == "rgb_array":
                frame = self.envs[i].render()
                if isinstance(frame, np.ndarray):
                    out[i] = frame
        return out

    def close(self) -> None:
        for env in self.envs:
            env.close()


@dataclass
class _Slot:
    traj: Trajectory
    history: list[str] = field(default_factory=list)
    obs: Any = None
    active: bool = True


def play(
    workers: EnvWorkers,
    agent: Agent,
    seeds: Sequence[int | None],
    *,
    max_steps: int,
    record_screenshots: bool = False,
    record_privileged: bool = True,
    metadata: Sequence[dict[str, Any]] | None = None,
    options: dict[str, Any] | None = None,
    stateful_agent: bool = False,
    progress: bool = False,
) -> list[Trajectory]:
    """Run one episode in each of slots ``0..len(seeds)-1`` and return the trajectories in slot order.

    Args:
        workers: the env slots; ``len(seeds) <= workers.num_envs``.
        agent: anything with ``act`` (and optionally ``act_batch``, ``reset``).
        seeds: one reset seed per slot.
        max_steps: per-episode step cap (steps), for envs without a time limit.
        record_screenshots: keep each step's screenshot (observation ``screenshot`` or ``render()``).
        record_privileged: keep each step's privileged facts in ``Step.privileged`` (never shown to the agent).
        metadata: extra trajectory metadata per slot (group ids, ...).
        options: passed to every slot's ``reset``.
        stateful_agent: the agent keeps its own episode state: it is ``reset(instruction, public info)`` at the
            start and asked ``act(obs)`` one observation at a time (one slot only). Otherwise one batched
            ``act_batch`` call per step, given the loop's per-slot action histories.
        progress: show a tqdm bar (steps taken across all slots).
    """
    n = len(seeds)
    if n > workers.num_envs:
        raise ValueError(f"{n} seeds for {workers.num_envs} env slots; use collect_groups to schedule more")
    if stateful_agent and n != 1:
        raise ValueError(f"a stateful agent plays one slot at a time, got {n} seeds")
    padded = list(seeds) + [None] * (workers.num_envs - n)
    # Workers written before ``options`` existed take two arguments; they are only asked for what they know.
    results = workers.reset(padded, n) if options is None else workers.reset(padded, n, options)
    agent_name = getattr(agent, "name", type(agent).__name__)
    slots = []
    for i, (obs, info) in enumerate(results):
        info = public_info(info)
        instruction = _instruction(obs, info)
        if stateful_agent and hasattr(agent, "reset"):
            agent.reset(instruction, dict(info))
        meta = {"agent": agent_name, **(metadata[i] if metadata else {})}
        traj = Trajectory(
            instruction, env_id=workers.env_ids[i], task=info.get("task"), seed=seeds[i], metadata=meta
        )
        slots.append(_Slot(traj, obs=obs))
    bar = _progress(progress, f"rollouts x{n}")
    while any(s.active for s in slots):
        active = [i for i, s in enumerate(slots) if s.active]  # the active mask, as indices
        observations = [slots[i].obs for i in active]
        shots = workers.screenshots(active, observations) if record_screenshots else {}
        if stateful_agent:
            outs = [agent.act(observations[0])]
        else:
            outs = _act(agent, observations, [slots[i].history for i in active], [slots[i].traj.instruction for i in active])
        privileged = workers.privileged(active) if record_privileged else {}
        stepped = workers.step({i: out.action for i, out in zip(active, outs, strict=True)})
        ended: list[int] = []
        for i, out in zip(active, outs, strict=True):
            slot = slots[i]
            obs, reward, terminated, truncated, info = stepped[i]
            step = _record(out, float(reward), terminated, truncated, info, shots.get(i))
            step.privileged = privileged.get(i, {})
            slot.traj.steps.append(step)
            slot.history.append(_describe(out))
            slot.obs = obs
            if terminated or truncated or len(slot.traj.steps) >= max_steps:
                slot.active = False
                ended.append(i)
                slot.traj.success = bool(info.get("success", False))
                slot.traj.score = float(info.get("score", 1.0 if slot.traj.success else 0.0))
                if record_screenshots:
                    # The screen the last action led to: no step holds it, and a replay should end on it.
                    slot.traj.final_screenshot = workers.screenshots([i], [obs]).get(i)
        if record_privileged and ended:
            # The state after the last step, which no step's (before-the-step) record holds: state-based label
            # functions (gui_envs.verifiers) judge the final app state from it.
            for i, facts in workers.privileged(ended).items():
                slots[i].traj.metadata["final_privileged"] = facts
        if bar is not None:
            bar.update(len(active))
    if bar is not None:
        bar.close()
    return [s.traj for s in slots]


def run_episode(
    env: gym.Env[Any, Any],
    agent: Agent,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int = 1000,
    record_screenshots: bool = False,
    record_privileged: bool = True,
) -> Trajectory:
    """Play one episode and return its trajectory (:func:`play` on one slot, with a stateful agent).

    Args:
        env: any gymnasium env; guigym envs put ``success`` (and optionally ``score``) in the final ``info``.
        agent: anything with ``act``; ``reset(instruction, info)`` is called when present.
        seed: passed to ``env.reset``.
        options: passed to ``env.reset``.
        max_steps: a safety cap (steps) for envs without their own time limit.
        record_screenshots: keep ``observation["screenshot"]`` (GUI envs) or ``env.render()`` (envs with
            ``render_mode="rgb_array"``) in each step, so that saving writes PNGs.
        record_privileged: keep the env's privileged facts about each step's state in
            :attr:`~gui_envs.schema.trajectory.Step.privileged` (for scoring and trainers; on web and phone envs this
            resolves the oracle's next target once per step).
    """
    (traj,) = play(
        ListWorkers([env]),
        agent,
        [seed],
        max_steps=max_steps,
        record_screenshots=record_screenshots,
        record_privileged=record_privileged,
        options=options,
        stateful_agent=True,
    )
    return traj


# ----- helpers -----------------------------------------------------------------------------------------


def _act(
    agent: Agent, observations: list[Any], histories: list[list[str]], instructions: list[str]
) -> list[AgentOutput]:
    """One batched call when the agent has ``act_batch`` (passing per-slot histories if it takes them)."""
    act_batch: Callable[..., list[AgentOutput]] | None = getattr(agent, "act_batch", None)
    if act_batch is None:
        return [agent.act(obs) for obs in observations]
    try:
        return act_batch(observations, histories=histories, instructions=instructions)
    except TypeError:
        try:
            return act_batch(observations, histories=histories)
        except TypeError:
            return act_batch(observations)


def _record(
    out: AgentOutput, reward: float, terminated: bool, truncated: bool, info: dict[str, Any], shot: Any
) -> Step:
    return Step(
        action=out.action if isinstance(out.action, Action) else None,
        reward=reward,
        output_text=out.text if out.text is not None else _plain(out.action),
        screenshot=shot,
        terminated=bool(terminated),
        truncated=bool(truncated),
        info=dict(info),
        action_error=info.get("action_error") or info.get("parse_error") or out.parse_error,
        token_ids=out.token_ids,
        logprobs=out.logprobs,
        prompt=out.extra.get("prompt") if out.extra else None,
    )


def _describe(out: AgentOutput) -> str:
    if isinstance(out.action, Action):
        return out.action.to_json()
    return _plain(out.action) or "invalid action"


def _plain(action: Any) -> str | None:
    """Non-Action actions (grid answers, discrete moves) are kept as text so the record is complete."""
    if action is None or isinstance(action, Action):
        return None
    if isinstance(action, np.ndarray):
        return str(action.tolist())
    return str(action)


def _instruction(obs: Any, info: dict[str, Any]) -> str:
    if isinstance(obs, dict) and isinstance(obs.get("instruction"), str):
        return obs["instruction"]
    return str(info.get("instruction", ""))


def _progress(enabled: bool, desc: str) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(desc=desc, unit="step", leave=False)
