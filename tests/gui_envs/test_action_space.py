"""ActionSpace: valid samples inside the viewport, coerce_action's verdict, short repr, pickling, vector envs."""

from __future__ import annotations

import json
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from gui_envs.schema.action_space import (
    DEFAULT_WEIGHTS,
    FALLBACK_WORDS,
    ActionSpace,
    ActionSpaceError,
    visible_words,
)
from gui_envs.schema.actions import Action, coerce_action


def test_samples_are_valid_and_inside_the_viewport_over_many_seeds() -> None:
    for seed in range(50):
        space = ActionSpace((320, 200), seed=seed)
        for _ in range(40):
            action = space.sample()
            assert coerce_action(action.to_json()) == (action, None)
            assert space.contains(action)
            if action.point is not None:
                x, y = action.point
                assert 0 <= x < 320 and 0 <= y < 200 and x == int(x) and y == int(y)


def test_every_kind_is_sampled_at_about_its_weight() -> None:
    space = ActionSpace((100, 100), seed=0)
    kinds = [space.sample() for _ in range(4000)]
    counts = {
        "click": sum(a.type == "click" for a in kinds),
        "type": sum(a.type == "type" for a in kinds),
        "scroll": sum(a.type == "scroll" for a in kinds),
        "back": sum(a.type == "navigate" and a.target == "back" for a in kinds),
        "stop": sum(a.type == "stop" for a in kinds),
    }
    assert sum(counts.values()) == 4000
    for kind, weight in DEFAULT_WEIGHTS.items():
        # 4000 draws: a binomial's standard deviation is at most 32, so 0.03 * 4000 = 120 is about 4 sigma.
        assert abs(counts[kind] / 4000 - weight) < 0.03, (kind, counts)


def test_custom_weights_and_bad_weights() -> None:
    space = ActionSpace((10, 10), weights={"click": 1.0}, seed=1)
    assert {space.sample().type for _ in range(100)} == {"click"}
    assert space.weights["click"] == 1.0 and space.weights["stop"] == 0.0
    with pytest.raises(ActionSpaceError, match="unknown kinds"):
        ActionSpace((10, 10), weights={"swipe": 1.0})
    with pytest.raises(ActionSpaceError, match="not all 0"):
        ActionSpace((10, 10), weights={"click": 0.0})
    with pytest.raises(ActionSpaceError, match="at least 1x1"):
        ActionSpace((0, 10))


def test_contains_agrees_with_coerce_action() -> None:
    space = ActionSpace((100, 100))
    cases: list[Any] = [
        Action.click(5, 5),
        {"type": "scroll", "direction": "down"},
        '{"type": "click", "point": [3, 4]}',
        '<answer>[{"action": "click", "point": [1, 2], "input_text": ""}]</answer>',
        "not an action",
        {"type": "click"},
        {"type": "click", "point": [1e400, 0]},
        None,
        42,
        b"\xff",
        [1, 2],
    ]
    for case in cases:
        assert space.contains(case) == (coerce_action(case)[1] is None), case
    assert space.contains(Action.click(5000, 5000))  # off-screen is the env's to judge, not malformed


def test_repr_is_short_and_equality_ignores_words() -> None:
    space = ActionSpace((1280, 720))
    assert repr(space) == "ActionSpace(1280x720)"
    other = ActionSpace((1280, 720))
    other.set_words(["alpha"])
    assert space == other and space != ActionSpace((360, 800))


def test_seeded_repeatability_and_pickle() -> None:
    a, b = ActionSpace((640, 480), seed=7), ActionSpace((640, 480), seed=7)
    assert [a.sample() for _ in range(30)] == [b.sample() for _ in range(30)]
    a.set_words(["kept"])
    copy = pickle.loads(pickle.dumps(a))
    assert copy == a and copy.words == ("kept",)
    assert [copy.sample() for _ in range(30)] == [a.sample() for _ in range(30)]


def test_words_come_from_the_page_else_the_fallback() -> None:
    obs = {"elements": json.dumps([{"text": "Search flights"}, {"text": "Go, go!"}, {"role": "img"}])}
    assert visible_words(obs) == ["Search", "flights", "Go", "go"]
    assert visible_words({"elements": "not json"}) == [] and visible_words(np.zeros(3)) == []
    space = ActionSpace((50, 50), weights={"type": 1.0, "stop": 1.0}, seed=3)
    assert {a.text or a.answer for a in (space.sample() for _ in range(50))} <= set(FALLBACK_WORDS)
    space.set_words(visible_words(obs))
    assert {a.text or a.answer for a in (space.sample() for _ in range(50))} == {"Search", "flights", "Go", "go"}


class _ClickEnv(gym.Env[np.ndarray, Any]):
    """Counts clicks in the left half: a minimal env with an ActionSpace, for check_env and vector envs."""

    def __init__(self) -> None:
        self.action_space = ActionSpace((64, 48))
        self.observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
        self._hits = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._hits = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        parsed, error = coerce_action(action)
        hit = parsed is not None and parsed.point is not None and parsed.point[0] < 32
        self._hits += int(hit)
        return np.full(1, min(self._hits, 1), np.float32), float(hit), self._hits >= 3, False, {"action_error": error}


def test_check_env_and_async_vector_env() -> None:
    check_env(_ClickEnv(), skip_render_check=True)
    envs = gym.vector.AsyncVectorEnv([_ClickEnv, _ClickEnv])
    try:
        assert envs.single_action_space == ActionSpace((64, 48))
        envs.reset(seed=0)
        envs.action_space.seed(0)
        for _ in range(5):
            _, _, _, _, info = envs.step(envs.action_space.sample())
            assert not any(info["action_error"])
    finally:
        envs.close()


def test_offline_space_follows_the_screen() -> None:
    env = gym.make("GuiOffline-v0", dataset="screenspot")
    obs, _ = env.reset(seed=0)
    height, width = obs["screenshot"].shape[:2]
    assert env.action_space.viewport == (width, height)
    env.action_space.seed(0)
    for _ in range(20):
        action = env.action_space.sample()
        assert action.point is None or (action.point[0] < width and action.point[1] < height)
    env.close()
