"""Tiny models built once per test session and saved to disk (the real ``from_pretrained`` path runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="session")
def tiny_lm_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.agents.tiny_models import build_causal_lm

    return build_causal_lm(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_vlm_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.agents.tiny_models import build_qwen2_vl

    return build_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl"))
