"""``benchmarks/trl_gpu_check.py``'s path on CPU: the one-GPU TRL run file (GuiWeb-v0, tools mode, the env's
verdict, gradient checkpointing) with Qwen2.5-VL-3B's text architecture cut down to a tiny one, one step of
2 rollouts; ``benchmarks/gpu_check.sh`` runs the same ``main`` with the 3B architecture on a GPU (issue 25,
item 6)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.trainers.conftest import have_chromium

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[3]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("trl_gpu_check", ROOT / "benchmarks/trl_gpu_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_run_file_is_the_one_gpu_setting() -> None:
    data = yaml.safe_load((ROOT / "configs/trl/grpo_guiweb_gpu_check.yaml").read_text())
    guigym, trl = data["guigym"], data["trl"]
    assert (guigym["env_id"], guigym["action_mode"], guigym["rewards"]) == ("GuiWeb-v0", "tools", ["env"])
    assert trl["bf16"] and trl["gradient_checkpointing"] and trl["max_steps"] == 3
    assert trl["use_vllm"] and trl["vllm_mode"] == "colocate"
    # One generation batch per optimiser step, whole groups of num_generations.
    assert (trl["per_device_train_batch_size"] * trl["gradient_accumulation_steps"]) % trl[
        "num_generations"
    ] == 0


def test_real_size_model_is_the_3b_text_architecture() -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from agents.hub_configs import hub_config
    from trainers.trl.tiny import build_tool_tokenizer

    check = _load()
    tokenizer = build_tool_tokenizer()
    config = check.text_config("real", tokenizer)
    hub = hub_config(check.ARCHITECTURE).text_config
    for name in check.TEXT_FIELDS:
        assert getattr(config, name) == getattr(hub, name), name
    assert config.rope_parameters["rope_theta"] == hub.rope_parameters["rope_theta"]
    assert config.eos_token_id == tokenizer.eos_token_id < len(tokenizer) <= config.vocab_size
    with torch.device("meta"):  # no memory: the parameter count and the tie
        net = AutoModelForCausalLM.from_config(config)
    assert net.lm_head.weight is net.model.embed_tokens.weight
    assert 3.0e9 < sum(p.numel() for p in net.parameters()) < 3.2e9

    class Wide:  # a tokenizer with more ids than the model has rows
        eos_token_id = pad_token_id = 0

        def __len__(self) -> int:
            return hub.vocab_size + 1

    with pytest.raises(ValueError, match="vocabulary"):
        check.text_config("real", Wide())


@pytest.mark.skipif(not have_chromium(), reason="GuiWeb-v0 needs Chromium (playwright)")
def test_trl_gpu_check_runs_its_path_on_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch
    from transformers import AutoConfig, AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    check = _load()
    torch.set_num_threads(1)
    records = check.main([*check.QUICK, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "grpo_guiweb_gpu_check.yaml" in out and "HF generate" in out and "GuiWeb-v0 tools" in out
    assert "| step | step s | rollout s | sampling s |" in out and "| 1 |" in out and "peak GPU memory" in out
    (record,) = records
    assert 0 < record["tokens"] <= 2 * 8  # 2 rollouts of at most 8 model tokens
    assert 0 < record["sampling_s"] <= record["rollout_s"] < record["step_s"]
    # The model is the 3B text architecture cut down: the hub vocabulary, tied, the tool-template tokenizer.
    (folder,) = [p for p in tmp_path.iterdir() if p.name.endswith("-text-tiny")]
    config = AutoConfig.from_pretrained(folder)
    assert (config.model_type, config.vocab_size, config.num_hidden_layers) == ("qwen2", 151936, 2)
    assert config.tie_word_embeddings
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert len(tokenizer) < config.vocab_size and tokenizer.chat_template == qwen2_5_chat_template
