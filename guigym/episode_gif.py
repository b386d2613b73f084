"""Replay a saved trajectory as an animated GIF.

``python -m guigym.episode_gif runs/x/<trajectory id> out.gif`` writes one frame per step: the screenshot the
action answered, with the action drawn on it (a red ring at pointer targets) and a caption (the instruction,
then step number, action, reward), then a last frame with the screen after the last action. Works for any
guigym trajectory folder whose steps have screenshots (``--record``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from gui_envs.schema.trajectory import Trajectory

#: Caption font size in pixels: readable in a 360-px phone frame and in a 960-px web frame.
CAPTION_FONT_PX = 14
#: Pointer marker radius in pixels.
MARKER_PX = 12


def trajectory_to_gif(
    folder: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    frame_ms: int = 800,
    max_width: int = 960,
) -> Path:
    """Write the trajectory in ``folder`` as an animated GIF at ``out_path`` and return the path.

    One frame per step (the screen the action answered, a red ring where it pointed), then the screen after the
    last action when the trajectory has it (``final.png``), so the replay ends on the outcome. Every frame
    carries the instruction above the step's action and reward, wrapped to the frame's width.

    Args:
        folder: a trajectory folder written by :meth:`Trajectory.save` (it holds ``trajectory.jsonl``).
        out_path: the GIF to write.
        frame_ms: how long each frame shows, in milliseconds (the final frame shows twice as long).
        max_width: frames wider than this (pixels) are scaled down before captioning, keeping the aspect ratio.

    Raises:
        ValueError: when no step of the trajectory has a screenshot (record with ``--record``).
    """
    from PIL import Image, ImageDraw

    traj = Trajectory.load(folder, load_images=True)
    frames: list[Image.Image] = []
    for index, step in enumerate(traj.steps):
        if step.screenshot is None:
            continue
        image = Image.fromarray(np.asarray(step.screenshot, dtype=np.uint8))
        point = point_of(step)
        if point is not None:
            x, y = point
            r = MARKER_PX
            ImageDraw.Draw(image).ellipse((x - r, y - r, x + r, y + r), outline=(230, 30, 30), width=3)
        action = step.action
        label = action.to_json() if action is not None else (step.output_text or "(no action)")
        caption = f"step {index}: {label[:200]}  reward={step.reward:+.2f}"
        frames.append(_captioned(image, traj.instruction, caption, max_width))
    if not frames:
        raise ValueError(f"{folder} has no screenshots; record episodes with `guigym run ... --record DIR`")
    durations = [frame_ms] * len(frames)
    if traj.final_screenshot is not None:
        verdict = {True: "success", False: "failure", None: "no verdict"}[traj.success]
        final = Image.fromarray(np.asarray(traj.final_screenshot, dtype=np.uint8))
        caption = f"end: {verdict}, return {traj.total_reward:+.2f}"
        frames.append(_captioned(final, traj.instruction, caption, max_width))
        durations.append(2 * frame_ms)
    # A GIF has one canvas size: captions of different lengths are padded at the top, so the screens align.
    height = max(f.height for f in frames)
    for k, frame in enumerate(frames):
        if frame.height < height:
            padded = Image.new("RGB", (frame.width, height), (0, 0, 0))
            padded.paste(frame, (0, height - frame.height))
            frames[k] = padded
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(out, save_all=True, append_images=frames[1:], duration=durations, loop=0, optimize=True)
    return out


def _captioned(image: Any, instruction: str, line: str, max_width: int) -> Any:
    """``image`` (scaled to ``max_width``) under a black caption: the instruction, then ``line``, each wrapped
    to the frame width so that nothing is cut in a narrow phone frame."""
    from PIL import Image, ImageDraw, ImageFont

    if image.width > max_width:
        image = image.resize((max_width, round(image.height * max_width / image.width)))
    font = ImageFont.load_default(size=CAPTION_FONT_PX)
    width = image.width - 8
    rows = [(r, (255, 230, 90)) for r in _wrap(instruction or "(no instruction)", font, width)]
    rows += [(r, (255, 255, 255)) for r in _wrap(line, font, width)]
    line_px = CAPTION_FONT_PX + 4
    caption_px = line_px * len(rows) + 6
    canvas = Image.new("RGB", (image.width, image.height + caption_px), (0, 0, 0))
    canvas.paste(image, (0, caption_px))
    draw = ImageDraw.Draw(canvas)
    for k, (text, colour) in enumerate(rows):
        draw.text((4, 3 + k * line_px), text, fill=colour, font=font)
    return canvas


def _wrap(text: str, font: Any, width: float, max_rows: int = 4) -> list[str]:
    """Greedy word wrap of ``text`` to ``width`` pixels in ``font``; at most ``max_rows`` rows (the last one
    ends in an ellipsis when text was left over). Words longer than a row are cut by characters."""
    rows: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if font.getlength(candidate) <= width:
            current = candidate
            continue
        if current:
            rows.append(current)
        while font.getlength(word) > width and len(word) > 1:
            cut = max(1, int(len(word) * width / font.getlength(word)))
            rows.append(word[:cut])
            word = word[cut:]
        current = word
    if current:
        rows.append(current)
    if len(rows) > max_rows:
        rows = rows[:max_rows]
        rows[-1] = rows[-1][: max(0, len(rows[-1]) - 1)] + "\u2026"
    return rows


def point_of(step: object) -> tuple[float, float] | None:
    """The pixel the step's action targeted: its point, or the centre of its element's bbox from ``info``."""
    action = getattr(step, "action", None)
    if action is None:
        return None
    if action.point is not None:
        return action.point
    bbox = (getattr(step, "info", {}) or {}).get("action_bbox")
    if action.element_id is not None and bbox:
        return ((bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m guigym.episode_gif", description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a trajectory folder (holds trajectory.jsonl)")
    parser.add_argument("out", help="the GIF to write")
    parser.add_argument("--frame-ms", type=int, default=800, help="milliseconds per frame")
    args = parser.parse_args(argv)
    try:
        path = trajectory_to_gif(args.folder, args.out, frame_ms=args.frame_ms)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
