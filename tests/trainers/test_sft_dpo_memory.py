"""SFT and DPO in less memory (issue 25, item 2): micro-batches by a token budget accumulate the one-pass
gradient (SFT's token mean, DPO's per-pair loss with each pair's chosen and rejected sides kept together), with
chunked log-probs and activation checkpointing."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.trainers.test_grpo_memory import grpo_samples
from trainers.config_io import ConfigError
from trainers.dpo import PairSample, load_policy, optimise_pairs, pair_micro_batches, pairs_backward
from trainers.dpo_config import DPOConfig
from trainers.ipl_config import IPLConfig
from trainers.logprobs import prompt_lengths, split_by_tokens
from trainers.policy_setup import enable_activation_checkpointing
from trainers.sft import sft_backward
from trainers.sft_config import SFTConfig


@pytest.fixture(scope="module")
def gen(tiny_lm_path: Path) -> Any:
    from agents.hf_agent import HFGenerator

    return HFGenerator(str(tiny_lm_path), device="cpu")


def _grads(model: Any, run: Any) -> tuple[list[torch.Tensor], Any]:
    model.zero_grad(set_to_none=True)
    out = run()
    return [p.grad.clone() for p in model.parameters()], out


def _checkpointed(model: Any) -> Any:
    """A copy of ``model`` that recomputes its layers in the backward (train mode, where checkpointing acts)."""
    twin = copy.deepcopy(model)
    enable_activation_checkpointing(twin)
    return twin.train()


def test_sft_micro_batches_accumulate_the_one_pass_gradient(gen: Any) -> None:
    samples = grpo_samples(gen)  # 8 rows, 3 prompts of unequal length, answers of 1 to 8 tokens
    prompts, answers = [s.prompt for s in samples], [s.token_ids for s in samples]
    lens = prompt_lengths(gen, prompts)
    assert lens == [len(gen.tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
    whole, s_whole = _grads(gen.model, lambda: sft_backward(gen.model, gen, prompts, answers))
    budget = 3 * (max(lens) + 8)
    twin = _checkpointed(gen.model)
    for model, tokens, chunk in ((gen.model, budget, 0), (gen.model, 1, 3), (twin, budget, 5)):
        got, s_got = _grads(model, lambda m=model, b=tokens, c=chunk: sft_backward(m, gen, prompts, answers,
                                                                                   None, b, c))  # fmt: skip
        for a, b in zip(got, whole, strict=True):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
        assert s_got["loss"] == pytest.approx(s_whole["loss"], abs=1e-5)
        assert s_got["token_acc"] == pytest.approx(s_whole["token_acc"], abs=1e-6)
    # The budgets did split the batch: whole-batch normalisation per micro-batch would have failed above.
    assert len(split_by_tokens(list(range(8)), lens, [len(a) for a in answers], budget)) > 1


def _pairs() -> list[PairSample]:
    """6 pairs: prompts and completions of unequal length, chosen sometimes longer, sometimes shorter."""
    words = ["Back", "Home", "the settings page now", "up", "down the list of apps please", "menu"]
    return [PairSample(f"Task: go {w}. What next?", f"press {w}" + " ok" * (i % 3), f"scroll {w}" * (1 + i % 2))
            for i, w in enumerate(words)]  # fmt: skip


def test_dpo_micro_batches_keep_pairs_whole_and_accumulate_the_one_pass_gradient(gen: Any) -> None:
    pairs = _pairs()
    torch.manual_seed(0)
    ref = copy.deepcopy(gen.model).eval()
    with torch.no_grad():  # a reference unlike the policy, so the DPO term's gradient is not the z = 0 one
        for p in ref.parameters():
            p.add_(0.02 * torch.randn_like(p))

    def run(model: Any, budget: int, chunk: int) -> tuple[float, dict[str, float]]:
        return pairs_backward(model, gen, ref, pairs, 0.5, 0.7, budget, chunk)

    whole, (l_whole, s_whole) = _grads(gen.model, lambda: run(gen.model, 0, 0))
    assert pair_micro_batches(gen, pairs, 1) == [
        [i] for i in range(6)
    ]  # a pair alone over budget: its own part
    # Two pairs' worth of tokens: a micro-batch of pairs costs 2 |R| (P + T), chosen and rejected together.
    width = max(prompt_lengths(gen, [p.prompt for p in pairs])) + max(
        len(gen.tokenizer(t, add_special_tokens=False)["input_ids"]) + 1
        for p in pairs
        for t in (p.chosen, p.rejected)
    )
    budget = 2 * 2 * width
    parts = pair_micro_batches(gen, pairs, budget)
    assert 1 < len(parts) < 6 and sorted(i for p in parts for i in p) == list(range(6)), parts
    twin = _checkpointed(gen.model)
    for model, tokens, chunk in ((gen.model, budget, 0), (gen.model, 1, 4), (twin, budget, 7)):
        got, (loss, stats) = _grads(model, lambda m=model, b=tokens, c=chunk: run(m, b, c))
        for a, b in zip(got, whole, strict=True):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
        assert loss == pytest.approx(l_whole, abs=1e-5)
        for key, value in s_whole.items():
            assert stats[key] == pytest.approx(value, abs=1e-5), key


def test_optimise_pairs_micro_batched_trains_as_one_pass(tiny_lm_path: Path, tmp_path: Path) -> None:
    """The whole loop (load_policy with checkpointing, the reference, the optimiser) with micro-batches, chunks and
    checkpointing follows the one-pass run step for step."""
    pairs = _pairs()
    histories = []
    for name, extra in (("one", {}), ("micro", dict(micro_batch_tokens=60, logprob_chunk_size=4,
                                                      gradient_checkpointing=True))):  # fmt: skip
        torch.manual_seed(0)
        cfg = DPOConfig(model=str(tiny_lm_path), data="-", beta=0.1, sft_weight=1.0, epochs=2, batch_size=6,
                        learning_rate=1e-3, device="cpu", progress=False, output_dir=str(tmp_path / name),
                        **extra)  # fmt: skip
        gen, ref = load_policy(cfg, tiny_lm_path)
        histories.append(optimise_pairs(cfg, gen, ref, pairs, tmp_path / name))
    one, micro = histories
    assert len(one) == len(micro) == 2
    for a, b in zip(one, micro, strict=True):
        for key in ("loss", "dpo_loss", "sft_loss", "reward_margin", "accuracy"):
            assert b[key] == pytest.approx(a[key], abs=1e-4), key
    assert one[1]["loss"] != pytest.approx(one[0]["loss"], abs=1e-4)  # the second step saw the first's update


@pytest.mark.parametrize("cls", [SFTConfig, DPOConfig, IPLConfig])
def test_memory_fields_are_checked(cls: type) -> None:
    base = cls(model="m", data="d")
    assert (base.micro_batch_tokens, base.logprob_chunk_size, base.gradient_checkpointing) == (0, 0, False)
    for bad in (
        dict(micro_batch_tokens=-1),
        dict(logprob_chunk_size=1.5),
        dict(gradient_checkpointing="yes"),
    ):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            dataclasses.replace(base, **bad)


def test_ipl_warmup_gets_the_memory_lora_and_progress_fields(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import trainers.ipl as ipl

    seen = {}

    def fake_train_sft(config: SFTConfig, make_samples: Any = None) -> dict[str, Any]:
        seen["config"] = config
        raise RuntimeError("stop after the config")

    monkeypatch.setattr(ipl, "train_sft", fake_train_sft)
    cfg = IPLConfig(model="m", data="d", warmup_sft_epochs=1, micro_batch_tokens=4096, logprob_chunk_size=512,
                    gradient_checkpointing=True, output_dir=str(tmp_path), lora_target_modules=["q_proj"],
                    progress=False)  # fmt: skip
    with pytest.raises(RuntimeError, match="stop after the config"):
        ipl.warmup_policy(cfg, tmp_path, [])
    sft = seen["config"]
    assert (sft.micro_batch_tokens, sft.logprob_chunk_size, sft.gradient_checkpointing) == (4096, 512, True)
    assert (sft.lora_target_modules, sft.progress) == (["q_proj"], False)


def test_vlm_micro_batches_encode_apart_and_accumulate_the_one_pass_gradient(tmp_path: Path) -> None:
    """A VLM's micro-batches are encoded on their own (image tensors do not slice by row); their costs come from
    each prompt's length with its screenshot's image tokens, measured on the CPU row by row."""
    from agents.hf_agent import HFGenerator
    from agents.tiny_models import build_vlm
    from trainers.logprobs import encode_batch

    torch.manual_seed(0)
    gen = HFGenerator(str(build_vlm(tmp_path / "vlm", "tiny")), device="cpu")
    g = torch.Generator().manual_seed(0)
    shots = [torch.randint(0, 255, (h, w, 3), dtype=torch.uint8, generator=g).numpy()
             for h, w in ((56, 56), (112, 56), (56, 84), (84, 84))]  # fmt: skip
    words = ["click a", "click the cell named e", "go", "type hello"]
    prompts = [gen.prompt_text([{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": w}]}])
               for w in words]  # fmt: skip
    images = [[s] for s in shots]
    answers = [torch.randint(10, 200, (1 + 2 * i,), generator=g).tolist() for i in range(4)]
    lens = prompt_lengths(gen, prompts, images)
    full = encode_batch(gen, prompts, answers, images)
    assert lens == full.inputs["attention_mask"][:, : full.prompt_len].sum(-1).tolist()
    assert len(set(lens)) > 1  # the screenshots' sizes give unequal image token counts
    whole, s_whole = _grads(gen.model, lambda: sft_backward(gen.model, gen, prompts, answers, images))
    budget = 2 * (max(lens) + 7)
    assert len(split_by_tokens(list(range(4)), lens, [len(a) for a in answers], budget)) > 1
    got, s_got = _grads(gen.model, lambda: sft_backward(gen.model, gen, prompts, answers, images, budget, 3))
    for a, b in zip(got, whole, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    assert s_got["loss"] == pytest.approx(s_whole["loss"], abs=1e-5)
