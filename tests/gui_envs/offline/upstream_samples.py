"""Small samples in each dataset's published layout, written from the upstream schemas (not from guigym's).

Sources of each layout: ScreenSpot-v2 (OS-Atlas: ``screenspot_<platform>_v2.json`` + ``screenspotv2_image/``,
``bbox`` x, y, w, h), AndroidControl (google-research android_control/README.md: GZIP TFRecord of
``tf.train.Example``), AITZ (CoAT README and ``data-example/``), GUI-Odyssey (``introduction.md``,
``data/format_converter.py``), GUI-R1 (README, ``verl/utils/dataset.py``, ``guir1/eval/eval_omni.py``).
Screens are 100 x 200 pixels (width x height) unless said otherwise.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from gui_envs.offline.tfrecord import encode_example, write_records

W, H = 100, 200


def png(size: tuple[int, int] = (W, H), shade: int = 200) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, (shade, shade, 255 - shade)).save(buf, format="PNG")
    return buf.getvalue()


def put(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


# ----- ScreenSpot-v2 ---------------------------------------------------------------------------------------


def screenspot_v2(root: Path, bad: bool = False) -> Path:
    items = [
        {
            "img_filename": "m0.png",
            "bbox": [10, 20, 30, 40],
            "instruction": "open menu",
            "data_type": "icon",
            "data_source": "ios",
        },
        {
            "img_filename": "m1.png",
            "bbox": [50, 100, 40, 20],
            "instruction": "tap ok",
            "data_type": "text",
            "data_source": "android",
        },
    ]
    if bad:
        items[1]["bbox"] = [50, 100, 40]
    for it in items:
        put(root / "screenspotv2_image" / it["img_filename"], png())
    put(root / "screenspot_mobile_v2.json", json.dumps(items))
    return root


# ----- ScreenSpot-Pro --------------------------------------------------------------------------------------


def screenspot_pro(root: Path, bad: bool = False) -> Path:
    items: list[dict[str, Any]] = [
        {
            "img_filename": "excel_windows/a.png",
            "bbox": [10, 20, 40, 60],
            "instruction": "bold",
            "id": "excel_0",
            "application": "excel",
            "platform": "windows",
            "img_size": [W, H],
            "ui_type": "icon",
            "group": "Office",
        },
        {
            "img_filename": "excel_windows/a.png",
            "bbox": [50, 50, 90, 70],
            "instruction": "sum",
            "id": "excel_1",
            "application": "excel",
            "platform": "windows",
            "img_size": [W, H],
            "ui_type": "text",
            "group": "Office",
        },
    ]
    if bad:
        del items[1]["instruction"]
    put(root / "images" / "excel_windows" / "a.png", png())
    put(root / "annotations" / "excel_windows.json", json.dumps(items))
    return root


# ----- AndroidControl --------------------------------------------------------------------------------------

#: Every action_type of the README, in one episode.
ANDROIDCONTROL_ACTIONS = [
    {"action_type": "open_app", "app_name": "Shopping"},
    {"action_type": "click", "x": 50, "y": 40},
    {"action_type": "type", "text": "fresh milk", "x": 50, "y": 40},
    {"action_type": "input_text", "text": "2 litres"},
    {"action_type": "scroll", "direction": "down"},
    {"action_type": "long_press", "x": 20, "y": 150},
    {"action_type": "wait"},
    {"action_type": "navigate_back"},
    {"action_type": "navigate_home"},
]


def androidcontrol_example(episode_id: int, actions: list[dict[str, Any]]) -> bytes:
    n = len(actions) + 1  # a screenshot before each action and one after the last
    return encode_example(
        {
            "episode_id": [episode_id],
            "goal": [b"Buy fresh milk"],
            "screenshots": [png(shade=10 * k) for k in range(n)],
            "accessibility_trees": [b"" for _ in range(n)],
            "screenshot_widths": [W] * n,
            "screenshot_heights": [H] * n,
            "actions": [json.dumps(a).encode() for a in actions],
            "step_instructions": [f"step {k}".encode() for k in range(len(actions))],
        }
    )


def androidcontrol(root: Path, bad: bool = False) -> Path:
    records = [androidcontrol_example(7, ANDROIDCONTROL_ACTIONS)]
    second = [{"action_type": "click", "x": 10, "y": 10}]
    if bad:
        second = [{"action_type": "scroll", "direction": "sideways"}]
    records.append(androidcontrol_example(8, second))
    write_records(root / "android_control-00000-of-00001", records)
    return root


# ----- AITZ ------------------------------------------------------------------------------------------------

#: (result_action_type, touch_yx, lift_yx, text, coat_action_desc): every AITW code AITZ uses.
AITZ_STEPS = [
    (4, "[0.2, 0.5]", "[0.2, 0.5]", "", "click on the search bar"),
    (3, "[-1.0, -1.0]", "[-1.0, -1.0]", "weather today", 'input text "weather today"'),
    (7, "[-1.0, -1.0]", "[-1.0, -1.0]", "", "press enter"),
    (4, "[0.8, 0.5]", "[0.3, 0.52]", "", "scroll up"),  # the finger moves up the screen
    (4, "[0.5, 0.9]", "[0.5, 0.1]", "", "scroll left"),
    (5, "[-1.0, -1.0]", "[-1.0, -1.0]", "", "press the back button"),
    (6, "[-1.0, -1.0]", "[-1.0, -1.0]", "", "press the home button"),
    (10, "[-1.0, -1.0]", "[-1.0, -1.0]", "", "stop and set the query as completed"),
]


def aitz_episode(root: Path, split: str, subset: str, name: str, steps: list[tuple[Any, ...]]) -> None:
    out = []
    for k, (code, touch, lift, text, desc) in enumerate(steps):
        image = f"{subset}/{name}/{name}_{k}.png"  # relative to the split folder, as in CoAT's data-example
        put(root / split / image, png())
        out.append(
            {
                "episode_id": name.split("-")[-1],
                "episode_length": len(steps),
                "step_id": k,
                "instruction": "check the weather",
                # [y, x, h, w] in pixels: one element around (50, 40)
                "ui_positions": "[[30, 30, 20, 40]]",
                "ui_text": '["Search"]',
                "ui_types": '["TEXT"]',
                "result_action_type": code,
                "result_action_text": text,
                "result_touch_yx": touch,
                "result_lift_yx": lift,
                "image_path": image,
                "image_full_path": f"android-in-the-wild/aitw_with_gpt/{split}/{image}",
                "coat_screen_desc": "a screen",
                "coat_action_think": "think",
                "coat_action_desc": desc,
                "coat_action_result": "result",
            }
        )
    put(root / split / subset / name / f"{name}.json", json.dumps(out))


def aitz(root: Path, bad: bool = False) -> Path:
    aitz_episode(root, "test", "general", "GENERAL-111", AITZ_STEPS)
    second = [
        (6, "[-1.0, -1.0]", "[-1.0, -1.0]", "", "press the home button"),
        (11, "[-1.0, -1.0]", "[-1.0, -1.0]", "", "stop"),
    ]
    if bad:
        second[1] = (99, "[-1.0, -1.0]", "[-1.0, -1.0]", "", "stop")
    aitz_episode(root, "test", "install", "INSTALL-222", second)
    return root


# ----- GUI-Odyssey -----------------------------------------------------------------------------------------

#: (action, info, sam2_bbox): every action of introduction.md, the three KEY_* clicks included.
ODYSSEY_STEPS: list[tuple[str, Any, list[int]]] = [
    ("CLICK", [[500, 200]], [400, 150, 600, 250]),
    ("LONG_PRESS", [[300, 700]], [250, 650, 350, 750]),
    ("TEXT", "hello world", []),
    ("SCROLL", [[500, 800], [510, 300]], []),  # the finger moves up: "SCROLL: UP"
    ("CLICK", "KEY_HOME", []),
    ("CLICK", "KEY_BACK", []),
    ("CLICK", "KEY_APPSELECT", []),
    ("COMPLETE", "", []),
]


def odyssey_episode(root: Path, name: str, steps: list[tuple[str, Any, list[int]]]) -> None:
    rows = []
    for k, (action, info, box) in enumerate(steps):
        shot = f"{name}_{k}.png"
        put(root / "screenshots" / shot, png())
        rows.append(
            {
                "step": k,
                "screenshot": shot,
                "action": action,
                "info": info,
                "ps": "",
                "description": "a screen",
                "intention": "why",
                "context": "so far",
                "low_level_instruction": f"do step {k}",
                "sam2_bbox": box,
            }
        )
    episode = {
        "episode_id": name,
        "device_info": {
            "product": "sdk_gphone64",
            "release_version": "14",
            "sdk_version": "34",
            "h": 2 * H,
            "w": 2 * W,
            "device_name": "Pixel 7 Pro",
        },
        "task_info": {
            "category": "Multi_Apps",
            "app": ["Chat"],
            "meta_task": "send {}",
            "task": "send hi",
            "instruction": "Send hello world",
        },
        "step_length": len(rows),
        "steps": rows,
    }
    put(root / "annotations" / f"{name}.json", json.dumps(episode))


def gui_odyssey(root: Path, bad: bool = False) -> Path:
    odyssey_episode(root, "4411", ODYSSEY_STEPS)
    odyssey_episode(
        root, "4412", [("CLICK", "KEY_VOLUME" if bad else "KEY_HOME", []), ("INCOMPLETE", "", [])]
    )
    return root


# ----- GUI-R1 ----------------------------------------------------------------------------------------------

#: (gt_action, gt_bbox in pixels, gt_input_text): every name in GUI-R1's prompts (guir1/inference/*.py,
#: verl/utils/dataset.py), with swipe, drag, call_user and back_information.
GUI_R1_ROWS: list[tuple[str, list[float], str]] = [
    ("click", [20, 30, 60, 50], "no input text"),
    ("click", [50, 120], "no input text"),
    ("long_press", [40, 40], "no input text"),
    ("doubleclick", [10, 10, 30, 30], "no input text"),
    ("rightclick", [70, 70], "no input text"),
    ("moveto", [60, 20], "no input text"),
    ("type", [-100, -100], "shanghai mall"),
    ("select", [-100, -100], "Large"),
    ("scroll", [-100, -100], "up"),
    ("swipe", [-100, -100], "left"),
    ("drag", [10, 100], "[90, 100]"),
    ("enter", [-100, -100], "no input text"),
    ("press_enter", [-100, -100], "no input text"),
    ("press_back", [-100, -100], "no input text"),
    ("press_home", [-100, -100], "no input text"),
    ("press_recent", [-100, -100], "no input text"),
    ("press_tab", [-100, -100], "no input text"),
    ("press_down", [-100, -100], "no input text"),
    ("press_space", [-100, -100], "no input text"),
    ("press_pgdn", [-100, -100], "no input text"),
    ("hotkey", [-100, -100], "ctrl+c"),
    ("close/delete", [-100, -100], "no input text"),
    ("open_app", [-100, -100], "Clock"),
    ("wait", [-100, -100], "no input text"),
    ("complete", [-100, -100], "no input text"),
    ("impossible", [-100, -100], "no input text"),
    ("back_information", [-100, -100], "the store opens at 9"),
    ("call_user", [-100, -100], "please log in"),
]


def gui_r1_row(i: int, action: str, bbox: list[float], text: str, image: bytes) -> dict[str, Any]:
    return {
        "image": {"bytes": image, "path": f"{i}.png"},
        "instruction": f"task {i}",
        "history": "None",
        "task_type": "high",
        "gt_action": action,
        "gt_bbox": bbox,
        "gt_input_text": text,
        "group": "mobile",
    }


def gui_r1(root: Path, bad: bool = False) -> Path:
    """``test.parquet`` (pixels) with every action name, and ``train.parquet`` (screen fractions)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = png()
    rows = [gui_r1_row(i, a, b, t, image) for i, (a, b, t) in enumerate(GUI_R1_ROWS)]
    if bad:
        rows[1]["gt_bbox"] = [1, 2, 3]
    root.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), root / "test.parquet")
    train = [gui_r1_row(0, "click", [0.2, 0.15, 0.6, 0.25], "no input text", image)]  # = [20, 30, 60, 50] px
    pq.write_table(pa.Table.from_pylist(train), root / "train.parquet")
    return root


WRITERS = {
    "screenspot": screenspot_v2,
    "screenspot_pro": screenspot_pro,
    "androidcontrol": androidcontrol,
    "aitz": aitz,
    "gui_odyssey": gui_odyssey,
    "gui_r1": gui_r1,
}
