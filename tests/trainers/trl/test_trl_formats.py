"""Every ``text``-mode output format of the TRL adapter resets and steps (issue 36: ``gui_r1`` raised
``AttributeError: 'str' object has no attribute 'messages'`` at reset)."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")

from trainers.trl.config import OUTPUT_FORMATS, GuiGymTRLConfig, TRLConfigError  # noqa: E402
from trainers.trl.env import GuiGymEnvironment  # noqa: E402

#: An env each format fits, and an answer the format parses (a cell, a box, a listed element, GUI-R1's JSON, free text).
CASES = {
    "cell": ("ClickGrid-v0", "A1"),
    "box": ("ClickBox-v0", "A1"),
    "act": ("GuiWeb-MiniWoB-click-test-2-v0", "click A"),
    "gui_r1": ("ClickGrid-v0", '<think>centre</think><answer>[{"action": "click", "point": [32, 32]}]</answer>'),
    "text": ("ClickGrid-v0", "A1"),
}


def test_every_documented_format_has_a_case() -> None:
    assert set(CASES) == set(OUTPUT_FORMATS)


@pytest.mark.parametrize("output_format", OUTPUT_FORMATS)
def test_text_mode_resets_and_steps_in_every_format(output_format: str) -> None:
    env_id, answer = CASES[output_format]
    config = GuiGymTRLConfig(env_id=env_id, action_mode="text", output_format=output_format, rewards=["env"])
    env = GuiGymEnvironment(config)
    try:
        prompt = env.reset(seed=3)
        assert isinstance(prompt, str) and prompt
        episode = env._settle(answer)
        assert episode.steps == 1 and episode.last_info is not None
    finally:
        env._close()


def test_an_unknown_output_format_is_refused() -> None:
    with pytest.raises(TRLConfigError, match="output_format"):
        GuiGymTRLConfig(action_mode="text", output_format="json")
