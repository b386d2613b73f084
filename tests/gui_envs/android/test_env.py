"""GuiAndroid-v0 / GuiAndroidGround-v0: Gymnasium checks, threads and event loops, actions, infeasible tasks."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from typer.testing import CliRunner

import gui_envs  # noqa: F401
from benchmarks.judge_attacks import blind_policies
from gui_envs.android.env import GuiAndroidEnv, UnknownTaskError
from gui_envs.android.tasks import TASKS
from gui_envs.schema.actions import Action
from gui_envs.schema.privileged import privileged_of
from gui_envs.schema.trajectory import load_trajectories
from guigym.cli import app
from tests.gui_envs.android.conftest import needs_chromium
from tests.oracle_helpers import run_oracle

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def ground_env() -> Iterator[gym.Env]:
    env = gym.make("GuiAndroidGround-v0")
    yield env
    env.close()


def test_check_env_guiandroid(android_env: GuiAndroidEnv) -> None:
    assert gym.spec("GuiAndroid-v0").entry_point == "gui_envs.android.env:GuiAndroidEnv"
    check_env(android_env, skip_render_check=True)  # the shared GuiAndroid-v0 instance (one Chromium)


def test_check_env_guiandroid_ground(ground_env: gym.Env) -> None:
    check_env(ground_env.unwrapped, skip_render_check=True)


def test_registered_ids() -> None:
    ids = set(gui_envs.guigym_env_ids())
    for app_name in ("Launcher", "Clock", "Expenses", "Recipes", "Contacts", "Settings", "Notes"):
        assert f"GuiAndroid-{app_name}-v0" in ids
    assert {"GuiAndroid-v0", "GuiAndroidGround-v0"} <= ids
    assert len(TASKS) >= 40
    apps = {t.app for t in TASKS.values()}
    assert len(apps) == 7


def test_observation_and_info(android_env: GuiAndroidEnv) -> None:
    obs, info = android_env.reset(options={"task": "expenses.open_account", "seed": 4})
    assert obs["screenshot"].shape == (800, 360, 3) and obs["screenshot"].dtype == np.uint8
    assert obs["screenshot"].std() > 5
    assert obs["app"] == "com.guigym.launcher" and obs["activity"].endswith(".LauncherActivity")
    elements = json.loads(obs["elements"])
    assert {"id", "role", "text", "value", "bbox", "clickable", "resource_id", "content_desc"} <= set(
        elements[0]
    )
    assert any(el["text"] == "Search apps, web and more" for el in elements)
    assert android_env.privileged()["target_bbox"] is None  # the first oracle step is open_app: no target
    assert "target_bbox" not in info and "reference_answer" not in info
    _, _, _, _, info = android_env.step(android_env.oracle_action())
    x0, y0, x1, y1 = android_env.privileged()["target_bbox"]
    assert 0 <= x0 < x1 <= 360 and 0 <= y0 < y1 <= 800  # screenshot pixels


def test_same_seed_same_episode(android_env: GuiAndroidEnv) -> None:
    a, ia = android_env.reset(seed=11)
    b, ib = android_env.reset(seed=11)
    assert ia["task"] == ib["task"] and a["instruction"] == b["instruction"]
    assert np.array_equal(a["screenshot"], b["screenshot"]) and a["elements"] == b["elements"]


def test_malformed_and_impossible_actions_are_penalised_no_ops(android_env: GuiAndroidEnv) -> None:
    android_env.reset(options={"task": "clock.start_timer", "seed": 0})
    cases = [
        "this is not an action",
        Action.click(5000, 10),
        Action("hover", point=(10, 10)),
        Action.press("tab"),
        Action.navigate("url", url="http://example.com"),
        Action("open_app", app="Spotify"),
        Action.type_text("hello"),
        Action.click_element("9999"),
    ]
    for bad in cases:
        obs, reward, terminated, truncated, info = android_env.step(bad)
        assert info["action_error"], bad
        assert reward == pytest.approx(-0.01) and not terminated
        assert obs["app"] == "com.guigym.launcher"


def test_gui_r1_json_and_open_app_aliases(android_env: GuiAndroidEnv) -> None:
    android_env.reset(options={"task": "clock.start_stopwatch", "seed": 0})
    text = json.dumps([Action("open_app", app="alarm").to_gui_r1()])
    obs, _, _, _, info = android_env.step(text)
    assert info["action_error"] is None and obs["app"] == "com.guigym.clock"
    obs, _, _, _, info = android_env.step(Action.navigate("home"))
    assert obs["app"] == "com.guigym.launcher"
    obs, _, _, _, _ = android_env.step(Action("open_app", app="com.guigym.notes"))
    assert obs["app"] == "com.guigym.notes"


def test_element_id_click_and_scroll(android_env: GuiAndroidEnv) -> None:
    android_env.reset(options={"task": "recipes.add_favourite", "seed": 2})
    android_env.step(Action("open_app", app="Recipes"))
    obs, *_ = android_env.step(Action.scroll("down"))
    obs2, _, _, _, info = android_env.step(Action.scroll("up"))
    assert info["action_error"] is None
    rows = [el for el in json.loads(obs2["elements"]) if el["resource_id"].endswith(":id/recipe_row")]
    obs3, _, _, _, info = android_env.step(Action.click_element(rows[0]["id"]))
    assert info["action_error"] is None and obs3["activity"].endswith(".RecipeDetailActivity")
    obs4, *_ = android_env.step(Action.navigate("back"))
    assert obs4["activity"].endswith(".RecipeListActivity")


@pytest.mark.parametrize(
    "task",
    ["recipes.add_favourite", "contacts.edit_phone", "notes.edit_note", "settings.turn_on_setting",
     "expenses.delete_expense"],
)  # fmt: skip
def test_infeasible_tasks_pass_only_after_searching(android_env: GuiAndroidEnv, task: str) -> None:
    seed = next(s for s in range(50) if not blind_policies.build_task("phone", task, s).feasible)
    # Giving up straight away fails, even with the right status.
    android_env.reset(options={"task": task, "seed": seed})
    _, reward, terminated, _, info = android_env.step(Action.stop(status="infeasible"))
    assert terminated and reward == 0.0 and not info["success"]
    # Searching, then claiming success, fails too.
    android_env.reset(options={"task": task, "seed": seed})
    while (action := android_env.oracle_action()).type != "stop":
        android_env.step(action)
    _, reward, terminated, _, info = android_env.step(Action.stop())
    assert terminated and reward == 0.0
    # Searching, seeing no results, and stopping as infeasible passes.
    assert not android_env.task.feasible
    total, info = run_oracle(android_env, task, seed=seed)
    assert total == pytest.approx(1.0) and info["success"]


def test_unknown_task_suggests_close_names(android_env: GuiAndroidEnv) -> None:
    with pytest.raises(UnknownTaskError, match="clock.add_alarm"):
        android_env.reset(options={"task": "clock.add_alarms"})
    with pytest.raises(ValueError, match="unknown apps"):
        GuiAndroidEnv(apps=("calculator",))


def test_works_inside_a_running_event_loop(android_env: GuiAndroidEnv) -> None:
    async def episode() -> float:
        assert asyncio.get_running_loop().is_running()
        total, _ = run_oracle(android_env, "settings.wifi", seed=3)
        return total

    assert asyncio.run(episode()) == pytest.approx(1.0)


def test_works_from_a_second_thread(android_env: GuiAndroidEnv) -> None:
    result: list[float] = []
    thread = threading.Thread(
        target=lambda: result.append(run_oracle(android_env, "notes.add_todo", seed=2)[0])
    )
    thread.start()
    thread.join(120)
    assert result == [pytest.approx(1.0)]


def test_ground_env_oracle_hits_and_misses_score_zero(ground_env: gym.Env) -> None:
    env = ground_env
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        assert obs["instruction"].startswith("Tap ")
        x0, y0, x1, y1 = privileged_of(env)["target_bbox"]
        assert 0 <= x0 < x1 <= 360 and 0 <= y0 < y1 <= 800
        _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
        assert terminated and reward == 1.0 and info["success"]
    env.reset(seed=0)
    _, reward, _, _, info = env.step(Action.click(180, 5))  # the status bar is never a target
    assert reward == 0.0
    env.reset(seed=0)
    _, reward, _, _, info = env.step("garbage")
    assert reward == 0.0 and info["action_error"]


def test_cli_records_oracle_trajectories_with_screenshots(tmp_path: Path) -> None:
    out = tmp_path / "a"
    result = CliRunner().invoke(
        app, ["run", "GuiAndroid-v0", "--agent", "oracle", "--episodes", "5", "--record", str(out)]
    )
    assert result.exit_code == 0, result.output
    trajs = load_trajectories(out, load_images=True)
    assert len(trajs) == 5
    for traj in trajs:
        assert traj.success is True and traj.env_id == "GuiAndroid-v0"
        assert traj.steps and all(
            s.screenshot is not None and s.screenshot.shape == (800, 360, 3) for s in traj.steps
        )


def test_ground_box_mode_trains_like_gui_web_ground() -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make("GuiAndroidGround-v0", action_type="box")
    try:
        check_env(env.unwrapped, skip_render_check=True)
        sb3_check_env(env.unwrapped, warn=False)
        obs, info = env.reset(seed=4)
        assert obs.shape == (800, 360, 3) and obs.dtype == np.uint8 and env.action_space.shape == (2,)
        assert privileged_of(env)["target_bbox"][1] >= 22  # never under the instruction banner
        banner = obs[:22]  # dark, with the instruction in yellow
        assert (banner == 0).all(axis=2).mean() > 0.5
        assert ((banner[..., 0] > 200) & (banner[..., 2] < 80)).any()
        _, reward, terminated, _, _ = env.step(env.unwrapped.oracle_action())
        assert reward == 1.0 and terminated
        env.reset(seed=4)
        _, reward, _, _, info = env.step(np.array([np.nan, 3.0], np.float32))
        assert reward == 0.0 and "two finite numbers" in info["action_error"]
    finally:
        env.close()
