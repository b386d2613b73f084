"""Screenshots through TRL (issue 39): in tools mode, ``reset`` and each tool return the screenshot as an image
content block, and TRL's ``GRPOTrainer`` trains the tiny VLM on them; the factory closes what it built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("trl")

from trainers.trl.config import GuiGymTRLConfig, TRLConfigError  # noqa: E402
from trainers.trl.data import dataset_rows  # noqa: E402
from trainers.trl.env import EnvironmentFactory, make_environment_factory  # noqa: E402

# ClickGrid-v0 seed 0 asks for cell h, whose box is x 32..63, y 64..95 on a 96 x 96 screenshot.
CONFIG = dict(env_id="ClickGrid-v0", tools=["click"], seeds=[0, 1], system_prompt="", screenshot=True)


def test_reset_and_tools_return_the_screenshot_before_the_text() -> None:
    with make_environment_factory(GuiGymTRLConfig(**CONFIG)) as factory:
        env = factory()
        image, text = env.reset(seed=0)
        reference = gym.make("ClickGrid-v0")
        expected = reference.reset(seed=0)[0]["screenshot"]
        assert image["type"] == "image" and np.array_equal(np.asarray(image["image"]), expected)
        assert text == {"type": "text", "text": "Task: click cell h"}
        image, text = env.click(x=48, y=80)
        assert image["image"].size == (96, 96) and text["text"].endswith("Episode over: success.")
        assert env.episode.success and env.episode.first_point == (48.0, 80.0)
    assert not env._envs  # the factory's close() closed the envs it built


def test_text_stays_the_default_and_images_need_tools_mode() -> None:
    with EnvironmentFactory(GuiGymTRLConfig(**{**CONFIG, "screenshot": False})) as factory:
        assert factory().reset(seed=0) == "Task: click cell h"
    with pytest.raises(TRLConfigError, match="action_mode='tools'"):
        GuiGymTRLConfig(action_mode="text", screenshot=True)
    with pytest.raises(TRLConfigError, match="blank images"):
        GuiGymTRLConfig(env_id="GuiWeb-v0", env_kwargs={"screenshots": False}, screenshot=True)


def test_tool_schema_names_image_results_only_with_screenshots() -> None:
    from transformers.utils import get_json_schema

    text_tool = make_environment_factory(GuiGymTRLConfig(**{**CONFIG, "screenshot": False}))().click
    image_tool = make_environment_factory(GuiGymTRLConfig(**CONFIG))().click
    assert get_json_schema(text_tool)["function"]["return"] == {"type": "string"}  # text prompts as before
    assert get_json_schema(image_tool)["function"]["return"]["anyOf"][1]["type"] == "array"


def _transcript(env: Any, x: int, y: int) -> list[dict[str, Any]]:
    """Row 0's one-click episode as chat messages, with the env's real image and text results."""
    row = dataset_rows(env._config)[0]
    first = env.reset(**row)
    call = {"type": "function", "function": {"name": "click", "arguments": {"x": x, "y": y}}}
    return [
        {"role": "user", "content": first},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "click", "content": env.click(x=x, y=y)},
        {"role": "assistant", "content": "done"},
    ]


def test_grpo_trainer_trains_the_tiny_vlm_with_images_in_tool_results(tmp_path: Path) -> None:
    import torch
    from trl import GRPOConfig

    from agents.hf_agent import load_processor
    from trainers.trl.tiny import build_tool_vlm, teach_transcripts
    from trainers.trl.train import build_trainer, close_environments

    torch.set_num_threads(1)
    config = GuiGymTRLConfig(**CONFIG)
    model_dir = build_tool_vlm(tmp_path / "vlm")
    with make_environment_factory(config) as factory:
        env = factory()
        # One transcript clicks cell h (success), one a corner (failure): sampled groups mix verdicts.
        good, bad = _transcript(env, 48, 80), _transcript(env, 16, 16)
        loss = teach_transcripts(model_dir, [good, bad], [env.click], steps=150, lr=1e-2)
    assert loss < 1.0

    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=8, num_generations=8,
        max_completion_length=120, max_tool_calling_iterations=2, max_steps=1, learning_rate=1e-3, beta=0.0,
        logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, seed=0, bf16=False,
        gradient_checkpointing=False, disable_tqdm=True,
    )  # fmt: skip
    processor = load_processor(str(model_dir), trust_remote_code=False)
    processor.tokenizer.padding_side = "left"
    trainer = build_trainer(config, args, str(model_dir), processor)
    images_per_call: list[int] = []  # screenshots the vision tower encodes in each forward pass

    def count(_module: Any, args: tuple, kwargs: dict) -> None:
        images_per_call.append(int(kwargs.get("grid_thw", args[1] if len(args) > 1 else None).shape[0]))

    trainer.model.model.visual.register_forward_pre_hook(count, with_kwargs=True)
    before = {k: v.detach().clone() for k, v in trainer.model.named_parameters()}
    try:
        trainer.train()
        steps = [e.episode.steps for e in trainer.environment_factories[None].environments]
    finally:
        close_environments(trainer)
    (log,) = [h for h in trainer.state.log_history if "rewards/env/mean" in h]
    assert trainer.state.global_step == 1 and log["tools/call_frequency"] > 0
    # 8 rollouts, one prompt screenshot each: a pass over more than 8 images carries tool-result screenshots.
    calls = sum(steps)
    assert calls > 0 and max(images_per_call) == 8 + calls
    assert log["reward_std"] > 0  # a click hit and a click missed within the group
    moved = sum((before[k] - v.detach()).abs().sum().item() for k, v in trainer.model.named_parameters())
    assert moved > 0
    assert all(not e._envs for e in trainer.environment_factories[None].environments)


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists() and not __import__("os").environ.get("GUIGYM_CHROMIUM"),
                    reason="needs Chromium")  # fmt: skip
def test_browser_envs_on_the_shared_chromium_take_screenshots_when_asked() -> None:
    pytest.importorskip("playwright")
    # Without ssl or text mode the shared-browser envs skip screenshots for speed; screenshot=True turns them on.
    config = GuiGymTRLConfig(env_id="GuiWeb-v0", task="shop.open_wishlist", tools=["click"], screenshot=True)
    with make_environment_factory(config) as factory:
        env = factory()
        image, text = env.reset(seed=0)
        pixels = np.asarray(image["image"])
        assert pixels.ndim == 3 and pixels.shape[2] == 3 and pixels.std() > 0  # a rendered page, not a blank
        assert text["text"].startswith("Task: ") and "Wishlist" in text["text"]
        image, _ = env.click(element_id="2")
        assert env.episode.success and np.asarray(image["image"]).shape == pixels.shape
