"""GUI-R1's action vocabulary and its data files (https://huggingface.co/datasets/ritzzai/GUI-R1).

GUI-R1 publishes parquet files (``train.parquet``, ``test.parquet``, ``androidcontrol_high_test.parquet``,
``guiodyssey_test.parquet``, ``screenspot_test.parquet``, ...; GUI-R1 ``README.md``), one step per row:
``image`` (``{"bytes", "path"}``), ``instruction``, ``history``, ``task_type``, ``gt_action``, ``gt_bbox`` and
``gt_input_text``, plus ``group`` / ``ui_type`` in the test files (``guir1/eval/eval_omni.py``). Rows exported
to JSON lines (``*.jsonl``, ``image`` a file path) are read too.

``gt_bbox`` is a point ``[x, y]`` or a box ``[x1, y1, x2, y2]``: in pixels in the test files (``eval_omni.py``
compares it with pixel predictions) and as screen fractions in the training files (``verl/utils/dataset.py``
multiplies it by the image size). Values all within [0, 1] are read as fractions. ``[-100, -100]`` means "no
point" and ``"no input text"`` means no text (the prompts in ``guir1/inference/*.py``).

Every ``gt_action`` name in GUI-R1's prompts and data maps to an :class:`~gui_envs.schema.actions.Action`
(:data:`VOCABULARY`; the table in ``docs/offline_datasets.md``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from gui_envs.offline.records import (
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
    numbers,
    write_image,
)
from gui_envs.schema.actions import DIRECTIONS, Action, InvalidActionError
from gui_envs.schema.json_scan import answer_body, first_json

#: What GUI-R1 writes where an action has no point, and where it has no text.
NO_POINT, NO_TEXT = (-100.0, -100.0), "no input text"

#: Every ``gt_action`` name, with what it becomes (the docs table says the same in words).
VOCABULARY: dict[str, str] = {
    "click": "click at point",
    "long_press": "long_press at point",
    "doubleclick": "double_click at point",
    "rightclick": "right_click at point",
    "moveto": "hover at point",
    "type": "type input_text (at point, if any)",
    "select": "type input_text: choosing an option by its text",
    "scroll": "scroll, direction = input_text",
    "swipe": "swipe, direction = input_text, from point (screen centre without one)",
    "drag": "swipe from point to the [x, y] in input_text (or in direction input_text)",
    "enter": "press enter",
    "press_enter": "press enter",
    "press_back": "navigate back",
    "press_home": "navigate home",
    "press_recent": "press recent (app switcher)",
    "press_tab": "press tab",
    "press_down": "press down",
    "press_space": "press space",
    "press_pgdn": "press pgdn",
    "hotkey": "press input_text (a key combination)",
    "close/delete": "press delete",
    "open_app": "open_app input_text",
    "wait": "wait (no GUI effect)",
    "complete": "stop (success)",
    "impossible": "stop (infeasible)",
    "back_information": "stop with answer = input_text (no GUI effect: information for the user)",
    "call_user": "stop with status failure (no GUI effect: the user must take over)",
}


class GuiR1ActionError(ValueError):
    """A GUI-R1 action entry that cannot become an :class:`Action`; ``field`` names the culprit."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        super().__init__(reason)


def _point(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    pair = (float(value[0]), float(value[1]))
    return None if pair == NO_POINT or pair[0] < 0 or pair[1] < 0 else pair


def _text_point(text: str) -> tuple[float, float] | None:
    parts = (
        text.replace("[", " ").replace("]", " ").replace("(", " ").replace(")", " ").replace(",", " ").split()
    )
    if len(parts) != 2:
        return None
    try:
        return float(parts[0]), float(parts[1])
    except ValueError:
        return None


def gui_r1_action(name: str, point: tuple[float, float] | None, text: str, size: tuple[int, int]) -> Action:
    """The :class:`Action` for GUI-R1 entry ``name`` / ``point`` (pixels or ``None``) / ``text``.

    ``size`` is the screen ``(width, height)``, for a swipe that names no start point.
    """
    key = name.strip().lower()
    text = "" if text.strip().lower() == NO_TEXT else text
    word = text.strip().lower()
    try:
        if key in ("click", "long_press", "doubleclick", "rightclick", "moveto"):
            if point is None:
                raise GuiR1ActionError("gt_bbox", f"{key!r} needs a point")
            kind = {"doubleclick": "double_click", "rightclick": "right_click", "moveto": "hover"}.get(
                key, key
            )
            return Action(kind, point=point)
        if key in ("type", "select"):
            return Action("type", text=text, point=point)
        if key == "scroll":
            if word not in DIRECTIONS:
                raise GuiR1ActionError(
                    "gt_input_text", f"scroll needs a direction in {DIRECTIONS}, got {text!r}"
                )
            return Action.scroll(word)
        if key == "swipe":
            if word not in DIRECTIONS:
                raise GuiR1ActionError(
                    "gt_input_text", f"swipe needs a direction in {DIRECTIONS}, got {text!r}"
                )
            start = point if point is not None else (size[0] / 2.0, size[1] / 2.0)
            return Action("swipe", point=start, direction=word)
        if key == "drag":
            if point is None:
                raise GuiR1ActionError("gt_bbox", "drag needs a start point")
            end = _text_point(text)
            if end is not None:
                return Action("swipe", point=point, end_point=end)
            if word in DIRECTIONS:
                return Action("swipe", point=point, direction=word)
            raise GuiR1ActionError(
                "gt_input_text", f"drag needs an end point [x, y] or a direction, got {text!r}"
            )
        if key in ("enter", "press_enter"):
            return Action.press("enter")
        if key in ("press_back", "press_home"):
            return Action.navigate(key.split("_", 1)[1])
        if key == "close/delete":
            return Action.press("delete")
        if key.startswith("press_") and len(key) > len("press_"):
            return Action.press(key[len("press_") :])
        if key == "hotkey":
            if not word:
                raise GuiR1ActionError("gt_input_text", "hotkey needs the keys")
            return Action.press(word)
        if key == "open_app":
            if not text.strip():
                raise GuiR1ActionError("gt_input_text", "open_app needs an app name")
            return Action("open_app", app=text)
        if key == "wait":
            return Action("wait")
        if key == "complete":
            return Action.stop()
        if key == "impossible":
            return Action.stop(status="infeasible")
        if key == "back_information":
            return Action.stop(answer=text or None)
        if key == "call_user":
            return Action.stop(answer=text or None, status="failure")
    except InvalidActionError as exc:
        raise GuiR1ActionError("gt_input_text", str(exc)) from exc
    raise GuiR1ActionError("gt_action", f"unknown GUI-R1 action {name!r}; known: {', '.join(VOCABULARY)}")


def gui_r1_prediction(output: Any, size: tuple[int, int]) -> Action | None:
    """Parse a model's GUI-R1 answer (text with ``<answer>[{...}]</answer>``, or the entry as a dict) with the
    whole GUI-R1 vocabulary; ``None`` when it is not one. Points are read as pixels."""
    entry: Any = output
    if isinstance(output, str):
        entry, _ = first_json(answer_body(output))
    if isinstance(entry, list) and entry:
        entry = entry[0]
    if not isinstance(entry, Mapping) or not isinstance(entry.get("action"), str):
        return None
    text = entry.get("input_text", "")
    try:
        return gui_r1_action(
            entry["action"], _point(entry.get("point")), "" if text is None else str(text), size
        )
    except (GuiR1ActionError, TypeError, ValueError, IndexError):
        return None


# ----- the reader ------------------------------------------------------------------------------------------------


def _bbox_check(value: Any) -> str | None:
    return numbers((2, 4))(value)


GUI_R1_SCHEMA = (
    Field("image", (str, dict)),
    Field("instruction", (str,)),
    Field("gt_action", (str,)),
    Field("gt_bbox", (list,), check=_bbox_check),
    Field("gt_input_text", (str,), required=False),
    Field("history", (str,), required=False),
    Field("task_type", (str,), required=False),
    Field("group", (str,), required=False),
    Field("ui_type", (str,), required=False),
)


def _image_name(data: bytes) -> str:
    return "jpg" if data[:3] == b"\xff\xd8\xff" else "png"


def _row_image(rec: dict[str, Any], root: Path, source: Path, where: str, stem: str) -> Path:
    image = rec["image"]
    if isinstance(image, str):
        return existing(root / image, source, where, "image")
    data, name = image.get("bytes"), image.get("path")
    if isinstance(data, bytes | bytearray) and data:
        return write_image(image_cache(source), f"{stem}.{_image_name(bytes(data))}", bytes(data))
    if isinstance(name, str) and name:
        return existing(root / name, source, where, "image.path")
    raise OfflineRecordError(source, where, "image", "neither image bytes nor an image path")


def _row_episode(rec: Any, root: Path, source: Path, where: str, row_id: str) -> OfflineEpisode:
    check_record(rec, GUI_R1_SCHEMA, source, where)
    image = _row_image(rec, root, source, where, row_id)
    size = image_size(image)
    raw = [float(v) for v in rec["gt_bbox"]]
    # Training files hold screen fractions, test files pixels (module docstring).
    if all(0.0 <= v <= 1.0 for v in raw):
        raw = [v * size[i % 2] for i, v in enumerate(raw)]
    box = (raw[0], raw[1], raw[2], raw[3]) if len(raw) == 4 else None
    point = ((raw[0] + raw[2]) / 2.0, (raw[1] + raw[3]) / 2.0) if box else _point(raw)
    try:
        action = gui_r1_action(rec["gt_action"], point, str(rec.get("gt_input_text") or ""), size)
    except GuiR1ActionError as exc:
        raise OfflineRecordError(source, where, exc.field, str(exc)) from exc
    step = OfflineStep(
        image,
        action,
        bbox=box if action.type != "swipe" else None,
        screen_size=size,
        history=rec.get("history"),
        label=rec["gt_action"],
    )
    return OfflineEpisode(
        str(rec.get("id", row_id)),
        rec["instruction"],
        [step],
        platform=str(rec.get("platform", rec.get("group", "unknown"))),
        category=str(rec.get("task_type", rec.get("group", "unknown"))),
        extra={"ui_type": rec.get("ui_type")} if rec.get("ui_type") else {},
    )


def _parquet_rows(path: Path, log: RecordLog) -> Iterator[dict[str, Any]]:
    """The rows of a parquet file, a batch at a time (the 800K-row release holds every screenshot)."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow comes with the `train` extra (datasets)
        raise OfflineDatasetError(f"reading {path} needs pyarrow: pip install 'guigym[train]'") from exc
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=256):
            yield from batch.to_pylist()
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a broken file
        err = OfflineRecordError(path, "file", "<parquet>", f"not a readable parquet file: {exc}")
        if log.on_error == "raise":
            raise err from exc
        log.report.skipped.append(err)


def read_gui_r1(root: Path, log: RecordLog) -> list[OfflineEpisode]:
    """GUI-R1: ``*.parquet`` files (or ``*.jsonl`` exports), one step per row."""
    parquets, lines = sorted(root.glob("*.parquet")), sorted(root.glob("*.jsonl"))
    if not parquets and not lines:
        raise OfflineDatasetError(f"no *.parquet or *.jsonl under {root}")
    episodes = []
    for path in parquets:
        for i, rec in enumerate(_parquet_rows(path, log)):
            ep = log.run(_row_episode, rec, root, path, f"row {i}", f"{path.stem}-{i}")
            if ep is not None:
                episodes.append(ep)
    for path in lines:
        for n, (where, rec) in enumerate(json_lines(path, log)):
            ep = log.run(_row_episode, rec, root, path, where, f"{path.stem}-{n}")
            if ep is not None:
                episodes.append(ep)
    return episodes
