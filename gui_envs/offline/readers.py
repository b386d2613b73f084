"""Readers for public offline GUI datasets, each turning its native schema into :class:`OfflineEpisode` records.

Every reader takes the dataset's root folder (as downloaded) and returns episodes whose recorded actions are
:class:`~gui_envs.actions.Action` in **screenshot pixels** (each dataset's own frame is converted here).

| name | download | layout read here |
| --- | --- | --- |
| ``screenspot`` | https://github.com/njucckevin/SeeClick (ScreenSpot, ``screenspot_{mobile,desktop,web}.json`` + ``screenspot_imgs/``) | ``bbox`` = ``[x, y, w, h]`` pixels, ``data_type`` text/icon, ``data_source`` |
| ``screenspot_pro`` | https://huggingface.co/datasets/likaixin/ScreenSpot-Pro (``annotations/*.json`` + ``images/``) | ``bbox`` = ``[x1, y1, x2, y2]`` pixels, ``ui_type``, ``group``, ``platform`` |
| ``androidcontrol`` | https://github.com/google-research/google-research/tree/master/android_control (TFRecords; export each episode as one JSON line with the same field names, screenshots as PNG files) | ``goal``, ``screenshots``, ``screenshot_widths/heights``, ``actions`` (JSON strings, pixels), ``step_instructions`` |
| ``aitz`` | https://github.com/IMNearth/CoAT (Android-in-the-Zoo, ``<split>/<category>/<episode>/<episode>.json``) | AITW action codes, ``result_touch_yx`` / ``result_lift_yx`` as ``[y, x]`` in [0, 1] |
| ``gui_odyssey`` | https://huggingface.co/datasets/OpenGVLab/GUI-Odyssey (``annotations/*.json`` + ``screenshots/``) | ``step_info[].action`` CLICK/TEXT/SCROLL/..., points on a 0-1000 scale |
| ``gui_r1`` | https://huggingface.co/datasets/ritzzai/GUI-R1 (parquet; export rows to JSONL with image files) | ``instruction``, ``history``, ``gt_action``, ``gt_bbox`` (pixels; point or box), ``gt_input_text`` |
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui_envs.actions import Action, InvalidActionError

Box = tuple[float, float, float, float]


class OfflineDatasetError(ValueError):
    """The dataset folder is missing or a record does not follow the dataset's schema."""


@dataclass
class OfflineStep:
    """One recorded step.

    Attributes:
        image: path of the screenshot file.
        action: the recorded action, in screenshot pixels.
        bbox: the target element box ``(x1, y1, x2, y2)`` in pixels, when recorded.
        screen_size: ``(width, height)`` in pixels, when the record says (otherwise read from the image).
        step_instruction: a low-level instruction for this step (AndroidControl-Low), if any.
        history: the recorded action history text (GUI-R1 style), if any.
    """

    image: Path
    action: Action
    bbox: Box | None = None
    screen_size: tuple[int, int] | None = None
    step_instruction: str | None = None
    history: str | None = None


@dataclass
class OfflineEpisode:
    """One task: an instruction and its recorded steps (grounding datasets: one step)."""

    id: str
    instruction: str
    steps: list[OfflineStep]
    platform: str = "unknown"
    category: str = "unknown"
    extra: dict[str, Any] = field(default_factory=dict)


def _load_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise OfflineDatasetError(f"cannot read {path}: {exc}") from exc


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise OfflineDatasetError(f"{path}:{n} is not JSON: {exc}") from exc


def _centre(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0)


def _direction(dx: float, dy: float) -> str:
    """Finger motion (dx, dy) to the scroll direction of the view: a swipe up scrolls the content down."""
    if abs(dx) > abs(dy):
        return "right" if dx < 0 else "left"
    return "down" if dy < 0 else "up"


# ----- ScreenSpot / ScreenSpot-Pro ---------------------------------------------------------------------


def read_screenspot(root: Path) -> list[OfflineEpisode]:
    """ScreenSpot: ``screenspot_<platform>.json`` lists with ``bbox`` as ``[x, y, w, h]`` pixels."""
    episodes = []
    files = sorted(root.glob("screenspot_*.json"))
    if not files:
        raise OfflineDatasetError(f"no screenspot_*.json under {root}")
    for path in files:
        platform = path.stem.split("_", 1)[1]
        for i, rec in enumerate(_load_json(path)):
            x, y, w, h = (float(v) for v in rec["bbox"])
            box = (x, y, x + w, y + h)
            step = OfflineStep(
                root / "screenspot_imgs" / rec["img_filename"], Action.click(*_centre(box)), bbox=box
            )
            episodes.append(
                OfflineEpisode(
                    f"{platform}-{i}",
                    rec["instruction"],
                    [step],
                    platform=platform,
                    category=str(rec.get("data_type", "unknown")),
                    extra={"source": rec.get("data_source")},
                )
            )
    return episodes


def read_screenspot_pro(root: Path) -> list[OfflineEpisode]:
    """ScreenSpot-Pro: ``annotations/*.json`` with ``bbox`` as ``[x1, y1, x2, y2]`` pixels."""
    episodes = []
    files = sorted((root / "annotations").glob("*.json"))
    if not files:
        raise OfflineDatasetError(f"no annotations/*.json under {root}")
    for path in files:
        for rec in _load_json(path):
            box = tuple(float(v) for v in rec["bbox"])
            size = tuple(int(v) for v in rec["img_size"]) if rec.get("img_size") else None
            step = OfflineStep(
                root / "images" / rec["img_filename"], Action.click(*_centre(box)), bbox=box, screen_size=size
            )  # type: ignore[arg-type]
            episodes.append(
                OfflineEpisode(
                    str(rec.get("id", f"{path.stem}-{len(episodes)}")),
                    rec["instruction"],
                    [step],
                    platform=str(rec.get("platform", "unknown")),
                    category=f"{rec.get('group', 'unknown')}/{rec.get('ui_type', 'unknown')}",
                    extra={"application": rec.get("application")},
                )
            )
    return episodes


# ----- AndroidControl ----------------------------------------------------------------------------------


def _androidcontrol_action(raw: dict[str, Any], size: tuple[int, int]) -> Action:
    t = raw.get("action_type")
    if t in ("click", "long_press"):
        return Action(t, point=(float(raw["x"]), float(raw["y"])))
    if t == "input_text":
        return Action.type_text(str(raw["text"]))
    if t == "scroll":
        return Action.scroll(str(raw["direction"]))
    if t in ("navigate_back", "navigate_home"):
        return Action.navigate(t.split("_")[1])
    if t == "open_app":
        return Action("open_app", app=str(raw["app_name"]))
    if t == "wait":
        return Action("wait")
    raise OfflineDatasetError(f"unknown AndroidControl action {raw!r}")


def read_androidcontrol(root: Path) -> list[OfflineEpisode]:
    """AndroidControl episodes exported as JSON lines (``*.jsonl``), one episode per line."""
    episodes = []
    files = sorted(root.glob("*.jsonl"))
    if not files:
        raise OfflineDatasetError(f"no *.jsonl episode files under {root}")
    for path in files:
        for rec in _jsonl(path):
            steps = []
            for k, raw in enumerate(rec["actions"]):
                raw = json.loads(raw) if isinstance(raw, str) else raw
                size = (int(rec["screenshot_widths"][k]), int(rec["screenshot_heights"][k]))
                instr = rec.get("step_instructions", [None] * len(rec["actions"]))[k]
                steps.append(
                    OfflineStep(
                        root / rec["screenshots"][k],
                        _androidcontrol_action(raw, size),
                        screen_size=size,
                        step_instruction=instr,
                    )
                )
            episodes.append(
                OfflineEpisode(
                    str(rec["episode_id"]), rec["goal"], steps, platform="android", category="androidcontrol"
                )
            )
    return episodes


# ----- AITZ (Android in the Zoo) -----------------------------------------------------------------------

# AITW action codes (as used by AITZ's ``result_action_type``).
_AITW_TYPE, _AITW_DUAL_POINT, _AITW_BACK, _AITW_HOME, _AITW_ENTER = 3, 4, 5, 6, 7
_AITW_COMPLETE, _AITW_IMPOSSIBLE = 10, 11


def _yx(value: Any) -> tuple[float, float]:
    y, x = json.loads(value) if isinstance(value, str) else value
    return float(y), float(x)


def _aitz_action(rec: dict[str, Any], size: tuple[int, int]) -> Action:
    code = int(rec["result_action_type"])
    w, h = size
    if code == _AITW_DUAL_POINT:
        (ty, tx), (ly, lx) = _yx(rec["result_touch_yx"]), _yx(rec["result_lift_yx"])
        # AITW's rule: a gesture shorter than 0.04 of the screen is a tap, longer is a scroll.
        if math.hypot(lx - tx, ly - ty) < 0.04:
            return Action.click(tx * w, ty * h)
        return Action.scroll(_direction((lx - tx) * w, (ly - ty) * h))
    if code == _AITW_TYPE:
        return Action.type_text(str(rec.get("result_action_text", "")))
    if code == _AITW_BACK:
        return Action.navigate("back")
    if code == _AITW_HOME:
        return Action.navigate("home")
    if code == _AITW_ENTER:
        return Action.press("enter")
    if code == _AITW_COMPLETE:
        return Action.stop()
    if code == _AITW_IMPOSSIBLE:
        return Action.stop(status="infeasible")
    raise OfflineDatasetError(f"unknown AITW action code {code}")


def read_aitz(root: Path) -> list[OfflineEpisode]:
    """AITZ: ``<split>/<category>/<episode>/<episode>.json`` step lists with CoaT annotations."""
    from PIL import Image

    episodes = []
    files = sorted(p for p in root.rglob("*.json") if p.stem == p.parent.name)
    if not files:
        raise OfflineDatasetError(f"no <episode>/<episode>.json files under {root}")
    for path in files:
        records = sorted(_load_json(path), key=lambda r: int(r["step_id"]))
        steps = []
        for rec in records:
            image = root / rec["image_path"]
            with Image.open(image) as img:
                size = img.size
            step = OfflineStep(image, _aitz_action(rec, size), screen_size=size)
            steps.append(step)
        first = records[0]
        episodes.append(
            OfflineEpisode(
                str(first["episode_id"]),
                first["instruction"],
                steps,
                platform="android",
                category=path.parent.parent.name,
                extra={
                    "coat": [
                        {k: r.get(k) for k in ("coat_screen_desc", "coat_action_think", "coat_action_desc")}
                        for r in records
                    ]
                },
            )
        )
    return episodes


# ----- GUI-Odyssey -------------------------------------------------------------------------------------


def _odyssey_action(step: dict[str, Any], size: tuple[int, int]) -> Action:
    w, h = size
    kind, info = str(step["action"]).upper(), step.get("info")

    def px(p: Any) -> tuple[float, float]:  # 0-1000 frame to pixels
        return (float(p[0]) / 1000.0 * w, float(p[1]) / 1000.0 * h)

    if kind in ("CLICK", "LONG_PRESS"):
        return Action("click" if kind == "CLICK" else "long_press", point=px(info[0]))
    if kind == "SCROLL":
        (x1, y1), (x2, y2) = px(info[0]), px(info[1])
        return Action.scroll(_direction(x2 - x1, y2 - y1))
    if kind == "TEXT":
        return Action.type_text(str(info))
    if kind == "KEY_BACK":
        return Action.navigate("back")
    if kind == "KEY_HOME":
        return Action.navigate("home")
    if kind == "KEY_APPSELECT":
        return Action.press("app_switch")
    if kind == "COMPLETE":
        return Action.stop()
    if kind == "INCOMPLETE":
        return Action.stop(status="infeasible")
    raise OfflineDatasetError(f"unknown GUI-Odyssey action {kind!r}")


def read_gui_odyssey(root: Path) -> list[OfflineEpisode]:
    """GUI-Odyssey: ``annotations/<episode>.json`` with ``screenshots/`` beside it."""
    episodes = []
    files = sorted((root / "annotations").glob("*.json"))
    if not files:
        raise OfflineDatasetError(f"no annotations/*.json under {root}")
    for path in files:
        rec = _load_json(path)
        size = (int(rec["device_info"]["w"]), int(rec["device_info"]["h"]))
        steps = [
            OfflineStep(root / "screenshots" / s["screenshot"], _odyssey_action(s, size), screen_size=size)
            for s in rec["step_info"]
        ]
        task = rec["task_info"]
        episodes.append(
            OfflineEpisode(
                str(rec["episode_id"]),
                task["instruction"],
                steps,
                platform=str(rec["device_info"].get("product", "android")),
                category=str(task.get("category", "unknown")),
            )
        )
    return episodes


# ----- GUI-R1 style JSONL ------------------------------------------------------------------------------


def read_gui_r1(root: Path) -> list[OfflineEpisode]:
    """GUI-R1-style mixed JSONL (``*.jsonl``): one step per row; ``gt_bbox`` is a point or a box, in pixels."""
    episodes = []
    files = sorted(root.glob("*.jsonl"))
    if not files:
        raise OfflineDatasetError(f"no *.jsonl under {root}")
    for path in files:
        for i, rec in enumerate(_jsonl(path)):
            bbox = [float(v) for v in rec.get("gt_bbox") or []]
            box = tuple(bbox) if len(bbox) == 4 else None
            point = _centre(box) if box else (tuple(bbox) if len(bbox) == 2 else None)  # type: ignore[arg-type]
            entry = {
                "action": rec["gt_action"],
                "point": list(point) if point else None,
                "input_text": rec.get("gt_input_text", ""),
            }
            try:
                action = Action.from_gui_r1(entry)
            except InvalidActionError as exc:
                raise OfflineDatasetError(f"{path} row {i}: {exc}") from exc
            step = OfflineStep(root / rec["image"], action, bbox=box, history=rec.get("history"))  # type: ignore[arg-type]
            episodes.append(
                OfflineEpisode(
                    str(rec.get("id", f"{path.stem}-{i}")),
                    rec["instruction"],
                    [step],
                    platform=str(rec.get("platform", "unknown")),
                    category=str(rec.get("task_type", "unknown")),
                )
            )
    return episodes


READERS: dict[str, Callable[[Path], list[OfflineEpisode]]] = {
    "screenspot": read_screenspot,
    "screenspot_pro": read_screenspot_pro,
    "androidcontrol": read_androidcontrol,
    "aitz": read_aitz,
    "gui_odyssey": read_gui_odyssey,
    "gui_r1": read_gui_r1,
}


def read_dataset(name: str, root: str | Path) -> list[OfflineEpisode]:
    """Read dataset ``name`` from its folder ``root``."""
    if name not in READERS:
        raise OfflineDatasetError(f"unknown offline dataset {name!r}; known: {', '.join(sorted(READERS))}")
    root = Path(root)
    if not root.is_dir():
        raise OfflineDatasetError(f"{root} is not a folder; download the data (see gui_envs.offline.readers)")
    return READERS[name](root)
