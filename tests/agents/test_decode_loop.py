"""guigym's own sampling loop (``HFGenerator(decoder="loop")``, ``agents.sampling``) against Hugging Face
``generate``: the same tokens from the same seed, the same log-probs, one prefill per distinct prompt when
sharing, and ``generate`` where the loop cannot follow. That its samples' log-probs are the ones the trainer
recomputes is tested with every sharing mode in ``test_prompt_sharing.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agents.generation import SamplingParams
from agents.hf_agent import HFGenerator
from agents.sampling import process_logits, sample_tokens

A = [{"role": "user", "content": "click cell a"}]
B = [{"role": "user", "content": "click the cell named e now"}]


def _draw(path: Path, decoder: str, sampling: SamplingParams, sharing: str = "encode") -> list[list]:
    gen = HFGenerator(str(path), device="cpu", prompt_sharing=sharing, decoder=decoder)
    torch.manual_seed(7)
    return gen.generate([A, B, A], sampling=sampling)


@pytest.mark.parametrize(
    "sampling",
    [
        SamplingParams(max_new_tokens=12, num_samples=3),
        SamplingParams(max_new_tokens=12, num_samples=2, temperature=0.7, top_k=5),
        SamplingParams(max_new_tokens=12, num_samples=2, temperature=1.3, top_p=0.8),
        SamplingParams(max_new_tokens=12, temperature=0),
    ],
    ids=["plain", "top_k", "top_p", "greedy"],
)
def test_loop_draws_what_generate_draws_from_the_same_seed(
    tiny_lm_path: Path, sampling: SamplingParams
) -> None:
    hf = _draw(tiny_lm_path, "hf", sampling)
    loop = _draw(tiny_lm_path, "loop", sampling)
    assert len({tuple(g.token_ids) for grp in hf for g in grp}) > (1 if sampling.greedy else 3)
    for grp_hf, grp_loop in zip(hf, loop, strict=True):
        for a, b in zip(grp_hf, grp_loop, strict=True):
            assert (a.token_ids, a.text, a.finish_reason, a.prompt) == (
                b.token_ids,
                b.text,
                b.finish_reason,
                b.prompt,
            )
            torch.testing.assert_close(torch.tensor(b.logprobs), torch.tensor(a.logprobs), rtol=0, atol=1e-6)


def test_rows_end_at_their_own_eos_and_pad_after_it(tiny_lm_path: Path) -> None:
    gen = HFGenerator(str(tiny_lm_path), device="cpu")
    _, inputs = gen.encode([A, B], None)
    rows = [0, 0, 1, 1]
    # A third of the vocabulary ends a row: rows end after different numbers of tokens.
    stop = list(range(0, len(gen.tokenizer), 3))
    ids, mask = inputs["input_ids"][rows], inputs["attention_mask"][rows]
    torch.manual_seed(3)
    tokens, logprobs = sample_tokens(gen.model, ids, mask, list(range(4)), max_new_tokens=30, eos_ids=stop,
                                     pad_id=gen.tokenizer.pad_token_id)  # fmt: skip
    torch.manual_seed(3)
    with torch.inference_mode():
        out = gen.model.generate(input_ids=ids, attention_mask=mask, do_sample=True, top_k=0, top_p=1.0,
                                 max_new_tokens=30, eos_token_id=stop, pad_token_id=gen.tokenizer.pad_token_id)  # fmt: skip
    assert torch.equal(tokens, out[:, ids.shape[1] :])
    is_stop = torch.isin(tokens, torch.tensor(stop))
    ended = is_stop.any(dim=1)
    ends = [int(is_stop[r].nonzero()[0]) for r in range(4) if ended[r]]
    assert len(set(ends)) > 1  # rows ended at different steps
    for r in range(4):
        if ended[r]:
            end = int(is_stop[r].nonzero()[0])
            assert (tokens[r, end + 1 :] == gen.tokenizer.pad_token_id).all()
    if ended.all():
        assert tokens.shape[1] == max(ends) + 1  # stopped once every row had ended
    assert logprobs.shape == tokens.shape


def test_shared_loop_prefills_each_distinct_prompt_once(tiny_lm_path: Path) -> None:
    shapes: dict[str, list[tuple[int, ...]]] = {}
    for sharing in ("auto", "encode"):
        gen = HFGenerator(str(tiny_lm_path), device="cpu", prompt_sharing=sharing, decoder="loop")
        seen = shapes.setdefault(sharing, [])
        gen.model.register_forward_pre_hook(
            lambda _m, _a, kw, seen=seen: seen.append(tuple(kw["input_ids"].shape)), with_kwargs=True
        )
        gen.generate([A] * 3 + [B] * 2, sampling=SamplingParams(max_new_tokens=3, num_samples=2))
    p = shapes["encode"][0][1]
    assert shapes["encode"][0] == (10, p)  # every row prefilled, as generate does
    assert shapes["auto"][0] == (2, p)  # two distinct prompts, prefilled once each
    assert all(s == (10, 1) for s in shapes["auto"][1:]) and len(shapes["auto"]) <= 3


def test_process_logits_follows_generates_order() -> None:
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0, 3.0]])
    # suppressed token 4, then T = 0.5: [4, 2, 0, -2, -inf]; top-k 2 keeps 4 and 2.
    out = process_logits(logits, 0.5, 2, None, suppress_ids=(4,))
    assert out.tolist() == [[4.0, 2.0, float("-inf"), float("-inf"), float("-inf")]]
    # top-p 0.5 on softmax([2, 1, 0, -1, 3]) = [.237, .087, .032, .012, .644]: token 4 alone holds .644.
    out = process_logits(logits, 1.0, None, 0.5)
    assert torch.isfinite(out).tolist() == [[False, False, False, False, True]]
    # top-p 0.8: 0.644 + 0.237 = 0.881 >= 0.8, so tokens 4 and 0.
    out = process_logits(logits, 1.0, None, 0.8)
    assert torch.isfinite(out).tolist() == [[True, False, False, False, True]]
    assert torch.equal(process_logits(logits, 0, 3, 0.1), logits)  # greedy: no warpers


def test_generation_config_the_loop_cannot_apply_falls_back_to_generate(tiny_lm_path: Path) -> None:
    sampling = SamplingParams(max_new_tokens=8, num_samples=2)
    hf = HFGenerator(str(tiny_lm_path), device="cpu", decoder="hf")
    loop = HFGenerator(str(tiny_lm_path), device="cpu", decoder="loop")
    for gen in (hf, loop):
        gen.model.generation_config.repetition_penalty = 1.3
    torch.manual_seed(5)
    want = hf.generate([A, B], sampling=sampling)
    torch.manual_seed(5)
    with pytest.warns(UserWarning, match="repetition_penalty=1.3"):
        got = loop.generate([A, B], sampling=sampling)
    assert [[g.token_ids for g in grp] for grp in got] == [[g.token_ids for g in grp] for grp in want]
    with pytest.raises(ValueError, match="decoder='vllm'"):
        HFGenerator(str(tiny_lm_path), device="cpu", decoder="vllm")


def test_image_batches_still_go_to_generate(tiny_vlm_path: Path) -> None:
    import numpy as np

    torch.manual_seed(0)
    gen = HFGenerator(str(tiny_vlm_path), device="cpu", decoder="loop")
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "click cell a"}]}]
    calls: list[int] = []
    original = gen.model.generate
    gen.model.generate = lambda *a, **kw: calls.append(1) or original(*a, **kw)  # type: ignore[method-assign]
    out = gen.generate([conv] * 2, [[np.zeros((56, 56, 3), np.uint8)]] * 2, SamplingParams(max_new_tokens=3))
    assert calls == [1] and [len(g) for g in out] == [1, 1]


def test_loop_decodes_a_lora_wrapped_model_as_generate_does(tiny_lm_path: Path) -> None:
    # A peft wrapper takes the cache through **kwargs: a misnamed cache argument could be dropped without an
    # error (transformers 5 still maps the old name, with a warning, until 5.40) and every token decoded without
    # its context.
    from trainers.policy_setup import apply_lora

    sampling = SamplingParams(max_new_tokens=10, num_samples=2)
    got = {}
    for decoder in ("hf", "loop"):
        gen = HFGenerator(str(tiny_lm_path), device="cpu", decoder=decoder)
        torch.manual_seed(0)
        gen.model = apply_lora(gen.model, 4, 8, ["q_proj", "v_proj"])
        for name, p in gen.model.named_parameters():
            if "lora_B" in name:
                p.data.normal_(0, 0.5)  # an adapter that changes the policy
        torch.manual_seed(11)
        got[decoder] = [[g.token_ids for g in grp] for grp in gen.generate([A, B], sampling=sampling)]
    assert got["loop"] == got["hf"]
