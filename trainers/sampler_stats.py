"""How far the sampler's log-probs are from the trained model's, token by token.

A sampler with its own kernels (vLLM) draws from ``pi_sampler``, close to but not equal to the trained model's
``pi_theta_old`` at the same weights: other attention and matmul kernels, another reduction order, bf16 weights
where the trainer may keep fp32. The loss uses ``pi_theta_old`` recomputed by the trained model, so the clipped
ratio starts at 1; the gap between the two is measured here and logged each step, as the truncated
importance-sampling ratio ``pi_theta_old / pi_sampler`` that off-policy corrections (Yao et al. 2025, "Your
efficient RL framework secretly brings you off-policy RL training", section 2) would weigh tokens by. With
top-k or top-p the sampler's log-probs are of the truncated, renormalised distribution while the trainer scores the
whole softmax, so the gap then also holds that truncation (``log`` of the kept mass, per token).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

#: |log ratio| above which a token counts as mismatched (``sampler_mismatch_frac``): a 10.5% probability gap.
MISMATCH_THRESHOLD = 0.1


def logprob_mismatch(
    sampler_logp: torch.Tensor,
    trainer_logp: torch.Tensor,
    mask: torch.Tensor,
    threshold: float = MISMATCH_THRESHOLD,
) -> dict[str, float]:
    """Statistics of ``d = trainer_logp - sampler_logp`` over the masked tokens (``(B, T)`` tensors, nats).

    Returns (``{}`` when the mask is empty):

    * ``sampler_logprob_abs_diff_mean``: mean ``|d|``, nats;
    * ``sampler_ratio_mean``, ``sampler_ratio_min``, ``sampler_ratio_max``: of ``exp(d) = pi_trainer / pi_sampler``;
    * ``sampler_mismatch_frac``: fraction of tokens with ``|d| > threshold``.

    >>> s = torch.tensor([[-1.0, -2.0, 0.0]]); t = torch.tensor([[-1.0, -1.8, 5.0]])
    >>> {k: round(v, 4) for k, v in logprob_mismatch(s, t, torch.tensor([[1, 1, 0]])).items()}
    {'sampler_logprob_abs_diff_mean': 0.1, 'sampler_ratio_mean': 1.1107, 'sampler_ratio_min': 1.0, 'sampler_ratio_max': 1.2214, 'sampler_mismatch_frac': 0.5}
    """
    m = mask.bool()
    d = (trainer_logp.detach().double() - sampler_logp.detach().double())[m]  # (tokens,)
    if d.numel() == 0:
        return {}
    ratio = torch.exp(d)
    return {
        "sampler_logprob_abs_diff_mean": float(d.abs().mean()),
        "sampler_ratio_mean": float(ratio.mean()),
        "sampler_ratio_min": float(ratio.min()),
        "sampler_ratio_max": float(ratio.max()),
        "sampler_mismatch_frac": float((d.abs() > threshold).double().mean()),
    }


def padded_logprobs(
    rows: Sequence[Sequence[float]], length: int, device: torch.device | str | None = None
) -> torch.Tensor:
    """``(len(rows), length)`` float32 tensor of per-token log-probs, zero after each row's end."""
    out = torch.zeros((len(rows), length), device=device)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.as_tensor(list(row), dtype=torch.float32)
    return out
