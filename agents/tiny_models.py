"""Tiny, randomly initialised Hugging Face models, saved to disk so the real loading path runs.

Nothing is downloaded: the tokenizer is a byte-level BPE trained here on a few lines of text, with a
Qwen-style chat template; the model is a 2-layer Llama (hidden size 32) built from a config. The tests and
``guigym demo`` use it: on ``ClickGrid-v0`` it learns to answer the target cell within a few hundred GRPO
steps on CPU, and in CORE it stands in for the policy that a real run would train.

:func:`build_vlm` builds a Qwen2.5-VL the same way (the real architecture, random weights) with an image-only
processor that needs neither torchvision nor the hub; ``benchmarks/gpu_check.py`` and the pixel learning test
(``tests/trainers/test_grpo_pixels.py``) use it.

:func:`build_llava` builds a LLaVA (a CLIP vision tower and a Llama, joined by an MLP projector) the same way. It is
the VLM that learns to ground from pixels on CPU (``tests/trainers/test_sft_pixels.py``); see its docstring for why
a tiny Qwen2.5-VL does not.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

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

#: The text the tiny BPE tokenizer is trained on (GUI-R1 answers, instructions, grid-game words), so these
#: strings encode in few tokens; ``trainers.trl.tiny``'s tokenizer trains on it too.
CORPUS = [
    "<think>the answer is in the grid</think><answer>[{'action': 'click', 'point': [12, 40]}]</answer>",
    'click the search button. scroll down. type "hello world". press Back. stop.',
    "Sudoku maze path: 1 2 3 4 5 6 7 8 9 0 up down left right . | # S G",
    "You are GUI-R1, a reasoning GUI Agent Assistant. Instruction: open the settings page.",
    "The page shows a list of items with buttons, icons and input fields.",
]


def build_tokenizer(path: Path | None = None, merges: bool = True):  # -> PreTrainedTokenizerFast
    """A byte-level BPE (every string encodes) with the special tokens and the chat template above.

    ``merges=False`` keeps the 256 bytes and the special tokens only: every character is one token, so a word is
    the same tokens wherever it stands (after a space, a quote or a line start). A tiny model that must match a
    label in the instruction with the same label in a listing learns that faster (``benchmarks/miniwob_learning.py``).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400 if merges else 256 + len(SPECIAL_TOKENS),
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
    )
    if path is not None:
        fast.save_pretrained(path)
    return fast


def build_causal_lm(
    path: Path,
    hidden_size: int = 32,
    tokenizer_builder: Callable[[Path], Any] | None = None,
    max_position_embeddings: int = 2048,
    num_layers: int = 2,
    seed: int = 0,
) -> Path:
    """A ``num_layers``-layer Llama (hidden ``hidden_size``, MLP twice that, 4 heads; weights drawn with torch seed
    ``seed``) with the tiny tokenizer (or the one ``tokenizer_builder(path)`` builds and saves), saved under ``path``.

    The default (hidden 32) learns ``ClickGrid-v0``; ``ClickBox-v0``'s held-out layouts need a wider one (128),
    still 2 layers and CPU-fast (``tests/trainers/test_grpo_heldout.py``).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = (tokenizer_builder or build_tokenizer)(path)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_position_embeddings,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(path)
    return path


def image_only_qwen2_vl_processor_class(version: str = "2"):  # -> type[Qwen2VLProcessor]
    """``Qwen2VLProcessor`` (``version="2"``) or ``Qwen2_5_VLProcessor`` (``"2.5"``) without its video processor,
    registered with ``AutoProcessor``.

    transformers' Qwen2-VL processors insist on a video processor, and video processors need torchvision,
    which the CPU test environment (and perhaps a GPU machine without internet) lacks. Screenshots are images,
    so the video half is dropped; the image half (``__call__`` with ``images=``) is transformers' own code, with
    its PIL/numpy image processor (``Qwen2VLImageProcessorPil``, no torchvision). A saved processor names its
    class (:data:`IMAGE_ONLY_PROCESSORS`); ``agents.hf_agent`` registers it before loading such a folder.
    """
    from transformers import (
        AutoProcessor,
        Qwen2_5_VLConfig,
        Qwen2_5_VLProcessor,
        Qwen2VLConfig,
        Qwen2VLProcessor,
    )
    from transformers.processing_utils import ProcessorMixin

    base, config = (
        (Qwen2VLProcessor, Qwen2VLConfig) if version == "2" else (Qwen2_5_VLProcessor, Qwen2_5_VLConfig)
    )

    class ImageOnlyProcessor(base):  # type: ignore[misc, valid-type]
        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
            self.image_token = "<|image_pad|>"
            self.video_token = "<|video_pad|>"
            self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
            self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
            ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)

    # AutoProcessor finds a saved processor by its class name: one name per version.
    name = next(n for n, v in IMAGE_ONLY_PROCESSORS.items() if v == version)
    ImageOnlyProcessor.__name__ = ImageOnlyProcessor.__qualname__ = name
    AutoProcessor.register(config, ImageOnlyProcessor, exist_ok=True)
    return ImageOnlyProcessor


#: The saved class name of each image-only processor, and the Qwen-VL version it serves.
IMAGE_ONLY_PROCESSORS = {"ImageOnlyQwen2VLProcessor": "2", "ImageOnlyQwen2_5_VLProcessor": "2.5"}

#: Qwen2.5-VL sizes. Keys: text hidden size, layers, heads, KV heads, MLP width; vision depth, width, heads, MLP
#: width; the image processor's largest image in pixels (a visual token is one 28 x 28 pixel block: four 14-pixel
#: patches merged). Parameter counts with the 400-token tiny tokenizer (``tests/agents/test_tiny_models.py``):
#:
#: * ``tiny``: 209,120 parameters (text hidden 64, 2 layers; vision 2 blocks of width 32); images up to
#:   28*28*16 pixels (112 x 112: 64 patches, 16 visual tokens). The CPU smoke test of ``benchmarks/gpu_check.py``.
#: * ``pixels``: 492,672 parameters (text hidden 96, 2 layers; vision 2 blocks of width 64); images up to
#:   140 x 140 pixels (100 patches, 25 visual tokens: one per cell of the ``box`` format's 5 x 5 answer grid on
#:   a 140-pixel ``ClickBox-v0`` canvas). ``tests/trainers/test_grpo_pixels.py`` and
#:   ``configs/grpo_tiny_vlm_pixels.yaml``.
#: * ``small``: about 0.14 B parameters; a 336 x 336 screenshot in 144 visual tokens. A short GPU check.
VLM_SIZES = {
    "tiny": dict(hidden=64, layers=2, heads=4, kv_heads=2, mlp=128, v_depth=2, v_hidden=32, v_heads=2, v_mlp=64,
                 max_pixels=28 * 28 * 16),
    "pixels": dict(hidden=96, layers=2, heads=4, kv_heads=2, mlp=192, v_depth=2, v_hidden=64, v_heads=2, v_mlp=128,
                   max_pixels=28 * 28 * 25),
    "small": dict(hidden=1024, layers=8, heads=16, kv_heads=4, mlp=2816, v_depth=8, v_hidden=640, v_heads=10,
                  v_mlp=1708, max_pixels=28 * 28 * 144),
}  # fmt: skip


def build_vlm(
    path: Path,
    size: str = "tiny",
    tokenizer_builder: Callable[[], Any] | None = None,
    chat_template: str = CHAT_TEMPLATE,
    **overrides: int,
) -> Path:
    """A randomly initialised Qwen2.5-VL of ``size`` (:data:`VLM_SIZES`, any key overridden by ``overrides``) and
    its image-only processor, saved under ``path``: the real architecture (windowed vision attention, M-RoPE),
    built from a config with ``torch.manual_seed(0)``. Images are resized to a multiple of 28 pixels a side, with
    between ``28*28*4`` and ``max_pixels`` pixels. ``tokenizer_builder()`` (default :func:`build_tokenizer`) makes
    the tokenizer, which must hold :data:`SPECIAL_TOKENS`; ``chat_template`` is the processor's."""
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    if size not in VLM_SIZES:
        raise ValueError(f"size must be one of {sorted(VLM_SIZES)}, got {size!r}")
    z = {**VLM_SIZES[size], **overrides}
    tokenizer = (tokenizer_builder or build_tokenizer)()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    image_processor = Qwen2VLImageProcessorPil(min_pixels=28 * 28 * 4, max_pixels=z["max_pixels"])
    processor = image_only_qwen2_vl_processor_class("2.5")(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template
    )
    processor.save_pretrained(path)
    head_dim = z["hidden"] // z["heads"]
    half = head_dim // 2  # M-RoPE splits the rotary half-dimension over (time, height, width)
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": z["hidden"],
            "intermediate_size": z["mlp"],
            "num_hidden_layers": z["layers"],
            "num_attention_heads": z["heads"],
            "num_key_value_heads": z["kv_heads"],
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "default", "mrope_section": [half - 2 * (half // 3), half // 3, half // 3],
                                "rope_theta": 10000.0},
            "bos_token_id": None,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        vision_config={
            "depth": z["v_depth"],
            "hidden_size": z["v_hidden"],
            "intermediate_size": z["v_mlp"],
            "num_heads": z["v_heads"],
            "out_hidden_size": z["hidden"],
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 112,
            "fullatt_block_indexes": [z["v_depth"] // 2 - 1, z["v_depth"] - 1],
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )  # fmt: skip
    torch.manual_seed(0)
    Qwen2_5_VLForConditionalGeneration(config).save_pretrained(path)
    return path


#: LLaVA sizes. Keys: the square image side in pixels, the vision patch side in pixels, vision width / layers / heads;
#: text hidden size / layers / heads / KV heads. ``pixels`` (361,568 parameters with the 400-token tiny tokenizer): a
#: 140-pixel screenshot in 5 x 5 patches of 28 pixels, one visual token per cell of the ``box`` format's answer grid
#: (plus the CLS token, which is dropped); one layer each side, the depth that learned fastest in a probe (two layers
#: each side sat longer on the plateau at the marginal answer).
LLAVA_SIZES = {
    "pixels": dict(image=140, patch=28, v_hidden=64, v_layers=1, v_heads=2, hidden=96, layers=1, heads=4, kv_heads=2),
}  # fmt: skip
#: The std :func:`build_llava` draws the vision tower's position embeddings with: the scale of a screenshot patch's
#: content embedding (std ~1.5 at CLIP's default init), not CLIP's 0.02.
LLAVA_POSITION_STD = 1.0


def build_llava(path: Path, size: str = "pixels", **overrides: int) -> Path:
    """A randomly initialised LLaVA of ``size`` (:data:`LLAVA_SIZES`, any key overridden by ``overrides``) and its
    processor, saved under ``path``, built from a config with ``torch.manual_seed(0)``: transformers'
    ``LlavaForConditionalGeneration`` with a ``CLIPVisionConfig`` tower and a ``LlamaConfig`` language model, the
    tiny tokenizer with the Qwen-style chat template (an image part becomes ``<|image_pad|>``, which the processor
    expands to one token per patch), and CLIP's PIL image processor resizing every screenshot to ``image`` x
    ``image`` pixels (no crop, so every pixel of the screen is seen). The vision tower's position embeddings are
    drawn with std :data:`LLAVA_POSITION_STD` (1.0, the scale of a patch's content embedding) instead of CLIP's
    0.02, so that a visual token carries its position from the first step (see the comment in the body).

    Why a LLaVA and not only Qwen2.5-VL: grounding asks *where* a thing is. CLIP adds a learned absolute position
    embedding to every patch, so a visual token carries its position in its own features, and the language model
    can copy it to the answer through an attention value. Qwen2.5-VL has no absolute position: 2-D rotary
    embeddings (in the vision tower) and M-RoPE (in the language model) place tokens only inside attention
    scores, and the values stay permutation-invariant. The big model learns positions from that in pre-training;
    the tiny one (:func:`build_vlm`, head size 24) did not leave the marginal answer in 1,500 supervised steps on
    one box, while this LLaVA reached 0.72 to 0.98 on unseen layouts in 1,410 (3 run seeds;
    ``tests/trainers/test_sft_pixels.py``).
    """
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil
    from transformers.models.clip.modeling_clip import CLIPVisionEmbeddings

    if size not in LLAVA_SIZES:
        raise ValueError(f"size must be one of {sorted(LLAVA_SIZES)}, got {size!r}")
    z = {**LLAVA_SIZES[size], **overrides}
    if z["image"] % z["patch"]:
        raise ValueError(
            f"the image side ({z['image']} px) must be a multiple of the patch side ({z['patch']} px)"
        )
    tokenizer = build_tokenizer()
    square = {"height": z["image"], "width": z["image"]}
    image_processor = CLIPImageProcessorPil(size=square, crop_size=square, do_center_crop=False)
    # "default" drops the CLS token: the language model sees one token per patch, in raster order.
    processor = LlavaProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=z["patch"], image_token="<|image_pad|>",
        vision_feature_select_strategy="default", num_additional_image_tokens=1, chat_template=CHAT_TEMPLATE,
    )  # fmt: skip
    processor.save_pretrained(path)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=z["v_hidden"], intermediate_size=2 * z["v_hidden"], num_hidden_layers=z["v_layers"],
            num_attention_heads=z["v_heads"], image_size=z["image"], patch_size=z["patch"],
        ),
        text_config=LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=z["hidden"], intermediate_size=2 * z["hidden"],
            num_hidden_layers=z["layers"], num_attention_heads=z["heads"], num_key_value_heads=z["kv_heads"],
            max_position_embeddings=2048, bos_token_id=None, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        ),
        image_token_id=tokenizer.convert_tokens_to_ids("<|image_pad|>"),
        vision_feature_layer=-1,  # the last layer: with one layer, -2 (LLaVA's default) would skip the tower
        vision_feature_select_strategy="default",
        projector_hidden_act="gelu",
    )  # fmt: skip
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config)
    # CLIP draws its position embeddings with std 0.02 (initializer_range), while a patch's content embedding of a
    # screenshot has std ~1.5: position, the one thing grounding needs, starts at ~1% of each visual token, and
    # the model sits at the marginal answer until it has grown. How long it sat there was fragile: the same code
    # and seed gave held-out 0.84 in one environment and 0.46 in another, and at CLIP's std no run seed, batch size
    # (16, 32, 64) or learning rate (2e-3) tried left the plateau before step 900. Drawn at the content's scale,
    # run seeds 0, 1, 2 were at 0.795, 0.91, 0.435 by step 900 and 0.735, 0.975, 0.715 at step 1,410.
    pos = next(m for m in model.modules() if isinstance(m, CLIPVisionEmbeddings)).position_embedding.weight
    with torch.no_grad():
        pos.copy_(torch.randn(pos.shape, generator=torch.Generator().manual_seed(0)) * LLAVA_POSITION_STD)
    model.save_pretrained(path)
    return path


__all__ = [
    "CHAT_TEMPLATE",
    "LLAVA_POSITION_STD",
    "LLAVA_SIZES",
    "IMAGE_ONLY_PROCESSORS",
    "SPECIAL_TOKENS",
    "VLM_SIZES",
    "build_causal_lm",
    "build_llava",
    "build_tokenizer",
    "build_vlm",
    "image_only_qwen2_vl_processor_class",
]
