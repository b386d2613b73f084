"""Tiny, randomly initialised Hugging Face models, saved to disk so the real loading path runs.

Nothing is downloaded: the tokenizer is a byte-level BPE trained here on a few lines of text, with a
Qwen-style chat template; the model is a 2-layer Llama (hidden size 32) built from a config. The tests and
``guigym demo`` use it: on ``ClickGrid-v0`` it learns to answer the target cell within a few hundred GRPO
steps on CPU, and in CORE it stands in for the policy that a real run would train.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<|box_start|>",
    "<|box_end|>",
]

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = [
    "<think>the answer is in the grid</think><answer>[{'action': 'click', 'point': [12, 40]}]</answer>",
    'click the search button. scroll down. type "hello world". press Back. stop.',
    "Sudoku maze path: 1 2 3 4 5 6 7 8 9 0 up down left right . | # S G",
    "You are GUI-R1, a reasoning GUI Agent Assistant. Instruction: open the settings page.",
    "The page shows a list of items with buttons, icons and input fields.",
]


def build_tokenizer(path: Path | None = None):  # -> PreTrainedTokenizerFast
    """A byte-level BPE (every string encodes) with the special tokens and the chat template above."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
    )
    if path is not None:
        fast.save_pretrained(path)
    return fast


def build_causal_lm(path: Path, hidden_size: int = 32) -> Path:
    """A 2-layer Llama (hidden ``hidden_size``, MLP twice that, 4 heads) with the tiny tokenizer, saved under ``path``.

    The default (hidden 32) learns ``ClickGrid-v0``; ``ClickBox-v0``'s held-out layouts need a wider one (128),
    still 2 layers and CPU-fast (``tests/trainers/test_grpo_heldout.py``).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tokenizer(path)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(path)
    return path


__all__ = ["CHAT_TEMPLATE", "SPECIAL_TOKENS", "build_causal_lm", "build_tokenizer"]
