"""The task core without a browser: the three judges, the oracle's bookkeeping and one episode of an env composed
the way the task envs are (a TaskPool, judge_step, next_oracle_action, privileged_facts)."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import guarded_reset, guarded_step
from gui_envs.tasks import (
    AnswerTask,
    CanBeInfeasible,
    Do,
    InfeasibleTask,
    Oracle,
    OracleError,
    PlanStep,
    StateTask,
    Task,
    UnknownTaskError,
    check_task,
)
from gui_envs.tasks.env import (
    TASK_RESET_OPTIONS,
    TaskPool,
    judge_step,
    next_oracle_action,
    privileged_facts,
    task_info,
)

REGISTRY: dict[str, type[Task]] = {}


class Counter:
    """A fake app: a counter, and how often the judge read it."""

    def __init__(self) -> None:
        self.value, self.reads = 0, 0

    def read(self) -> int:
        self.reads += 1
        return self.value


class FakeTask(Task):
    registry = REGISTRY
    state: Counter

    def oracle_plan(self) -> list[PlanStep]:
        return [Do(Action.click(1, 1)), Do(Action.click(2, 2))]


class ReachThree(FakeTask, StateTask):
    name = "fake.reach_three"

    def setup(self) -> str:
        return "Click until the counter shows 3."

    def done(self) -> bool:
        return self.state.read() >= 3


class AskValue(FakeTask, AnswerTask):
    name = "fake.ask_value"

    def setup(self) -> str:
        self.reference_answer = "12 hours"
        return "How long?"


class Impossible(FakeTask, InfeasibleTask):
    name = "fake.impossible"

    def setup(self) -> str:
        return "Delete the moon."

    def looked(self) -> bool:
        return "/moon" in self.visited


class MaybeThree(FakeTask, CanBeInfeasible, StateTask):
    name = "fake.maybe_three"

    def setup(self) -> str:
        self.draw_feasible()
        return "Click until the counter shows 3."

    def done(self) -> bool:
        return self.state.read() >= 3

    def looked(self) -> bool:
        return "/counter" in self.visited


def make(cls: type[Task]) -> Task:
    return cls(Counter(), np.random.default_rng(0))


def test_state_task_rule() -> None:
    task = make(ReachThree)
    assert task.evaluate(None) == 0.0 and not task.finished(0.0)
    task.state.value = 3
    assert task.evaluate(None) == 1.0 and task.finished(1.0) and task.is_done()
    # Giving up on a task that is done is still a failure: the stop says the agent does not claim success.
    assert task.evaluate(Action.stop(status="infeasible")) == 0.0
    assert task.evaluate(Action.stop()) == 1.0


def test_answer_task_rule() -> None:
    task = make(AskValue)
    assert task.evaluate(None) == 0.0 and not task.finished(0.0)  # answer tasks only end on stop
    assert task.evaluate(Action.stop(answer="12 h")) == 1.0
    assert task.evaluate(Action.stop(answer="12 minutes")) == 0.0
    assert task.evaluate(Action.stop(answer="12 hours", status="failure")) == 0.0


def test_infeasible_task_rule() -> None:
    task = make(Impossible)
    assert task.evaluate(Action.stop(status="infeasible")) == 0.0  # did not look
    task.visited.append("/moon")
    assert task.evaluate(Action.stop(status="infeasible")) == 1.0
    assert task.evaluate(Action.stop()) == 0.0


def test_a_task_that_can_be_infeasible_judges_by_its_seed() -> None:
    tasks = [MaybeThree(Counter(), np.random.default_rng(seed)) for seed in range(200)]
    assert 60 <= sum(t.feasible for t in tasks) <= 140  # about half, drawn by the seed
    assert len({t.instruction for t in tasks}) == 1  # the words never tell
    feasible, infeasible = next(t for t in tasks if t.feasible), next(t for t in tasks if not t.feasible)
    for task in (feasible, infeasible):
        task.visited.append("/counter")
    # Feasible: the state judge, and an infeasible stop fails even after the look.
    assert feasible.evaluate(Action.stop(status="infeasible")) == 0.0
    feasible.state.value = 3
    assert feasible.evaluate(None) == 1.0 and feasible.finished(1.0)
    # Infeasible: only the look and the infeasible stop pass; the episode never ends without a stop.
    assert infeasible.evaluate(Action.stop(status="infeasible")) == 1.0
    assert infeasible.evaluate(Action.stop()) == 0.0 and not infeasible.finished(0.0)
    infeasible.visited.clear()
    assert infeasible.evaluate(Action.stop(status="infeasible")) == 0.0


def test_registry_and_unknown_names() -> None:
    assert set(REGISTRY) == {"fake.reach_three", "fake.ask_value", "fake.impossible", "fake.maybe_three"}
    assert check_task("fake.ask_value", REGISTRY, "fake") is AskValue
    with pytest.raises(UnknownTaskError, match="Did you mean fake.ask_value"):
        check_task("fake.ask_valeu", REGISTRY, "fake")
    with pytest.raises(ValueError, match="two task templates"):
        type("Again", (FakeTask, StateTask), {"name": "fake.ask_value"})


class Finder(PlanStep):
    """Clicks the element ``name`` of the view (a dict name -> bbox), scrolling once when it is missing."""

    def __init__(self, name: str) -> None:
        self.name, self.scrolled = name, False

    def __call__(self, view: Any, screen: tuple[int, int]) -> tuple[Action, bool]:
        if self.name in view:
            return Action("click", element_id=self.name), True
        if not self.scrolled:
            self.scrolled = True
            return Action.scroll("down"), False
        raise OracleError(f"no {self.name}")


def bbox_of(step: PlanStep, action: Action, view: Any) -> list[int] | None:
    return view.get(action.element_id) if action.element_id else None


def test_oracle_advances_only_on_the_pending_move() -> None:
    oracle = Oracle([Finder("ok"), Finder("save")], bbox_of, "fake")
    view = {"ok": [0, 0, 10, 10]}
    move = oracle.peek(view, (100, 100))
    assert move.action.element_id == "ok" and move.target_bbox == [0, 0, 10, 10] and move.next_index == 1
    assert oracle.peek({}, (100, 100)) is move  # cached until a step is taken
    oracle.after_step(Action.click(5, 5), None)  # another action: the plan stays
    assert oracle.index == 0
    oracle.peek(view, (100, 100))
    oracle.after_step(move.action, "the click failed")  # the right action, but it failed
    assert oracle.index == 0
    oracle.peek(view, (100, 100))
    oracle.after_step(move.action, None)
    assert oracle.index == 1
    scroll = oracle.peek({}, (100, 100))  # "save" is off-screen: scroll first, same step again
    assert scroll.action.type == "scroll" and scroll.next_index == 1 and scroll.target_bbox is None
    oracle.after_step(scroll.action, None)
    failed = oracle.peek({}, (100, 100))
    assert failed.action == Action.stop(status="failure") and oracle.error == "no save"


class FakeEnv(gym.Env[dict[str, Any], Any]):
    """A task env over a counter, composed like GuiWebEnv and GuiAndroidEnv: every click adds one."""

    family, registry, rng_salt = "fake", REGISTRY, 3
    reset_options = TASK_RESET_OPTIONS
    group_kind, group_names, group_attr, group_prefix = "", (), "", ""
    screen_size = (10, 10)

    def __init__(self) -> None:
        self.counter = Counter()
        self.pool = TaskPool(type(self), (), sorted(REGISTRY))
        self.task_names = self.pool.names
        self.max_steps, self.invalid_action_penalty = 4, 0.5
        self.observation_space = spaces.Dict({"value": spaces.Discrete(100), "step": spaces.Discrete(5)})
        self.task: Task | None = None
        self.oracle: Oracle | None = None
        self.task_seed, self._steps = 0, 0

    @guarded_reset
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        cls, self.task_seed = self.pool.draw(self.np_random, dict(options or {}))
        self._steps, self.counter.value = 0, 0
        self.task = cls(self.counter, np.random.default_rng([self.task_seed, self.rng_salt]))
        self.oracle = Oracle(self.task.oracle_plan(), lambda step, action, view: None, cls.name)
        self.task.visited.append(self._location())
        return self._obs(), task_info(self.task, self.task_seed, self.task.instruction, None, 0.0)

    @guarded_step
    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        assert self.task is not None
        self._steps += 1
        parsed, error = coerce_action(action)
        if parsed is not None and parsed.type != "stop":
            if parsed.type == "click":
                self.counter.value += 1
            else:
                error = "only clicks"
            self.task.visited.append(self._location())
        reward, terminated, truncated, info = judge_step(
            self.task, self.oracle, parsed, error, self._steps, self.max_steps, self.invalid_action_penalty,
            self.task_seed, self.task.instruction,
        )
        return self._obs(), reward, terminated, truncated, info

    def oracle_action(self) -> Action:
        return next_oracle_action(self.oracle, {}, self.screen_size)

    def privileged(self) -> dict[str, Any]:
        return privileged_facts(self.task, self.oracle, {}, self.screen_size)

    def _location(self) -> str:
        return f"/count/{self.counter.value}"

    def _obs(self) -> dict[str, Any]:
        return {"value": self.counter.value, "step": min(self._steps, self.max_steps)}


def test_task_env_episode_judges_once_per_step() -> None:
    env = FakeEnv()
    with pytest.raises(ResetNeededError):
        env.step(Action.click(1, 1))
    assert isinstance(ResetNeededError("x"), gym.error.ResetNeeded)
    obs, info = env.reset(options={"task": "fake.reach_three", "seed": 5})
    assert obs == {"value": 0, "step": 0} and info["task"] == "fake.reach_three" and info["task_seed"] == 5
    reads = env.counter.reads
    _, reward, terminated, truncated, info = env.step(Action.scroll("down"))
    assert reward == -0.5 and info["action_error"] == "only clicks" and not terminated
    assert env.counter.reads == reads + 1  # evaluate() once, no second done() for the episode end
    for _ in range(2):
        _, reward, terminated, _, _ = env.step(Action.click(1, 1))
    assert (reward, terminated) == (0.0, False)
    _, reward, terminated, truncated, info = env.step(Action.click(1, 1))
    assert (reward, terminated, truncated, info["success"]) == (1.0, True, False, True)
    assert env.task is not None and env.task.visited == [f"/count/{i}" for i in (0, 0, 1, 2, 3)]
    with pytest.raises(UnknownTaskError):
        env.reset(options={"task": "fake.reach_thre"})


def test_task_env_oracle_is_lazy_and_followed() -> None:
    env = FakeEnv()
    env.reset(options={"task": "fake.ask_value", "seed": 0})
    assert env.oracle is not None and env.oracle._pending is None  # reset resolved nothing
    assert env.privileged() == {"reference_answer": "12 hours", "target_bbox": None, "oracle_error": None}
    env.step(env.oracle_action())
    env.step(env.oracle_action())
    assert env.oracle.index == 2 and env.oracle_action() == Action.stop()
    _, reward, terminated, truncated, _ = env.step(Action.stop(answer="13"))
    assert (reward, terminated) == (0.0, True)


def test_pool_draws_from_a_copy_of_the_generator_what_reset_draws_and_leaves_it_alone() -> None:
    env, twin = FakeEnv(), FakeEnv()
    env.reset(seed=4)
    twin.reset(seed=4)
    for _ in range(3):
        cls, seed = env.pool.draw(copy.deepcopy(env.np_random), {})  # how GuiWebEnv guesses its next episode
        _, info = env.reset()
        _, twin_info = twin.reset()  # never asked for a guess: the draws must not depend on it
        assert (info["task"], info["task_seed"]) == (cls.name, seed) == (twin_info["task"], twin_info["task_seed"])


def test_task_pool_groups_are_checked() -> None:
    class Grouped(FakeEnv):
        group_kind, group_names = "counters", ("fake",)

    def group_of(task: type[Task]) -> str:
        return task.name.split(".")[0]

    assert TaskPool(Grouped, ("fake",), None, group_of).names == sorted(REGISTRY)
    with pytest.raises(ValueError, match=r"unknown counters \['phony'\]; choose from \['fake'\]"):
        TaskPool(Grouped, ("phony",), None, group_of)
