"""Each offline reader on a sample in its dataset's published layout (``upstream_samples.py``): the records read,
the oracle replays at 100%, each dataset's own click / scroll / text conventions are scored as its evaluation
code scores them, and one malformed record is reported (skip) or refused with file, record and field (strict).

Screens are 100 x 200 pixels, so a normalised distance of 0.13 is 13 px across or 26 px down.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import gui_envs  # noqa: F401
from gui_envs.offline import OfflineRecordError, read_dataset, score_step
from gui_envs.offline.android_readers import aitz_scroll_direction, odyssey_scroll_direction
from gui_envs.offline.conventions import gui_r1_f1, levenshtein_ratio, odyssey_text_match
from gui_envs.schema.actions import Action
from tests.gui_envs.offline import upstream_samples as up

SIZE = (up.W, up.H)
NAMES = sorted(up.WRITERS)
# The malformed record of each sample: (file name, record, field).
BAD = {
    "screenspot": ("screenspot_mobile_v2.json", "item 1", "bbox"),
    "screenspot_pro": ("excel_windows.json", "item 1", "instruction"),
    "androidcontrol": ("android_control-00000-of-00001", "record 1", "actions[0].direction"),
    "aitz": ("INSTALL-222.json", "step 1", "result_action_type"),
    "gui_odyssey": ("4412.json", "step 0", "info"),
    "gui_r1": ("test.parquet", "row 1", "gt_bbox"),
}


def sample(name: str, tmp_path: Path, bad: bool = False) -> Path:
    if name == "gui_r1":
        pytest.importorskip("pyarrow")
    return up.WRITERS[name](tmp_path / name, bad=bad)


def sr(name: str, pred: Action, step: object) -> bool:
    return score_step(pred, step.action, step.bbox, SIZE, name, step.boxes).success  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", NAMES)
def test_oracle_replays_each_upstream_sample_at_100(name: str, tmp_path: Path) -> None:
    root = sample(name, tmp_path)
    env = gym.make("GuiOffline-v0", dataset=name, path=str(root))
    episodes = env.unwrapped.episodes
    for number in range(len(episodes)):
        env.reset(options={"episode": number})
        done = False
        while not done:
            _, reward, done, _, info = env.step(env.unwrapped.oracle_action())
            assert reward == 1.0 and info["type_match"] and info["grounding"] in (True, None), info
        assert info["success"] is True
    env.close()


def test_screenspot_v2_box_is_xywh_and_edges_count(tmp_path: Path) -> None:
    # SeeClick screenspot_test.py: bbox [x, y, w, h] -> [x, y, x + w, y + h], inside with <=.
    step = read_dataset("screenspot", sample("screenspot", tmp_path))[0].steps[0]
    assert step.bbox == (10.0, 20.0, 40.0, 60.0) and step.image.parent.name == "screenspotv2_image"
    assert sr("screenspot", Action.click(35, 50), step)  # outside [10, 20, 30, 40] read as corners
    assert sr("screenspot", Action.click(40, 60), step)  # on the edge
    assert not sr("screenspot", Action.click(41, 60), step)


def test_screenspot_pro_box_is_corners_and_edges_count(tmp_path: Path) -> None:
    step = read_dataset("screenspot_pro", sample("screenspot_pro", tmp_path))[0].steps[0]
    assert step.bbox == (10.0, 20.0, 40.0, 60.0)
    assert sr("screenspot_pro", Action.click(40, 60), step)
    assert not sr("screenspot_pro", Action.click(40.5, 60), step)


def test_androidcontrol_reads_every_action_type_and_scores_like_gui_r1(tmp_path: Path) -> None:
    episodes = read_dataset("androidcontrol", sample("androidcontrol", tmp_path))
    steps = episodes[0].steps
    assert [s.action.type for s in steps] == [
        "open_app", "click", "type", "type", "scroll", "long_press", "wait", "navigate", "navigate",
    ]  # fmt: skip
    assert steps[2].action == Action(
        "type", text="fresh milk", point=(50.0, 40.0)
    )  # README: click, type, enter
    assert steps[0].step_instruction == "step 0" and steps[1].screen_size == SIZE
    click, text, scroll = steps[1], steps[3], steps[4]
    # GUI-R1 eval_omni: normalised distance < 0.14; 13 px of 100 = 0.13 hits, 15 px misses.
    assert sr("androidcontrol", Action.click(63, 40), click)
    assert not sr("androidcontrol", Action.click(65, 40), click)
    # GUI-R1 F1: {"2", "litre"} vs {"2", "litres"} = 0.5 -> match; "milk" -> 0.
    assert sr("androidcontrol", Action.type_text("2 litre"), text)
    assert not sr("androidcontrol", Action.type_text("milk"), text)
    assert sr("androidcontrol", Action.scroll("down"), scroll)
    assert not sr("androidcontrol", Action.scroll("up"), scroll)


def test_aitz_scroll_words_are_the_fingers_and_clicks_follow_aitw(tmp_path: Path) -> None:
    steps = read_dataset("aitz", sample("aitz", tmp_path))[0].steps
    assert [s.label for s in steps] == [
        "click", "type", "press enter", "scroll up", "scroll left", "press back", "press home", "stop",
    ]  # fmt: skip
    click, text, enter, up_, left = steps[:5]
    assert click.action == Action.click(50.0, 40.0) and click.boxes == ((30.0, 30.0, 70.0, 50.0),)
    # The finger moved up the screen: AITZ's label (and CoAT's action_utils) is "scroll up"; "down" scores 0.
    assert sr("aitz", Action.scroll("up"), up_) and not sr("aitz", Action.scroll("down"), up_)
    assert sr("aitz", Action.scroll("left"), left) and not sr("aitz", Action.scroll("right"), left)
    # AITW taps: 0.45 away but both in the element box grown by 1.4 (x from 2 to 98 px) -> hit.
    assert sr("aitz", Action.click(95, 40), click)
    assert not sr("aitz", Action.click(99.5, 40), click)
    assert not sr("aitz", Action.click(50, 70), click)  # 0.15 down, below the grown box (y up to 64)
    # CoAT: a substring matches; "rain" vs "weather today" neither contains nor has ratio > 0.8.
    assert sr("aitz", Action.type_text("weather"), text) and not sr("aitz", Action.type_text("rain"), text)
    # press: the button must match; stop: any stop (CoAT scores STOP on type alone).
    assert sr("aitz", Action.press("enter"), enter) and not sr("aitz", Action.navigate("back"), enter)
    assert sr("aitz", Action.stop(status="infeasible"), steps[7])


def test_gui_odyssey_reads_steps_and_key_clicks_and_scores_its_own_way(tmp_path: Path) -> None:
    steps = read_dataset("gui_odyssey", sample("gui_odyssey", tmp_path))[0].steps
    assert [s.label for s in steps] == [
        "CLICK", "LONG_PRESS", "TYPE", "SCROLL: UP", "PRESS_HOME", "PRESS_BACK", "PRESS_RECENT", "COMPLETE",
    ]  # fmt: skip
    click, _, text, scroll, home = steps[:5]
    assert click.action == Action.click(50.0, 40.0) and click.bbox == (40.0, 30.0, 60.0, 50.0)
    assert home.action == Action.navigate("home")
    assert sr("gui_odyssey", Action.click(58, 48), click)  # in sam2_bbox
    assert sr("gui_odyssey", Action.click(50, 66), click)  # outside it, 0.13 from the point
    assert not sr("gui_odyssey", Action.click(50, 70), click)  # 0.15
    assert not sr("gui_odyssey", Action("long_press", point=(50, 40)), click)  # CLICK != LONG_PRESS
    assert sr("gui_odyssey", Action.scroll("up"), scroll) and not sr(
        "gui_odyssey", Action.scroll("down"), scroll
    )
    assert sr("gui_odyssey", Action.type_text("helo world"), text)  # ANLS 1 - 1/11
    assert not sr("gui_odyssey", Action.type_text("goodbye"), text)
    assert not sr("gui_odyssey", Action.navigate("back"), home)
    assert not sr("gui_odyssey", Action.stop(status="infeasible"), steps[7])  # IMPOSSIBLE != COMPLETE


def test_gui_r1_reads_every_action_name_and_its_boxes(tmp_path: Path) -> None:
    root = sample("gui_r1", tmp_path)
    episodes = {e.id: e for e in read_dataset("gui_r1", root)}
    labels = [episodes[f"test-{i}"].steps[0].label for i in range(len(up.GUI_R1_ROWS))]
    assert labels == [a for a, _, _ in up.GUI_R1_ROWS]
    # train.parquet holds screen fractions (verl/utils/dataset.py scales them by the image size).
    assert episodes["train-0"].steps[0].bbox == pytest.approx((20.0, 30.0, 60.0, 50.0))
    box, point, _, _, _, _, typed, select, scroll = (episodes[f"test-{i}"].steps[0] for i in range(9))
    assert sr("gui_r1", Action.click(59, 40), box) and not sr("gui_r1", Action.click(60, 40), box)  # strict
    assert sr("gui_r1", Action.click(63, 120), point) and not sr("gui_r1", Action.click(65, 120), point)
    assert sr("gui_r1", Action.type_text("shanghai"), typed)  # F1 = 2/3
    assert sr("gui_r1", Action.type_text("large"), select)
    assert sr("gui_r1", Action.scroll("up"), scroll) and not sr("gui_r1", Action.scroll("down"), scroll)
    no_effect = {
        episodes[f"test-{i}"].steps[0].label: episodes[f"test-{i}"].steps[0].action for i in range(23, 28)
    }
    assert no_effect["wait"] == Action("wait")
    assert no_effect["back_information"] == Action.stop(answer="the store opens at 9")
    assert no_effect["call_user"] == Action.stop(answer="please log in", status="failure")


def test_gui_r1_answers_in_its_own_vocabulary_score_through_the_env(tmp_path: Path) -> None:
    env = gym.make("GuiOffline-v0", dataset="gui_r1", path=str(sample("gui_r1", tmp_path)))
    for i, (action, bbox, text) in enumerate(up.GUI_R1_ROWS):
        env.reset(options={"episode": i})
        point = bbox if len(bbox) == 2 else [(bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2]
        answer = json.dumps([{"action": action, "point": point, "input_text": text}])
        _, reward, _, _, info = env.step(f"<think>...</think><answer>{answer}</answer>")
        assert reward == 1.0, (action, info)
    env.reset(options={"episode": 24})  # complete: call_user is another action
    _, reward, _, _, info = env.step(
        '<answer>[{"action": "call_user", "point": [-100, -100], "input_text": ""}]</answer>'
    )
    assert reward == 0.0 and info["type_match"] is False
    env.close()


@pytest.mark.parametrize("name", NAMES)
def test_one_malformed_record_is_skipped_and_reported_or_refused(name: str, tmp_path: Path) -> None:
    root = sample(name, tmp_path, bad=True)
    file, record, field = BAD[name]
    with pytest.raises(OfflineRecordError) as caught:
        read_dataset(name, root)
    err = caught.value
    assert (err.path.name, err.record, err.field) == (file, record, field)
    assert file in str(err) and record in str(err) and repr(field) in str(err)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        episodes = read_dataset(name, root, on_error="skip")
    assert len(episodes.report.skipped) == 1 and episodes.report.skipped[0].field == field
    assert "skipped 1 bad record" in episodes.report.summary() and any(record in str(w.message) for w in seen)
    good = read_dataset(name, sample(name, tmp_path / "good"))
    assert len(episodes) == len(good) - 1
    with pytest.warns(UserWarning, match="skipped 1 bad record"):
        env = gym.make("GuiOffline-v0", dataset=name, path=str(root), on_error="skip")
    assert env.unwrapped.read_report.skipped[0].record == record
    env.close()


def test_a_broken_tfrecord_frame_is_named(tmp_path: Path) -> None:
    import gzip

    root = sample("androidcontrol", tmp_path)
    path = root / "android_control-00000-of-00001"
    raw = bytearray(gzip.decompress(path.read_bytes()))
    raw[0] ^= 0xFF  # the first record's length no longer matches its CRC
    path.write_bytes(gzip.compress(bytes(raw)))
    with pytest.raises(OfflineRecordError, match="length CRC") as caught:
        read_dataset("androidcontrol", root)
    assert caught.value.record == "file"


def test_text_rules_by_hand() -> None:
    # GUI-R1: {"new", "york"} vs {"new", "york", "city"}: P = 1, R = 2/3, F1 = 0.8.
    assert gui_r1_f1("New York", "new york city") == pytest.approx(0.8)
    # python-Levenshtein ratio = 2 LCS / (len a + len b): "kitten" / "sitting": LCS "ittn" = 4 -> 8/13.
    assert levenshtein_ratio("kitten", "sitting") == pytest.approx(8 / 13)
    # GUI-Odyssey ANLS: lev("abcd", "wxyd") = 3, 1 - 3/4 = 0.25 < 0.5.
    assert not odyssey_text_match("abcd", "wxyd") and odyssey_text_match("abcd", "abxd")


def test_scroll_words_from_the_gesture_by_hand() -> None:
    # CoAT action_utils: vertical when |dy| >= 0.9 |dx|; the word is the finger's motion ([y, x] fractions).
    assert aitz_scroll_direction((0.8, 0.5), (0.2, 0.5)) == "up"
    assert aitz_scroll_direction((0.2, 0.5), (0.8, 0.5)) == "down"
    assert aitz_scroll_direction((0.5, 0.2), (0.8, 0.52)) == "down"  # dy 0.3 >= 0.9 * 0.32 = 0.288
    assert aitz_scroll_direction((0.5, 0.2), (0.7, 0.5)) == "right"  # dy 0.2 < 0.27
    # GUI-Odyssey decode_action: horizontal only when |dx| > |dy| ([x, y] on 0-1000).
    assert odyssey_scroll_direction((500, 500), (200, 500)) == "left"
    assert odyssey_scroll_direction((500, 500), (800, 200)) == "up"  # |dx| == |dy|: vertical


def test_gui_r1_export_with_an_unknown_action_skips_only_that_row(tmp_path: Path) -> None:
    root = tmp_path / "r1"
    up.put(root / "images" / "a.png", up.png())
    rows = [
        {
            "image": "images/a.png",
            "instruction": f"task {i}",
            "gt_action": name,
            "gt_bbox": [50, 50],
            "gt_input_text": "",
        }
        for i, name in enumerate(["click", "teleport", "wait"])
    ]
    up.put(root / "rows.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    up.put(root / "broken.parquet", b"not parquet")
    with pytest.raises(OfflineRecordError, match="broken.parquet: file"):
        read_dataset("gui_r1", root)
    with pytest.warns(UserWarning):
        episodes = read_dataset("gui_r1", root, on_error="skip")
    assert [e.steps[0].label for e in episodes] == ["click", "wait"]
    assert [(e.record, e.field) for e in episodes.report.skipped] == [
        ("file", "<parquet>"),
        ("line 2", "gt_action"),
    ]


def test_tfrecord_crc_and_example_round_trip() -> None:
    from gui_envs.offline.tfrecord import crc32c, encode_example, parse_example

    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    features = {"goal": [b"buy milk"], "episode_id": [7, -2], "w": [0.5, 2.0], "shots": [b"", b"\x89PNG"]}
    assert parse_example(encode_example(features)) == features
