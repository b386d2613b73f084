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


def have_chromium() -> bool:
    """Whether a Chromium (and playwright) is here: the GPU-check smoke tests drive browser envs."""
    try:
        from gui_envs.browser.chromium import ChromiumNotFoundError, find_chromium
    except ImportError:  # playwright missing
        return False
    try:
        find_chromium()
    except ChromiumNotFoundError:
        return False
    return True
