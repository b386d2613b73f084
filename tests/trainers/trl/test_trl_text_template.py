"""``text`` mode takes a model whose chat template has no tool syntax (trainers.trl.train.with_tool_fallback)."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")

from trl.chat_template_utils import supports_tool_calling  # noqa: E402

from agents.tiny_models import build_tokenizer  # noqa: E402
from trainers.trl.train import with_tool_fallback  # noqa: E402

PLAIN = [{"role": "user", "content": 'Click on the "ok" button.\nA* button ok\nB button no'}]


def test_plain_template_gains_tool_rendering_and_keeps_its_prompts() -> None:
    tok = build_tokenizer(merges=False)
    original = tok.chat_template
    assert not supports_tool_calling(tok)  # TRL would refuse it with an environment_factory
    wrapped = with_tool_fallback(tok)
    assert supports_tool_calling(wrapped)
    for gen in (True, False):  # the prompts the model was trained on render byte for byte as before
        assert wrapped.apply_chat_template(PLAIN, tokenize=False, add_generation_prompt=gen) == (
            tok.apply_chat_template(PLAIN, tokenize=False, add_generation_prompt=gen)
        )
    assert tok.chat_template == original  # the caller's tokenizer is left as it was


def test_tool_capable_template_is_kept() -> None:
    from trainers.trl.tiny import build_tool_tokenizer

    tok = build_tool_tokenizer()
    assert with_tool_fallback(tok) is tok
