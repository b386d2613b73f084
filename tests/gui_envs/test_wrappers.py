"""Reward wrappers: env checker, hand-computed rewards on grids, navigate and a fake GUI env, bad input."""

from __future__ import annotations

import json
import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401  (registers the ids)
from gui_envs.reward_wrappers import (
    REWARDS,
    BinaryFormatReward,
    BinaryReward,
    ContinuousReward,
    RewardConfigError,
    SweetSpotReward,
    UnknownRewardError,
    with_reward,
)
from gui_envs.schema.actions import Action
from gui_envs.schema.privileged import privileged_of

TAU1 = math.exp(-0.5)  # tau_1 = exp(-1^2 / 2) = 0.606531, zone 1's value under "lower" (K = 4)
TAU2 = math.exp(-2.0)  # tau_2 = exp(-2^2 / 2) = 0.135335
LOG_KEYS = ("binary_reward", "proximity", "sweet_spot", "env_reward", "reward_mode")

# check_env warns that a wrapped env is not the unwrapped one; checking the wrapper is the point here.
pytestmark = pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")


# ----- env checker ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("wrapper", [SweetSpotReward, BinaryReward, ContinuousReward])
@pytest.mark.parametrize("mode", ["answer", "navigate"])
def test_wrapped_maze_passes_check_env(wrapper: type, mode: str) -> None:
    env = wrapper(gym.make("Maze-v0", size=3, mode=mode))
    check_env(env, skip_render_check=True)  # the wrapper itself, not env.unwrapped
    env.reset(seed=0)
    _, reward, *_ = env.step(env.action_space.sample())
    assert isinstance(reward, float)


def test_wrapped_sudoku_passes_check_env() -> None:
    check_env(SweetSpotReward(gym.make("Sudoku-v0", blanks=10)), skip_render_check=True)


# ----- grids: hand-computed values ------------------------------------------------------------------------


def _maze_answer(reward: str, answer: str, **kwargs: Any) -> tuple[float, dict[str, Any]]:
    env = with_reward(gym.make("Maze-v0", size=2, layout_seed=0), reward, **kwargs)
    env.reset(seed=0)
    _, r, terminated, _, info = env.step(answer)
    assert terminated
    return float(r), info


def test_maze_answer_hand_computed() -> None:
    # layout_seed=0, size=2: the 5x5 grid
    #   #####        solution grid       wrong answer S(3,3) -> (3,2) -> (3,1) -> (2,1) -> (1,1)
    #   #.#G#        1 1 1 1 1           1 1 1 1 1
    #   #.#.#        1 0 1 3 1           1 4 1 3 1
    #   #..S#        1 0 1 4 1           1 4 1 0 1
    #   #####        1 0 0 2 1           1 4 4 2 1
    #                1 1 1 1 1           1 1 1 1 1
    # 5 mismatches: (1,1), (2,1), (3,1), (3,2), (2,3). Blocks split rows/cols as {0,1}, {2,3}, {4}:
    # block (0,0) 3/4 = 0.75 -> 1.0; block (1,0) {(2,1),(3,1)} wrong -> 2/4 = 0.5 -> 0.67;
    # block (1,1) {(2,3),(3,2)} wrong -> 2/4 -> 0.67; the other six blocks match fully -> 1.0.
    # S = (7 * 1 + 2 * 0.67) / 9 = 8.34 / 9 = 0.926667; C = 0 (ends off the goal).
    answer = "[(3, 3), (3, 2), (3, 1), (2, 1), (1, 1)]"
    r, info = _maze_answer("ssl", answer)
    assert info["binary_reward"] == 0.0
    assert info["proximity"] == pytest.approx(8.34 / 9)
    assert r == pytest.approx(0.2 * 8.34 / 9)  # 0.185333
    assert _maze_answer("binary", answer)[0] == 0.0
    assert _maze_answer("continuous", answer)[0] == pytest.approx(20 / 25)  # 20 of 25 cells match
    # alpha = 0.5: 0.5 * 0.926667 = 0.463333
    assert _maze_answer("ssl", answer, alpha=0.5)[0] == pytest.approx(0.5 * 8.34 / 9)


def test_maze_answer_correct_and_unparseable() -> None:
    r, info = _maze_answer("ssl", "[(3, 3), (2, 3), (1, 3)]")
    assert (r, info["binary_reward"], info["sweet_spot"]) == (pytest.approx(1.2), 1.0, 1.0)  # 1 + 0.2 * 1
    assert _maze_answer("binary", "[(3, 3), (2, 3), (1, 3)]")[0] == 1.0
    for reward in ("ssl", "binary", "continuous"):
        r, info = _maze_answer(reward, "no idea")
        assert r == 0.0 and info["binary_reward"] == 0.0 and info["proximity"] == 0.0


def test_sudoku_hand_computed() -> None:
    env = gym.make("Sudoku-v0", blanks=20)
    _, info = env.reset(seed=3)
    solution = privileged_of(env)["solution_grid"].astype(int)
    wrong = solution.copy()
    bump = lambda v: v % 9 + 1  # noqa: E731  (always a different digit)
    wrong[0:3, 0:3] = bump(wrong[0:3, 0:3])  # subgrid (0,0): 0/9 right -> 0.0
    for r, c in [(3, 3), (3, 4), (3, 5)]:  # subgrid (1,1): 6/9 = 0.667 >= 0.5 -> 0.67
        wrong[r, c] = bump(wrong[r, c])
    for r, c in [(6, 6), (6, 7), (6, 8), (7, 6), (7, 7)]:  # subgrid (2,2): 4/9 = 0.444 >= 0.25 -> 0.33
        wrong[r, c] = bump(wrong[r, c])
    # S = (0 + 0.67 + 0.33 + 6 * 1) / 9 = 7 / 9 = 0.777778; C = 0; R = 0.2 * 7 / 9 = 0.155556.
    expected = {"ssl": 0.2 * 7 / 9, "binary": 0.0, "continuous": (81 - 17) / 81}  # 17 cells changed
    for reward, value in expected.items():
        wrapped = with_reward(gym.make("Sudoku-v0", blanks=20), reward)
        wrapped.reset(seed=3)
        _, r, *_, step_info = wrapped.step(wrong)
        assert r == pytest.approx(value), reward
        assert step_info["sweet_spot"] == pytest.approx(7 / 9)
        assert step_info["binary_reward"] == 0.0


def test_sudoku_and_arc_oracle_earn_one_plus_alpha() -> None:
    for env_id in ("Sudoku-v0", "Arc-v0"):
        env = SweetSpotReward(gym.make(env_id))
        env.reset(seed=1)
        _, r, *_, info = env.step(env.unwrapped.oracle_action())
        assert r == pytest.approx(1.2) and info["binary_reward"] == 1.0, env_id


# ----- Maze navigate: trajectory-level reward --------------------------------------------------------------


def _walk(wrapper: type, n_moves: int, max_steps: int, **kwargs: Any) -> list[float]:
    env = wrapper(gym.make("Maze-v0", size=3, mode="navigate", layout_seed=0, max_steps=max_steps), **kwargs)
    env.reset(seed=0)  # layout_seed=0: the start is 6 moves from the goal
    rewards = []
    for _ in range(n_moves):
        _, r, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        rewards.append(float(r))
        assert "proximity" in info and "sweet_spot" in info
        if terminated or truncated:
            break
    return rewards


def test_navigate_success_is_paid_once_at_the_end() -> None:
    # Reaching the goal in 6 moves: C = 1, progress 1 -> zone 1 -> S_hat = tau_1 -> R = 1 + 0.2 * 0.606531.
    assert _walk(SweetSpotReward, 6, 50) == [0.0] * 5 + [pytest.approx(1 + 0.2 * TAU1)]
    assert _walk(SweetSpotReward, 6, 50, zone_value="upper") == [0.0] * 5 + [pytest.approx(1.2)]
    # Binary C, not MiniGrid's 1 - 0.9 * 6 / 50 that the env pays.
    assert _walk(BinaryReward, 6, 50) == [0.0] * 5 + [1.0]
    assert _walk(ContinuousReward, 6, 50) == [0.0] * 5 + [1.0]


def test_navigate_truncated_trajectory_earns_its_tier() -> None:
    # 4 oracle moves, then truncation: progress 1/6, 2/6, 3/6, 4/6.
    # final: S = 0.6667 > tau_1 = 0.6065 -> zone 1 -> 0.2 * 0.606531 = 0.121306
    assert _walk(SweetSpotReward, 4, 4) == [0.0] * 3 + [pytest.approx(0.2 * TAU1)]
    # mean (Eq. 3): S = (1 + 2 + 3 + 4) / 24 = 0.4167, in (tau_2, tau_1] -> zone 2 -> 0.2 * 0.135335 = 0.027067
    assert _walk(SweetSpotReward, 4, 4, trajectory="mean") == [0.0] * 3 + [pytest.approx(0.2 * TAU2)]
    assert _walk(BinaryReward, 4, 4) == [0.0] * 4
    assert _walk(ContinuousReward, 4, 4)[-1] == pytest.approx(4 / 6)


# ----- GUI: a fake grounding env --------------------------------------------------------------------------


class FakeGuiEnv(gym.Env[dict, Any]):
    """Targets ``boxes[t]`` at step ``t`` (pixels); its privileged channel after reset / step ``t - 1`` names
    it, as the web envs do. Takes an Action, text, or a Box ``(x, y)`` point; pays 1 for a hit (so the pass-through is visible)."""

    ELEMENTS = [{"id": "7", "role": "button", "text": "OK", "bbox": [100, 50, 300, 150], "clickable": True}]

    def __init__(self, boxes: list[Any]) -> None:
        self.boxes = boxes
        self.observation_space = spaces.Dict(
            {"screenshot": spaces.Box(0, 255, (8, 8, 3), np.uint8), "elements": spaces.Text(2000)}
        )
        self.action_space = spaces.Box(0.0, 400.0, (2,), np.float32)
        self.t = 0

    def _obs(self) -> dict[str, Any]:
        return {"screenshot": np.zeros((8, 8, 3), np.uint8), "elements": json.dumps(self.ELEMENTS)}

    def privileged(self) -> dict[str, Any]:
        return {"target_bbox": self.boxes[self.t] if self.t < len(self.boxes) else None}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        self.t += 1
        terminated = self.t >= len(self.boxes)
        return self._obs(), 0.5, terminated, False, {}


BOX = (100, 50, 300, 150)  # centre (200, 100), half-sizes a = 100, b = 50 px


def _gui_step(
    wrapper: type, action: Any, boxes: list[Any] | None = None, **kwargs: Any
) -> tuple[float, dict]:
    env = wrapper(FakeGuiEnv(boxes or [BOX]), **kwargs)
    env.reset(seed=0)
    _, r, *_, info = env.step(action)
    return float(r), info


@pytest.mark.parametrize(
    "action",
    [
        np.array([200.0, 100.0], np.float32),
        Action.click(200, 100),
        Action.click_element("7"),  # the element's bbox centre, from obs["elements"]
        '[{"action": "click", "point": [200, 100], "input_text": ""}]',  # GUI-R1's JSON, as env.step reads it
        {"type": "click", "point": [200, 100]},
    ],
)
def test_gui_click_at_centre(action: Any) -> None:
    # phi = 1 at the centre -> zone 1; "lower": S_hat = tau_1 -> R = 1 + 0.2 * 0.606531 = 1.121306.
    r, info = _gui_step(SweetSpotReward, action)
    assert r == pytest.approx(1 + 0.2 * TAU1)
    assert (info["binary_reward"], info["proximity"], info["reward_mode"]) == (1.0, 1.0, "gui")
    assert info["sweet_spot"] == pytest.approx(TAU1)
    # "upper": S_hat = tau_0 = 1 -> R = 1 + 0.2 * 1 = 1.2.
    assert _gui_step(SweetSpotReward, action, zone_value="upper")[0] == pytest.approx(1.2)
    assert _gui_step(BinaryReward, action)[0] == pytest.approx(1.0)  # C
    assert _gui_step(BinaryFormatReward, action)[0] == pytest.approx(1.0)  # 0.8 * 1 + 0.2 * 1
    assert _gui_step(ContinuousReward, action)[0] == pytest.approx(1.0)  # exp(0)


def test_gui_click_off_centre_and_outside() -> None:
    # (250, 100): K = 4 puts the edge at 3 sigma, d = 3 * 50 / 100 = 1.5, phi = exp(-1.125) = 0.324652,
    # in (tau_2, tau_1] -> zone 2 -> S_hat = tau_2 -> R = 1 + 0.2 * 0.135335 = 1.027067.
    r, info = _gui_step(SweetSpotReward, Action.click(250, 100))
    assert r == pytest.approx(1 + 0.2 * TAU2)
    assert info["proximity"] == pytest.approx(math.exp(-1.125))
    # GUI-G2 point reward, sigma = half-size: d = 50 / 100 = 0.5 -> exp(-0.125) = 0.882497.
    assert _gui_step(ContinuousReward, Action.click(250, 100))[0] == pytest.approx(math.exp(-0.125))
    # (350, 100) is outside: phi = 0, C = 0 -> R = 0.
    r, info = _gui_step(SweetSpotReward, Action.click(350, 100))
    assert r == 0.0 and info["binary_reward"] == 0.0 and info["proximity"] == 0.0
    assert _gui_step(BinaryReward, Action.click(350, 100))[0] == 0.0  # a miss: C = 0, as info says
    assert _gui_step(BinaryFormatReward, Action.click(350, 100))[0] == pytest.approx(0.2)  # format only
    # Continuous does not stop at the edge: d = 150 / 100 = 1.5 -> exp(-1.125) = 0.324652.
    assert _gui_step(ContinuousReward, Action.click(350, 100))[0] == pytest.approx(math.exp(-1.125))


def test_gui_uses_the_box_from_the_previous_info() -> None:
    second = (0, 0, 20, 20)
    env = SweetSpotReward(FakeGuiEnv([BOX, second]))
    env.reset(seed=0)
    r1 = env.step(Action.click(200, 100))[1]  # graded against BOX (from reset info)
    r2 = env.step(Action.click(200, 100))[1]  # graded against `second` (from step 1's info): a miss
    assert (r1, r2) == (pytest.approx(1 + 0.2 * TAU1), 0.0)
    env.reset(seed=0)
    env.step(Action.click(200, 100))
    assert env.step(Action.click(10, 10))[1] == pytest.approx(1 + 0.2 * TAU1)


@pytest.mark.parametrize("wrapper", [SweetSpotReward, BinaryReward, BinaryFormatReward, ContinuousReward])
@pytest.mark.parametrize(
    "action",
    [None, "garbage", b"\xff\xfe", np.array([np.nan, 1.0]), np.zeros(3), {"type": "fly"}, 3.5, [[1, 2]]],
)
def test_malformed_actions_score_zero_and_never_raise(wrapper: type, action: Any) -> None:
    r, info = _gui_step(wrapper, action)
    assert r == 0.0 and info["binary_reward"] == 0.0 and info["proximity"] == 0.0


def test_action_without_location() -> None:
    assert _gui_step(SweetSpotReward, Action.stop())[0] == 0.0
    assert _gui_step(BinaryReward, Action.stop())[0] == 0.0
    assert _gui_step(BinaryFormatReward, Action.stop())[0] == pytest.approx(0.2)  # well-formed, wrong: format only
    assert _gui_step(SweetSpotReward, Action.click_element("404"))[0] == 0.0  # no such element


def test_ungraded_steps_pass_the_env_reward_through() -> None:
    r, info = _gui_step(SweetSpotReward, Action.click(200, 100), boxes=[None])
    assert r == 0.5 and info["reward_mode"] is None and info["binary_reward"] is None
    r, info = _gui_step(SweetSpotReward, Action.click(200, 100), boxes=[(300, 0, 100, 10)])  # x2 < x1
    assert r == 0.5 and "reward_error" in info


def test_log_keys_on_every_step() -> None:
    for wrapper in (SweetSpotReward, BinaryReward, ContinuousReward):
        _, info = _gui_step(wrapper, Action.click(200, 100))
        assert all(key in info for key in LOG_KEYS)
        assert info["env_reward"] == 0.5


# ----- configuration -------------------------------------------------------------------------------------


def test_with_reward_switch_and_errors() -> None:
    base = gym.make("Maze-v0", size=2)
    assert isinstance(with_reward(base, "ssl"), SweetSpotReward)
    assert isinstance(with_reward(base, "Sweet-Spot", alpha=0.5), SweetSpotReward)
    assert isinstance(with_reward(base, "binary"), BinaryReward)
    assert isinstance(with_reward(base, "continuous", sigma_frac=0.5), ContinuousReward)
    assert with_reward(base, "env") is base
    with pytest.raises(UnknownRewardError, match="'ssl'"):
        with_reward(base, "sll")
    for kwargs in ({"alpha": 0}, {"zones": 1}, {"zone_value": "middle"}, {"trajectory": "max"}):
        with pytest.raises(RewardConfigError):
            SweetSpotReward(base, **kwargs)
    with pytest.raises(RewardConfigError):
        ContinuousReward(base, sigma_frac=-1)


@pytest.mark.parametrize("zones", [2, 8])
def test_zones_change_the_gui_tier(zones: int) -> None:
    # Centre click: zone 1 under any K, worth tau_1 = exp(-1/2) with "lower".
    assert _gui_step(SweetSpotReward, Action.click(200, 100), zones=zones)[0] == pytest.approx(1 + 0.2 * TAU1)
    # (250, 100): edge at K - 1 sigma, d = (K - 1) / 2. K = 2: d = 0.5, phi = 0.8825 > tau_1 -> zone 1 ->
    # 1.121306. K = 8: d = 3.5, phi = exp(-6.125) in (tau_4, tau_3] -> zone 4 -> tau_4 = exp(-8) -> 1.000067.
    expected = {2: 1 + 0.2 * TAU1, 8: 1 + 0.2 * math.exp(-8.0)}[zones]
    assert _gui_step(SweetSpotReward, Action.click(250, 100), zones=zones)[0] == pytest.approx(expected)


def test_docstring_examples() -> None:
    import doctest

    import gui_envs.reward_wrappers
    import gui_envs.reward_wrappers.proximity

    for module in (gui_envs.reward_wrappers, gui_envs.reward_wrappers.proximity):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_the_registry_pays_mobileipl_step_values_on_a_grounding_env() -> None:
    """``ipl`` through :func:`with_reward`: an exact hit is worth 1, a wrong action type 0, and a near miss
    what :func:`rewards.ipl.leaf_value` gives against the privileged box (seed 003 section 3.3)."""
    from rewards.ipl import leaf_value
    from rewards.steps import StepPrediction, StepTarget

    env = with_reward(gym.make("ClickBox-v0"), "ipl")
    assert type(env).__name__ == "IPLReward" and "ipl" in REWARDS
    obs, _ = env.reset(seed=3)
    box = env.unwrapped.target_box()
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    assert env.step(Action.click(cx, cy))[1] == pytest.approx(1.0)
    env.reset(seed=3)
    assert env.step(Action(type="type", text="x"))[1] == 0.0
    env.reset(seed=3)
    miss = (cx, min(99.0, cy + 30.0))
    expected = leaf_value(StepPrediction("click", point=miss), StepTarget("click", box=box), (100.0, 100.0))
    assert env.step(Action.click(*miss))[1] == pytest.approx(expected)
    assert 0.2 <= expected < 1.0


@pytest.mark.parametrize("env_id", ["GuiAndroidGround-Box-v0"])
def test_binary_pays_what_info_says_and_binary_format_says_it_pays_a_format_term(env_id: str) -> None:
    # Issue 36: reward="binary" paid GUI-R1's 0.2 format term on every miss of the -Box-v0 ids while
    # info["binary_reward"] said 0. Now "binary" is C on every step; the format-paying reward is "binary_format".
    rng = np.random.default_rng(0)
    for reward, miss in (("binary", 0.0), ("binary_format", 0.2)):
        with gym.make(env_id, reward=reward) as env:
            env.reset(seed=0)
            for _ in range(20):
                _, r, terminated, truncated, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
                if reward == "binary":
                    assert r == info["binary_reward"]
                else:
                    assert r == pytest.approx(miss if info["binary_reward"] == 0.0 else 1.0)
                if terminated or truncated:
                    env.reset()
