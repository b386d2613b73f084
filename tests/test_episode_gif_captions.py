"""GIF captions: readable, instruction on every frame, wrapped to a 360-px phone frame, final state last."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageFont

from gui_envs.schema.actions import Action
from gui_envs.schema.trajectory import Step, Trajectory
from guigym.episode_gif import CAPTION_FONT_PX, _wrap, trajectory_to_gif

LONG = "Open the Expenses app, pick the account called Pro Expense and delete the expense named 'Taxi to the airport'"


def _phone_trajectory() -> Trajectory:
    frames = [np.full((800, 360, 3), v, np.uint8) for v in (40, 80)]
    steps = [Step(action=Action.click(100, 200), reward=0.0, screenshot=frames[0]),
             Step(action=Action.click(50, 700), reward=1.0, screenshot=frames[1], terminated=True)]
    return Trajectory(LONG, steps=steps, success=True, final_screenshot=np.full((800, 360, 3), 200, np.uint8))


def test_wrap_keeps_every_row_inside_the_width() -> None:
    font = ImageFont.load_default(size=CAPTION_FONT_PX)
    rows = _wrap(LONG + " " + "x" * 80, font, 352, max_rows=10)
    assert len(rows) > 2 and all(font.getlength(r) <= 352 for r in rows)
    assert " ".join(rows).replace(" ", "").startswith(LONG.replace(" ", "")[:40])
    assert _wrap(LONG, font, 352, max_rows=2)[-1].endswith("\u2026")


def test_phone_gif_keeps_its_width_and_ends_on_the_final_screen(tmp_path: Path) -> None:
    folder = _phone_trajectory().save(tmp_path)
    assert (folder / "final.png").is_file()
    assert Trajectory.load(folder, load_images=True).final_screenshot.mean() == 200
    gif = trajectory_to_gif(folder, tmp_path / "x.gif")
    with Image.open(gif) as im:
        assert im.n_frames == 3 and im.width == 360
        sizes = []
        for k in range(im.n_frames):
            im.seek(k)
            frame = np.asarray(im.convert("RGB"))
            caption = frame[: frame.shape[0] - 800]
            sizes.append(caption.shape[0])
            # The instruction row is drawn in yellow on every frame, the last one included.
            yellow = (caption[..., 0] > 200) & (caption[..., 1] > 180) & (caption[..., 2] < 140)
            assert yellow.any()
        im.seek(2)
        assert np.asarray(im.convert("RGB"))[-10:, :].mean() > 150  # the final screen (value 200) shows last
    assert min(sizes) >= 3 * (CAPTION_FONT_PX + 4)  # instruction wrapped to >= 2 rows plus the step line
