"""The GRPO comparison runner shared by ``benchmarks/grpo_rewards.py`` and ``guigym demo``: its smoothing and
first-reach arithmetic (hand-computed), and a clear error for an unknown variant."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import trainers.grpo_compare as grpo_compare
from trainers.grpo_compare import UnknownVariantError, first_reach, run_variant, smooth


def test_doctests() -> None:
    assert doctest.testmod(grpo_compare).failed == 0


def test_smooth_and_first_reach_by_hand() -> None:
    curve = np.array([0.0, 0.2, 0.4, 0.6, 0.8])
    # 3-step trailing means: 0, 0.1, 0.2, 0.4, 0.6
    np.testing.assert_allclose(smooth(curve, k=3), [0.0, 0.1, 0.2, 0.4, 0.6])
    assert first_reach(curve, 0.4, k=3) == 4
    assert first_reach(curve, 0.7, k=3) is None


def test_unknown_variant_names_the_choices(tmp_path) -> None:
    with pytest.raises(UnknownVariantError, match="binary, ssl, sca"):
        run_variant(tmp_path / "model", "dense", 0, 1, tmp_path)
