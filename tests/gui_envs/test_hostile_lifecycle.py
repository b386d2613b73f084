"""Hostile callers against every env family: only the documented errors ever leave ``step`` and ``reset``.

Issue 23's probing round, as a test. For one or two ids of each family (grid, offline, web, phone, MiniWoB, the
grounding envs and their ``-Box-v0`` ids, the PettingZoo group) it drives malformed actions (non-arrays into Box
ids, 5,000-deep nesting, objects whose ``__repr__`` / ``__eq__`` / ``__getattribute__`` raise, 1 MB strings, NaN
and inf), steps after the episode ended, steps from 4 threads, bad reset options, unknown tasks and calls after
``close``, and checks the rules of :mod:`gui_envs.schema.lifecycle`: a malformed action is an ``action_error`` no-op with a
message of at most ``MAX_ERROR_CHARS``; ``step`` raises only ``ResetNeededError`` (no episode running) and
``EnvClosedError`` (closed); the browser survives (the oracle still solves an episode afterwards) and after
``close`` no Chromium process of the env is left. One env per family serves all its checks; browser envs draw few
hypothesis examples.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import psutil
import pytest
from gymnasium.envs.registration import load_env_creator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gui_envs
from gui_envs.browser.observation import parse_elements
from gui_envs.schema.actions import Action
from gui_envs.schema.errors import MAX_ERROR_CHARS, EnvClosedError, ResetNeededError, UnknownTaskError
from gui_envs.schema.lifecycle import ERROR_KEYS
from gui_envs.schema.privileged import privileged_of
from tests.gui_envs.crash_strategies import hostile_actions
from tests.process_helpers import alive

DEPTH = 5_000
MEGABYTE = 1_000_000


def _deep(leaf: Any, wrap: Callable[[Any], Any]) -> Any:
    for _ in range(DEPTH):
        leaf = wrap(leaf)
    return leaf


class Hostile:
    """Every dunder a careless env might call raises; so does reading any other attribute (``.point``, ``.get``)."""

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ raised")

    def __str__(self) -> str:
        raise RuntimeError("__str__ raised")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ raised")

    def __hash__(self) -> int:
        return 7

    def __len__(self) -> int:
        raise RuntimeError("__len__ raised")

    def __iter__(self) -> Iterator[Any]:
        raise RuntimeError("__iter__ raised")

    def __index__(self) -> int:
        raise ValueError("__index__ raised")

    def __float__(self) -> float:
        raise RuntimeError("__float__ raised")

    def __bool__(self) -> bool:
        raise RuntimeError("__bool__ raised")

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("__"):
            return object.__getattribute__(self, name)
        raise RuntimeError(f"attribute {name} raised")


#: Malformed on every env (each is an error no-op). The text-action grounding envs get the first ``QUICK`` (each of
#: their steps costs a reset, and their parsing is the one every text env shares); everything else gets them all.
CATALOGUE: list[Any] = [
    _deep([], lambda x: [x]),
    Hostile(),
    "x" * MEGABYTE,
    [float("nan"), float("nan")],
    None,
    '{"type": "type", "text": "' + "x" * MEGABYTE + '"}',
    np.array([1.0, 2.0, 3.0]),
    "[" * DEPTH + "]" * DEPTH,
    _deep({}, lambda x: {"a": x}),
    [[1, 2], [3]],
    b"\xff" * MEGABYTE,
    np.array([np.inf, 1.0]),
    float("nan"),
    10**400,
    -1,
    {"type": "click", "point": [10**400, 1]},
    {"type": "click", "point": Hostile()},
    {"action": "click", "point": [float("nan"), 1]},
    np.array([Hostile(), Hostile()], dtype=object),
    np.zeros((2, 2, 2)),
    {"type": "stop", "answer": Hostile()},
    {Hostile(): 1},
    [0.5] * MEGABYTE,
    object(),
]
QUICK = 10


@dataclass(frozen=True)
class Family:
    """One id under test and what the test needs to know about it."""

    env_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    task: str | None = None  # the ``task`` reset option, for envs that take one
    browser: bool = False
    one_step: bool = False

    @property
    def label(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in self.kwargs.items())
        return self.env_id + (f"[{extra}]" if extra else "")


FAMILIES = [
    Family("Maze-v0", {"size": 4}, one_step=True),
    Family("Maze-v0", {"mode": "navigate", "size": 3}),
    Family("Sudoku-v0", one_step=True),
    Family("Arc-v0", one_step=True),
    Family("ClickGrid-v0", one_step=True),
    Family("ClickBox-v0", one_step=True),
    Family("GuiOffline-v0", one_step=True),  # ScreenSpot: one recorded step per episode
    Family("GuiOffline-v0", {"dataset": "androidcontrol"}),
    Family("GuiWeb-Shop-v0", task="shop.open_wishlist", browser=True),
    Family("GuiAndroid-Clock-v0", task="clock.start_stopwatch", browser=True),
    Family("GuiWeb-MiniWoB-click-test-v0", browser=True),
    Family("GuiWebGround-v0", browser=True, one_step=True),
    Family("GuiWebGround-Box-v0", browser=True, one_step=True),
    Family("GuiAndroidGround-v0", browser=True, one_step=True),
    Family("GuiAndroidGround-Box-v0", browser=True, one_step=True),
]


def _needs_browser(family: Family) -> Any:
    if not family.browser:
        return pytest.param(family, id=family.label)
    return pytest.param(family, id=family.label, marks=pytest.mark.skipif(not _has_chromium(), reason="no Chromium"))


def _has_chromium() -> bool:
    try:
        import playwright  # noqa: F401

        from gui_envs.browser.chromium import find_chromium

        find_chromium()
    except Exception:  # noqa: BLE001 - no playwright, or no browser on this machine
        return False
    return True


# ----- helpers ----------------------------------------------------------------------------------------------


def _chromium_children() -> set[int]:
    out = set()
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.name().startswith(("chrom", "headless_shell")) and proc.status() != psutil.STATUS_ZOMBIE:
                out.add(proc.pid)
        except psutil.NoSuchProcess:
            continue
    return out


def _browser_tree(env: gym.Env[Any, Any]) -> frozenset[int]:
    """PIDs of the env's own Chromium (driver, browser and children), empty when it runs none."""
    base = env.unwrapped
    holder = getattr(base, "_browser", None) or getattr(getattr(base, "backend", None), "_browser", None)
    session = getattr(holder, "session", None)
    return session.process_tree if session is not None else frozenset()


def _from_threads(call: Callable[[], Any], n: int = 4) -> list[Any]:
    """What ``call`` returned or raised in each of ``n`` threads started together."""
    outcomes: list[Any] = []
    barrier = threading.Barrier(n)

    def worker() -> None:
        barrier.wait()
        try:
            outcomes.append(call())
        except BaseException as exc:  # noqa: BLE001 - the test inspects whatever came out
            outcomes.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(outcomes) == n, "a thread is still stuck in step()"
    return outcomes


def _check_result(result: Any) -> dict[str, Any]:
    assert isinstance(result, tuple) and len(result) == 5
    info = result[4]
    for key in ERROR_KEYS:
        value = info.get(key)
        assert value is None or (isinstance(value, str) and len(value) <= MAX_ERROR_CHARS), (key, len(value))
    return info


def _reset(env: gym.Env[Any, Any], family: Family, seed: int | None = None) -> Any:
    options = {"task": family.task, "seed": seed or 0} if family.task else None
    return env.reset(seed=seed, options=options)


def _solving_action(env: gym.Env[Any, Any], obs: Any) -> Any:
    """The next action of a solution: the env's oracle (a ``-Box-v0`` id's pixels normalised to ``[-1, 1]``), or
    MiniWoB click-test's button."""
    base = env.unwrapped
    if hasattr(base, "oracle_action"):
        action = base.oracle_action()
        if env.action_space is not base.action_space and isinstance(env.action_space, gym.spaces.Box):
            low, high = base.action_space.low, base.action_space.high
            return ((action - low) / (high - low) * 2 - 1).astype(np.float32)
        return action
    button = next((e for e in parse_elements(obs["elements"]) if e["text"] == "Click Me!"), None)
    # On a loaded machine the observation can be taken before the task's page drew its button (seen once in a
    # full run on 2 busy cores): wait and look again, as an agent would.
    return Action.click_element(button["id"]) if button is not None else Action("wait")


def _solve(env: gym.Env[Any, Any], family: Family) -> tuple[float, dict[str, Any]]:
    """Reset and play a solution to the end; the return and the last info."""
    obs, _ = _reset(env, family, seed=1)
    total = 0.0
    for _ in range(40):
        obs, reward, terminated, truncated, info = env.step(_solving_action(env, obs))
        total += float(reward)
        if terminated or truncated:
            return total, info
    raise AssertionError("the solution did not end the episode")


# ----- the registry: every id guards its life cycle -------------------------------------------------------------


@pytest.mark.parametrize("env_id", gui_envs.guigym_env_ids())
def test_every_registered_env_guards_reset_step_and_close(env_id: str) -> None:
    spec = gym.spec(env_id)
    if spec.entry_point == "gui_envs.tasks.sb3_grounding:make_box_ground":
        spec = gym.spec(spec.kwargs["base_id"])
    cls = load_env_creator(spec.entry_point)
    for method in ("reset", "step", "close"):
        assert getattr(getattr(cls, method), "lifecycle_guard", None) == method, f"{cls.__name__}.{method}"
    assert not spec.order_enforce  # the env raises its own ResetNeededError before the first reset


# ----- one env per family, every hostile call ------------------------------------------------------------------


@pytest.fixture(scope="module", params=[_needs_browser(f) for f in FAMILIES])
def family_env(request: pytest.FixtureRequest) -> Iterator[tuple[Family, gym.Env[Any, Any], set[int]]]:
    family: Family = request.param
    before = _chromium_children()
    env = gym.make(family.env_id, **family.kwargs)
    try:
        yield family, env, before
    finally:
        env.close()


@pytest.mark.parametrize("family", [_needs_browser(f) for f in FAMILIES])
def test_step_before_reset_and_bad_reset_options(family: Family) -> None:
    env = gym.make(family.env_id, **family.kwargs)  # no browser starts before the first reset
    try:
        _step_before_reset_and_bad_options(env, family)
    finally:
        env.close()


def _step_before_reset_and_bad_options(env: gym.Env[Any, Any], family: Family) -> None:
    with pytest.raises(ResetNeededError, match="reset"):
        env.step(CATALOGUE[0])
    for options in ("a string", ["task"], 5):
        with pytest.raises(TypeError, match="options"):
            env.reset(options=options)
    if family.task is not None:
        with pytest.raises(UnknownTaskError, match="Did you mean"):
            env.reset(options={"task": family.task + "x"})
    else:  # an env without a task option says it takes none, instead of ignoring the typo
        with pytest.raises(ValueError, match="reset option 'task'"):
            env.reset(options={"task": "typo"})
    with pytest.raises(ValueError, match="reset option"):
        env.reset(options={Hostile(): 1})
    with pytest.raises((TypeError, ValueError), match="seed"):
        env.reset(options={"seed": "three"})
    # A refused reset changed nothing; no episode was ever started.
    with pytest.raises(ResetNeededError):
        env.step(CATALOGUE[0])


def test_hostile_actions_are_capped_no_ops(family_env: tuple[Family, gym.Env[Any, Any], set[int]]) -> None:
    family, env, _ = family_env
    running = [False]
    calls = [0]

    def drive(action: Any, expect_error: bool) -> None:
        if not running[0]:
            _reset(env, family)
        result = env.step(action)  # nothing but a result may come out
        calls[0] += 1
        info = _check_result(result)
        running[0] = not (result[2] or result[3])
        if expect_error:
            assert any(info.get(k) for k in ("action_error", "parse_error")), info
        if family.one_step:
            assert not running[0]

    text_grounding = family.browser and family.one_step and not family.env_id.endswith("-Box-v0")
    catalogue = CATALOGUE[:QUICK] if text_grounding else CATALOGUE
    for action in catalogue:
        drive(action, expect_error=True)

    obs, _ = _reset(env, family)
    running[0] = True
    width, height = _screen(obs)

    @settings(
        max_examples=5 if family.browser and family.one_step else 15 if family.browser else 60,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.one_of(hostile_actions(width, height), st.sampled_from(catalogue)))
    def fuzz(action: Any) -> None:
        drive(action, expect_error=False)

    fuzz()
    print(f"\n{family.label}: {calls[0]} hostile steps, none raised")
    assert calls[0] >= len(catalogue)


def _screen(obs: Any) -> tuple[int, int]:
    shot = obs.get("screenshot") if isinstance(obs, dict) else obs
    if isinstance(shot, np.ndarray) and shot.ndim == 3:
        return shot.shape[1], shot.shape[0]
    return 640, 480


def test_an_ended_episode_is_never_judged_again(family_env: tuple[Family, gym.Env[Any, Any], set[int]]) -> None:
    family, env, _ = family_env
    obs, _ = _reset(env, family)
    if family.task is not None:
        # Issue 23: after a wrong stop (reward 0) a second stop with the reference answer paid 1.0.
        _, reward, terminated, _, _ = env.step(Action.stop(answer="definitely wrong"))
        assert terminated
        second = Action.stop(answer=str(privileged_of(env).get("reference_answer") or ""))
    else:
        for _ in range(60):
            obs, _, terminated, truncated, _ = env.step(_solving_action(env, obs))
            if terminated or truncated:
                break
        else:
            raise AssertionError("the episode did not end")
        second = CATALOGUE[3] if family.env_id.endswith("-Box-v0") else _solving_action(env, obs)
    for action in (second, CATALOGUE[0], Hostile()):
        with pytest.raises(ResetNeededError, match="ended"):
            env.step(action)


def test_steps_from_four_threads(family_env: tuple[Family, gym.Env[Any, Any], set[int]]) -> None:
    family, env, _ = family_env
    obs, _ = _reset(env, family)
    stop = family.task is not None or "MiniWoB" in family.env_id
    action = Action.stop(answer="no") if stop else _solving_action(env, obs)
    outcomes = _from_threads(lambda: env.step(action))
    results = [o for o in outcomes if isinstance(o, tuple)]
    errors = [o for o in outcomes if not isinstance(o, tuple)]
    assert all(isinstance(e, ResetNeededError) for e in errors), errors
    # The steps run one at a time: none after the one that ended the episode was judged.
    assert sum(bool(r[2] or r[3]) for r in results) <= 1
    if stop or family.one_step:
        assert len(results) == 1 and len(errors) == 3
    for result in results:
        _check_result(result)


def test_the_env_still_works_then_closes_for_good(family_env: tuple[Family, gym.Env[Any, Any], set[int]]) -> None:
    family, env, before = family_env
    total, info = _solve(env, family)
    assert info["success"] or info.get("step_success"), info
    tree = _browser_tree(env)
    if family.browser:
        assert alive(tree), "the env's own Chromium should be running"
    env.close()
    for call in (lambda: env.step(CATALOGUE[4]), lambda: env.reset(), lambda: _reset(env, family, seed=3)):
        with pytest.raises(EnvClosedError, match="close"):
            call()
    env.close()  # closing twice is fine
    deadline = time.monotonic() + 10
    while (alive(tree) or _chromium_children() - before) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert alive(tree) == [], "a Chromium process of the closed env is still running"
    assert not _chromium_children() - before, "a Chromium was launched after close()"


# ----- the PettingZoo group ----------------------------------------------------------------------------------


def test_group_env_lifecycle_and_hostile_actions() -> None:
    from gui_envs.multi.group import GroupConfigError, parallel_env

    group = parallel_env("ClickGrid-v0", n_agents=3)
    try:
        with pytest.raises(ResetNeededError, match="reset"):  # was KeyError: 'agent_0'
            group.step({})
        with pytest.raises(TypeError, match="options"):
            group.reset(options="a string")
        calls = 0
        for start in range(0, len(CATALOGUE), 3):
            group.reset(seed=start)
            hostile = dict(zip(group.possible_agents, CATALOGUE[start : start + 3] + [None] * 3, strict=False))
            _, _, terms, _, infos = group.step(hostile)
            calls += len(hostile)
            assert all(terms.values()) and not group.agents
            for info in infos.values():
                assert info.get("action_error") is None or len(info["action_error"]) <= MAX_ERROR_CHARS
            with pytest.raises(ResetNeededError, match="ended"):  # every agent finished
                group.step(hostile)
        print(f"\nGroupEnv(ClickGrid-v0): {calls} hostile agent actions, none raised")
        group.reset(seed=0)
        with pytest.raises(GroupConfigError, match="one action per live agent"):
            group.step("not a dict")
        group.reset(seed=0)
        outcomes = _from_threads(lambda: group.step(dict.fromkeys(group.possible_agents, "x")))
        assert sum(isinstance(o, tuple) for o in outcomes) == 1
        assert sum(isinstance(o, ResetNeededError) for o in outcomes) == 3
    finally:
        group.close()
    with pytest.raises(EnvClosedError):
        group.reset(seed=0)
    with pytest.raises(EnvClosedError):
        group.step({})


# ----- offline: the step's target is in no observation field --------------------------------------------------


@pytest.mark.parametrize("step_level", [False, True])
def test_offline_observation_holds_no_step_target(step_level: bool) -> None:
    env = gym.make("GuiOffline-v0", dataset="androidcontrol", step_level=step_level)
    obs, _ = env.reset(seed=0)
    while True:
        target = privileged_of(env)["target_action"]
        text = target.get("text")
        if step_level:  # AndroidControl-Low: the low-level instruction is the task
            assert obs["step_instruction"] and obs["instruction"] == obs["step_instruction"]
        else:  # "type fresh milk" would hand a high-level agent the answer
            assert obs["step_instruction"] == ""
            fields = [v for k, v in obs.items() if isinstance(v, str) and k != "instruction"]
            assert not text or all(text not in v for v in fields), (text, obs)
            assert not text or text not in obs["instruction"] or text in env.unwrapped._episode.instruction
        obs, _, terminated, _, _ = env.step(env.unwrapped.oracle_action())
        if terminated:
            break
    env.close()


@pytest.mark.parametrize("env_id", ["ClickBox-v0", "ClickGrid-v0", "Maze-v0", "GuiOffline-v0"])
@pytest.mark.parametrize("bad", [{"options": {"no_such_option": 1}}, {"seed": -1}])
def test_a_failed_first_reset_never_breaks_a_later_episode(env_id: str, bad: dict[str, Any]) -> None:
    # Issue 36: through gym.make, a first reset that raised left gymnasium's passive checker without the reset's
    # data, and the next episode's first step raised TypeError (cannot unpack non-iterable NoneType).
    with gym.make(env_id) as env:
        with pytest.raises((TypeError, ValueError, gym.error.Error)):  # gymnasium's own error for a negative seed
            env.reset(**bad)
        env.reset(seed=0)
        for _ in range(2):
            result = env.step(env.action_space.sample())
            assert len(result) == 5
            if result[2] or result[3]:
                env.reset(seed=1)
