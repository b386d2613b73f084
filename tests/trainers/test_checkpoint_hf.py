"""Checkpoints in the layout Hugging Face tools read: ``from_pretrained`` loads a GRPO run's last checkpoint (full
fine-tuning and LoRA) to the trained model's logits; ``Accelerator.load_state`` reads its optimiser, schedule and
random states; a LoRA run resumes exactly; a VLM checkpoint loads with ``AutoModelForImageTextToText``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from trainers.checkpoint import CheckpointError, latest_checkpoint, load_checkpoint, save_checkpoint
from trainers.grpo import train
from trainers.grpo_config import GRPOConfig


def _config(model: Path, out: Path, **kw: object) -> GRPOConfig:
    base = dict(model=str(model), env_id="ClickGrid-v0", output_format="cell", reward="continuous", group_size=4,
                groups_per_step=2, num_envs=8, num_steps=2, max_new_tokens=3, learning_rate=1e-2, device="cpu",
                output_dir=str(out), progress=False, plot=False, weight_decay=0.0, save_every=1,
                deterministic=True)  # fmt: skip
    return GRPOConfig(**{**base, **kw})  # type: ignore[arg-type]


def _logits(model: torch.nn.Module) -> torch.Tensor:
    ids = torch.arange(3, 19).reshape(2, 8)  # (B, T) token ids inside the tiny vocabulary
    with torch.no_grad():
        return model.eval()(input_ids=ids).logits


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_the_last_checkpoint_loads_with_from_pretrained(
    tiny_lm_path: Path, tmp_path: Path, lora: bool
) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    out = train(_config(tiny_lm_path, tmp_path / "run", lora=lora, lora_r=4))
    folder = latest_checkpoint(tmp_path / "run")
    assert folder.name == "checkpoint-000002"
    if lora:
        from peft import AutoPeftModelForCausalLM, PeftModel

        assert (folder / "adapter_model.safetensors").is_file() and not (
            folder / "model.safetensors"
        ).exists()
        loaded = AutoPeftModelForCausalLM.from_pretrained(folder)
        assert isinstance(loaded, PeftModel)
        again = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_lm_path), folder)
        torch.testing.assert_close(_logits(again), _logits(out["model"]), rtol=0, atol=0)
    else:
        assert (folder / "model.safetensors").is_file() and (folder / "config.json").is_file()
        loaded = AutoModelForCausalLM.from_pretrained(folder)
    trained = _logits(out["model"])
    torch.testing.assert_close(_logits(loaded), trained, rtol=0, atol=0)
    # The run moved the weights: the checkpoint is not the starting model.
    assert not torch.equal(_logits(AutoModelForCausalLM.from_pretrained(tiny_lm_path)), trained)
    assert (
        AutoTokenizer.from_pretrained(folder).get_vocab()
        == AutoTokenizer.from_pretrained(tiny_lm_path).get_vocab()
    )
    for name in ("optimizer.bin", "scheduler.bin", "random_states_0.pkl", "state.json"):
        assert (folder / name).is_file(), name
    assert json.loads((folder / "state.json").read_text())["step"] == 2


def test_a_lora_run_resumes_exactly(tiny_lm_path: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    torch.set_num_threads(1)
    train(_config(tiny_lm_path, tmp_path / "whole", lora=True, lora_r=4, num_steps=3))
    cut = _config(tiny_lm_path, tmp_path / "cut", lora=True, lora_r=4, num_steps=3)
    train(_config(tiny_lm_path, tmp_path / "cut", lora=True, lora_r=4, num_steps=2))
    train(cut.__class__(**{**cut.to_dict(), "resume": True}))
    a = load_file(tmp_path / "whole/final/adapter_model.safetensors")
    b = load_file(tmp_path / "cut/final/adapter_model.safetensors")
    assert a.keys() == b.keys() and a
    for name in a:
        torch.testing.assert_close(b[name], a[name], rtol=0, atol=0, msg=name)


def test_resuming_a_lora_checkpoint_without_lora_names_the_file(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    train(_config(tiny_lm_path, tmp_path / "run", lora=True, lora_r=4, num_steps=1))
    with pytest.raises(CheckpointError, match=r"checkpoint-000001/model\.safetensors'.*holds an adapter"):
        train(_config(tiny_lm_path, tmp_path / "run", num_steps=2, resume=True))


def test_accelerate_load_state_reads_the_checkpoint(tmp_path: Path) -> None:
    """The optimiser, schedule and random states are accelerate's save_state files: ``Accelerator.load_state``
    restores them (the model's weights being ``save_pretrained``'s, a pre-hook leaves them to the caller)."""
    from accelerate import Accelerator
    from accelerate.utils import constants

    import trainers.checkpoint as checkpoint

    assert checkpoint.OPTIMIZER_FILE == f"{constants.OPTIMIZER_NAME}.bin"
    assert checkpoint.SCHEDULER_FILE == f"{constants.SCHEDULER_NAME}.bin"
    assert checkpoint.RNG_FILE.format(0) == f"{constants.RNG_STATE_NAME}_0.pkl"
    assert checkpoint.WEIGHTS_FILE == constants.SAFE_WEIGHTS_NAME

    def training(
        lr: float,
    ) -> tuple[torch.nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 4)
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        return model, opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (s + 1))

    model, opt, sched = training(0.1)
    model(torch.ones(1, 4)).sum().backward()
    opt.step()
    sched.step()
    random.seed(5)
    np.random.seed(5)
    torch.manual_seed(5)
    folder = save_checkpoint(tmp_path, 1, model, opt, sched, {"data_position": 1})
    after = (random.random(), float(np.random.rand()), float(torch.rand(())))

    acc = Accelerator(cpu=True)
    fresh, fresh_opt, fresh_sched = acc.prepare(*training(0.5))
    acc.register_load_state_pre_hook(lambda models, input_dir: models.clear())
    acc.load_state(str(folder))
    assert fresh_sched.state_dict()["last_epoch"] == 1
    state = fresh_opt.state_dict()
    torch.testing.assert_close(
        state["state"][0]["exp_avg"], opt.state_dict()["state"][0]["exp_avg"], rtol=0, atol=0
    )
    assert (random.random(), float(np.random.rand()), float(torch.rand(()))) == after
    assert load_checkpoint(folder)["state"]["num_processes"] == 1


def test_a_checkpoint_of_the_earlier_layout_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "checkpoint-000003"
    folder.mkdir()
    for name in ("model.pt", "optimizer.pt", "scheduler.pt", "rng.pt", "state.json"):
        (folder / name).write_bytes(b"{}")
    with pytest.raises(CheckpointError, match=r"checkpoint-000003' is a checkpoint of an earlier guigym"):
        load_checkpoint(folder)


def test_a_vlm_checkpoint_loads_with_auto_model_for_image_text_to_text(tmp_path: Path) -> None:
    from transformers import AutoModelForImageTextToText

    from agents.hf_agent import load_processor
    from agents.tiny_models import build_vlm

    torch.set_num_threads(1)
    vlm = build_vlm(tmp_path / "tiny-vlm")
    config = _config(vlm, tmp_path / "run", env_id="ClickBox-v0", output_format="box", max_new_tokens=1,
                     decoder="loop", num_steps=1, group_size=2, groups_per_step=1, num_envs=2)  # fmt: skip
    out = train(config)
    folder = latest_checkpoint(tmp_path / "run")
    loaded = AutoModelForImageTextToText.from_pretrained(folder)
    trained = _logits(out["model"])
    torch.testing.assert_close(_logits(loaded), trained, rtol=0, atol=0)
    assert not torch.equal(_logits(AutoModelForImageTextToText.from_pretrained(vlm)), trained)
    # The folder's processor is the run's: its image processor resizes a screenshot to the same patches.
    shot = [np.full((140, 140, 3), 200, dtype=np.uint8)]
    patches = [
        load_processor(str(p), False).image_processor(shot, return_tensors="pt") for p in (folder, vlm)
    ]
    torch.testing.assert_close(patches[0]["pixel_values"], patches[1]["pixel_values"], rtol=0, atol=0)
    assert torch.equal(patches[0]["image_grid_thw"], patches[1]["image_grid_thw"])


def test_every_rank_has_its_random_states_file(tmp_path: Path) -> None:
    from trainers.checkpoint import rng_state, set_rng_state

    model = torch.nn.Linear(2, 2)
    opt = torch.optim.AdamW(model.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    torch.manual_seed(1)
    ranks = [rng_state()]
    torch.manual_seed(2)
    ranks.append(rng_state())
    folder = save_checkpoint(tmp_path, 1, model, opt, sched, {}, rng_states=ranks)
    ckpt = load_checkpoint(folder)
    set_rng_state(ckpt["rng"], 1, 2, folder)  # rank 1 continues rank 1's stream
    assert torch.equal(torch.get_rng_state(), ranks[1]["torch_manual_seed"])
    with pytest.raises(
        CheckpointError, match=r"holds the random states of 2 process\(es\).*but this run has 1"
    ):
        set_rng_state(ckpt["rng"], 0, 1, folder)
    (folder / "random_states_1.pkl").unlink()
    with pytest.raises(CheckpointError, match=r"random_states_1\.pkl' is missing"):
        load_checkpoint(folder)
