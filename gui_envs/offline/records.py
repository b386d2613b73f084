"""What the offline readers produce, the declared schemas they check records against, and their errors.

A reader turns each dataset's own records into :class:`OfflineEpisode` values. Before a record is converted it
is checked against the dataset's declared schema (a tuple of :class:`Field`); a record that does not fit raises
:class:`OfflineRecordError`, which names the file, the record (line number, list index or step) and the field.
With ``on_error="skip"`` the reader drops that record instead, and :class:`ReadReport` counts and lists the
dropped ones.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui_envs.schema.actions import Action

Box = tuple[float, float, float, float]

#: What a reader may do with a record that does not fit its schema.
ON_ERROR = ("raise", "skip")
#: How many skipped records :meth:`ReadReport.summary` spells out.
REPORTED_REASONS = 3


class OfflineDatasetError(ValueError):
    """The dataset folder is missing, or a record does not follow the dataset's schema."""


class OfflineRecordError(OfflineDatasetError):
    """One record does not fit its dataset's schema.

    Attributes:
        path: the file the record is in.
        record: where in the file: ``"line 3"``, ``"item 0"``, ``"record 2"``, ``"step 4"``.
        field: the offending field (dotted for nested fields, for example ``device_info.w``).
        reason: what is wrong with it.
    """

    def __init__(self, path: Path | str, record: str, field: str, reason: str) -> None:
        self.path, self.record, self.field, self.reason = Path(path), record, field, reason
        super().__init__(f"{path}: {record}: field {field!r}: {reason}")


@dataclass
class ReadReport:
    """What a read kept and what it skipped (``on_error="skip"``)."""

    kept: int = 0
    skipped: list[OfflineRecordError] = field(default_factory=list)

    def summary(self) -> str:
        """One line: how many records were skipped, and the first few reasons."""
        if not self.skipped:
            return f"read {self.kept} record(s), none skipped"
        shown = "; ".join(str(e) for e in self.skipped[:REPORTED_REASONS])
        more = (
            f" (and {len(self.skipped) - REPORTED_REASONS} more)"
            if len(self.skipped) > REPORTED_REASONS
            else ""
        )
        return f"read {self.kept} record(s), skipped {len(self.skipped)} bad record(s): {shown}{more}"


@dataclass
class OfflineStep:
    """One recorded step.

    Attributes:
        image: path of the screenshot file.
        action: the recorded action, in screenshot pixels. Scroll directions keep the dataset's own word (see
            ``docs/offline_datasets.md``).
        bbox: the target element box ``(x1, y1, x2, y2)`` in pixels, when recorded.
        screen_size: ``(width, height)`` in pixels, when the record says (otherwise read from the image).
        step_instruction: a low-level instruction for this step (AndroidControl-Low), if any.
        history: the recorded action history text (GUI-R1 style), if any.
        boxes: the screen's element boxes ``(x1, y1, x2, y2)`` in pixels, where the dataset scores a click
            against any element (AITZ's ``ui_positions``); empty otherwise.
        label: the dataset's own name for the action (``"scroll up"``, ``"PRESS_HOME"``, ``"select"``).
    """

    image: Path
    action: Action
    bbox: Box | None = None
    screen_size: tuple[int, int] | None = None
    step_instruction: str | None = None
    history: str | None = None
    boxes: tuple[Box, ...] = ()
    label: str = ""


@dataclass
class OfflineEpisode:
    """One task: an instruction and its recorded steps (grounding datasets: one step)."""

    id: str
    instruction: str
    steps: list[OfflineStep]
    platform: str = "unknown"
    category: str = "unknown"
    extra: dict[str, Any] = field(default_factory=dict)


class OfflineEpisodes(list):  # type: ignore[type-arg]
    """The episodes a reader returns, with its :class:`ReadReport` as ``report``."""

    def __init__(self, episodes: list[OfflineEpisode], report: ReadReport) -> None:
        super().__init__(episodes)
        self.report = report


# ----- declared schemas ------------------------------------------------------------------------------------

_NUMBER = (int, float)


@dataclass(frozen=True)
class Field:
    """One field of a record schema.

    Attributes:
        name: the key in the record.
        kinds: the Python types the decoded JSON value may have (``bool`` never counts as a number).
        required: whether the record must have it.
        check: an extra test on the value; returns a reason string when the value is wrong, else ``None``.
    """

    name: str
    kinds: tuple[type, ...]
    required: bool = True
    check: Callable[[Any], str | None] | None = None


def check_record(record: Any, schema: tuple[Field, ...], path: Path, where: str, prefix: str = "") -> None:
    """Raise :class:`OfflineRecordError` naming ``path``, ``where`` and the field if ``record`` misfits."""
    if not isinstance(record, Mapping):
        raise OfflineRecordError(
            path, where, prefix.rstrip(".") or "<record>", f"expected an object, got {_kind(record)}"
        )
    for f in schema:
        name = prefix + f.name
        if f.name not in record or record[f.name] is None:
            if f.required:
                raise OfflineRecordError(path, where, name, "missing")
            continue
        value = record[f.name]
        # JSON has one number type: an int is a fine float; a bool is never a number.
        is_bool = isinstance(value, bool)
        ok = isinstance(value, f.kinds) and (bool in f.kinds or not is_bool)
        ok = ok or (float in f.kinds and isinstance(value, int) and not is_bool)
        if not ok:
            want = " or ".join(k.__name__ for k in f.kinds)
            raise OfflineRecordError(path, where, name, f"expected {want}, got {_kind(value)} {value!r:.60}")
        if f.check is not None and (reason := f.check(value)) is not None:
            raise OfflineRecordError(path, where, name, reason)


def numbers(count: int | tuple[int, ...]) -> Callable[[Any], str | None]:
    """A :class:`Field` check: a list of ``count`` finite numbers (any of the counts, if a tuple)."""
    counts = (count,) if isinstance(count, int) else count

    def check(value: Any) -> str | None:
        if len(value) not in counts:
            return f"expected {' or '.join(map(str, counts))} numbers, got {len(value)}"
        for v in value:
            if (
                isinstance(v, bool)
                or not isinstance(v, _NUMBER)
                or v != v
                or v in (float("inf"), float("-inf"))
            ):
                return f"expected numbers, got {v!r:.40}"
        return None

    return check


def one_of(*values: Any) -> Callable[[Any], str | None]:
    """A :class:`Field` check: the value is one of ``values``."""

    def check(value: Any) -> str | None:
        return (
            None if value in values else f"expected one of {', '.join(map(repr, values))}, got {value!r:.60}"
        )

    return check


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


# ----- reading helpers shared by the readers ---------------------------------------------------------------


class RecordLog:
    """Runs one record's conversion: keeps it, or (skip mode) records why it was dropped."""

    def __init__(self, on_error: str) -> None:
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
        self.on_error = on_error
        self.report = ReadReport()

    def run(self, convert: Callable[..., OfflineEpisode], *args: Any) -> OfflineEpisode | None:
        """``convert(*args)``, or ``None`` when it raised a record error in skip mode (which is recorded)."""
        try:
            episode = convert(*args)
        except OfflineRecordError as exc:
            if self.on_error == "raise":
                raise
            self.report.skipped.append(exc)
            return None
        self.report.kept += 1
        return episode


def load_json(path: Path) -> Any:
    """A JSON file's value; a file that is not JSON is a record error on the whole file."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OfflineRecordError(path, "file", "<file>", f"not readable JSON: {exc}") from exc


def json_lines(path: Path, log: RecordLog) -> Iterator[tuple[str, Any]]:
    """``("line N", value)`` for each non-blank line; a line that is not JSON is reported or raised."""
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield f"line {n}", json.loads(line)
            except json.JSONDecodeError as exc:
                err = OfflineRecordError(path, f"line {n}", "<line>", f"not JSON: {exc}")
                if log.on_error == "raise":
                    raise err from exc
                log.report.skipped.append(err)


def json_list(path: Path, log: RecordLog) -> list[Any]:
    """A file holding a JSON list (a file that is not one is reported or raised as a whole)."""
    try:
        data = load_json(path)
        if not isinstance(data, list):
            raise OfflineRecordError(
                path, "file", "<file>", f"expected a JSON list, got {type(data).__name__}"
            )
    except OfflineRecordError as exc:
        if log.on_error == "raise":
            raise
        log.report.skipped.append(exc)
        return []
    return data


def existing(path: Path, source: Path, where: str, field: str) -> Path:
    """``path`` if the file exists, else a record error naming ``field``."""
    if not path.is_file():
        raise OfflineRecordError(source, where, field, f"no such image file {path}")
    return path


def centre(box: tuple[float, float, float, float]) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0)


def image_size(path: Path) -> tuple[int, int]:
    """``(width, height)`` of an image file in pixels (reads the header only)."""
    from PIL import Image

    with Image.open(path) as img:
        return img.size


# ----- embedded images -------------------------------------------------------------------------------------


def image_cache(source: Path) -> Path:
    """A folder for the images embedded in ``source`` (parquet rows, TFRecord screenshots), one per version.

    The dataset folder may be read-only, so the images go under the system temp folder, keyed by the source's
    path, size and modification time: a changed file gets a fresh folder.
    """
    stat = source.stat()
    key = hashlib.sha1(f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "guigym-offline-images" / key
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_image(folder: Path, name: str, data: bytes) -> Path:
    """Write ``data`` (an encoded image) as ``folder/name`` once, and return the path."""
    path = folder / name
    if not path.exists():
        tmp = path.with_suffix(path.suffix + ".part")
        tmp.write_bytes(data)
        tmp.replace(path)
    return path
