"""Tiny, randomly initialised Hugging Face models for tests, saved to disk so the real loading path runs.

The tokenizer and the causal LM live in :mod:`agents.tiny_models` (``guigym demo`` builds them too); the tiny
Qwen2-VL, which only the tests need, is built here from the same tokenizer. Nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

from agents.tiny_models import CHAT_TEMPLATE, SPECIAL_TOKENS, build_causal_lm, build_tokenizer

__all__ = ["CHAT_TEMPLATE", "SPECIAL_TOKENS", "build_causal_lm", "build_qwen2_vl", "build_tokenizer"]


def image_only_qwen2_vl_processor_class(version: str = "2"):  # -> type[Qwen2VLProcessor]
    """``Qwen2VLProcessor`` (``version="2"``) or ``Qwen2_5_VLProcessor`` (``"2.5"``) without its video processor,
    registered with ``AutoProcessor``.

    transformers' Qwen2-VL processors insist on a video processor, and video processors need torchvision,
    which the CPU test environment (and perhaps a GPU machine without internet) lacks. Screenshots are images,
    so the tests drop the video half; the image half (``__call__`` with ``images=``) is transformers' own code.
    """
    from transformers import (
        AutoProcessor,
        Qwen2_5_VLConfig,
        Qwen2_5_VLProcessor,
        Qwen2VLConfig,
        Qwen2VLProcessor,
    )
    from transformers.processing_utils import ProcessorMixin

    base, config = (Qwen2VLProcessor, Qwen2VLConfig) if version == "2" else (Qwen2_5_VLProcessor, Qwen2_5_VLConfig)

    class ImageOnlyProcessor(base):  # type: ignore[misc, valid-type]
        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
            self.image_token = "<|image_pad|>"
            self.video_token = "<|video_pad|>"
            self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
            self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
            ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)

    # AutoProcessor finds a saved processor by its class name: one name per version.
    name = "ImageOnlyQwen2VLProcessor" if version == "2" else "ImageOnlyQwen2_5_VLProcessor"
    ImageOnlyProcessor.__name__ = ImageOnlyProcessor.__qualname__ = name
    AutoProcessor.register(config, ImageOnlyProcessor, exist_ok=True)
    return ImageOnlyProcessor


def build_qwen2_vl(path: Path) -> Path:
    """A tiny Qwen2-VL (2-layer text model, 1-block vision tower) and its processor, saved under ``path``."""
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    tokenizer = build_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    image_processor = Qwen2VLImageProcessorPil(min_pixels=28 * 28 * 4, max_pixels=28 * 28 * 16)
    processor_class = image_only_qwen2_vl_processor_class()
    processor = processor_class(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE
    )
    processor.save_pretrained(path)
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 2048,
            "rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0},
            "bos_token_id": None,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        vision_config={
            "depth": 1,
            "embed_dim": 32,
            "hidden_size": 64,
            "num_heads": 2,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(0)
    Qwen2VLForConditionalGeneration(config).save_pretrained(path)
    return path


#: Qwen2.5-VL sizes: ``tiny`` for CPU tests; ``small`` (about 0.14 B parameters, a 336x336 screenshot in 144
#: visual tokens) for a short GPU check. Keys: text hidden size, layers, heads, KV heads, MLP width; vision
#: depth, width, heads, MLP width; the image processor's maximum pixels.
QWEN2_5_VL_SIZES = {
    "tiny": dict(hidden=64, layers=2, heads=4, kv_heads=2, mlp=128, v_depth=2, v_hidden=32, v_heads=2, v_mlp=64,
                 max_pixels=28 * 28 * 16),
    "small": dict(hidden=1024, layers=8, heads=16, kv_heads=4, mlp=2816, v_depth=8, v_hidden=640, v_heads=10,
                  v_mlp=1708, max_pixels=28 * 28 * 144),
}  # fmt: skip


def build_qwen2_5_vl(path: Path, size: str = "tiny") -> Path:
    """A randomly initialised Qwen2.5-VL of ``size`` (:data:`QWEN2_5_VL_SIZES`) and its image-only processor,
    saved under ``path``: the real architecture (windowed vision attention, M-RoPE), built from a config."""
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    z = QWEN2_5_VL_SIZES[size]
    tokenizer = build_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    image_processor = Qwen2VLImageProcessorPil(min_pixels=28 * 28 * 4, max_pixels=z["max_pixels"])
    processor = image_only_qwen2_vl_processor_class("2.5")(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE
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
