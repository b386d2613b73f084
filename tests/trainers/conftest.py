"""A tiny random Llama for the trainer tests, built once per session (the real loading path runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="session")
def tiny_lm_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.agents.tiny_models import build_causal_lm

    return build_causal_lm(tmp_path_factory.mktemp("tiny-llama"))
