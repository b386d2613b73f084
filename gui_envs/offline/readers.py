"""Readers for public offline GUI datasets, each reading the layout its authors publish.

Every reader takes the dataset's root folder (as downloaded) and returns episodes whose recorded actions are
:class:`~gui_envs.schema.actions.Action` in **screenshot pixels** (each dataset's own frame is converted here). Each
record is checked against the dataset's declared schema first (:mod:`gui_envs.offline.records`); with
``on_error="raise"`` (the default) a bad record stops the read with an error naming the file, the record and
the field, and with ``on_error="skip"`` it is left out and listed in the result's ``report``.

| name | download | layout read here (upstream source of the facts) |
| --- | --- | --- |
| ``screenspot`` | https://github.com/njucckevin/SeeClick (v1), https://huggingface.co/datasets/OS-Copilot/ScreenSpot-v2 (v2) | v1 ``screenspot_{mobile,desktop,web}.json`` + ``screenspot_imgs/``; v2 ``screenspot_{...}_v2.json`` + ``screenspotv2_image/``; ``bbox`` = ``[x, y, w, h]`` pixels (SeeClick ``pretrain/screenspot_test.py``) |
| ``screenspot_pro`` | https://huggingface.co/datasets/likaixin/ScreenSpot-Pro | ``annotations/*.json`` + ``images/``; ``bbox`` = ``[x1, y1, x2, y2]`` pixels (``eval_screenspot_pro.py``) |
| ``androidcontrol`` | https://github.com/google-research/google-research/tree/master/android_control | GZIP TFRecord ``android_control-*`` files of ``tf.train.Example`` (README), or the same fields exported as JSON lines |
| ``aitz`` | https://github.com/IMNearth/CoAT | ``<split>/<subset>/<episode>/<episode>.json`` step lists, AITW action codes, ``[y, x]`` fractions (``data-example/``) |
| ``gui_odyssey`` | https://huggingface.co/datasets/OpenGVLab/GUI-Odyssey | ``annotations/*.json`` (``steps``) + ``screenshots/``; points on a 0-1000 scale (``introduction.md``) |
| ``gui_r1`` | https://huggingface.co/datasets/ritzzai/GUI-R1 | ``*.parquet`` rows (or ``*.jsonl`` exports); see :mod:`gui_envs.offline.gui_r1` |
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gui_envs.offline.records import (
    ON_ERROR,
    Field,
    OfflineDatasetError,
    OfflineEpisode,
    OfflineEpisodes,
    OfflineStep,
    RecordLog,
    centre,
    check_record,
    existing,
    json_list,
    numbers,
)
from gui_envs.schema.actions import Action
from gui_envs.schema.errors import did_you_mean

__all__ = ["ON_ERROR", "READERS", "OfflineDatasetError", "OfflineEpisode", "OfflineStep", "read_dataset"]


# ----- ScreenSpot (v1, v2) and ScreenSpot-Pro --------------------------------------------------------------


def _non_negative_size(value: list[float]) -> str | None:
    return None if value[2] >= 0 and value[3] >= 0 else "width and height must be >= 0 ([x, y, w, h])"


def _ordered(value: list[float]) -> str | None:
    return None if value[2] >= value[0] and value[3] >= value[1] else "expected x1 <= x2 and y1 <= y2"


SCREENSPOT_SCHEMA = (
    Field("img_filename", (str,)),
    Field("bbox", (list,), check=lambda v: numbers(4)(v) or _non_negative_size(v)),
    Field("instruction", (str,)),
    Field("data_type", (str,), required=False),
    Field("data_source", (str,), required=False),
)

SCREENSPOT_PRO_SCHEMA = (
    Field("img_filename", (str,)),
    Field("bbox", (list,), check=lambda v: numbers(4)(v) or _ordered(v)),
    Field("instruction", (str,)),
    Field("img_size", (list,), required=False, check=numbers(2)),
    Field("id", (str, int), required=False),
    Field("application", (str,), required=False),
    Field("platform", (str,), required=False),
    Field("ui_type", (str,), required=False),
    Field("group", (str,), required=False),
)


def _screenspot_episode(
    rec: Any, i: int, path: Path, images: Path, platform: str, v2: bool
) -> OfflineEpisode:
    where = f"item {i}"
    check_record(rec, SCREENSPOT_SCHEMA, path, where)
    x, y, w, h = (float(v) for v in rec["bbox"])
    box = (x, y, x + w, y + h)
    image = existing(images / rec["img_filename"], path, where, "img_filename")
    step = OfflineStep(image, Action.click(*centre(box)), bbox=box, label="click")
    return OfflineEpisode(
        f"{platform}{'-v2' if v2 else ''}-{i}",
        rec["instruction"],
        [step],
        platform=platform,
        category=str(rec.get("data_type", "unknown")),
        extra={"source": rec.get("data_source")},
    )


def read_screenspot(root: Path, log: RecordLog) -> list[OfflineEpisode]:
    """ScreenSpot v1 (``screenspot_<platform>.json``, ``screenspot_imgs/``) and v2 (``screenspot_<platform>_v2.json``,
    ``screenspotv2_image/``): lists with ``bbox`` as ``[x, y, w, h]`` pixels, as SeeClick reads it."""
    files = sorted(root.glob("screenspot_*.json"))
    if not files:
        raise OfflineDatasetError(f"no screenspot_*.json under {root}")
    episodes = []
    for path in files:
        v2 = path.stem.endswith("_v2")
        platform = path.stem[len("screenspot_") :].removesuffix("_v2")
        v2_images = root / "screenspotv2_image"
        images = v2_images if v2 and v2_images.is_dir() else root / "screenspot_imgs"
        for i, rec in enumerate(json_list(path, log)):
            if (episode := log.run(_screenspot_episode, rec, i, path, images, platform, v2)) is not None:
                episodes.append(episode)
    return episodes


def _screenspot_pro_episode(rec: Any, i: int, path: Path, root: Path) -> OfflineEpisode:
    where = f"item {i}"
    check_record(rec, SCREENSPOT_PRO_SCHEMA, path, where)
    x1, y1, x2, y2 = (float(v) for v in rec["bbox"])
    box = (x1, y1, x2, y2)
    size = (int(rec["img_size"][0]), int(rec["img_size"][1])) if rec.get("img_size") else None
    image = existing(root / "images" / rec["img_filename"], path, where, "img_filename")
    step = OfflineStep(image, Action.click(*centre(box)), bbox=box, screen_size=size, label="click")
    return OfflineEpisode(
        str(rec.get("id", f"{path.stem}-{i}")),
        rec["instruction"],
        [step],
        platform=str(rec.get("platform", "unknown")),
        category=f"{rec.get('group', 'unknown')}/{rec.get('ui_type', 'unknown')}",
        extra={"application": rec.get("application")},
    )


def read_screenspot_pro(root: Path, log: RecordLog) -> list[OfflineEpisode]:
    """ScreenSpot-Pro: ``annotations/*.json`` with ``bbox`` as ``[x1, y1, x2, y2]`` pixels, images in ``images/``."""
    files = sorted((root / "annotations").glob("*.json"))
    if not files:
        raise OfflineDatasetError(f"no annotations/*.json under {root}")
    episodes = []
    for path in files:
        for i, rec in enumerate(json_list(path, log)):
            if (episode := log.run(_screenspot_pro_episode, rec, i, path, root)) is not None:
                episodes.append(episode)
    return episodes


def _registry() -> dict[str, Callable[[Path, RecordLog], list[OfflineEpisode]]]:
    from gui_envs.offline.android_readers import read_aitz, read_androidcontrol, read_gui_odyssey
    from gui_envs.offline.gui_r1 import read_gui_r1

    return {
        "screenspot": read_screenspot,
        "screenspot_pro": read_screenspot_pro,
        "androidcontrol": read_androidcontrol,
        "aitz": read_aitz,
        "gui_odyssey": read_gui_odyssey,
        "gui_r1": read_gui_r1,
    }


READERS: dict[str, Callable[[Path, RecordLog], list[OfflineEpisode]]] = _registry()


def read_dataset(name: str, root: str | Path, on_error: str = "raise") -> OfflineEpisodes:
    """Read dataset ``name`` from its folder ``root``.

    Args:
        name: a key of :data:`READERS`.
        root: the dataset folder, laid out as published (module docstring).
        on_error: ``"raise"`` stops at the first record that does not fit the schema, with an
            :class:`~gui_envs.offline.records.OfflineRecordError` naming file, record and field; ``"skip"``
            leaves such records out, warns once with :meth:`ReadReport.summary`, and lists them in ``report``.

    Returns:
        The episodes (a list), with ``.report`` (:class:`~gui_envs.offline.records.ReadReport`).
    """
    if name not in READERS:
        hint = did_you_mean(str(name).lower(), READERS)
        raise OfflineDatasetError(
            f"unknown offline dataset {name!r}; known: {', '.join(sorted(READERS))}.{hint}"
        )
    root = Path(root)
    if not root.is_dir():
        raise OfflineDatasetError(f"{root} is not a folder; download the data (see gui_envs.offline.readers)")
    log = RecordLog(on_error)
    episodes = READERS[name](root, log)
    if log.report.skipped:
        warnings.warn(f"{name} at {root}: {log.report.summary()}", stacklevel=2)
    if not episodes:
        raise OfflineDatasetError(f"no usable {name} records under {root}: {log.report.summary()}")
    return OfflineEpisodes(episodes, log.report)
