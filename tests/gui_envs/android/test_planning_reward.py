"""The SSL planning reward on a real multi-step episode (seed 000, section 3.3 "Extension to GUI Planning", App. B.3
Table 5, App. B.4 "GUI Planning"): ``notes.create_note`` on the simulated phone, whose oracle plan is open the app,
click "New note", type the title, type the body, click save. Values computed by hand below.

Zone boundaries with K = 4 (App. B.1): ``b = (1, e^-1/2, e^-2, e^-9/2, 0) = (1, 0.606531, 0.135335, 0.011109, 0)``; with
``zone_value="lower"`` a trajectory proximity ``S`` in ``(b_k, b_{k-1}]`` is worth ``b_k``, and ``R = C + 0.2 * S_hat``.
The Gaussian field puts the box edge at ``K - 1 = 3`` standard deviations: ``phi = exp(-d^2 / 2)`` with
``d^2 = (3 dx / a)^2 + (3 dy / b)^2`` (``a``, ``b`` the box half-sizes, pixels).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from gui_envs.android.env import GuiAndroidEnv
from gui_envs.reward_wrappers import BinaryReward, ContinuousReward, SweetSpotReward
from gui_envs.schema.actions import Action
from tests.gui_envs.android.conftest import needs_chromium

pytestmark = [needs_chromium]

B1, B2 = math.exp(-0.5), math.exp(-2.0)  # 0.606531, 0.135335
TASK = {"task": "notes.create_note", "seed": 0}
TITLE = "Shopping list"  # the title notes.create_note asks for at seed 0


@pytest.fixture()
def phone(android_env: GuiAndroidEnv) -> Iterator[GuiAndroidEnv]:
    """The shared phone without screen captures (the rewards read the hierarchy and the privileged channel)."""
    android_env.screenshots = False
    yield android_env
    android_env.screenshots = True


def _phi(point: tuple[float, float], box: list[float]) -> float:
    """The Gaussian field by hand: edge at 3 sigma (K = 4)."""
    x1, y1, x2, y2 = box
    a, b = (x2 - x1) / 2, (y2 - y1) / 2
    dx, dy = point[0] - (x1 + x2) / 2, point[1] - (y1 + y2) / 2
    return math.exp(-0.5 * ((3 * dx / a) ** 2 + (3 * dy / b) ** 2))


class Episode:
    """One episode of the task under a reward wrapper: what was taken, paid and graded against at each step."""

    def __init__(self, env: Any, plan: list[Any]) -> None:
        """``plan``: actions; ``None`` takes the oracle's move, a callable maps the target box to an action."""
        env.reset(options=TASK)
        self.rewards: list[float] = []
        self.infos: list[dict[str, Any]] = []
        self.boxes: list[list[float] | None] = []
        self.taken: list[Action] = []
        for item in plan:
            box = env.unwrapped.privileged()["target_bbox"]
            action = env.unwrapped.oracle_action() if item is None else item(box) if callable(item) else item
            _, r, terminated, truncated, info = env.step(action)
            self.boxes.append(box)
            self.taken.append(action)
            self.rewards.append(float(r))
            self.infos.append(info)
            if terminated or truncated:
                break

    @property
    def last(self) -> dict[str, Any]:
        return self.infos[-1]


def _centre(box: list[float]) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def test_oracle_episode_earns_one_plus_alpha_b1_at_its_last_step(phone: GuiAndroidEnv) -> None:
    env = SweetSpotReward(phone)
    assert env.planning
    ep = Episode(env, [None] * 5)
    assert len(ep.rewards) == 5 and ep.last["success"]
    assert [a.type for a in ep.taken] == ["open_app", "click", "type", "type", "click"]
    assert ep.rewards[:4] == [0.0] * 4  # the trajectory is paid once, at its last step
    # h: open_app 1, type 1, type 1 (binary correctness); the clicks score phi of the oracle's point (its element's
    # centre; the box is rounded to whole pixels, the point is not, so phi is just under 1).
    s = (3 + _phi(ep.taken[1].point, ep.boxes[1]) + _phi(ep.taken[4].point, ep.boxes[4])) / 5
    assert ep.last["proximity"] == pytest.approx(s) and s > B1  # zone 1 -> S_hat = b_1
    assert ep.rewards[-1] == pytest.approx(1 + 0.2 * B1) == pytest.approx(1.121306, abs=1e-6)  # C = 1
    assert ep.last["binary_reward"] == 1.0 and ep.last["plan_steps"] == 5
    # RL-binary on the same trajectory: C(tau) = 1 at the end, 0 before.
    assert Episode(BinaryReward(phone), [None] * 5).rewards == [0.0, 0.0, 0.0, 0.0, 1.0]


def test_type_step_right_and_wrong_text(phone: GuiAndroidEnv) -> None:
    env = SweetSpotReward(phone)
    # open_app, click, type the right title, stop. The stop is graded against the oracle's next move (type the body):
    # a wrong type, h = 0. S = (1 + 1 + 1 + 0) / 4 = 0.75 -> zone 1 -> S_hat = 0.606531; C = 0 (the task is not done).
    right = Episode(env, [None, lambda box: Action("click", point=_centre(box)), None, Action.stop()])
    assert right.taken[2].text == TITLE
    assert [i["binary_reward"] for i in right.infos[:3]] == [1.0, 1.0, 1.0]
    assert right.last["proximity"] == pytest.approx(0.75)
    assert right.rewards == [0.0, 0.0, 0.0, pytest.approx(0.2 * B1)]  # 0.121306
    # The same with a wrong title: the type step is wrong (h = 0, C(a_t) = 0) -> S = 2 / 4 = 0.5 -> zone 2 -> 0.135335.
    wrong = Episode(env, [None, lambda box: Action("click", point=_centre(box)), Action.type_text("Shopping lists"),
                          Action.stop()])  # fmt: skip
    assert (wrong.infos[2]["binary_reward"], wrong.infos[2]["proximity"]) == (0.0, 0.0)
    assert wrong.last["proximity"] == pytest.approx(0.5)
    assert wrong.rewards[-1] == pytest.approx(0.2 * B2) == pytest.approx(0.027067, abs=1e-6)
    # Case and spacing are forgiven (whitespace-normalised exact match), as the paper's text check.
    loose = Episode(env, [None, lambda box: Action("click", point=_centre(box)), Action.type_text(f"  {TITLE} "),
                          Action.stop()])  # fmt: skip
    assert loose.infos[2]["binary_reward"] == 1.0


def test_click_near_far_and_wrong_action_type(phone: GuiAndroidEnv) -> None:
    env = SweetSpotReward(phone)
    # Click "New note" half-way from the centre to the right edge: dx = a / 2 -> d = 1.5 -> phi = exp(-1.125).
    near = Episode(env, [None, lambda box: Action.click(_centre(box)[0] + (box[2] - box[0]) / 4, _centre(box)[1]),
                         Action.stop()])  # fmt: skip
    assert near.infos[1]["binary_reward"] == 1.0
    assert near.infos[1]["proximity"] == pytest.approx(math.exp(-1.125)) == pytest.approx(0.324652, abs=1e-6)
    assert near.infos[1]["sweet_spot"] == pytest.approx(B2)  # phi in (b_2, b_1]: zone 2
    # S = (1 + 0.324652 + 0) / 3 = 0.441551 (the stop is not the oracle's next move) -> zone 2 -> R = 0.2 * b_2.
    assert near.last["proximity"] == pytest.approx((1 + math.exp(-1.125)) / 3)
    assert near.rewards[-1] == pytest.approx(0.2 * B2)
    # At the centre: phi = 1 -> S = 2 / 3 = 0.666667 > b_1 -> zone 1 -> R = 0.2 * b_1 = 0.121306.
    centre = Episode(env, [None, lambda box: Action("click", point=_centre(box)), Action.stop()])
    assert centre.infos[1]["proximity"] == 1.0 and centre.rewards[-1] == pytest.approx(0.2 * B1)
    # Outside the box (one box width right of the centre): phi = 0, C(a_t) = 0.
    far = Episode(env, [None, lambda box: Action.click(_centre(box)[0] + (box[2] - box[0]), _centre(box)[1]),
                        Action.stop()])  # fmt: skip
    assert (far.infos[1]["binary_reward"], far.infos[1]["proximity"]) == (0.0, 0.0)
    # Wrong action type: a long press at the centre of "New note", where a click is due -> h = 0 whatever the place.
    press = Episode(env, [None, lambda box: Action("long_press", point=_centre(box)), Action.stop()])
    assert (press.infos[1]["binary_reward"], press.infos[1]["proximity"]) == (0.0, 0.0)
    # Typing the title where the click on "New note" is due: wrong type, h = 0.
    typed = Episode(env, [None, Action.type_text(TITLE), Action.stop()])
    assert (typed.infos[1]["binary_reward"], typed.infos[1]["proximity"]) == (0.0, 0.0)
    # S = 1 / 3 (only open_app was right) -> zone 2 -> R = 0.2 * b_2.
    assert typed.last["proximity"] == pytest.approx(1 / 3) and typed.rewards[-1] == pytest.approx(0.2 * B2)


def test_planning_off_keeps_the_click_score(phone: GuiAndroidEnv) -> None:
    # planning=False (and ContinuousReward's default) grade each step as a click on the oracle's next box: open_app has
    # no box (not graded: the env's reward passes through), the click at the centre of "New note" earns 1 + 0.2 * b_1.
    for env in (SweetSpotReward(phone, planning=False), ContinuousReward(phone)):
        assert not env.planning
        ep = Episode(env, [None, lambda box: Action("click", point=_centre(box))])
        assert ep.infos[0]["reward_mode"] is None and ep.infos[1]["reward_mode"] == "gui"
    ep = Episode(
        SweetSpotReward(phone, planning=False), [None, lambda box: Action("click", point=_centre(box))]
    )
    assert ep.rewards[1] == pytest.approx(1 + 0.2 * B1)
