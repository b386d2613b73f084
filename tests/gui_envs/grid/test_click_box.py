"""ClickBox-v0: layouts drawn per seed, the oracle hits, nothing but the instruction names the target, near misses
are graded by the reward wrappers, and a random click scores low."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401
from agents.prompts.box import CELL_NAMES, BoxFormat
from agents.prompts.formats import PromptContext
from gui_envs.reward_wrappers import with_reward
from gui_envs.schema.actions import Action


def _boxes(obs: dict) -> list[dict]:
    return json.loads(obs["elements"])


def test_layout_changes_with_the_seed_and_repeats_under_it() -> None:
    env = gym.make("ClickBox-v0")
    layouts = {json.dumps(_boxes(env.reset(seed=s)[0])) for s in range(50)}
    assert len(layouts) == 50  # no two of 50 seeds draw the same layout
    a, _ = env.reset(seed=9)
    b, _ = env.reset(seed=9)
    assert a["elements"] == b["elements"] and a["instruction"] == b["instruction"]
    np.testing.assert_array_equal(a["screenshot"], b["screenshot"])


def test_boxes_are_apart_and_inside_the_canvas_and_the_oracle_hits() -> None:
    env = gym.make("ClickBox-v0", n_boxes=6, canvas_px=140)
    for seed in range(100):
        obs, _ = env.reset(seed=seed)
        boxes = [b["bbox"] for b in _boxes(obs)]
        assert len({b["text"] for b in _boxes(obs)}) == 6
        for i, (x0, y0, x1, y1) in enumerate(boxes):
            assert 0 <= x0 and x1 < 140 and 0 <= y0 and y1 < 140 and 22 <= x1 - x0 + 1 <= 34
            for u0, v0, u1, v1 in boxes[i + 1 :]:
                assert x1 < u0 or u1 < x0 or y1 < v0 or v1 < y0
        assert env.step(env.unwrapped.oracle_action())[1] == 1.0


def test_only_the_instruction_names_the_target() -> None:
    # Policies that ignore the instruction (first listed box, largest box) hit about 1 in n_boxes; the reset info
    # holds nothing but the task name.
    env = gym.make("ClickBox-v0")
    first = largest = 0
    n = 400
    for seed in range(n):
        obs, info = env.reset(seed=seed)
        assert info == {"task": "click_box"}
        boxes = _boxes(obs)
        assert all(set(b) == {"id", "role", "text", "color", "bbox", "clickable"} for b in boxes)
        area = [(b["bbox"][2] - b["bbox"][0]) * (b["bbox"][3] - b["bbox"][1]) for b in boxes]
        picks = [boxes[0], boxes[int(np.argmax(area))]]
        hits = []
        for pick in picks:
            x0, y0, x1, y1 = pick["bbox"]
            env.reset(seed=seed)
            hits.append(env.step(Action.click((x0 + x1) / 2, (y0 + y1) / 2))[1])
        first += hits[0]
        largest += hits[1]
    assert 0.17 < first / n < 0.33 and 0.17 < largest / n < 0.33, (first / n, largest / n)


def test_a_crowded_canvas_is_refused_with_a_fix() -> None:
    with pytest.raises(ValueError, match="raise canvas_px"):
        gym.make("ClickBox-v0", n_boxes=6)


def test_a_random_click_scores_low() -> None:
    env = gym.make("ClickBox-v0")
    rng = np.random.default_rng(0)
    hits = 0
    for seed in range(2000):
        env.reset(seed=seed)
        hits += env.step(list(rng.uniform(0, 100, size=2)))[1]
    rate = hits / 2000
    print(f"random click success: {rate:.3f}")
    assert 0.03 < rate < 0.1


def _reward_at(env: gym.Env, seed: int, point: tuple[float, float]) -> float:
    env.reset(seed=seed)
    return float(env.step(Action.click(*point))[1])


def test_the_reward_wrappers_grade_distance_from_the_privileged_box() -> None:
    # ssl pays a hit near the centre more than one at the edge; continuous pays a near miss more than a far one.
    ssl, cont = (
        with_reward(gym.make("ClickBox-v0"), "ssl"),
        with_reward(gym.make("ClickBox-v0"), "continuous"),
    )
    ssl.reset(seed=4)
    x0, y0, x1, y1 = ssl.unwrapped.target_box()
    centre, edge, near = ((x0 + x1) / 2, (y0 + y1) / 2), (x1, (y0 + y1) / 2), (x1 + 4, (y0 + y1) / 2)
    far = (0.0 if x0 > 50 else 99.0, 99.0 if y0 < 50 else 0.0)
    assert _reward_at(ssl, 4, centre) > _reward_at(ssl, 4, edge) >= 1.0 > _reward_at(ssl, 4, near)
    assert _reward_at(cont, 4, centre) > _reward_at(cont, 4, near) > _reward_at(cont, 4, far)


def test_the_box_format_lists_every_box_and_its_cell_holds_the_target() -> None:
    env = gym.make("ClickBox-v0")
    fmt = BoxFormat()
    for seed in range(300):
        obs, _ = env.reset(seed=seed)
        text = fmt.messages(PromptContext(obs, obs["instruction"]))[0]["content"]
        listing = dict(item.split(":") for item in text.splitlines()[0].split(","))
        assert set(listing) == {b["text"] for b in _boxes(obs)}
        label = obs["instruction"].split('"')[1]
        action, error = fmt.parse(listing[label], obs)
        assert error is None and env.step(action)[1] == 1.0
        assert fmt.answer_text(action, obs) == listing[label]


@pytest.mark.parametrize("text", ["", "123 !?", "ZZZ", "abc"])
def test_the_box_format_refuses_answers_without_a_cell(text: str) -> None:
    obs, _ = gym.make("ClickBox-v0").reset(seed=0)
    action, error = BoxFormat().parse(text, obs)
    assert action is None and error is not None and error.code == "no_cell"
    assert "Z" not in CELL_NAMES[:25]  # 'Z' is no cell of the 5 x 5 grid; lower case is no cell at all


#: The pixel task of ``tests/trainers/test_grpo_pixels.py``: the target named by colour, the boxes withheld.
PIXELS = dict(n_boxes=2, canvas_px=140, min_side=30, max_side=44, target_by="colour")


def test_target_by_colour_keeps_the_layout_and_withholds_the_boxes() -> None:
    # The same seed draws the same layout, screenshot and target in both modes; only the text differs.
    by_label, by_colour = (
        gym.make("ClickBox-v0", **{**PIXELS, "target_by": "label"}),
        gym.make("ClickBox-v0", **PIXELS),
    )
    for seed in range(50):
        a, _ = by_label.reset(seed=seed)
        b, _ = by_colour.reset(seed=seed)
        np.testing.assert_array_equal(a["screenshot"], b["screenshot"])
        assert by_label.unwrapped.privileged() == by_colour.unwrapped.privileged()
        target = _boxes(a)[by_colour.unwrapped.target - 1]
        assert b["elements"] == "[]" and b["instruction"] == f"click the {target['color']} box"
        assert b in by_colour.observation_space


def test_target_by_colour_hides_the_box_from_the_text_but_not_from_the_pixels() -> None:
    # Referee: the text the agent receives is one of eight phrases (the colour name only) whatever the layout, so it
    # cannot hold the target's position; the screenshot alone locates it: the pixels of the named colour are the
    # target's interior, and clicking their centroid always hits.
    from gui_envs.grid.click_box import COLOURS

    env = gym.make("ClickBox-v0", **PIXELS)
    texts = set()
    for seed in range(300):
        obs, info = env.reset(seed=seed)
        assert info == {"task": "click_box"} and obs["elements"] == "[]"
        texts.add(obs["instruction"])
        colour = obs["instruction"].split()[2]
        ys, xs = np.nonzero((obs["screenshot"] == COLOURS[colour]).all(-1))
        x0, y0, x1, y1 = env.unwrapped.target_box()
        assert xs.min() == x0 + 1 and xs.max() == x1 - 1 and ys.min() == y0 + 1 and ys.max() == y1 - 1
        assert env.step(Action.click(float(xs.mean()), float(ys.mean())))[1] == 1.0
    assert texts == {f"click the {c} box" for c in COLOURS}


def test_target_by_colour_is_not_passed_by_a_constant_answer() -> None:
    # Adversarial constants: every cell of the box format's 5 x 5 grid, clicked at its centre on every layout of 2000
    # seeds, and a uniformly random click; the chance levels quoted in the env docstring.
    env = gym.make("ClickBox-v0", **PIXELS)
    fmt, rng = BoxFormat(), np.random.default_rng(0)
    n, cells, rand, box = 2000, np.zeros(25), 0.0, 0.0
    for seed in range(n):
        obs, _ = env.reset(seed=seed)
        x0, y0, x1, y1 = env.unwrapped.target_box()
        for k in range(25):
            x, y = fmt.parse(CELL_NAMES[k], obs)[0].point
            cells[k] += x0 <= x <= x1 and y0 <= y <= y1
        x, y = rng.uniform(0, 140, size=2)
        rand += x0 <= x <= x1 and y0 <= y <= y1
        env.reset(seed=seed)
        other = env.unwrapped.boxes[int(rng.integers(2))]["bbox"]
        box += env.step(Action.click((other[0] + other[2]) / 2, (other[1] + other[3]) / 2))[1]
    print(f"best constant cell {cells.max() / n:.3f}, random cell {cells.mean() / n:.3f}, random click {rand / n:.3f}, "
          f"random box {box / n:.3f}")  # fmt: skip
    assert cells.max() / n < 0.16 and 0.04 < rand / n < 0.1 and 0.45 < box / n < 0.55


def test_the_box_format_prompts_the_instruction_alone_when_the_boxes_are_withheld() -> None:
    obs, _ = gym.make("ClickBox-v0", **PIXELS).reset(seed=3)
    assert BoxFormat().messages(PromptContext(obs, obs["instruction"]))[0]["content"] == obs["instruction"]
    (message,) = BoxFormat().messages(PromptContext(obs, obs["instruction"], with_image=True))
    assert message["content"] == [{"type": "image"}, {"type": "text", "text": obs["instruction"]}]


def test_an_unknown_target_by_is_refused() -> None:
    with pytest.raises(ValueError, match="target_by"):
        gym.make("ClickBox-v0", target_by="position")


def test_one_box_is_a_pixel_task_only() -> None:
    # A one-item element list would name the target's bbox: "click every listed box" would score 1.0.
    with pytest.raises(ValueError, match="n_boxes=1 needs target_by='colour'"):
        gym.make("ClickBox-v0", n_boxes=1)
    env = gym.make("ClickBox-v0", n_boxes=1, canvas_px=140, min_side=30, max_side=44, target_by="colour")
    obs, _ = env.reset(seed=3)
    assert obs["elements"] == "[]" and "box" in obs["instruction"]
    # Blind policies: stopping at once and clicking the canvas centre are not paid on every layout.
    wins = []
    for seed in range(200):
        env.reset(seed=seed)
        wins.append(env.step(Action.click(70, 70))[1])
    assert 0 < sum(wins) / len(wins) < 0.5
    env.reset(seed=4)
    assert env.step(Action.stop())[1] == 0.0


def test_a_viewport_gives_a_wide_canvas_that_check_env_accepts_and_the_memory_plan_reads() -> None:
    from gymnasium.utils.env_checker import check_env

    from trainers.memory_plan import env_viewport, image_tokens

    env = gym.make("ClickBox-v0", viewport=(1280, 720))
    check_env(env.unwrapped, skip_render_check=True)
    seen_x1 = 0
    for seed in range(50):
        obs, _ = env.reset(seed=seed)
        assert obs["screenshot"].shape == (720, 1280, 3)
        for x0, y0, x1, y1 in (b["bbox"] for b in _boxes(obs)):
            assert 0 <= x0 and x1 < 1280 and 0 <= y0 and y1 < 720
            seen_x1 = max(seen_x1, x1)
        assert env.step(env.unwrapped.oracle_action())[1] == 1.0
    assert seen_x1 >= 720  # boxes use the width beyond the height, not only a square corner
    # The memory plan reads the screenshot size from env_kwargs: 1280 x 720 is 46 x 26 visual tokens of Qwen2.5-VL.
    assert env_viewport("ClickBox-v0", {"viewport": [1280, 720]}) == (1280, 720)
    assert image_tokens("Qwen/Qwen2.5-VL-3B-Instruct", (1280, 720))[0] == 46 * 26
    assert env_viewport("ClickBox-v0", {}) is None  # the square default names no viewport
    with pytest.raises(ValueError, match="viewport"):
        gym.make("ClickBox-v0", viewport=(1280, 60))
