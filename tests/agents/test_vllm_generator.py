"""The vLLM sampler: the weights it pushes (CPU), the error without vLLM (CPU), and its token / log-prob contract
against the Hugging Face generator (where vLLM and a GPU are present)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from agents import vllm_generator
from agents.vllm_generator import VLLMUnavailableError, checkpoint_name, vllm_available, vllm_named_weights


def test_checkpoint_names_drop_what_wrappers_add() -> None:
    assert checkpoint_name("model.language_model.layers.0.mlp.up_proj.weight") == (
        "model.language_model.layers.0.mlp.up_proj.weight"
    )
    assert checkpoint_name("base_model.model.model.visual.blocks.1.attn.qkv.base_layer.bias") == (
        "model.visual.blocks.1.attn.qkv.bias"
    )
    assert checkpoint_name("base_model.model.lm_head.modules_to_save.default.weight") == "lm_head.weight"
    assert checkpoint_name("module._orig_mod.model.norm.weight") == "model.norm.weight"


def test_a_plain_model_pushes_its_parameters_by_reference(tiny_vlm_path: Path) -> None:
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(tiny_vlm_path)
    pushed = list(vllm_named_weights(model))
    params = list(model.named_parameters())
    assert [n for n, _ in pushed] == [n for n, _ in params]
    assert all(t.data_ptr() == p.data_ptr() for (_, t), (_, p) in zip(pushed, params, strict=True))
    assert {t.dtype for _, t in vllm_named_weights(model, torch.bfloat16)} == {torch.bfloat16}


def test_lora_is_merged_into_a_copy_under_the_plain_names(tiny_vlm_path: Path) -> None:
    from transformers import AutoModelForImageTextToText

    from trainers.policy_setup import apply_lora

    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_pretrained(tiny_vlm_path)
    plain = {n: p.detach().clone() for n, p in model.named_parameters()}
    peft_model = apply_lora(model, r=4, alpha=8, target_modules="all-linear")
    with torch.no_grad():  # a trained adapter: B != 0, so the merge changes the weights
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                p.normal_(std=0.05)
    before = {n: p.detach().clone() for n, p in peft_model.named_parameters()}

    pushed = dict(vllm_named_weights(peft_model))
    assert set(pushed) == set(plain)  # the names of the model without peft, nothing more, nothing less
    merged = copy.deepcopy(peft_model).merge_and_unload()
    for name, p in merged.named_parameters():
        torch.testing.assert_close(pushed[name], p, rtol=1e-5, atol=1e-6, msg=name)
    changed = [n for n in plain if not torch.equal(pushed[n], plain[n])]
    assert len(changed) > 10  # every adapted linear layer
    # The trained model is untouched: no merge/unmerge round trip through its weights.
    for name, p in peft_model.named_parameters():
        assert torch.equal(p, before[name]), name


def test_without_vllm_the_generator_names_the_extra_before_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vllm_generator, "vllm_available", lambda: False)
    # A path that does not exist: a load attempt would raise ModelLoadError, not the missing-extra error.
    with pytest.raises(VLLMUnavailableError, match=r"guigym\[vllm\]"):
        vllm_generator.VLLMGenerator("/nonexistent/model")


# ----- the request side and the hand-out, on CPU (the engine replaced by a recorder of what it is sent) -------


class _RecordingEngine:
    """Stands in for ``vllm.LLM.generate`` where vLLM cannot install: records the requests and answers each with
    ``n`` completions ``[100 + j, eos, 7]`` (an end-of-sequence token, then a token past it), log-prob ``-j`` first."""

    def __init__(self, eos: int) -> None:
        self.eos, self.calls = eos, []

    def generate(self, requests, params, use_tqdm=False):  # noqa: ANN001, ANN202
        from types import SimpleNamespace as NS

        self.calls.append((requests, params))
        return [
            NS(prompt_token_ids=[*r["prompt_token_ids"], 99],
               outputs=[NS(token_ids=[100 + j, self.eos, 7], logprobs=[{100 + j: NS(logprob=-j)}, {self.eos: NS(logprob=-0.5)},
                                                                 {7: NS(logprob=-1.0)}])
                        for j in range(p.n)])
            for r, p in zip(requests, params, strict=True)
        ]  # fmt: skip


def test_groups_become_one_request_each_and_samples_are_handed_back_in_order(
    tiny_vlm_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from agents.generation import SamplingParams
    from agents.vllm_generator import VLLMGenerator

    engine = _RecordingEngine(eos=0)
    gen = VLLMGenerator(str(tiny_vlm_path), device="cpu", llm=engine)
    eos = min(gen.eos_ids)
    engine.eos = eos
    # The engine's sampling parameters are vLLM's class; here, what they would hold.
    monkeypatch.setattr(gen, "_sampling_params", lambda sampling, n: type("P", (), {"n": n})())
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "click the button"}]}]
    red, blue = np.zeros((56, 56, 3), np.uint8), np.full((56, 56, 3), 200, np.uint8)
    # Rows 0, 1, 3 are one group (same conversation, same screenshot); row 2 another.
    groups = gen.generate(
        [conv, conv, conv, conv], [[red], [red], [blue], [red]], SamplingParams(num_samples=2)
    )
    ((requests, params),) = engine.calls
    assert [p.n for p in params] == [3 * 2, 1 * 2]
    prompt = gen.prompt_text(conv)
    assert requests[0]["prompt_token_ids"] == gen.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    assert requests[0]["prompt_token_ids"].count(gen.processor.image_token_id) == 1  # the engine expands it
    assert np.array_equal(np.asarray(requests[1]["multi_modal_data"]["image"]), blue)
    # Each row gets its own 2 of its request's samples, cut after the end-of-sequence token like HFGenerator's.
    assert [[g.token_ids[0] - 100 for g in grp] for grp in groups] == [[0, 1], [2, 3], [0, 1], [4, 5]]
    assert all(g.token_ids[1:] == [eos] for grp in groups for g in grp)
    assert groups[1][1].logprobs == [-3.0, -0.5] and groups[1][1].finish_reason == "stop"
    assert groups[0][0].prompt == prompt and groups[0][0].extra["prompt_token_ids"][-1] == 99


def test_suppressed_ids_are_masked_or_biased_as_the_engine_accepts(tiny_vlm_path: Path) -> None:
    from agents.vllm_generator import SUPPRESS_BIAS, VLLMGenerator

    gen = VLLMGenerator(str(tiny_vlm_path), device="cpu", llm=object())
    vocab = gen.model.get_output_embeddings().weight.shape[0]
    # A VLM's placeholders, where the output layer is no longer than the tokenizer: an exact mask.
    assert len(gen.suppress_ids) == 2 and vocab == len(gen.tokenizer)
    allowed = gen._suppression()["allowed_token_ids"]
    assert len(allowed) == vocab - 2 and not set(allowed) & set(gen.suppress_ids)
    # An output layer longer than the tokenizer (as Qwen's): vLLM refuses allowed ids past the tokenizer, so a bias.
    gen.model.resize_token_embeddings(vocab + 64)
    gen._allowed = None
    assert gen._suppression() == {"logit_bias": {i: SUPPRESS_BIAS for i in gen.suppress_ids}}
    # Only answer tokens kept (constrain_answers): every kept id is a tokenizer id, so the exact mask again.
    gen.suppress_ids = tuple(i for i in range(vocab + 64) if i not in (10, 11))
    assert gen._suppression() == {"allowed_token_ids": [10, 11]}


# ----- the contract against Hugging Face generate (needs vLLM, which needs CUDA) ---------------------------

needs_vllm = pytest.mark.skipif(
    not vllm_available() or not torch.cuda.is_available(), reason="no CPU build of vLLM installs here"
)


@pytest.fixture(scope="module")
def engine_pair(tmp_path_factory: pytest.TempPathFactory):  # -> tuple[VLLMGenerator, HFGenerator]
    from agents.hf_agent import HFGenerator
    from agents.tiny_models import build_causal_lm
    from agents.vllm_generator import VLLMGenerator

    # Head size 32 (128 / 4 heads): vLLM's attention kernels take it; fp32 on both sides, so the only
    # difference left is the kernels'.
    path = build_causal_lm(tmp_path_factory.mktemp("tiny-llama-128"), hidden_size=128)
    gen = VLLMGenerator(
        str(path), device="cuda", dtype=torch.float32, seed=0, gpu_memory_utilization=0.2,
        engine_kwargs={"dtype": "float32", "enforce_eager": True, "max_model_len": 512},
    )  # fmt: skip
    hf = HFGenerator(
        gen.model, processor=gen.processor, device="cuda"
    )  # the same weights, Hugging Face's kernels
    return gen, hf


CONVERSATION = [{"role": "user", "content": "click the search button"}]


@needs_vllm
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_vllm_tokens_and_logprobs_follow_the_hf_contract(engine_pair, temperature: float) -> None:
    from agents.generation import SamplingParams

    gen, hf = engine_pair
    (group,) = gen.generate(
        [CONVERSATION], sampling=SamplingParams(temperature, max_new_tokens=24, num_samples=6)
    )
    prompt_ids = hf.tokenizer(hf.prompt_text(CONVERSATION), add_special_tokens=False)["input_ids"]
    for g in group:
        assert g.prompt == hf.prompt_text(CONVERSATION) and g.extra["prompt_token_ids"] == prompt_ids
        assert 1 <= len(g.token_ids) == len(g.logprobs) <= 24
        ends = [i for i, t in enumerate(g.token_ids) if t in hf.eos_ids]
        assert (g.finish_reason == "stop") == bool(ends) and (not ends or ends == [len(g.token_ids) - 1])
        assert g.text == hf.tokenizer.decode(g.token_ids, skip_special_tokens=True)
        # The sampling policy's log-probs: log_softmax(logits / T) of the tokens drawn, as HF scores them.
        expected = hf.token_logprobs(CONVERSATION, g.token_ids, temperature=temperature)
        torch.testing.assert_close(torch.tensor(g.logprobs), expected.float().cpu(), rtol=0, atol=2e-3)


@needs_vllm
def test_vllm_suppresses_tokens_and_takes_synced_weights(engine_pair) -> None:
    from agents.generation import SamplingParams

    gen, hf = engine_pair
    sampling = SamplingParams(1.0, max_new_tokens=16, num_samples=8)
    gen.suppress_ids = hf.suppress_ids = tuple(range(100, 300))
    try:
        (group,) = gen.generate([CONVERSATION], sampling=sampling)
        assert not {t for g in group for t in g.token_ids} & set(gen.suppress_ids)
        expected = hf.token_logprobs(CONVERSATION, group[0].token_ids)  # suppressed ids at probability 0
        torch.testing.assert_close(torch.tensor(group[0].logprobs), expected.float().cpu(), rtol=0, atol=2e-3)
    finally:
        gen.suppress_ids = hf.suppress_ids = ()
    # New weights reach the engine only through sync_weights.
    with torch.no_grad():
        gen.model.get_output_embeddings().weight.mul_(3.0)
    gen.sync_weights()
    (group,) = gen.generate([CONVERSATION], sampling=sampling)
    for g in group:
        expected = hf.token_logprobs(CONVERSATION, g.token_ids)
        torch.testing.assert_close(torch.tensor(g.logprobs), expected.float().cpu(), rtol=0, atol=5e-3)
