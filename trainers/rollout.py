"""Rollout collection: episodes and groups, many envs at once, one batched model call per step.

``collect_episodes`` runs one episode in each env slot, multi-turn, until every slot is done, through the
episode loop shared with :func:`agents.episode.run_episode` (:func:`agents.episode.play`: one batched
``act_batch`` call per step, the privileged facts read before each step, every step recorded in the shared
:class:`~gui_envs.schema.trajectory.Trajectory` format). ``collect_groups`` schedules ``group_size`` rollouts of each
``(env, seed)`` over the slots (a GRPO group = N rollouts from the same initial state) and returns them grouped.

Env slots come from a list of envs (:class:`ListWorkers`), a gymnasium vector env (:class:`VectorWorkers`) or
Ray actors, one env each (:class:`RayWorkers`, ``backend="ray"``, the ``ray`` extra); :func:`make_workers`
picks one. The collector loop is the same for all three.
"""

from __future__ import annotations

import importlib.util
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import Agent
from agents.episode import EnvWorkers, ListWorkers, StepResult, play
from gui_envs.schema.errors import EnvCrashedError
from gui_envs.schema.privileged import privileged_of, privileged_of_vector
from gui_envs.schema.trajectory import Trajectory, save_trajectories
from gui_envs.schema.upcoming import announce


@dataclass
class RolloutConfig:
    """How to collect.

    Attributes:
        max_steps: per-episode step cap, for envs without a time limit.
        record_screenshots: keep each step's screenshot (observation ``screenshot`` or ``render()``), so
            saved trajectories get PNGs.
        progress: show a tqdm bar (steps taken across all slots).
        save_dir: save every finished trajectory here (atomic folders; see ``gui_envs.schema.trajectory``).
        record_privileged: keep each step's privileged facts (target box, reference answer; see
            :mod:`gui_envs.schema.privileged`) in ``Step.privileged``, for rewards and credit assignment such as SCA.
            Never shown to the agent.
        crash_retries: how many times :func:`collect_groups` runs a wave of episodes again when an env crashed in
            it (:class:`~gui_envs.schema.errors.EnvCrashedError`: a browser that died or stopped answering; its
            ``reset`` relaunches it). The wave's unfinished episodes are dropped, never returned half-played; past
            this many crashes in one wave the error propagates.
    """

    max_steps: int = 50
    record_screenshots: bool = False
    record_privileged: bool = True
    progress: bool = True
    save_dir: str | Path | None = None
    crash_retries: int = 2

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.crash_retries < 0:
            raise ValueError(f"crash_retries must be >= 0, got {self.crash_retries}")


def collect_episodes(
    envs: Sequence[gym.Env[Any, Any]] | gym.vector.VectorEnv | EnvWorkers,
    agent: Agent,
    seeds: Sequence[int | None],
    config: RolloutConfig | None = None,
    metadata: Sequence[dict[str, Any]] | None = None,
) -> list[Trajectory]:
    """Run one episode per env slot (``len(seeds)`` slots) and return the trajectories in slot order.

    Args:
        envs: a list of envs, a gymnasium vector env, or prepared :class:`EnvWorkers`.
        agent: anything with ``act_batch(observations, histories=...)`` (or ``act``).
        seeds: one reset seed per slot.
        config: collection options.
        metadata: extra trajectory metadata per slot (group ids, ...).
    """
    config = config or RolloutConfig()
    workers = envs if isinstance(envs, EnvWorkers) else make_workers(envs)
    trajs = play(
        workers,
        agent,
        seeds,
        max_steps=config.max_steps,
        record_screenshots=config.record_screenshots,
        record_privileged=config.record_privileged,
        metadata=metadata,
        progress=config.progress,
    )
    if config.save_dir is not None:
        save_trajectories(trajs, config.save_dir)
    return trajs


def collect_groups(
    envs: Sequence[gym.Env[Any, Any]] | gym.vector.VectorEnv | EnvWorkers,
    agent: Agent,
    seeds: Sequence[int],
    group_size: int,
    config: RolloutConfig | None = None,
) -> list[list[Trajectory]]:
    """``group_size`` rollouts from each seed's initial state, scheduled over the env slots in waves.

    Every env slot must run the same env (same id and arguments) for a group to share an initial state.
    Returns one list per seed, in ``seeds`` order; each trajectory's ``metadata["group_id"]`` is
    ``"<env id>/<seed>/<uuid>"`` and ``metadata["group_index"]`` its index in the group.
    """
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    config = config or RolloutConfig()
    workers = envs if isinstance(envs, EnvWorkers) else make_workers(envs)
    run = uuid.uuid4().hex[:8]
    jobs = [(s, k) for s in seeds for k in range(group_size)]
    # Each slot's resets, told ahead: a browser env prepares its next one while the others play (gui_envs.schema.upcoming).
    workers.announce(group_plans(seeds, group_size, workers.num_envs))
    out: dict[int, list[Trajectory]] = {s: [] for s in seeds}
    for start in range(0, len(jobs), workers.num_envs):
        wave = jobs[start : start + workers.num_envs]
        meta = [{"group_id": f"{workers.env_ids[0]}/{s}/{run}", "group_index": k} for s, k in wave]
        for attempt in range(config.crash_retries + 1):
            try:
                trajs = collect_episodes(workers, agent, [s for s, _ in wave], config, meta)
                break
            except EnvCrashedError as err:
                # Every slot of the wave is reset on the next try, the crashed one relaunching its browser; a
                # loaded machine makes a browser miss its 20 s answer now and then, and that should not end a run.
                if attempt == config.crash_retries:
                    raise
                warnings.warn(f"{err} (the wave of {len(wave)} episodes runs again)", RuntimeWarning, stacklevel=2)
        for (s, _), traj in zip(wave, trajs, strict=True):
            out[s].append(traj)
    return [out[s] for s in seeds]


def group_plans(seeds: Sequence[int], group_size: int, num_envs: int) -> list[list[int]]:
    """The reset seeds each of ``num_envs`` slots gets, in order, when :func:`collect_groups` schedules
    ``group_size`` rollouts of each seed over them in waves (slot ``i`` runs job ``i`` of every wave).

    >>> group_plans([7, 9], 3, 4)
    [[7, 9], [7, 9], [7], [9]]
    """
    jobs = [s for s in seeds for _ in range(group_size)]
    return [jobs[i::num_envs] for i in range(num_envs)]


# ----- env workers -------------------------------------------------------------------------------------

class VectorWorkers(EnvWorkers):
    """Slots backed by a gymnasium vector env (sync or async), stepped together in one ``step`` call.

    Finished slots keep being stepped with a sampled action (the vector env needs a full batch; with
    gymnasium's default ``NEXT_STEP`` autoreset that step resets them) and their results are discarded.
    """

    def __init__(self, env: gym.vector.VectorEnv) -> None:
        if env.metadata.get("autoreset_mode") == gym.vector.AutoresetMode.DISABLED:
            # The filler steps would reach episodes that have ended, which guigym envs refuse (ResetNeededError).
            raise ValueError(
                "VectorWorkers steps finished slots and needs the vector env to reset them: make it with "
                "autoreset_mode=AutoresetMode.NEXT_STEP (the default) or SAME_STEP, not DISABLED"
            )
        self.env = env
        self.num_envs = env.num_envs
        spec = getattr(env, "spec", None)
        self.env_ids = [spec.id if spec is not None else None] * self.num_envs
        self._space = env.single_action_space

    def reset(
        self, seeds: Sequence[int | None], n: int, options: dict[str, Any] | None = None
    ) -> list[tuple[Any, dict[str, Any]]]:
        obs, info = self.env.reset(seed=list(seeds), options=options)
        per_obs = list(gym.vector.utils.iterate(self.env.observation_space, obs))
        return [(per_obs[i], _unbatch_info(info, i)) for i in range(n)]

    def step(self, actions: dict[int, Any]) -> dict[int, StepResult]:
        items = [actions[i] if i in actions else self._space.sample() for i in range(self.num_envs)]
        batch = gym.vector.utils.concatenate(
            self._space, items, gym.vector.utils.create_empty_array(self._space, self.num_envs)
        )
        obs, reward, terminated, truncated, info = self.env.step(batch)
        per_obs = list(gym.vector.utils.iterate(self.env.observation_space, obs))
        return {
            i: (per_obs[i], float(reward[i]), bool(terminated[i]), bool(truncated[i]), _unbatch_info(info, i))
            for i in actions
        }

    def privileged(self, indices: Sequence[int]) -> dict[int, dict[str, Any]]:
        facts = privileged_of_vector(self.env)
        return {i: facts[i] for i in indices}

    def announce(self, plans: Sequence[Sequence[int | None]]) -> None:
        # A sync vector env holds its envs here; an async one's live in other processes (not told).
        for env, plan in zip(getattr(self.env, "envs", ()), plans, strict=False):
            announce(env, plan)

    def close(self) -> None:
        self.env.close()


class RayWorkers(EnvWorkers):
    """Slots backed by Ray actors, each holding one env made from ``(env_id, env_kwargs)``.

    Steps are sent to every active actor before any result is awaited, so the envs step in parallel across
    the Ray cluster (processes on this machine, or other machines). Needs ``pip install 'guigym[ray]'``.
    """

    def __init__(self, env_id: str, num_envs: int, env_kwargs: dict[str, Any] | None = None) -> None:
        if importlib.util.find_spec("ray") is None:
            raise ImportError("backend='ray' needs Ray: pip install 'guigym[ray]'")
        import ray

        if not ray.is_initialized():
            ray.init()
        actor = ray.remote(_EnvActor)
        self._ray = ray
        self.actors = [actor.remote(env_id, dict(env_kwargs or {})) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.env_ids = [env_id] * num_envs

    def reset(
        self, seeds: Sequence[int | None], n: int, options: dict[str, Any] | None = None
    ) -> list[tuple[Any, dict[str, Any]]]:
        return self._ray.get([self.actors[i].reset.remote(seeds[i], options) for i in range(n)])

    def step(self, actions: dict[int, Any]) -> dict[int, StepResult]:
        futures = {i: self.actors[i].step.remote(a) for i, a in actions.items()}
        return dict(zip(futures, self._ray.get(list(futures.values())), strict=True))

    def privileged(self, indices: Sequence[int]) -> dict[int, dict[str, Any]]:
        facts = self._ray.get([self.actors[i].privileged.remote() for i in indices])
        return dict(zip(indices, facts, strict=True))

    def screenshots(self, indices: Sequence[int], observations: Sequence[Any]) -> dict[int, np.ndarray]:
        out = super().screenshots(indices, observations)
        missing = [i for i in indices if i not in out]
        frames = self._ray.get([self.actors[i].render.remote() for i in missing])
        out.update({i: f for i, f in zip(missing, frames, strict=True) if isinstance(f, np.ndarray)})
        return out

    def close(self) -> None:
        for actor in self.actors:
            self._ray.kill(actor)


class GroupWorkers(EnvWorkers):
    """Slots backed by :class:`~gui_envs.multi.GroupEnv` copies of ``group_size`` members each: slots
    ``[g * N, (g + 1) * N)`` are the members of group env ``g``, which share one browser and one prepared start.

    :func:`collect_groups` gives a group's ``N`` rollouts to ``N`` consecutive slots, so when ``num_envs`` is a
    multiple of ``group_size`` every group env's slots reset to one seed together: the first member builds, loads
    and observes the start (prepared in the background when announced), the others copy it. A reset that gives a
    group env's slots different seeds resets them one by one, as separate envs would: the same episodes either way.

    Args:
        env_id: a registered id (every slot runs it with ``env_kwargs``).
        num_envs: slots, a multiple of ``group_size``.
        group_size: members per group env (at least 2).
        env_kwargs: constructor arguments of every member.
        reward: each member's reward wrapper (:func:`gui_envs.reward_wrappers.with_reward`), ``None`` for the env's own.
        reward_kwargs: its arguments.
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        group_size: int,
        env_kwargs: dict[str, Any] | None = None,
        reward: str | None = None,
        reward_kwargs: dict[str, Any] | None = None,
    ) -> None:
        from gui_envs.multi import GroupEnv

        if group_size < 2 or num_envs % group_size:
            raise ValueError(f"num_envs ({num_envs}) must be a multiple of group_size ({group_size}), itself >= 2")
        self.group_size, self.num_envs = group_size, num_envs
        self.groups: list[Any] = []
        try:
            for _ in range(num_envs // group_size):
                self.groups.append(
                    GroupEnv(env_id, group_size, env_kwargs=env_kwargs, reward=reward, reward_kwargs=reward_kwargs)
                )
        except BaseException:
            self.close()
            raise
        self.slots = [g.envs[a] for g in self.groups for a in g.possible_agents]
        self.env_ids = [env_id] * num_envs

    def reset(
        self, seeds: Sequence[int | None], n: int, options: dict[str, Any] | None = None
    ) -> list[tuple[Any, dict[str, Any]]]:
        out: list[tuple[Any, dict[str, Any]]] = []
        for g, group in enumerate(self.groups):
            slots = range(g * self.group_size, min((g + 1) * self.group_size, n))
            together = {seeds[i] for i in slots}
            if len(slots) and len(together) == 1 and seeds[slots[0]] is not None:
                agents = group.possible_agents[: len(slots)]
                out.extend(group.reset_members(seeds[slots[0]], options, agents).values())
            else:
                out.extend(self.slots[i].reset(seed=seeds[i], options=options) for i in slots)
        return out

    def step(self, actions: dict[int, Any]) -> dict[int, StepResult]:
        # A group env's members step together (GroupEnv.step_members: one browser, their waits overlapped).
        out: dict[int, StepResult] = {}
        for g, group in enumerate(self.groups):
            mine = {i: a for i, a in actions.items() if i // self.group_size == g}
            if mine:
                agents = {i: group.possible_agents[i % self.group_size] for i in mine}
                done = group.step_members({agents[i]: a for i, a in mine.items()})
                out.update({i: done[agents[i]] for i in mine})
        return {i: out[i] for i in actions}

    def privileged(self, indices: Sequence[int]) -> dict[int, dict[str, Any]]:
        return {i: privileged_of(self.slots[i]) for i in indices}

    def announce(self, plans: Sequence[Sequence[int | None]]) -> None:
        # The first member of each group env prepares; the others take its starts (GroupEnv.announce).
        for g, group in enumerate(self.groups):
            if g * self.group_size < len(plans):
                group.announce(plans[g * self.group_size])

    def close(self) -> None:
        for group in self.groups:
            group.close()


class _EnvActor:
    """The env inside one Ray actor process; info is made picklable-safe by the env itself."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any]) -> None:
        import gui_envs  # noqa: F401  (registers the ids in the actor process)

        self.env = gym.make(env_id, **env_kwargs)

    def reset(self, seed: int | None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward), bool(terminated), bool(truncated), info

    def render(self) -> Any:
        return self.env.render() if self.env.render_mode == "rgb_array" else None

    def privileged(self) -> dict[str, Any]:
        return privileged_of(self.env)


def make_workers(
    envs: str | Sequence[gym.Env[Any, Any]] | gym.vector.VectorEnv | EnvWorkers,
    backend: str = "local",
    num_envs: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
) -> EnvWorkers:
    """Env slots from a list of envs, a vector env, or an env id (``num_envs`` copies, local or Ray).

    Args:
        envs: envs, a vector env, ready workers, or a registered id.
        backend: ``"local"`` (this process) or ``"ray"`` (one Ray actor per env; ``envs`` must be an id).
        num_envs: copies to make when ``envs`` is an id.
        env_kwargs: constructor arguments when ``envs`` is an id.
    """
    if isinstance(envs, EnvWorkers):
        return envs
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if isinstance(envs, str):
        if backend == "ray":
            return RayWorkers(envs, num_envs or 1, env_kwargs)
        return ListWorkers([gym.make(envs, **(env_kwargs or {})) for _ in range(num_envs or 1)])
    if backend == "ray":
        raise ValueError("backend='ray' makes its envs inside the actors: pass the env id and env_kwargs")
    if isinstance(envs, gym.vector.VectorEnv):
        return VectorWorkers(envs)
    return ListWorkers(list(envs))


def _unbatch_info(info: dict[str, Any], i: int) -> dict[str, Any]:
    """Slot ``i``'s part of a vector env's info (keys whose ``_key`` mask says slot ``i`` has them)."""
    out = {}
    for key, value in info.items():
        if key.startswith("_"):
            continue
        mask = info.get(f"_{key}")
        if mask is not None and not bool(mask[i]):
            continue
        out[key] = _unbatch_info(value, i) if isinstance(value, dict) else value[i]
    return out
