"""Tiny, randomly initialised Hugging Face models for tests, saved to disk so the real loading path runs.

The tokenizer, the causal LM and the Qwen2.5-VL (:func:`agents.tiny_models.build_vlm`) live in
:mod:`agents.tiny_models` (``guigym demo`` and the benchmarks build them too); the tiny Qwen2-VL, which only the
tests need, is built here from the same tokenizer. Nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

from agents.tiny_models import (
    CHAT_TEMPLATE,
    SPECIAL_TOKENS,
    build_causal_lm,
    build_tokenizer,
    build_vlm,
    image_only_qwen2_vl_processor_class,
)

__all__ = [
    "CHAT_TEMPLATE",
    "SPECIAL_TOKENS",
    "build_causal_lm",
    "build_qwen2_vl",
    "build_tokenizer",
    "build_vlm",
    "image_only_qwen2_vl_processor_class",
]


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
