"""A tiny random causal LM whose chat template can call tools, for CPU tests and benchmarks of the TRL path.

TRL's ``environment_factory`` needs a chat template that renders tool calls and tool results, and a parser for
the model's tool calls; TRL provides both for known templates. This one uses TRL's own Qwen2.5 template (read
from the installed ``trl`` package, so TRL parses ``<tool_call>{...}</tool_call>`` as it does for Qwen2.5), a
byte-level BPE trained here on text in that template's shape, and the 2-layer Llama of
:func:`agents.tiny_models.build_causal_lm`. :func:`build_tool_vlm` is the vision-language counterpart: the tiny
Qwen2.5-VL of :func:`agents.tiny_models.build_vlm` with the same tokenizer and TRL's Qwen3-VL template, which renders
images inside tool results (TRL parses its tool calls as Qwen3's). Nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

_CORPUS = [
    '<tool_call>\n{"name": "click", "arguments": {"element_id": "2"}}\n</tool_call>',
    '<tool_call>\n{"name": "scroll", "arguments": {"direction": "down"}}\n</tool_call>',
    '<tool_call>\n{"name": "stop", "arguments": {}}\n</tool_call> <tool_response>\n</tool_response>',
    '{"type": "function", "function": {"name": "click", "description": "Click a point or an element.", '
    '"parameters": {"type": "object", "properties": {"x": {"type": "number", "description": "horizontal '
    'position in screenshot pixels."}, "element_id": {"type": "string"}}, "required": []}}}',
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\nYou may call one or more "
    "functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> "
    "XML tags. For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags",
    'Task: Go to the wishlist page.\nURL: http://shop.guigym.test/\nElements:\n[0] a "Guigym Shop"\n'
    '[1] a "Catalogue" [2] a "Wishlist" Episode over: success. failure. action error:',
    "You operate a graphical user interface through the tools. Call one tool per turn; points are screenshot "
    "pixels, or name an element by its id. The task and the screen follow.",
    "click cell a b c d e f g h i. Cell: forum post classifieds search cart catalogue",
]


def build_tool_tokenizer(path: Path | None = None, vocab_size: int = 800):  # -> PreTrainedTokenizerFast
    """The tiny byte-level BPE (:func:`agents.tiny_models.build_tokenizer`'s special tokens) with TRL's Qwen2.5
    chat template, trained on :data:`_CORPUS` (tool-call and observation text, so prompts stay short)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    from agents.tiny_models import CORPUS as AGENT_CORPUS
    from agents.tiny_models import SPECIAL_TOKENS

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator((_CORPUS + AGENT_CORPUS) * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=qwen2_5_chat_template,
    )
    if path is not None:
        fast.save_pretrained(path)
    return fast


def build_tool_causal_lm(path: Path, hidden_size: int = 32) -> Path:
    """:func:`agents.tiny_models.build_causal_lm` (2-layer Llama, ``torch.manual_seed(0)``) with
    :func:`build_tool_tokenizer`, saved under ``path``; 4096 positions, room for a multi-turn tool transcript."""
    from agents.tiny_models import build_causal_lm

    return build_causal_lm(path, hidden_size, tokenizer_builder=build_tool_tokenizer, max_position_embeddings=4096)


def build_tool_vlm(path: Path, size: str = "tiny") -> Path:
    """:func:`agents.tiny_models.build_vlm` of ``size`` with :func:`build_tool_tokenizer` and TRL's Qwen3-VL chat
    template (tool calls, and image blocks in tool results), saved under ``path``."""
    from trl.chat_template_utils import qwen3_vl_chat_template

    from agents.tiny_models import build_vlm

    return build_vlm(path, size, tokenizer_builder=build_tool_tokenizer, chat_template=qwen3_vl_chat_template)


def teach_transcripts(
    path: Path,
    conversations: list[list[dict]],
    tools: list,
    steps: int = 150,
    lr: float = 3e-3,
    seed: int = 0,
) -> Path:
    """Fit the model under ``path`` to the assistant turns of whole conversations (teacher forcing), then save
    it in place.

    A random tiny model never writes a tool call, so a test of the multi-turn tool loop first teaches it a few
    transcripts (user, assistant tool call, tool result, ...); sampling at temperature 1 then mostly follows
    them and sometimes strays, which gives GRPO groups with different verdicts.

    Args:
        path: a folder saved by :func:`build_tool_causal_lm`, or by :func:`build_tool_vlm` (then image blocks in the
            messages, ``{"type": "image", "image": PIL image}``, go through its processor to the vision tower).
        conversations: chat messages, assistant turns with ``tool_calls``.
        tools: the tools rendered in the system prompt (the same callables the trainer will expose).
        steps: AdamW steps over the whole set.
        lr: learning rate.
        seed: torch seed.

    Returns:
        the last step's mean token cross-entropy (nats).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText, PreTrainedTokenizerBase

    from agents.hf_agent import load_processor

    torch.manual_seed(seed)
    processor = load_processor(str(path), trust_remote_code=False)
    vision = not isinstance(processor, PreTrainedTokenizerBase)
    tok = processor.tokenizer if vision else processor
    auto = AutoModelForImageTextToText if vision else AutoModelForCausalLM
    model = auto.from_pretrained(path, dtype=torch.float32)
    header, end = tok.encode("<|im_start|>assistant"), tok.convert_tokens_to_ids("<|im_end|>")
    batch = []
    for conv in conversations:
        # A VLM's processor expands each image block into its visual tokens and returns pixel_values beside.
        inputs = processor.apply_chat_template(conv, tools=tools, tokenize=True, return_dict=True, return_tensors="pt")
        ids = inputs["input_ids"][0].tolist()
        labels, inside = [-100] * len(ids), False
        for i in range(len(ids)):  # the assistant turns' tokens, up to and including their <|im_end|>
            if ids[i - len(header) : i] == header:
                inside = True
            if inside:
                labels[i] = ids[i]
                inside = ids[i] != end
        batch.append(({k: v for k, v in inputs.items() if k != "attention_mask"}, torch.tensor([labels])))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(model(**x, labels=y).loss for x, y in batch) / len(batch)
        loss.backward()
        opt.step()
    model.save_pretrained(path)
    return float(loss.detach())
