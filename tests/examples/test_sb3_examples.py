"""The SB3 examples in their ``--quick`` mode: PPO runs on each reward, no user wrapper, one figure."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("matplotlib")

import gui_envs  # noqa: E402,F401
from examples import sb3_ppo_grounding, sb3_ppo_maze  # noqa: E402
from examples.sb3_common import smooth  # noqa: E402
from gui_envs.schema.privileged import privileged_of  # noqa: E402


def _is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_maze_example_quick(tmp_path: Path) -> None:
    rates = sb3_ppo_maze.main(["--quick", "--out", str(tmp_path)])
    assert set(rates) == {"binary", "ssl"} and all(0.0 <= r <= 1.0 for r in rates.values())
    assert _is_png(tmp_path / "curves.png")


def test_grounding_example_quick(tmp_path: Path) -> None:
    rates = sb3_ppo_grounding.main(["--quick", "--out", str(tmp_path)])
    assert set(rates) == {"binary", "ssl"}
    assert _is_png(tmp_path / "GuiWebGround-Box-v0.png")


def test_box_id_normalises_the_click_to_the_pixel_grid() -> None:
    env = gym.make("GuiWebGround-Box-v0", reward="binary")
    try:
        obs, _ = env.reset(seed=2)
        assert obs.shape == (100, 160, 3) and obs.dtype == np.uint8
        x0, y0, x1, y1 = privileged_of(env)["target_bbox"]
        # The viewport is 640 x 400, so pixel x maps to 2 * x / 639 - 1 (RescaleAction's affine map).
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        action = np.array([2 * cx / 639 - 1, 2 * cy / 399 - 1], np.float32)
        assert env.step(action)[1] == 1.0
    finally:
        env.close()


def test_smooth_is_a_trailing_mean() -> None:
    x, y = smooth([(1, 1.0), (2, 0.0), (3, 0.0), (4, 1.0)], window=2)
    assert x.tolist() == [1, 2, 3, 4] and y.tolist() == [1.0, 0.5, 0.0, 0.5]


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [("Maze-v0", {"mode": "navigate", "size": 3}), ("GuiAndroidGround-Box-v0", {"reward": "ssl"})],
)
def test_sb3_env_checker_accepts_the_ids_as_registered(env_id: str, kwargs: dict) -> None:
    from stable_baselines3.common.env_checker import check_env

    env = gym.make(env_id, **kwargs)
    try:
        check_env(env, warn=False)
        assert isinstance(env.action_space, gym.spaces.Discrete | gym.spaces.Box)
        if isinstance(env.action_space, gym.spaces.Box):  # normalised clicks, the range SB3's Gaussian samples
            assert env.action_space.low.tolist() == [-1, -1] and env.action_space.high.tolist() == [1, 1]
    finally:
        env.close()


def _greedy_episode(model: object, env: gym.Env) -> tuple[bool, int]:
    """(reached the goal, steps) of one greedy episode."""
    obs, _ = env.reset(seed=0)
    for steps in range(1, 10_000):
        action, _ = model.predict(obs, deterministic=True)  # type: ignore[attr-defined]
        obs, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            return bool(terminated), steps
    raise AssertionError("the episode never ended")


def test_maze_navigate_learns_with_the_policy_the_readme_names() -> None:
    """The README names ``MlpPolicy`` for ``Maze-v0`` navigate (7 x 7 x 3 at size 3, under ``CnnPolicy``'s
    36 x 36): the example's PPO settings take the greedy policy from failing to the shortest path."""
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    env = sb3_ppo_maze.make_env("binary")
    evaluation = sb3_ppo_maze.make_env("binary")
    try:
        model = PPO("MlpPolicy", env, seed=0, device="cpu", **sb3_ppo_maze.PPO_SETTINGS)
        assert not _greedy_episode(model, evaluation)[0]  # untrained: walks into a wall until truncated
        evaluation.reset(seed=0)
        shortest = privileged_of(evaluation)["distance_to_goal"]
        model.learn(total_timesteps=15_000)  # 12,500-25,000 all reach it on seed 0; 10,000 does not
        assert _greedy_episode(model, evaluation) == (True, shortest)
    finally:
        env.close()
        evaluation.close()


def test_android_box_id_trains_with_cnn_policy() -> None:
    """``GuiAndroidGround-Box-v0`` (a 100 x 160 screenshot, over ``CnnPolicy``'s 36 x 36) takes PPO updates as it
    is registered; the web id runs in the grounding example's quick test."""
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    env = gym.make("GuiAndroidGround-Box-v0", reward="ssl")
    try:
        model = PPO("CnnPolicy", env, n_steps=8, batch_size=8, n_epochs=1, seed=0, device="cpu")
        before = [p.detach().clone() for p in model.policy.parameters()]
        model.learn(total_timesteps=8)
        assert any(not torch.equal(a, b.detach()) for a, b in zip(before, model.policy.parameters(), strict=True))
    finally:
        env.close()
