"""Readers for the Android trajectory datasets: AndroidControl, AITZ (Android-in-the-Zoo) and GUI-Odyssey.

Each reads the layout its authors publish (see :mod:`gui_envs.offline.readers` for the table) and keeps each
dataset's own words for scroll directions, so that :mod:`gui_envs.offline.conventions` can score as the
dataset's evaluation code does. An episode with one bad step is left out whole (in ``on_error="skip"``): a
trajectory with a hole in it would be scored on steps it never recorded.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from gui_envs.offline.records import (
    Box,
    Field,
    OfflineDatasetError,
    OfflineEpisode,
    OfflineRecordError,
    OfflineStep,
    RecordLog,
    check_record,
    existing,
    image_cache,
    image_size,
    json_lines,
    json_list,
    load_json,
    numbers,
    one_of,
    write_image,
)
from gui_envs.offline.tfrecord import TFRecordError, parse_example, read_records
from gui_envs.schema.actions import DIRECTIONS, Action

# ----- AndroidControl ----------------------------------------------------------------------------------------

_XY = (Field("x", (float,)), Field("y", (float,)))
#: One schema per ``action_type`` (google-research/android_control/README.md, "Action space").
ANDROIDCONTROL_ACTIONS: dict[str, tuple[Field, ...]] = {
    "click": _XY,
    "long_press": _XY,
    "scroll": (Field("direction", (str,), check=one_of(*DIRECTIONS)),),
    "open_app": (Field("app_name", (str,)),),
    "type": (*_XY, Field("text", (str,))),
    "input_text": (Field("text", (str,)),),
    "navigate_home": (),
    "navigate_back": (),
    "wait": (),
}

ANDROIDCONTROL_SCHEMA = (
    Field("episode_id", (int, str)),
    Field("goal", (str,)),
    Field("screenshots", (list,)),
    Field("screenshot_widths", (list,)),
    Field("screenshot_heights", (list,)),
    Field("actions", (list,)),
    Field("step_instructions", (list,), required=False),
)


def _androidcontrol_action(raw: Any, path: Path, where: str, name: str) -> tuple[Action, str]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise OfflineRecordError(path, where, name, f"not a JSON action: {exc}") from exc
    check_record(
        raw, (Field("action_type", (str,), check=one_of(*ANDROIDCONTROL_ACTIONS)),), path, where, name + "."
    )
    t = raw["action_type"]
    check_record(raw, ANDROIDCONTROL_ACTIONS[t], path, where, name + ".")
    if t in ("click", "long_press"):
        return Action(t, point=(float(raw["x"]), float(raw["y"]))), t
    if t == "type":  # a click at (x, y), the text, then enter (README): one typing step at that point
        return Action("type", text=raw["text"], point=(float(raw["x"]), float(raw["y"]))), t
    if t == "input_text":
        return Action.type_text(raw["text"]), t
    if t == "scroll":
        return Action.scroll(raw["direction"]), f"scroll {raw['direction']}"
    if t in ("navigate_back", "navigate_home"):
        return Action.navigate(t.split("_")[1]), t
    if t == "open_app":
        return Action("open_app", app=raw["app_name"]), t
    return Action("wait"), t


def _androidcontrol_episode(rec: dict[str, Any], path: Path, where: str, shot: Any) -> OfflineEpisode:
    """One episode; ``shot(k)`` gives the path of screenshot ``k``."""
    check_record(rec, ANDROIDCONTROL_SCHEMA, path, where)
    actions, shots = rec["actions"], rec["screenshots"]
    # Upstream: len(screenshots) == len(actions) + 1 (the last screen follows the last action). Exports that
    # drop the final screen have one screenshot per action.
    if len(shots) not in (len(actions), len(actions) + 1):
        raise OfflineRecordError(
            path, where, "screenshots", f"{len(shots)} screenshots for {len(actions)} actions"
        )
    for name in ("screenshot_widths", "screenshot_heights"):
        if len(rec[name]) != len(shots) or numbers(len(shots))(rec[name]) is not None:
            raise OfflineRecordError(
                path, where, name, f"expected {len(shots)} numbers, got {rec[name]!r:.60}"
            )
    instructions = rec.get("step_instructions") or [None] * len(actions)
    if len(instructions) != len(actions):
        raise OfflineRecordError(
            path, where, "step_instructions", f"{len(instructions)} for {len(actions)} actions"
        )
    steps = []
    for k, raw in enumerate(actions):
        action, label = _androidcontrol_action(raw, path, where, f"actions[{k}]")
        size = (int(rec["screenshot_widths"][k]), int(rec["screenshot_heights"][k]))
        steps.append(
            OfflineStep(shot(k), action, screen_size=size, step_instruction=instructions[k], label=label)
        )
    if not steps:
        raise OfflineRecordError(path, where, "actions", "no actions")
    return OfflineEpisode(
        str(rec["episode_id"]), rec["goal"], steps, platform="android", category="androidcontrol"
    )


def _tfrecord_episode(path: Path, n: int, data: bytes, cache: Path) -> OfflineEpisode:
    where = f"record {n}"
    try:
        features = parse_example(data)
    except (TFRecordError, UnicodeDecodeError, IndexError) as exc:
        raise OfflineRecordError(path, where, "<example>", f"not a tf.train.Example: {exc}") from exc

    def text(name: str) -> list[str]:
        try:
            return [v.decode("utf-8") for v in features.get(name, [])]  # type: ignore[union-attr]
        except (AttributeError, UnicodeDecodeError) as exc:
            raise OfflineRecordError(path, where, name, f"expected UTF-8 bytes: {exc}") from exc

    if len(features.get("episode_id", [])) != 1 or len(features.get("goal", [])) != 1:
        missing = "episode_id" if len(features.get("episode_id", [])) != 1 else "goal"
        raise OfflineRecordError(path, where, missing, "expected one value")
    shots = features.get("screenshots", [])
    if not all(isinstance(s, bytes) for s in shots):
        raise OfflineRecordError(path, where, "screenshots", "expected PNG bytes")
    rec = {
        "episode_id": features["episode_id"][0],
        "goal": text("goal")[0],
        "screenshots": list(range(len(shots))),
        "screenshot_widths": list(features.get("screenshot_widths", [])),
        "screenshot_heights": list(features.get("screenshot_heights", [])),
        "actions": text("actions"),
        "step_instructions": text("step_instructions") or None,
    }
    eid = rec["episode_id"]
    return _androidcontrol_episode(rec, path, where, lambda k: write_image(cache, f"{eid}_{k}.png", shots[k]))  # type: ignore[arg-type]


def read_androidcontrol(root: Path, log: RecordLog) -> list[OfflineEpisode]:
    """AndroidControl: the published GZIP TFRecord files (``android_control-*``, or ``*.tfrecord*``), one
    ``tf.train.Example`` per episode, screenshots as PNG bytes; or episodes exported with the same field names
    as JSON lines (``*.jsonl``, screenshots as file paths relative to ``root``)."""
    records = sorted(
        p
        for p in {*root.glob("android_control*"), *root.glob("*.tfrecord*")}
        if p.is_file() and p.suffix not in (".json", ".jsonl")
    )
    lines = sorted(root.glob("*.jsonl"))
    if not records and not lines:
        raise OfflineDatasetError(
            f"no android_control-* TFRecord files or *.jsonl episode files under {root}"
        )
    episodes = []
    for path in records:
        cache = image_cache(path)
        try:
            for n, data in enumerate(read_records(path)):
                if (ep := log.run(_tfrecord_episode, path, n, data, cache)) is not None:
                    episodes.append(ep)
        except TFRecordError as exc:  # framing broken: nothing after this point can be trusted
            err = OfflineRecordError(path, "file", "<tfrecord>", str(exc))
            if log.on_error == "raise":
                raise err from exc
            log.report.skipped.append(err)
    for path in lines:
        for where, rec in json_lines(path, log):
            if (ep := log.run(_jsonl_episode, rec, path, where, root)) is not None:
                episodes.append(ep)
    return episodes


def _jsonl_episode(rec: Any, path: Path, where: str, root: Path) -> OfflineEpisode:
    def shot(k: int) -> Path:
        name = rec["screenshots"][k]
        if not isinstance(name, str):
            raise OfflineRecordError(path, where, f"screenshots[{k}]", "expected a file path")
        return existing(root / name, path, where, f"screenshots[{k}]")

    return _androidcontrol_episode(rec, path, where, shot)


# ----- AITZ (Android in the Zoo) -------------------------------------------------------------------------------

# AITW action codes (CoAT coat/action_utils.py, ActionType).
_AITW_TYPE, _AITW_DUAL_POINT, _AITW_BACK, _AITW_HOME, _AITW_ENTER = 3, 4, 5, 6, 7
_AITW_COMPLETE, _AITW_IMPOSSIBLE = 10, 11
#: A gesture no longer than this (screen fractions) is a tap (CoAT action_utils._SWIPE_DISTANCE_THRESHOLD).
AITW_TAP_DISTANCE = 0.04


def _yx_list(value: Any) -> str | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return "not a JSON [y, x] pair"
    return numbers(2)(value) if isinstance(value, list) else "expected a [y, x] pair"


AITZ_SCHEMA = (
    Field("episode_id", (str, int)),
    Field("step_id", (int,)),
    Field("instruction", (str,)),
    Field("image_path", (str,)),
    Field("result_action_type", (int,), check=one_of(3, 4, 5, 6, 7, 10, 11)),
    Field("result_touch_yx", (str, list), check=_yx_list),
    Field("result_lift_yx", (str, list), check=_yx_list),
    Field("result_action_text", (str,), required=False),
    Field("ui_positions", (str, list), required=False),
    Field("coat_action_desc", (str,), required=False),
)


def _json_value(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def aitz_scroll_direction(touch_yx: tuple[float, float], lift_yx: tuple[float, float]) -> str:
    """CoAT's word for a swipe (``coat/action_utils.py``, ``extract_gt_action``): the finger's motion.

    Vertical when the vertical change is at least 0.9 of the horizontal one; "up" when the lift is above the
    touch. So a finger moving up the screen is "scroll up".

    >>> aitz_scroll_direction((0.8, 0.5), (0.2, 0.5))
    'up'
    """
    (ty, tx), (ly, lx) = touch_yx, lift_yx
    if abs(ty - ly) >= 0.9 * abs(lx - tx):
        return "up" if ly < ty else "down"
    return "left" if lx < tx else "right"


def _aitz_action(rec: dict[str, Any], size: tuple[int, int]) -> tuple[Action, str]:
    code = rec["result_action_type"]
    w, h = size
    if code == _AITW_DUAL_POINT:
        touch = tuple(float(v) for v in _json_value(rec["result_touch_yx"]))
        lift = tuple(float(v) for v in _json_value(rec["result_lift_yx"]))
        if math.dist(touch, lift) <= AITW_TAP_DISTANCE:
            # CoAT clicks where the finger lifted.
            return Action.click(lift[1] * w, lift[0] * h), "click"
        words = str(rec.get("coat_action_desc") or "").split()
        # CoAT's evaluator reads the direction from coat_action_desc's second word; the coordinates give the same
        # word by action_utils' rule, and stand in where the description is missing.
        if len(words) >= 2 and words[0].lower() == "scroll" and words[1].lower() in DIRECTIONS:
            direction = words[1].lower()
        else:
            direction = aitz_scroll_direction(touch, lift)  # type: ignore[arg-type]
        return Action.scroll(direction), f"scroll {direction}"
    if code == _AITW_TYPE:
        return Action.type_text(str(rec.get("result_action_text") or "")), "type"
    if code == _AITW_BACK:
        return Action.navigate("back"), "press back"
    if code == _AITW_HOME:
        return Action.navigate("home"), "press home"
    if code == _AITW_ENTER:
        return Action.press("enter"), "press enter"
    if code == _AITW_COMPLETE:
        return Action.stop(), "stop"
    return Action.stop(status="infeasible"), "stop"


def _aitz_boxes(rec: dict[str, Any], path: Path, where: str) -> tuple[Box, ...]:
    """``ui_positions`` rows ``[y, x, h, w]`` in pixels (CoAT ``evaluate.py``) as ``(x1, y1, x2, y2)`` boxes."""
    if rec.get("ui_positions") is None:
        return ()
    try:
        rows = _json_value(rec["ui_positions"])
        return tuple(
            (float(x), float(y), float(x) + float(bw), float(y) + float(bh)) for y, x, bh, bw in rows
        )
    except (TypeError, ValueError, json.JSONDecodeError) as exc:
        raise OfflineRecordError(path, where, "ui_positions", f"expected [[y, x, h, w], ...]: {exc}") from exc


def _aitz_image(root: Path, path: Path, image_path: str, where: str) -> Path:
    # image_path is relative to the split folder ("general/GENERAL-123/GENERAL-123_0.png" under train/); the
    # sample in CoAT's data-example/ keeps the PNGs beside the JSON.
    for base in [path.parent, *path.parents]:
        if (base / image_path).is_file():
            return base / image_path
        if base == root:
            break
    return existing(path.parent / Path(image_path).name, path, where, "image_path")


def read_aitz(root: Path, log: RecordLog) -> list[OfflineEpisode]:
    """AITZ: ``<split>/<subset>/<episode>/<episode>.json`` step lists (AITW action codes, ``[y, x]`` fractions)."""
    files = sorted(p for p in root.rglob("*.json") if p.stem == p.parent.name)
    if not files:
        raise OfflineDatasetError(f"no <episode>/<episode>.json files under {root}")
    episodes = []
    for path in files:
        records = json_list(path, log)
        if not records:
            continue

        def convert(path: Path, records: list[Any]) -> OfflineEpisode:
            for i, rec in enumerate(records):
                check_record(rec, AITZ_SCHEMA, path, f"step {i}")
            order = sorted(range(len(records)), key=lambda i: records[i]["step_id"])
            steps = []
            for i in order:
                rec, where = records[i], f"step {i}"
                image = _aitz_image(root, path, rec["image_path"], where)
                size = image_size(image)
                action, label = _aitz_action(rec, size)
                steps.append(
                    OfflineStep(
                        image, action, screen_size=size, boxes=_aitz_boxes(rec, path, where), label=label
                    )
                )
            first = records[order[0]]
            return OfflineEpisode(
                str(first["episode_id"]),
                first["instruction"],
                steps,
                platform="android",
                category=path.parent.parent.name,
                extra={
                    "coat": [
                        {
                            k: records[i].get(k)
                            for k in ("coat_screen_desc", "coat_action_think", "coat_action_desc")
                        }
                        for i in order
                    ]
                },
            )

        if (ep := log.run(convert, path, records)) is not None:
            episodes.append(ep)
    return episodes


# ----- GUI-Odyssey ---------------------------------------------------------------------------------------------

ODYSSEY_ACTIONS = ("CLICK", "LONG_PRESS", "SCROLL", "TEXT", "TYPE", "COMPLETE", "INCOMPLETE")
#: ``info`` of a CLICK on a hardware key, and what GUI-Odyssey's format_converter.decode_action calls it.
ODYSSEY_KEYS = {"KEY_HOME": "PRESS_HOME", "KEY_BACK": "PRESS_BACK", "KEY_APPSELECT": "PRESS_RECENT"}

ODYSSEY_SCHEMA = (
    Field("episode_id", (str, int)),
    Field("device_info", (dict,)),
    Field("task_info", (dict,)),
    Field("step_length", (int,), required=False),
    Field("steps", (list,)),
)
ODYSSEY_DEVICE_SCHEMA = (Field("w", (int,)), Field("h", (int,)))
ODYSSEY_TASK_SCHEMA = (Field("instruction", (str,)), Field("category", (str,), required=False))
ODYSSEY_STEP_SCHEMA = (
    Field("screenshot", (str,)),
    Field("action", (str,), check=one_of(*ODYSSEY_ACTIONS)),
    Field("info", (str, list), required=False),
    Field("sam2_bbox", (list,), required=False, check=numbers((0, 4))),
    Field("low_level_instruction", (str,), required=False),
)


def odyssey_scroll_direction(start: tuple[float, float], end: tuple[float, float]) -> str:
    """GUI-Odyssey's word for a scroll (``data/format_converter.py``, ``decode_action``): the finger's motion;
    horizontal only when the horizontal change is strictly larger.

    >>> odyssey_scroll_direction((500, 800), (500, 200))
    'up'
    """
    dx, dy = end[0] - start[0], end[1] - start[1]
    if abs(dx) > abs(dy):
        return "left" if dx < 0 else "right"
    return "up" if dy < 0 else "down"


def _odyssey_point(value: Any, path: Path, where: str, name: str) -> tuple[float, float]:
    if not isinstance(value, list) or numbers(2)(value) is not None:
        raise OfflineRecordError(path, where, name, f"expected an [x, y] point on 0-1000, got {value!r:.60}")
    return float(value[0]), float(value[1])


def _odyssey_action(
    step: dict[str, Any], size: tuple[int, int], path: Path, where: str
) -> tuple[Action, str]:
    w, h = size
    kind, info = step["action"], step.get("info", "")

    def px(p: tuple[float, float]) -> tuple[float, float]:  # 0-1000 frame to pixels
        return (p[0] / 1000.0 * w, p[1] / 1000.0 * h)

    if kind in ("CLICK", "LONG_PRESS"):
        if isinstance(info, str):
            if info not in ODYSSEY_KEYS:
                raise OfflineRecordError(
                    path,
                    where,
                    "info",
                    f"expected [[x, y]] or one of {', '.join(ODYSSEY_KEYS)}, got {info!r:.60}",
                )
            label = ODYSSEY_KEYS[info]
            if label == "PRESS_RECENT":
                return Action.press("recent"), label
            return Action.navigate(label.split("_")[1].lower()), label
        if not info:
            raise OfflineRecordError(path, where, "info", "expected [[x, y]]")
        point = px(_odyssey_point(info[0], path, where, "info[0]"))
        return Action("click" if kind == "CLICK" else "long_press", point=point), kind
    if kind == "SCROLL":
        if not isinstance(info, list) or len(info) != 2:
            raise OfflineRecordError(path, where, "info", "SCROLL expects [[x1, y1], [x2, y2]]")
        start, end = (
            _odyssey_point(info[0], path, where, "info[0]"),
            _odyssey_point(info[1], path, where, "info[1]"),
        )
        direction = odyssey_scroll_direction(start, end)
        return Action.scroll(direction), f"SCROLL: {direction.upper()}"
    if kind in ("TEXT", "TYPE"):
        if not isinstance(info, str):
            raise OfflineRecordError(path, where, "info", "TEXT expects the typed string")
        return Action.type_text(info), "TYPE"
    if kind == "COMPLETE":
        return Action.stop(), "COMPLETE"
    return Action.stop(status="infeasible"), "IMPOSSIBLE"


def read_gui_odyssey(root: Path, log: RecordLog) -> list[OfflineEpisode]:
    """GUI-Odyssey: ``annotations/<episode>.json`` (steps under ``steps``) with ``screenshots/`` beside it."""
    files = sorted((root / "annotations").glob("*.json"))
    if not files:
        raise OfflineDatasetError(f"no annotations/*.json under {root}")
    episodes = []
    for path in files:

        def convert(path: Path) -> OfflineEpisode:
            rec = load_json(path)
            check_record(rec, ODYSSEY_SCHEMA, path, "episode")
            check_record(rec["device_info"], ODYSSEY_DEVICE_SCHEMA, path, "episode", "device_info.")
            check_record(rec["task_info"], ODYSSEY_TASK_SCHEMA, path, "episode", "task_info.")
            steps = []
            for i, s in enumerate(rec["steps"]):
                where = f"step {i}"
                check_record(s, ODYSSEY_STEP_SCHEMA, path, where)
                image = existing(root / "screenshots" / s["screenshot"], path, where, "screenshot")
                size = image_size(image)  # the 0-1000 frame is the screenshot's
                action, label = _odyssey_action(s, size, path, where)
                box = None
                if s.get("sam2_bbox") and action.type in ("click", "long_press"):
                    x1, y1, x2, y2 = (float(v) for v in s["sam2_bbox"])
                    box = (x1 / 1000 * size[0], y1 / 1000 * size[1], x2 / 1000 * size[0], y2 / 1000 * size[1])
                steps.append(
                    OfflineStep(
                        image,
                        action,
                        bbox=box,
                        screen_size=size,
                        step_instruction=s.get("low_level_instruction"),
                        label=label,
                    )
                )
            if not steps:
                raise OfflineRecordError(path, "episode", "steps", "no steps")
            task = rec["task_info"]
            return OfflineEpisode(
                str(rec["episode_id"]),
                task["instruction"],
                steps,
                platform=str(
                    rec["device_info"].get("device_name", rec["device_info"].get("product", "android"))
                ),
                category=str(task.get("category", "unknown")),
            )

        if (ep := log.run(convert, path)) is not None:
            episodes.append(ep)
    return episodes
