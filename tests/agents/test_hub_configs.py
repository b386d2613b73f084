"""The bundled hub configs build the real architecture offline (on the meta device: no memory, no weights)."""

import pytest
import torch

from agents.hub_configs import hub_config


def test_the_bundled_qwen25_vl_3b_config_builds_a_3_75b_model():
    from transformers import AutoModelForImageTextToText

    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(hub_config("Qwen/Qwen2.5-VL-3B-Instruct"))
    # Qwen2.5-VL-3B-Instruct's model card: 3.75B parameters (tied input and output embeddings).
    assert sum(p.numel() for p in model.parameters()) == pytest.approx(3.75e9, rel=0.01)
    assert model.lm_head.weight is model.get_input_embeddings().weight


def test_an_unknown_hub_id_is_refused_with_the_bundled_ids():
    with pytest.raises(ValueError, match="Qwen/Qwen2.5-VL-3B-Instruct"):
        hub_config("nobody/no-such-model")
