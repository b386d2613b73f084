"""GRPO through pixels: a tiny VLM (:func:`agents.tiny_models.build_vlm`, ``pixels`` size) on ``ClickBox-v0`` with
the target named by colour and the boxes withheld, so the screenshot is the only place the target can be found.

What is checked here: the policy receives the screenshot and the instruction and nothing else, the chance levels
of the held-out split, and that ``configs/grpo_tiny_vlm_pixels.yaml`` trains and evaluates on held-out layouts
through the CLI with the model loaded by path. A learning bar is not asserted: in the CPU budget of a test (a few
hundred GRPO steps) the tiny VLM did not rise above the best constant answer cell; see the config's comment.
"""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import gui_envs  # noqa: F401
from agents.prompts.box import BoxFormat
from agents.tiny_models import build_vlm
from gui_envs.grid.click_box import COLOURS
from guigym.cli import app
from trainers.grpo import make_agent
from trainers.grpo_config import GRPOConfig

ROOT = Path(__file__).resolve().parents[2]
#: The pixel task (the env docstring quotes its chance levels).
PIXELS = dict(n_boxes=2, canvas_px=140, min_side=30, max_side=44, target_by="colour")
#: The held-out split of ``configs/grpo_tiny_vlm_pixels.yaml``.
HELD_OUT = range(100_000, 100_200)


@pytest.fixture(scope="module")
def vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vlm(tmp_path_factory.mktemp("vlm") / "tiny-vlm-pixels", "pixels")


def chance_levels(seeds: range) -> tuple[float, float]:
    """``(random click, best constant cell)`` on the layouts of ``seeds``: the expected success of a uniformly random
    click (the target's area over the canvas's) and that of the best single ``box``-format cell on every layout."""
    env = gym.make("ClickBox-v0", **PIXELS).unwrapped
    fmt, hits, area = BoxFormat(), np.zeros(25), 0.0
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        x0, y0, x1, y1 = env.target_box()  # type: ignore[attr-defined]
        area += (
            (x1 - x0) * (y1 - y0) / PIXELS["canvas_px"] ** 2
        )  # a continuous point inside [x0, x1] x [y0, y1]
        for k in range(25):
            x, y = fmt._centre(k, (PIXELS["canvas_px"], PIXELS["canvas_px"]))
            hits[k] += x0 <= x <= x1 and y0 <= y <= y1
    return area / len(seeds), float(hits.max()) / len(seeds)


def test_the_held_out_chance_levels() -> None:
    random_click, constant = chance_levels(HELD_OUT)
    print(f"held-out chance: random click {random_click:.3f}, best constant cell {constant:.3f}")
    assert 0.04 < random_click < 0.09 and 0.1 < constant < 0.2


def test_the_policy_reads_only_the_screenshot_and_the_instruction(vlm: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    config = GRPOConfig(model=str(vlm), env_id="ClickBox-v0", env_kwargs=PIXELS, output_format="box",
                        constrain_answers=True, max_new_tokens=1, decoder="loop", device="cpu",
                        output_dir=str(tmp_path))  # fmt: skip
    agent = make_agent(config, "cpu")
    assert agent.use_images
    seen: list[tuple[object, object]] = []
    generate = agent.generator.generate

    def spy(conversations, images, sampling):  # type: ignore[no-untyped-def]
        seen.extend(zip(conversations, images, strict=True))
        return generate(conversations, images, sampling)

    agent.generator.generate = spy
    env = gym.make("ClickBox-v0", **PIXELS)
    observations = [env.reset(seed=s)[0] for s in HELD_OUT[:8]]
    outputs = agent.act_batch(observations)
    assert all(o.action is not None and o.action.point is not None for o in outputs)
    phrases = {f"click the {c} box" for c in COLOURS}
    for (conversation, images), obs in zip(seen, observations, strict=True):
        (message,) = conversation
        assert message["content"] == [{"type": "image"}, {"type": "text", "text": obs["instruction"]}]
        assert obs["instruction"] in phrases and obs["elements"] == "[]"
        (shot,) = images
        np.testing.assert_array_equal(shot, obs["screenshot"])


def test_the_pixel_config_trains_and_evaluates_held_out_layouts(vlm: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    result = CliRunner().invoke(
        app,
        ["train", "grpo", "-c", str(ROOT / "configs/grpo_tiny_vlm_pixels.yaml"), "--set", f"model={vlm}",
         "--set", "num_steps=2", "--set", "group_size=4", "--set", "groups_per_step=2", "--set", "num_envs=8",
         "--set", "eval_seeds={start: 100000, count: 8}", "--set", "eval_samples=1", "--set", f"output_dir={tmp_path}",
         "--set", "progress=false", "--set", "save_every=0"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    found = re.search(r"held-out \(8 seeds\) after step 2: greedy success ([0-9.]+)", result.output)
    assert found is not None, result.output
    assert 0.0 <= float(found.group(1)) <= 1.0
