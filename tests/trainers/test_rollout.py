"""Rollout collection: active masks, one batched call per step, groups, vector envs, the Trajectory format."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import gui_envs  # noqa: F401
from agents.base import AgentOutput
from gui_envs.schema.errors import EnvCrashedError
from gui_envs.schema.trajectory import load_trajectories
from trainers.rollout import RolloutConfig, VectorWorkers, collect_episodes, collect_groups


class EchoEnv(gym.Env[dict[str, Any], str]):
    """Says a number each step; answering it earns 1. The episode lasts ``1 + seed % 3`` steps."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict({"text": spaces.Text(32)})
        self.action_space = spaces.Text(32)
        self.t = 0
        self.length = 1

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        self.length = 1 + (seed or 0) % 3
        return {"text": "0"}, {"task": "echo"}

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        reward = float(action == str(self.t))
        self.t += 1
        done = self.t >= self.length
        return {"text": str(self.t)}, reward, done, False, {"success": done}


class EchoAgent:
    name = "echo"

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []
        self.histories: list[list[list[str]]] = []

    def act_batch(
        self, observations: Sequence[Any], histories: Sequence[Sequence[str]] | None = None
    ) -> list[AgentOutput]:
        self.batch_sizes.append(len(observations))
        self.histories.append([list(h) for h in histories or []])
        return [
            AgentOutput(
                action=o["text"],
                text=o["text"],
                token_ids=[1, 2],
                logprobs=[-0.1, -0.2],
                extra={"prompt": "p"},
            )
            for o in observations
        ]


def test_one_batched_call_per_step_and_active_masks(tmp_path: Path) -> None:
    agent = EchoAgent()
    trajs = collect_episodes(
        [EchoEnv() for _ in range(3)],
        agent,
        seeds=[0, 1, 2],
        config=RolloutConfig(progress=False, save_dir=tmp_path),
    )
    # Episode lengths 1, 2, 3: the batch shrinks as slots finish.
    assert agent.batch_sizes == [3, 2, 1]
    assert [len(t.steps) for t in trajs] == [1, 2, 3]
    assert agent.histories[2] == [["0", "1"]]
    assert all(t.success and t.total_reward == len(t.steps) for t in trajs)
    step = trajs[2].steps[1]
    assert (step.prompt, step.output_text, step.token_ids, step.logprobs) == ("p", "1", [1, 2], [-0.1, -0.2])
    loaded = {t.id: t for t in load_trajectories(tmp_path)}
    assert loaded[trajs[2].id].steps[1].to_record() == step.to_record()


def test_groups_are_scheduled_in_waves_over_the_slots() -> None:
    agent = EchoAgent()
    groups = collect_groups(
        [EchoEnv(), EchoEnv()], agent, seeds=[4, 5], group_size=3, config=RolloutConfig(progress=False)
    )
    assert [len(g) for g in groups] == [3, 3]
    for seed, group in zip([4, 5], groups, strict=True):
        assert {t.seed for t in group} == {seed}
        assert len({t.metadata["group_id"] for t in group}) == 1
        assert sorted(t.metadata["group_index"] for t in group) == [0, 1, 2]


class CrashingEchoEnv(EchoEnv):
    """An :class:`EchoEnv` whose backend dies on its first ``crashes`` second steps (as a browser that stops
    answering does), and comes back on the next reset."""

    def __init__(self, crashes: int) -> None:
        super().__init__()
        self.crashes = crashes
        self.resets = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.resets += 1
        return super().reset(seed=seed, options=options)

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.t == 1 and self.crashes > 0:
            self.crashes -= 1
            raise EnvCrashedError("the browser stopped answering for 20 s; env.reset() relaunches it")
        return super().step(action)


def test_a_crash_mid_wave_runs_the_wave_again_and_returns_only_whole_episodes() -> None:
    envs = [EchoEnv(), CrashingEchoEnv(crashes=1)]
    with pytest.warns(RuntimeWarning, match="the wave of 2 episodes runs again"):
        groups = collect_groups(envs, EchoAgent(), seeds=[2], group_size=2, config=RolloutConfig(progress=False))
    # Seed 2: three-step episodes; the crash came at the second step of the first try, and no half-played episode
    # is returned.
    assert [len(t.steps) for t in groups[0]] == [3, 3] and all(t.success for t in groups[0])
    assert envs[1].resets == 2
    # Past crash_retries the crash is the caller's.
    with pytest.raises(EnvCrashedError):
        collect_groups([CrashingEchoEnv(crashes=2)], EchoAgent(), seeds=[2], group_size=1,
                       config=RolloutConfig(progress=False, crash_retries=1))  # fmt: skip
    with pytest.raises(ValueError, match="crash_retries"):
        RolloutConfig(crash_retries=-1)


def test_max_steps_truncates_the_record() -> None:
    trajs = collect_episodes(
        [EchoEnv()], EchoAgent(), seeds=[2], config=RolloutConfig(max_steps=2, progress=False)
    )
    assert len(trajs[0].steps) == 2 and trajs[0].success is False


def test_vector_env_backend() -> None:
    venv = gym.vector.SyncVectorEnv([EchoEnv for _ in range(3)])
    agent = EchoAgent()
    trajs = collect_episodes(
        VectorWorkers(venv), agent, seeds=[0, 1, 2], config=RolloutConfig(progress=False)
    )
    assert [len(t.steps) for t in trajs] == [1, 2, 3]
    assert agent.batch_sizes == [3, 2, 1]
    assert all(t.total_reward == len(t.steps) for t in trajs)


class Mover:
    """Always moves right (Maze navigate's action 0)."""

    def act(self, observation: Any) -> AgentOutput:
        return AgentOutput(action=0)


def test_vector_backend_on_guigym_envs_needs_autoreset() -> None:
    # A guigym env refuses a step after its episode ended; the vector env's autoreset keeps the filler steps of
    # finished slots off ended episodes (NEXT_STEP resets instead of stepping, SAME_STEP resets right after).
    def make() -> gym.Env[Any, Any]:
        return gym.make("Maze-v0", mode="navigate", size=2, max_steps=4)

    for mode in (gym.vector.AutoresetMode.NEXT_STEP, gym.vector.AutoresetMode.SAME_STEP):
        venv = gym.vector.SyncVectorEnv([make for _ in range(4)], autoreset_mode=mode)
        for _ in range(2):
            trajs = collect_episodes(VectorWorkers(venv), Mover(), seeds=range(4), config=RolloutConfig(progress=False))
            assert 1 <= min(len(t.steps) for t in trajs) and max(len(t.steps) for t in trajs) <= 4
    disabled = gym.vector.SyncVectorEnv([make], autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    with pytest.raises(ValueError, match="autoreset_mode"):
        VectorWorkers(disabled)


def test_tiny_model_group_on_sudoku(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from agents.hf_agent import HFAgent
    from tests.agents.tiny_models import build_causal_lm

    agent = HFAgent(build_causal_lm(tmp_path / "model"), max_new_tokens=8, seed=0)
    envs = [gym.make("Sudoku-v0", blanks=5) for _ in range(4)]
    (group,) = collect_groups(
        envs, agent, seeds=[7], group_size=4, config=RolloutConfig(progress=False, save_dir=tmp_path / "runs")
    )
    assert len(group) == 4
    for traj in group:
        (step,) = traj.steps
        assert step.token_ids and len(step.token_ids) == len(step.logprobs)
        assert "Sudoku" in step.prompt and step.output_text is not None and traj.success is False
    assert len(load_trajectories(tmp_path / "runs")) == 4


def test_ray_backend(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from trainers.rollout import RayWorkers

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        workers = RayWorkers("Maze-v0", 2, {"mode": "navigate", "size": 5})

        class Up:
            name = "up"

            def act_batch(self, observations: Sequence[Any]) -> list[AgentOutput]:
                return [AgentOutput(action=int(np.int64(0))) for _ in observations]

        trajs = collect_episodes(
            workers, Up(), seeds=[0, 1], config=RolloutConfig(max_steps=3, progress=False, save_dir=tmp_path)
        )
        assert [len(t.steps) for t in trajs] == [3, 3]
        assert all(t.env_id == "Maze-v0" for t in trajs)
        assert len(load_trajectories(tmp_path)) == 2
        workers.close()
    finally:
        ray.shutdown()


class PlannedEchoEnv(EchoEnv):
    """An EchoEnv that records what it is announced and the resets it gets (gui_envs.schema.upcoming)."""

    def __init__(self) -> None:
        super().__init__()
        self.announced: list[list[int | None]] = []
        self.resets: list[int | None] = []

    def announce(self, resets: Any) -> None:
        self.announced.append(list(resets))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self.resets.append(seed)
        return super().reset(seed=seed, options=options)


def test_collect_groups_announces_each_slots_resets_in_the_order_it_gets_them() -> None:
    envs = [PlannedEchoEnv() for _ in range(3)]
    collect_groups(envs, EchoAgent(), [4, 5], 2, RolloutConfig(progress=False))
    # Jobs 4, 4, 5 | 5: slot i runs job i of each wave, and was told so before the first wave.
    assert [e.announced for e in envs] == [[[4, 5]], [[4]], [[5]]]
    assert [e.resets for e in envs] == [[4, 5], [4], [5]]
