"""The ``box`` format's two-letter answers (row letter, column letter): cell centres computed by hand, the parse,
the SFT answer text, the prompt's listing on ClickBox-v0, the grid limits and ``resolve_output_format``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401
from agents.prompts.box import BoxFormat
from agents.prompts.formats import PromptContext
from gui_envs.schema.actions import Action
from trainers.policy_setup import resolve_output_format

SHOT_100 = {"screenshot": np.zeros((100, 100, 3), np.uint8)}


@pytest.mark.parametrize(
    ("grid", "text", "point"),
    [
        # 10-pixel cells: centre of row r, column c at (10 c + 4.5, 10 r + 4.5).
        (10, "AA", (4.5, 4.5)),
        (10, "JA", (4.5, 94.5)),
        (10, "CJ", (94.5, 24.5)),
        (10, "EF", (54.5, 44.5)),
        # 12.5-pixel cells: centre at (12.5 c + 5.75, 12.5 r + 5.75); "BC" is row 1, column 2.
        (8, "BC", (30.75, 18.25)),
        (8, "HH", (93.25, 93.25)),
    ],
)
def test_two_letters_click_the_cell_centre(grid: int, text: str, point: tuple[float, float]) -> None:
    action, error = BoxFormat(grid=grid, letters=2).parse(text, SHOT_100)
    assert error is None and action is not None and action.point == point


def test_the_first_two_grid_letters_are_read_row_then_column() -> None:
    fmt = BoxFormat(grid=10, letters=2)
    # Letters outside A-J and lower case are skipped; a third letter is ignored.
    assert fmt.parse("xB!zCD", SHOT_100)[0].point == (24.5, 14.5)
    assert fmt.parse("CB", SHOT_100)[0].point == (14.5, 24.5)  # the order matters: row C, column B


@pytest.mark.parametrize("text", ["", "B", "KZ", "b c", "1 2"])
def test_fewer_than_two_grid_letters_do_not_parse(text: str) -> None:
    action, error = BoxFormat(grid=10, letters=2).parse(text, SHOT_100)
    assert action is None and error is not None and error.code == "no_cell"


def test_answer_text_names_the_cell_of_the_click() -> None:
    fmt = BoxFormat(grid=10, letters=2)
    # (50, 10): column round((50 - 4.5) / 10) = 5 (F), row round((10 - 4.5) / 10) = 1 (B).
    assert fmt.answer_text(Action.click(50, 10), SHOT_100) == "BF"
    assert fmt.answer_text(Action.click(0, 99), SHOT_100) == "JA"
    names = [r + c for r in "ABCDEFGHIJ" for c in "ABCDEFGHIJ"]
    for name in names:  # every cell's centre names its own cell
        assert fmt.answer_text(fmt.parse(name, SHOT_100)[0], SHOT_100) == name


def test_the_listing_names_a_cell_inside_the_target_on_small_boxes() -> None:
    # Boxes of 14-24 pixels and 10-pixel cells: the cell nearest a box's centre has its centre inside the box (at
    # most 5 pixels from the box centre, less than half the smallest side), so copying the listed cell always hits.
    env = gym.make("ClickBox-v0", n_boxes=2, min_side=14, max_side=24)
    fmt = BoxFormat(grid=10, letters=2)
    for seed in range(300):
        obs, _ = env.reset(seed=seed)
        text = fmt.messages(PromptContext(obs, obs["instruction"]))[0]["content"]
        listing = dict(item.split(":") for item in text.splitlines()[0].split(","))
        assert all(len(cell) == 2 for cell in listing.values()), listing
        label = obs["instruction"].split('"')[1]
        action, error = fmt.parse(listing[label], obs)
        assert error is None and env.step(action)[1] == 1.0
        assert fmt.answer_text(action, obs) == listing[label]


def test_the_alphabet_and_the_grid_limits() -> None:
    assert BoxFormat().alphabet == "ABCDEFGHIJKLMNOPQRSTUVWXY"
    assert BoxFormat(grid=10, letters=2).alphabet == "ABCDEFGHIJ"
    BoxFormat(grid=26, letters=2)
    for kwargs in ({"grid": 6}, {"grid": 10, "letters": 1}, {"grid": 27, "letters": 2}, {"grid": 1, "letters": 2},
                   {"grid": 5, "letters": 3}):  # fmt: skip
        with pytest.raises(ValueError):
            BoxFormat(**kwargs)  # type: ignore[arg-type]


def test_resolve_output_format_reads_grid_and_letters() -> None:
    fmt = resolve_output_format("box", {"grid": 10, "letters": 2})
    assert isinstance(fmt, BoxFormat) and (fmt.grid, fmt.letters) == (10, 2)
    # GRPO without format_kwargs passes the env's arguments: they leave the default 5 x 5 one-letter grid.
    fmt = resolve_output_format("box", {"n_boxes": 2, "min_side": 14})
    assert (fmt.grid, fmt.letters) == (5, 1)
    assert (resolve_output_format("box").grid, resolve_output_format("box").letters) == (5, 1)
