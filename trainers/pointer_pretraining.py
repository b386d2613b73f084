"""Pointer pre-training: teach a random tiny model to read the ``act`` listing before it sees any task.

Every paper behind guigym starts from a pretrained model, which can already find a word of its prompt elsewhere in
the prompt and copy what stands beside it (the "induction" circuit of pretrained transformers). A 2-layer model
with random weights cannot, and 10 demonstrations per task are far too few to grow that circuit: cloning 100 per
task, it learns click-tab and click-dialog-2 (whose target's letter follows from the instruction's words) but stays
near chance on click-button and click-link, where the named element's letter must be copied from a listing of 6-9
lines (``docs/learning_benchmarks.md``).

This stage is the stand-in for pretraining. Its pages are synthetic and hold nothing of MiniWoB++: random
lower-case "words" (now and then mixed-case with digits, or ending in punctuation), a random element kind per line
(button, link, tab, field, checkbox, text, label; some fields bare, without text), 2-14 lines, and an instruction
that is one line's text in double quotes amid random words. The line whose text the instruction quotes carries the
``act`` format's ``*`` mark (the format computes it the same way on real pages), and the answer is ``click X`` for
that line's letter::

    qzv "ejeydt" lo
    A text iq mzjpl
    B* tab ejeydt
    C label Ztejdxc vkprdlnk
    click B

With ``checklists`` a share of the pages is a checklist instead: the instruction names several checkbox lines,
some of them already ticked (``[x]`` before the letter, with a ``done:`` entry for each, as the format shows an
episode's earlier clicks), and the answer is the first named line, in page order, that is not ticked::

    ofk zwdy, "wq" and "hnbqa" xr
    done: click wq
    [ ] A checkbox pdlx
    [x] B* checkbox wq
    C button vgso
    [ ] D* checkbox hnbqa
    click D

It is the reading a pretrained LM brings to a to-do list, and what click-checkboxes asks after its first click
(the cloned policy clicked ticked boxes again). Mixed in from the first step, it is not learned at this size: the
2-layer model settles on "the first named line" and ignores the ticks (on 100 fresh checklist pages with a tick,
2,000 steps with half the pages checklists: 55 right, 42 a ticked named line; 1,000 more steps: 57). Trained on
checklist pages alone first (``checklist_steps``), it reads them (76 right, 5 ticked), and 1,000 mixed steps after
that keep the ticks and bring back single-target pointing: 80 right, 6 ticked, and 191 of 200 single-target pages
(the mixed run: 179). Hence the curriculum (``docs/learning_benchmarks.md``, "Eighth look"). How long the
checklist stage must run differs from seed to seed: checked every 250 steps on 200 fresh checklist pages, three
runs were at 0.73, 0.65 and 0.88 after 2,000 steps; two passed 0.95 after 3,750 and 3,500 steps, the third was
still at 0.755 after 5,000 (``checklist_target``; "Ninth look"). Off by default (``checklists=0``),
as the pages without checkboxes need none of it.

No MiniWoB page, instruction wording, task or demonstration is used, so the demonstration budget of a run that
uses it is unchanged; what the model learns here is the format's pointing (read the marked line's letter), not
what any task asks. The loss is SFT's (:func:`trainers.sft.sft_backward`: answer-token NLL, prompt masked).
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from agents.prompts.act import ActFormat
from agents.prompts.formats import PromptContext
from gui_envs.schema.actions import Action

#: Element kinds a synthetic line can show (the ``act`` listing's kinds).
KINDS: tuple[str, ...] = ("button", "link", "tab", "field", "checkbox", "text", "label")
#: Checklist pages of ``checklist_target``'s check (drawn from their own stream, seed ``seed + 3``).
CHECK_PAGES = 200


@dataclass
class PointerPretrainingConfig:
    """Settings of :func:`pretrain_pointing` (defaults: what the MiniWoB benchmark uses).

    Attributes:
        steps: optimiser steps (batches of synthetic pages; each batch is freshly drawn, nothing repeats).
        batch_size: pages per step.
        learning_rate: AdamW learning rate (no warm-up).
        lr_schedule: ``"constant"`` or ``"linear"`` (down to 0 at the last step; :func:`trainers.optim.adamw_with_warmup`).
        min_lines / max_lines: listing length of a page, drawn uniformly.
        blank_fields: chance that a line other than the named one is a text field with no label or placeholder
            (listed as a bare ``field``, as unlabeled inputs are on real pages). Without them the model met its first
            textless line on real pages and pointed one line off around it (held-out click-button 0.60 from the
            pre-trained model alone, run seed 0; ``docs/learning_benchmarks.md``).
        odd_words: chance that a word is mixed-case letters and digits (``x7Qb``) instead of lower-case letters.
        punctuation: chance that a line's text ends in ``:``, ``,`` or ``.``.
        checklists: chance that a page is a checklist (several named checkbox lines, some ticked; the module
            docstring, with what it measured). 0: single-target pages only.
        checklist_steps: a first stage of this many steps on checklist pages only (constant learning rate), before
            the ``steps`` above (a fresh optimiser, seed ``seed + 1000``). 0: no such stage. Why a curriculum: with
            the mix from the first step the 2-layer model settles on "the first named line" and never reads a
            tick (module docstring).
        checklist_target: with ``checklist_steps``, end the checklist stage early once the model reads this share
            of :data:`CHECK_PAGES` fresh checklist pages right (:func:`page_accuracy`, checked every
            ``checklist_check_every`` steps); ``checklist_steps`` is then the stage's cap. 0: always run it all.
            Why: three runs of the same 2,000 steps read 97, 79 and 76 of 100 such pages, and only the first
            solved click-checkboxes; a bar on synthetic pages (no MiniWoB page is seen) lets a slow run go on.
        checklist_check_every: steps between two such checks.
        shuffle_letters: draw letters as the format does with ``shuffle_letters`` (else ``A, B, C...``).
        seed: seeds the page generator and torch.
        progress: show a tqdm bar.
    """

    steps: int = 800
    batch_size: int = 16
    learning_rate: float = 1e-3
    lr_schedule: str = "constant"
    min_lines: int = 2
    max_lines: int = 14
    blank_fields: float = 0.2
    odd_words: float = 0.1
    punctuation: float = 0.2
    checklists: float = 0.0
    checklist_steps: int = 0
    checklist_target: float = 0.0
    checklist_check_every: int = 250
    shuffle_letters: bool = False
    seed: int = 0
    progress: bool = False


def _word(rng: random.Random, odd: float = 0.0) -> str:
    letters = string.ascii_letters + string.digits if rng.random() < odd else string.ascii_lowercase
    return "".join(rng.choice(letters) for _ in range(rng.randint(2, 8)))


def synthetic_page(rng: random.Random, config: PointerPretrainingConfig) -> tuple[str, str]:
    """One synthetic page's listing (instruction first) and its answer, rendered by :class:`ActFormat`.

    The page is built as an observation (``instruction`` and ``elements``) so that the real format lists it,
    marks it and assigns its letters; the answer is the format's own ``answer_text`` for a click on the quoted
    line.
    """
    if config.checklists > 0 and rng.random() < config.checklists:
        return _checklist_page(rng, config)
    n = rng.randint(config.min_lines, config.max_lines)
    texts = _texts(rng, n, config.odd_words, config.punctuation)
    target = rng.randrange(n)
    around = [_word(rng) for _ in range(rng.randint(0, 4))]
    cut = rng.randint(0, len(around))
    instruction = " ".join([*around[:cut], f'"{texts[target]}"', *around[cut:]])
    kinds = [rng.choice(KINDS) for _ in texts]
    for i in range(n):  # a textless field is never the named line: the instruction quotes a line's text
        if i != target and rng.random() < config.blank_fields:
            kinds[i], texts[i] = "field", ""
    elements = [_element(i, kind, t) for i, (kind, t) in enumerate(zip(kinds, texts, strict=True))]
    observation = {"instruction": instruction, "elements": elements}
    return _rendered(observation, target, [], config)


def _texts(rng: random.Random, n: int, odd_words: float, punctuation: float) -> list[str]:
    """``n`` distinct line texts of 1-3 random words."""
    texts: list[str] = []
    while len(texts) < n:
        text = " ".join(_word(rng, odd_words) for _ in range(rng.randint(1, 3)))
        text = text[0].upper() + text[1:] if rng.random() < 0.3 else text
        text += rng.choice(":,.") if rng.random() < punctuation else ""
        if text not in texts:
            texts.append(text)
    return texts


def _checklist_page(rng: random.Random, config: PointerPretrainingConfig) -> tuple[str, str]:
    """A checklist page (module docstring): 1-4 named checkbox lines, fewer than all of them ticked; the answer
    is the first named line not ticked. Names are listed with or without quotes (the ``*`` mark reads both), and
    carry no punctuation, which would stick to the list's commas."""
    n = rng.randint(max(config.min_lines, 2), config.max_lines)
    texts = _texts(rng, n, config.odd_words, 0.0)
    named = sorted(rng.sample(range(n), rng.randint(1, min(4, n - 1))))
    ticked = set(rng.sample(named, rng.randint(0, len(named) - 1)))
    kinds = ["checkbox" if i in named else rng.choice(KINDS) for i in range(n)]
    elements = [_element(i, kind, t) for i, (kind, t) in enumerate(zip(kinds, texts, strict=True))]
    for i in ticked:
        elements[i]["value"] = "checked"
    quote = '"{}"' if rng.random() < 0.5 else "{}"
    names = [quote.format(texts[i]) for i in named]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    around = [_word(rng) for _ in range(rng.randint(0, 4))]
    cut = rng.randint(0, len(around))
    instruction = " ".join([*around[:cut], listed, *around[cut:]])
    target = next(i for i in named if i not in ticked)
    history = [Action.click_element(str(i)).to_json() for i in sorted(ticked)]
    return _rendered({"instruction": instruction, "elements": elements}, target, history, config)


def _rendered(
    observation: dict[str, Any], target: int, history: list[str], config: PointerPretrainingConfig
) -> tuple[str, str]:
    """The ``act`` listing of ``observation`` (instruction first) and the answer clicking element ``target``."""
    fmt = ActFormat(shuffle_letters=config.shuffle_letters)
    answer = fmt.answer_text(Action.click_element(str(target)), observation)
    prompt = fmt.messages(PromptContext(observation, observation["instruction"], history))[0]["content"]
    return prompt, answer


def _element(index: int, kind: str, text: str) -> dict[str, Any]:
    """A listing element of ``kind`` (tag, role and type as the page extractor reports them), stacked rows."""
    tag, role, kind_attr = {
        "button": ("button", "", ""),
        "link": ("a", "", ""),
        "tab": ("li", "tab", ""),
        "field": ("input", "", "text"),
        "checkbox": ("input", "", "checkbox"),
        "text": ("span", "", ""),
        "label": ("label", "", ""),
    }[kind]
    y = 20 * index
    return {
        "id": str(index),
        "tag": tag,
        "role": role,
        "type": kind_attr,
        "text": text,
        "bbox": [0, y, 100, y + 18],
    }


def pointer_samples(count: int, generator: Any, config: PointerPretrainingConfig) -> list[Any]:
    """``count`` synthetic pages as SFT samples (prompts through ``generator``'s chat template).

    Mixed into the demonstrations' SFT (:func:`with_pointer_samples`) they keep the pointing learned here: cloning
    10 demonstrations per task alone at lr 1e-3 took the pre-trained model's held-out click-button from 1.00 to
    0.07 in 200 steps (the demonstrations' letters follow the page order, and the model falls back on it).
    """
    return _samples(random.Random(config.seed + 1), count, generator, config)  # not the pre-training run's pages


def pointer_mix(config: PointerPretrainingConfig) -> Any:
    """GRPO's auxiliary SFT source (``GRPOConfig.sft_mix_coef``, PPO-ptx): a ``(count, generator) -> samples``
    that draws fresh synthetic pages on every call (its own stream: neither the pre-training run's pages nor the
    SFT mix's)."""
    rng = random.Random(config.seed + 2)

    def draw(count: int, generator: Any) -> list[Any]:
        return _samples(rng, count, generator, config)

    return draw


def _samples(rng: random.Random, count: int, generator: Any, config: PointerPretrainingConfig) -> list[Any]:
    from trainers.sft import SFTSample

    out = []
    for _ in range(count):
        prompt, answer = synthetic_page(rng, config)
        out.append(SFTSample(generator.prompt_text([{"role": "user", "content": prompt}]), answer, None))
    return out


def with_pointer_samples(sft_config: Any, ratio: float, config: PointerPretrainingConfig) -> Any:
    """A ``make_samples`` for :func:`trainers.sft.train_sft`: the config's demonstration samples plus
    ``ratio`` times as many synthetic pointer pages (``ratio=1``: half of every epoch is synthetic)."""
    from trainers.sft import config_samples

    def make(trajectories: list[Any], generator: Any) -> list[Any]:
        demos = config_samples(sft_config, trajectories, generator)
        return demos + pointer_samples(round(ratio * len(demos)), generator, config)

    return make


def page_accuracy(gen: Any, pages: list[tuple[str, str]], batch_size: int = 50) -> float:
    """Share of ``pages`` (listing, answer) whose answer the model would write greedily: every answer token
    (and the end of text) above probability 0.5 given the ones before it, which makes it the argmax at each
    position. A lower bound of greedy accuracy that needs one forward pass per batch, no decoding."""
    from trainers.logprobs import completion_logprobs, encode_batch

    eos = gen.tokenizer.eos_token_id
    right = 0
    was_training = gen.model.training
    gen.model.eval()
    with torch.no_grad():
        for i in range(0, len(pages), batch_size):
            chunk = pages[i : i + batch_size]
            prompts = [gen.prompt_text([{"role": "user", "content": p}]) for p, _ in chunk]
            answers = [gen.tokenizer(a, add_special_tokens=False)["input_ids"] + [eos] for _, a in chunk]
            batch = encode_batch(gen, prompts, answers)
            logp, _ = completion_logprobs(gen.model, batch)
            sure = (logp.exp() > 0.5) | ~batch.completion_mask.bool()
            right += int(sure.all(dim=1).sum())
    gen.model.train(was_training)
    return right / max(1, len(pages))


def pretrain_pointing(
    model: str | Path, output_dir: str | Path, config: PointerPretrainingConfig
) -> dict[str, Any]:
    """Train the model in ``model`` on synthetic pointer pages; save it (and its tokenizer) to ``output_dir``.

    Returns ``{"model": output_dir, "loss": [each step's answer-token NLL, nats per token], "checks": [...]}``
    (with ``checklist_steps``, the checklist stage's steps first; that stage's model is kept in
    ``output_dir/checklist_stage``; with ``checklist_target``, ``checks`` holds its ``{"step", "accuracy"}``
    checks).
    """
    first_losses: list[float] = []
    checks: list[dict[str, float]] = []
    if config.checklist_steps > 0:
        stage = Path(output_dir) / "checklist_stage"
        first = _train(model, stage, replace(config, steps=config.checklist_steps, checklists=1.0,
                                             lr_schedule="constant"), target=config.checklist_target)  # fmt: skip
        model, first_losses, checks = stage, first["loss"], first["checks"]
        config = replace(config, seed=config.seed + 1000)
    out = _train(model, output_dir, config, target=0.0)
    return {"model": out["model"], "loss": first_losses + out["loss"], "checks": checks}


def _train(
    model: str | Path, output_dir: str | Path, config: PointerPretrainingConfig, target: float
) -> dict[str, Any]:
    """One stage: ``config.steps`` steps on ``config``'s pages (fewer with ``target`` > 0, once
    :func:`page_accuracy` on fresh pages of the same kind reaches it); saves the model to ``output_dir``."""
    from agents.hf_agent import HFGenerator
    from trainers.optim import adamw_with_warmup, step_accumulated
    from trainers.sft import sft_backward

    rng = random.Random(config.seed)
    torch.manual_seed(config.seed)
    gen = HFGenerator(str(model), device="cpu")
    eos = gen.tokenizer.eos_token_id
    optimizer, scheduler = adamw_with_warmup(
        gen.model, config.learning_rate, 0.0, 0.0, config.steps, decay=config.lr_schedule
    )
    bar = None
    if config.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.steps, desc="pointer pre-training", unit="step")
    check_pages = []
    if target > 0:
        check_rng = random.Random(config.seed + 3)  # neither the training stream nor the mixes' (seed + 1, + 2)
        check_pages = [synthetic_page(check_rng, config) for _ in range(CHECK_PAGES)]
    gen.model.train()
    losses: list[float] = []
    checks: list[dict[str, float]] = []
    for step in range(1, config.steps + 1):
        pages = [synthetic_page(rng, config) for _ in range(config.batch_size)]
        prompts = [gen.prompt_text([{"role": "user", "content": p}]) for p, _ in pages]
        answers = [gen.tokenizer(a, add_special_tokens=False)["input_ids"] + [eos] for _, a in pages]
        optimizer.zero_grad(set_to_none=True)
        stats = sft_backward(gen.model, gen, prompts, answers)
        step_accumulated(gen.model, optimizer, scheduler, 1.0)
        losses.append(stats["loss"])
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{stats['loss']:.3f}", acc=f"{stats['token_acc']:.2f}")
        if check_pages and (step % config.checklist_check_every == 0 or step == config.steps):
            checks.append({"step": step, "accuracy": page_accuracy(gen, check_pages)})
            if checks[-1]["accuracy"] >= target:
                break
    if bar is not None:
        bar.close()
    gen.model.eval()
    out = Path(output_dir)
    gen.model.save_pretrained(out)
    gen.tokenizer.save_pretrained(out)
    return {"model": out, "loss": losses, "checks": checks}


__all__ = [
    "KINDS",
    "PointerPretrainingConfig",
    "pointer_mix",
    "page_accuracy",
    "pointer_samples",
    "pretrain_pointing",
    "synthetic_page",
    "with_pointer_samples",
]
