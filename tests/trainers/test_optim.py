"""The optimiser schedule the trainers share: warm-up, then flat or a linear fall to 0."""

from __future__ import annotations

import pytest
import torch

from trainers.optim import adamw_with_warmup


def _rates(warmup_ratio: float, total: int, decay: str) -> list[float]:
    model = torch.nn.Linear(2, 2)
    optimizer, scheduler = adamw_with_warmup(model, 1.0, 0.0, warmup_ratio, total, decay=decay)
    rates = []
    for _ in range(total):
        rates.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    return rates


def test_linear_decay_reaches_zero_at_the_last_step_after_warm_up():
    # 10 steps, 2 of warm-up: 1/2, 2/2, then (10 - s) / 8 for s = 2..9.
    assert _rates(0.2, 10, "linear") == pytest.approx([0.5, 1.0, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125])
    assert _rates(0.0, 4, "linear") == pytest.approx([1.0, 0.75, 0.5, 0.25])
    assert _rates(0.2, 5, "constant") == pytest.approx([1.0, 1.0, 1.0, 1.0, 1.0])


def test_an_unknown_decay_is_an_error():
    with pytest.raises(ValueError, match="decay"):
        adamw_with_warmup(torch.nn.Linear(2, 2), 1.0, 0.0, 0.0, 4, decay="cosine")
