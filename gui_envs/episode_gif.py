"""Replay a saved trajectory as an animated GIF.

``python -m gui_envs.episode_gif runs/x/<trajectory id> out.gif`` writes one frame per step: the screenshot the
action answered, with the action drawn on it (a red ring at pointer targets) and a caption line (step number,
action, reward). Works for any guigym trajectory folder whose steps have screenshots (``--record``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from gui_envs.trajectory import Trajectory

CAPTION_PX = 18


def trajectory_to_gif(
    folder: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    frame_ms: int = 800,
    max_width: int = 960,
) -> Path:
    """Write the trajectory in ``folder`` as an animated GIF at ``out_path`` and return the path.

    Args:
        folder: a trajectory folder written by :meth:`Trajectory.save` (it holds ``trajectory.jsonl``).
        out_path: the GIF to write.
        frame_ms: how long each frame shows, in milliseconds.
        max_width: frames wider than this (pixels) are scaled down, keeping the aspect ratio.

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
        draw = ImageDraw.Draw(image)
        action = step.action
        point = _point_of(step)
        if point is not None:
            x, y = point
            draw.ellipse((x - 12, y - 12, x + 12, y + 12), outline=(230, 30, 30), width=3)
        label = action.to_json() if action is not None else (step.output_text or "(no action)")
        caption = f"step {index}: {label[:150]}  reward={step.reward:+.2f}"
        canvas = Image.new("RGB", (image.width, image.height + CAPTION_PX), (0, 0, 0))
        canvas.paste(image, (0, CAPTION_PX))
        ImageDraw.Draw(canvas).text((4, 3), caption, fill=(255, 255, 255))
        if canvas.width > max_width:
            canvas = canvas.resize((max_width, round(canvas.height * max_width / canvas.width)))
        frames.append(canvas)
    if not frames:
        raise ValueError(f"{folder} has no screenshots; record episodes with `guigym run ... --record DIR`")
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(out, save_all=True, append_images=frames[1:], duration=frame_ms, loop=0, optimize=True)
    return out


def _point_of(step: object) -> tuple[float, float] | None:
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
    parser = argparse.ArgumentParser(prog="python -m gui_envs.episode_gif", description=__doc__.splitlines()[0])
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
