"""Small fixtures in each dataset's published layout, with synthetic screenshots drawn by PIL.

``write_fixture(name, root)`` writes the folder the reader expects (annotation files plus PNGs) and returns
it. The fixtures are what ``GuiOffline-v0`` loads when no ``path`` is given, and what the tests score by hand.
Screens: mobile 200 x 400, web 400 x 300, desktop 640 x 400 pixels (width x height).

Layouts: ScreenSpot v1 and ScreenSpot-Pro as published; AndroidControl as a GZIP TFRecord file of
``tf.train.Example`` episodes; AITZ as ``<split>/<subset>/<episode>/<episode>.json``; GUI-Odyssey as
``annotations/`` (steps under ``steps``) + ``screenshots/``. GUI-R1 is published as parquet; its fixture is the
same rows exported as JSON lines (a layout the reader also takes), so that the bundled env needs no pyarrow.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from gui_envs.offline.tfrecord import encode_example, write_records

MOBILE, WEB, DESKTOP = (200, 400), (400, 300), (640, 400)


def _image(size: tuple[int, int], boxes: list[tuple[tuple[float, float, float, float], str]]) -> Any:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, (245, 245, 245))
    draw = ImageDraw.Draw(img)
    for (x1, y1, x2, y2), label in boxes:
        draw.rectangle((x1, y1, x2, y2), fill=(70, 110, 200), outline=(20, 20, 20))
        draw.text((x1 + 3, y1 + 3), label, fill=(255, 255, 255))
    return img


def _draw(
    path: Path, size: tuple[int, int], boxes: list[tuple[tuple[float, float, float, float], str]]
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _image(size, boxes).save(path)


def _write_json(path: Path, data: Any, lines: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        if lines:
            fh.write("\n".join(json.dumps(d) for d in data) + "\n")
        else:
            json.dump(data, fh, indent=1)


def _screenspot(root: Path) -> None:
    # bbox is [x, y, w, h] in pixels.
    recs = {
        "mobile": [("m0.png", MOBILE, [20, 40, 60, 30], "open settings", "text", "android")],
        "web": [
            ("w0.png", WEB, [100, 100, 80, 40], "search button", "icon", "shop"),
            ("w1.png", WEB, [300, 20, 60, 20], "login link", "text", "forum"),
        ],
        "desktop": [("d0.png", DESKTOP, [500, 350, 100, 30], "save file", "icon", "windows")],
    }
    for platform, items in recs.items():
        out = []
        for name, size, (x, y, w, h), instruction, kind, source in items:
            _draw(root / "screenspot_imgs" / name, size, [((x, y, x + w, y + h), instruction)])
            out.append(
                {
                    "img_filename": name,
                    "bbox": [x, y, w, h],
                    "instruction": instruction,
                    "data_type": kind,
                    "data_source": source,
                }
            )
        _write_json(root / f"screenspot_{platform}.json", out)


def _screenspot_pro(root: Path) -> None:
    recs = [
        {
            "img_filename": "vscode_macos/a.png",
            "bbox": [100, 50, 140, 70],
            "instruction": "run the tests",
            "id": "vscode_0",
            "application": "vscode",
            "platform": "macos",
            "img_size": list(DESKTOP),
            "ui_type": "icon",
            "group": "Dev",
        },
        {
            "img_filename": "vscode_macos/b.png",
            "bbox": [300, 300, 400, 330],
            "instruction": "open terminal",
            "id": "vscode_1",
            "application": "vscode",
            "platform": "macos",
            "img_size": list(DESKTOP),
            "ui_type": "text",
            "group": "Dev",
        },
    ]
    for r in recs:
        _draw(root / "images" / r["img_filename"], DESKTOP, [(tuple(r["bbox"]), r["instruction"])])
    _write_json(root / "annotations" / "vscode_macos.json", recs)


def _png(size: tuple[int, int], boxes: list[tuple[tuple[float, float, float, float], str]]) -> bytes:
    buf = io.BytesIO()
    _image(size, boxes).save(buf, format="PNG")
    return buf.getvalue()


def _androidcontrol(root: Path) -> None:
    # One episode: 3 actions between 4 screenshots (README: len(actions) == len(screenshots) - 1).
    shots = [_png(MOBILE, [((40, 100, 160, 140), f"screen {k}")]) for k in range(4)]
    actions = [
        {"action_type": "click", "x": 100, "y": 120},
        {"action_type": "input_text", "text": "fresh milk"},
        {"action_type": "scroll", "direction": "down"},
    ]
    example = encode_example(
        {
            "episode_id": [1],
            "goal": [b"Search for milk in the shopping app"],
            "screenshots": shots,
            "screenshot_widths": [MOBILE[0]] * 4,
            "screenshot_heights": [MOBILE[1]] * 4,
            "actions": [json.dumps(a).encode() for a in actions],
            "step_instructions": [b"tap the search bar", b"type fresh milk", b"scroll down"],
        }
    )
    write_records(root / "android_control-00000-of-00001", [example])


def _aitz(root: Path) -> None:
    # image_path is relative to the split folder (CoAT data-example/); ui_positions rows are [y, x, h, w] pixels.
    folder = root / "test" / "general" / "ep42"
    steps = [
        ("[0.25, 0.5]", "[0.25, 0.5]", 4, "", "click on the search bar"),
        ("[-1.0, -1.0]", "[-1.0, -1.0]", 3, "weather today", 'type "weather today"'),
        ("[0.8, 0.5]", "[0.2, 0.5]", 4, "", "scroll up"),  # the finger moves up: CoAT says "scroll up"
        ("[-1.0, -1.0]", "[-1.0, -1.0]", 10, "", "stop and set the query as completed"),
    ]
    out = []
    for k, (touch, lift, code, text, desc) in enumerate(steps):
        image = f"general/ep42/ep42_{k}.png"
        _draw(root / "test" / image, MOBILE, [((60, 80, 140, 120), "search")])
        out.append(
            {
                "episode_id": "ep42",
                "episode_length": len(steps),
                "step_id": k,
                "instruction": "check the weather today",
                "ui_positions": "[[80, 60, 40, 80]]",
                "ui_text": '["search"]',
                "ui_types": '["TEXT"]',
                "result_action_type": code,
                "result_action_text": text,
                "result_touch_yx": touch,
                "result_lift_yx": lift,
                "image_path": image,
                "image_full_path": f"aitz/test/{image}",
                "coat_screen_desc": "A home screen.",
                "coat_action_think": "Open the search bar.",
                "coat_action_desc": desc,
                "coat_action_result": "The search bar is focused.",
            }
        )
    _write_json(folder / "ep42.json", out)


def _gui_odyssey(root: Path) -> None:
    # Upstream (GUI-Odyssey introduction.md): hardware keys are CLICKs whose info names the key.
    steps = [
        {
            "step": 0,
            "screenshot": "od1_0.png",
            "action": "CLICK",
            "info": [[500, 250]],
            "sam2_bbox": [400, 200, 600, 300],
        },
        {"step": 1, "screenshot": "od1_1.png", "action": "TEXT", "info": "hello", "sam2_bbox": []},
        {"step": 2, "screenshot": "od1_2.png", "action": "CLICK", "info": "KEY_BACK", "sam2_bbox": []},
        {"step": 3, "screenshot": "od1_3.png", "action": "COMPLETE", "info": "", "sam2_bbox": []},
    ]
    for s in steps:
        s.update(ps="", description="", intention="", context="", low_level_instruction=f"step {s['step']}")
    for s in steps:
        _draw(root / "screenshots" / s["screenshot"], MOBILE, [((80, 80, 120, 120), "app")])
    rec = {
        "episode_id": "od1",
        "device_info": {
            "product": "Pixel 7",
            "release_version": "14",
            "sdk_version": "34",
            "h": MOBILE[1],
            "w": MOBILE[0],
            "device_name": "Small Phone",
        },
        "task_info": {
            "category": "Social_Sharing",
            "app": ["Chat"],
            "meta_task": "send a message",
            "task": "send a message",
            "instruction": "Send hello in the chat app",
        },
        "step_length": len(steps),
        "steps": steps,
    }
    _write_json(root / "annotations" / "od1.json", rec)


def _gui_r1(root: Path) -> None:
    rows = [
        {
            "id": "r0",
            "image": "images/r0.png",
            "instruction": "click the cart",
            "history": "None",
            "gt_action": "click",
            "gt_bbox": [10, 10, 50, 40],
            "gt_input_text": "no input text",
            "task_type": "web",
            "platform": "web",
        },
        {
            "id": "r1",
            "image": "images/r1.png",
            "instruction": "type the city",
            "history": "step 1: click",
            "gt_action": "type",
            "gt_bbox": [-100, -100],
            "gt_input_text": "new york",
            "task_type": "web",
            "platform": "web",
        },
        {
            "id": "r2",
            "image": "images/r2.png",
            "instruction": "tap ok",
            "history": "None",
            "gt_action": "click",
            "gt_bbox": [100, 200],
            "gt_input_text": "no input text",
            "task_type": "mobile",
            "platform": "mobile",
        },
    ]
    for r in rows:
        size = MOBILE if r["platform"] == "mobile" else WEB
        box = tuple(r["gt_bbox"]) if len(r["gt_bbox"]) == 4 else (90, 190, 110, 210)
        _draw(root / r["image"], size, [(box, r["instruction"])])
    _write_json(root / "train.jsonl", rows, lines=True)


_WRITERS = {
    "screenspot": _screenspot,
    "screenspot_pro": _screenspot_pro,
    "androidcontrol": _androidcontrol,
    "aitz": _aitz,
    "gui_odyssey": _gui_odyssey,
    "gui_r1": _gui_r1,
}


#: Bumped when a fixture's layout changes, so that a folder written by an older guigym is rewritten.
FIXTURE_VERSION = 2


def write_fixture(name: str, root: str | Path) -> Path:
    """Write the fixture of dataset ``name`` under ``root/name`` (once per layout version) and return that folder."""
    import shutil

    if name not in _WRITERS:
        from gui_envs.offline.records import OfflineDatasetError
        from gui_envs.schema.errors import did_you_mean

        hint = did_you_mean(str(name).lower(), _WRITERS)  # `dataset=ScreenSpot`, as the paper spells it
        raise OfflineDatasetError(f"no dataset named {name!r}; known: {', '.join(sorted(_WRITERS))}.{hint}")
    folder = Path(root) / name
    marker = folder / f".complete-v{FIXTURE_VERSION}"
    if not marker.exists():
        if folder.exists():  # an older layout: its files would be read beside the new ones
            shutil.rmtree(folder)
        _WRITERS[name](folder)
        marker.touch()
    return folder
