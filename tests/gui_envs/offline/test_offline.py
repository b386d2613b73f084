"""GuiOffline-v0: every reader loads its fixture; Type/GR/SR scoring by hand; the recorded trajectory is followed."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401
from gui_envs.offline import READERS, read_dataset, score_step, write_fixture
from gui_envs.schema.actions import Action

EXPECTED = {  # dataset: (episodes, steps of the first episode, first recorded action)
    "screenspot": (
        4,
        1,
        Action.click(210.0, 120.0),
    ),  # desktop first (sorted files): [500,350,100,30] -> centre
    "screenspot_pro": (2, 1, Action.click(120.0, 60.0)),
    "androidcontrol": (1, 3, Action.click(100.0, 120.0)),
    "aitz": (1, 4, Action.click(100.0, 100.0)),  # [y, x] = [0.25, 0.5] on 200 x 400
    "gui_odyssey": (1, 4, Action.click(100.0, 100.0)),  # (500, 250) on 0-1000 of 200 x 400
    "gui_r1": (3, 1, Action.click(30.0, 25.0)),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_each_reader_loads_its_fixture(name: str, tmp_path: Path) -> None:
    episodes = read_dataset(name, write_fixture(name, tmp_path))
    n, steps, first = EXPECTED[name]
    assert len(episodes) == n
    assert len(episodes[0].steps) == steps
    if name == "screenspot":
        first = Action.click(550.0, 365.0)
    assert episodes[0].steps[0].action == first
    assert all(s.image.is_file() for e in episodes for s in e.steps)


def test_recorded_actions_convert_each_frame(tmp_path: Path) -> None:
    aitz = read_dataset("aitz", write_fixture("aitz", tmp_path))[0]
    assert [s.action for s in aitz.steps] == [
        Action.click(100.0, 100.0),
        Action.type_text("weather today"),
        Action.scroll("up"),
        Action.stop(),
    ]  # finger from y=0.8 up to y=0.2: AITZ (CoAT action_utils.py) calls it "scroll up"
    ody = read_dataset("gui_odyssey", write_fixture("gui_odyssey", tmp_path))[0]
    assert [s.action.type for s in ody.steps] == ["click", "type", "navigate", "stop"]
    ac = read_dataset("androidcontrol", write_fixture("androidcontrol", tmp_path))[0]
    assert (
        ac.steps[1].action == Action.type_text("fresh milk")
        and ac.steps[0].step_instruction == "tap the search bar"
    )


def test_scoring_by_hand() -> None:
    gt, box, size = Action.click(50, 50), (40.0, 40.0, 60.0, 60.0), (200, 100)
    s = score_step(Action.click(61, 50), gt, box, size)  # just outside the box
    assert (s.type_match, s.grounding, s.success, s.offset) == (True, False, False, (11.0, 0.0))
    # No box: within 0.14 normalised. dx = 27 px of 200 = 0.135 -> hit; 29 px = 0.145 -> miss.
    assert score_step(Action.click(77, 50), gt, None, size).grounding is True
    assert score_step(Action.click(79, 50), gt, None, size).grounding is False
    # A long-press on the right spot: grounded but the wrong type.
    s = score_step(Action("long_press", point=(50, 50)), gt, box, size)
    assert (s.type_match, s.grounding, s.success) == (False, True, False)
    # Text: token-set F1("fresh milk", "milk") = 2/3 >= 0.5; F1("cheese", "milk") = 0.
    assert score_step(Action.type_text("milk"), Action.type_text("fresh milk"), None, size).success
    assert not score_step(Action.type_text("cheese"), Action.type_text("fresh milk"), None, size).success
    assert score_step(Action.scroll("up"), Action.scroll("down"), None, size).type_match
    assert not score_step(Action.scroll("up"), Action.scroll("down"), None, size).success
    assert not score_step(Action.navigate("home"), Action.navigate("back"), None, size).type_match
    assert score_step(None, gt, box, size) == score_step(None, gt, box, size)
    assert score_step(None, gt, box, size).grounding is False
    assert score_step(None, Action.type_text("x"), None, size).grounding is None


def test_env_follows_the_recorded_trajectory() -> None:
    env = gym.make("GuiOffline-v0", dataset="androidcontrol")
    obs, info = env.reset(seed=0)
    assert obs["screenshot"].shape == (400, 200, 3) and obs["instruction"].startswith("Search for milk")
    # Wrong first action, then right ones: the second screen is shown regardless.
    _, r0, term, _, i0 = env.step(Action.click(5, 5))
    assert (r0, term, i0["grounding"], i0["step_success"]) == (0.0, False, False, False)
    _, r1, _, _, i1 = env.step(
        '<answer>[{"action": "type", "point": [-100, -100], "input_text": "milk"}]</answer>'
    )
    assert r1 == 1.0 and i1["step_index"] == 1
    _, r2, term, _, i2 = env.step("garbage")
    assert term and r2 == 0.0 and "(no_json)" in i2["action_error"]
    assert i2["success"] is False and i2["score"] == pytest.approx(1 / 3)


def test_oracle_scores_everything_and_check_env_passes() -> None:
    env = gym.make("GuiOffline-v0", dataset="aitz")
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, reward, done, _, info = env.step(env.unwrapped.oracle_action())
        assert reward == 1.0
    assert info["success"] is True
    a, _ = env.reset(seed=3)
    b, _ = env.reset(seed=3)
    assert np.array_equal(a["screenshot"], b["screenshot"])
