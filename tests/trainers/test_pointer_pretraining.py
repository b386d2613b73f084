"""Pointer pre-training: synthetic pages in the ``act`` format, one line named, and a model that learns to answer
with that line's letter."""

from __future__ import annotations

import random
import re
from types import SimpleNamespace

import numpy as np

from agents.prompts.act import ActFormat
from trainers.pointer_pretraining import (
    PointerPretrainingConfig,
    pointer_samples,
    pretrain_pointing,
    synthetic_page,
)


def _listing(prompt: str) -> tuple[str, list[str], list[str]]:
    """The instruction, the listing's lines without a checkbox's state prefix, and the ticked lines' letters."""
    instruction, *lines = prompt.splitlines()
    if lines and lines[0].startswith("done: "):
        lines.pop(0)
    ticked = [line[4] for line in lines if line.startswith("[x] ")]
    return instruction, [line[4:] if line.startswith(("[ ] ", "[x] ")) else line for line in lines], ticked


def test_a_synthetic_page_names_one_line_and_the_answer_is_that_lines_letter():
    rng = random.Random(3)
    config = PointerPretrainingConfig()
    for _ in range(200):
        prompt, answer = synthetic_page(rng, config)
        instruction, lines, _ = _listing(prompt)
        assert config.min_lines <= len(lines) <= config.max_lines
        marked = [line for line in lines if line[1] == "*"]
        assert len(marked) == 1
        (quoted,) = re.findall(r'"([^"]*)"', instruction)
        assert marked[0].endswith(" " + quoted)
        assert answer == f"click {marked[0][0]}"
        assert [line[0] for line in lines] == [chr(ord("A") + i) for i in range(len(lines))]


def test_bare_fields_and_odd_words_appear_but_the_named_line_always_has_text():
    rng = random.Random(5)
    config = PointerPretrainingConfig()
    bare = odd = punct = 0
    for _ in range(300):
        prompt, answer = synthetic_page(rng, config)
        lines = _listing(prompt)[1]
        bare += sum(line[2:] == "field" for line in lines)
        odd += any(re.search(r"[A-Za-z]*\d", line[2:]) for line in lines)
        punct += any(line[-1] in ":,." for line in lines)
        (marked,) = [line for line in lines if line[1] == "*"]
        assert marked[2:] != "field" and len(marked.split(" ", 2)) == 3  # letter+mark, kind, text
    assert bare > 100 and odd > 30 and punct > 100
    plain = PointerPretrainingConfig(blank_fields=0.0, odd_words=0.0, punctuation=0.0)
    for _ in range(100):
        prompt, _ = synthetic_page(rng, plain)
        assert all(len(line.split(" ", 2)) == 3 and line[-1] not in ":,." for line in _listing(prompt)[1])
        assert not re.search(r"\d", prompt)


def test_a_checklist_page_answers_the_first_named_box_not_yet_ticked():
    rng = random.Random(7)
    config = PointerPretrainingConfig(checklists=1.0)
    with_ticks = 0
    for _ in range(300):
        prompt, answer = synthetic_page(rng, config)
        second = prompt.splitlines()[1]
        done = second.removeprefix("done: ").split("; ") if second.startswith("done: ") else []
        instruction, lines, ticked_letters = _listing(prompt)
        named = [line for line in lines if line[1] == "*"]
        assert 1 <= len(named) <= 4 and all(n[3:].startswith("checkbox ") for n in named)
        ticked = [n.split(" checkbox ", 1)[1] for n in named if n[0] in ticked_letters]
        assert done == [f"click {t}" for t in ticked] and len(ticked) < len(named)
        assert all(t in instruction for t in ticked)
        first_open = next(n for n in named if n[0] not in ticked_letters)
        assert answer == f"click {first_open[0]}"
        with_ticks += bool(ticked)
        # an unnamed line is never ticked: a ticked box is always one the instruction asked for
        assert all(line[1] == "*" for line in lines if line[0] in ticked_letters)
    assert with_ticks > 100
    assert PointerPretrainingConfig().checklists == 0.0  # off unless asked for
    some = PointerPretrainingConfig(checklists=0.25)
    share = np.mean(["done:" in synthetic_page(rng, some)[0] for _ in range(800)])
    assert 0.05 < share < 0.2  # pages with a tick: about 0.25 x 0.42


def test_shuffled_letters_follow_the_format():
    prompt, answer = synthetic_page(random.Random(0), PointerPretrainingConfig(shuffle_letters=True))
    marked = next(line for line in _listing(prompt)[1] if line[1] == "*")
    assert answer == f"click {marked[0]}"


class _Template:
    def prompt_text(self, conversation):
        return "<u>" + conversation[0]["content"] + "<a>"


def test_pointer_samples_are_sft_samples_of_fresh_pages():
    samples = pointer_samples(5, _Template(), PointerPretrainingConfig(seed=1))
    assert len(samples) == 5 and len({s.prompt for s in samples}) == 5
    for s in samples:
        assert s.prompt.startswith("<u>") and s.prompt.endswith("<a>") and s.image is None
        assert ActFormat().parse(s.answer, {"elements": []})[1].code == "no_element"  # an answer, not a page's


def test_pretraining_lowers_the_answer_loss(tmp_path):
    from agents.tiny_models import build_causal_lm, build_tokenizer

    init = build_causal_lm(tmp_path / "init", hidden_size=32, seed=0,
                           tokenizer_builder=lambda p: build_tokenizer(p, merges=False))  # fmt: skip
    out = pretrain_pointing(init, tmp_path / "pointer", PointerPretrainingConfig(steps=40, batch_size=8,
                                                                                 learning_rate=3e-3))  # fmt: skip
    assert (out["model"] / "config.json").exists() and len(out["loss"]) == 40
    assert np.mean(out["loss"][-10:]) < 0.5 * np.mean(out["loss"][:10])


def test_a_checklist_stage_runs_first_on_checklist_pages_only(tmp_path, monkeypatch):
    import trainers.pointer_pretraining as pp
    from agents.tiny_models import build_causal_lm, build_tokenizer

    drawn: list[tuple[float, int]] = []
    real = pp.synthetic_page

    def recording(rng, config):
        drawn.append((config.checklists, config.seed))
        return real(rng, config)

    monkeypatch.setattr(pp, "synthetic_page", recording)
    init = build_causal_lm(tmp_path / "init", hidden_size=32, seed=0,
                           tokenizer_builder=lambda p: build_tokenizer(p, merges=False))  # fmt: skip
    config = PointerPretrainingConfig(steps=3, checklist_steps=4, checklists=0.5, batch_size=2, seed=5)
    out = pretrain_pointing(init, tmp_path / "pointer", config)
    assert len(out["loss"]) == 7 and (tmp_path / "pointer" / "checklist_stage" / "config.json").exists()
    # 4 steps x 2 pages of checklists only, then 3 x 2 of the mix, drawn from another page stream
    assert drawn == [(1.0, 5)] * 8 + [(0.5, 1005)] * 6


def test_the_checklist_stage_stops_once_fresh_pages_are_read_right(tmp_path, monkeypatch):
    import trainers.pointer_pretraining as pp
    from agents.tiny_models import build_causal_lm, build_tokenizer

    scores = iter([0.5, 0.9, 1.0])
    seen: list[int] = []

    def scored(gen, pages):
        seen.append(len(pages))
        assert all("checkbox" in prompt for prompt, _ in pages)  # checklist pages, the stage's kind
        return next(scores)

    monkeypatch.setattr(pp, "page_accuracy", scored)
    init = build_causal_lm(tmp_path / "init", hidden_size=32, seed=0,
                           tokenizer_builder=lambda p: build_tokenizer(p, merges=False))  # fmt: skip
    config = PointerPretrainingConfig(steps=3, checklist_steps=10, checklist_target=0.8, checklist_check_every=2,
                                      checklists=0.5, batch_size=2, seed=5)  # fmt: skip
    out = pretrain_pointing(init, tmp_path / "pointer", config)
    # checks at steps 2 (0.5) and 4 (0.9 >= 0.8): the stage ends after 4 of its 10 steps; the mixed 3 follow
    assert out["checks"] == [{"step": 2, "accuracy": 0.5}, {"step": 4, "accuracy": 0.9}]
    assert len(out["loss"]) == 4 + 3 and seen == [pp.CHECK_PAGES] * 2


def test_page_accuracy_counts_pages_whose_every_answer_token_is_above_one_half(monkeypatch):
    import torch

    import trainers.logprobs as lp
    from trainers.pointer_pretraining import page_accuracy

    class Tok:
        eos_token_id = 0

        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [1] * len(text)}

    class Gen:
        tokenizer = Tok()
        model = torch.nn.Linear(1, 1)

        def prompt_text(self, messages):
            return messages[0]["content"]

    # three pages, answers of 2, 3 and 1 tokens (+ the end of text): probabilities per position, 0 where padded
    probs = torch.tensor([[0.9, 0.6, 0.8, 0.0], [0.9, 0.4, 0.9, 0.9], [0.7, 0.51, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 0, 0]])
    monkeypatch.setattr(lp, "encode_batch", lambda gen, prompts, answers: SimpleNamespace(completion_mask=mask))
    monkeypatch.setattr(lp, "completion_logprobs", lambda model, batch: (probs.log(), None))
    pages = [("p1", "ab"), ("p2", "abc"), ("p3", "a")]
    # page 2 has a token at 0.4 (not the argmax for sure); pages 1 and 3 are above 0.5 wherever they count
    assert page_accuracy(Gen(), pages) == 2 / 3
