"""Training precision: fp32 master weights for bf16 / fp16 models, and what merging LoRA into them loses.

Why: AdamW's step is about ``lr`` per weight (1e-6 in the 3B configs), while a bf16 weight of magnitude ``|w|``
only changes when the step exceeds half its spacing, ``|w| * 2**-8``. Stepping bf16 weights in place therefore
drops almost every update: measured on the tiny Llama, 10 steps at lr 1e-6 move about 2% of bf16 weights against
all of them in fp32 (``tests/trainers/test_precision.py``). Mixed-precision training (Micikevicius et al. 2018,
section 3.1) keeps an fp32 master copy that the optimiser steps and copies it, rounded, into the bf16 model the
forward and backward passes use: small steps accumulate in the master until they cross a bf16 spacing.

Memory: the master copy costs 4 bytes per trainable parameter on top of bf16 weights (2), gradients (2) and
AdamW's two fp32 moments (8): 16 bytes per parameter instead of 12.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

#: Parameter dtypes that get an fp32 master copy.
LOW_PRECISION = (torch.bfloat16, torch.float16)


def wants_master_weights(params: Iterable[torch.Tensor], master_weights: bool | None) -> bool:
    """Whether to keep fp32 master weights: ``master_weights`` when set, else (``None``) when any trainable
    parameter is bf16 or fp16."""
    if master_weights is not None:
        return bool(master_weights)
    return any(p.dtype in LOW_PRECISION for p in params)


class MasterWeightAdamW(torch.optim.AdamW):
    """AdamW over fp32 master copies of low-precision parameters (fp32 parameters are stepped as they are).

    ``step()`` copies each bf16 / fp16 gradient into its fp32 master, steps AdamW on the masters (moments in
    fp32), then writes the masters back into the model's parameters (rounded to their dtype), bucket by bucket of
    :attr:`BUCKET_NUMEL` parameters so that the fp32 gradient copies never exist for the whole model at once. Gradient clipping
    and accumulation happen on the model's gradients before ``step()``, as with any optimiser.

    ``state_dict()`` carries the masters (``"master_weights"``: index -> fp32 tensor), so a resumed run continues
    from the exact fp32 values rather than from the rounded model weights. A state dict without them (saved by a
    plain AdamW) loads too: the masters are then taken from the model's current weights.
    """

    #: Parameters (elements) whose fp32 gradient copies exist at once during a step.
    BUCKET_NUMEL = 1 << 26

    def __init__(self, params: Iterable[torch.Tensor], **kwargs: Any) -> None:
        self.model_params = [p for p in params]
        masters = [p.detach().float().clone() if p.dtype in LOW_PRECISION else p for p in self.model_params]
        for m in masters:
            m.requires_grad_(True)
        super().__init__(masters, **kwargs)

    def _pairs(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        masters = [m for g in self.param_groups for m in g["params"]]
        return list(zip(self.model_params, masters, strict=True))

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        pairs = self._pairs()
        # fp32 parameters step with their own gradient, in the first bucket only; AdamW skips any tensor whose
        # gradient is None, so the others wait with theirs set aside.
        own = {id(p): p.grad for p, m in pairs if m is p}
        for p, m in pairs:
            if m is p:
                p.grad = None
        # Bucket by bucket: the fp32 gradient copies of one bucket exist at a time (4 bytes per parameter of the
        # bucket, not of the model). AdamW is elementwise, so the result is that of one step over all tensors.
        buckets: list[list[tuple[torch.Tensor, torch.Tensor]]] = [[]]
        size = 0
        for pair in pairs:
            if size >= self.BUCKET_NUMEL:
                buckets.append([])
                size = 0
            buckets[-1].append(pair)
            size += pair[0].numel()
        for k, bucket in enumerate(buckets):
            for p, m in bucket:
                if m is not p:
                    m.grad = None if p.grad is None else p.grad.float()
            if k == 0:
                for p, m in pairs:
                    if m is p:
                        p.grad = own[id(p)]
            super().step()
            for p, m in bucket:
                if m is not p:
                    p.copy_(m)  # rounds to the model's dtype
                    m.grad = None
            if k == 0:
                for p, m in pairs:
                    if m is p:
                        p.grad = None
        for p, m in pairs:
            if m is p:
                p.grad = own[id(p)]  # as a plain AdamW leaves them
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        super().zero_grad(set_to_none)
        for p in self.model_params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def state_dict(self) -> dict[str, Any]:  # type: ignore[override]
        sd = super().state_dict()
        masters = [m for g in self.param_groups for m in g["params"]]
        sd["master_weights"] = {
            i: m.detach().clone()
            for i, (p, m) in enumerate(zip(self.model_params, masters, strict=True))
            if m is not p
        }
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:  # type: ignore[override]
        state_dict = dict(state_dict)
        saved = state_dict.pop("master_weights", None)
        super().load_state_dict(state_dict)
        masters = [m for g in self.param_groups for m in g["params"]]
        with torch.no_grad():
            for i, (p, m) in enumerate(zip(self.model_params, masters, strict=True)):
                if m is p:
                    continue
                if saved is not None and i in saved:
                    m.copy_(saved[i].to(m.device))
                    p.copy_(m)
                else:  # a plain AdamW's state: start the master from the (resumed) model weight
                    m.copy_(p.float())

    def master_state(self) -> list[torch.Tensor]:
        """The fp32 tensors AdamW steps, one per trainable parameter (the parameter itself when it is fp32)."""
        return [m for g in self.param_groups for m in g["params"]]


# ----- LoRA merging ---------------------------------------------------------------------------------------


@torch.no_grad()
def lora_merge_error(model: Any, dtype: torch.dtype | None = None) -> dict[str, float]:
    """What merging a ``peft`` LoRA adapter into ``dtype`` base weights (default: each base weight's own) loses.

    For every LoRA-wrapped linear layer, ``delta = scale * B @ A`` (fp32) and the merged weight
    ``W' = round_dtype(W + delta)``. Returns:

    * ``merge_rel_err``: ``||W' - W - delta|| / ||delta||`` over all layers (Frobenius norms, summed in
      squares): the fraction of the adapter's update that rounding destroys (0: lossless; bf16 merges of a
      small adapter into weights of magnitude ~0.02 lose most of it);
    * ``merge_delta_norm``: ``||delta||``;
    * ``merge_changed_frac``: the fraction of base weights that the merge changes at all.

    Returns ``{}`` for a model without LoRA layers.
    """
    err_sq = delta_sq = changed = total = 0.0
    for module in model.modules():
        if not (hasattr(module, "lora_A") and hasattr(module, "base_layer")):
            continue
        for name in module.active_adapters if hasattr(module, "active_adapters") else []:
            if name not in module.lora_A:
                continue
            w = module.base_layer.weight.float()
            a = module.lora_A[name].weight.float()
            b = module.lora_B[name].weight.float()
            delta = (b @ a) * float(module.scaling[name])
            if getattr(module, "fan_in_fan_out", False):
                delta = delta.T
            merged = (w + delta).to(dtype or module.base_layer.weight.dtype).float()
            err_sq += float(((merged - w - delta) ** 2).sum())
            delta_sq += float((delta**2).sum())
            changed += float((merged != w).sum())
            total += w.numel()
    if not total:
        return {}
    return {
        "merge_rel_err": (err_sq / delta_sq) ** 0.5 if delta_sq > 0 else 0.0,
        "merge_delta_norm": delta_sq**0.5,
        "merge_changed_frac": changed / total,
    }


def merge_lora(
    model: Any, merge_dtype: str, measure_dtype: torch.dtype | None = None
) -> tuple[Any, dict[str, float]]:
    """Merge a ``peft`` adapter into its base model; returns the plain model and :func:`lora_merge_error`.

    ``merge_dtype``: ``"float32"`` upcasts the model first, so the merge is exact (``W + delta`` in fp32) and the
    merged weights stay fp32; ``"model"`` merges into the model's own dtype, rounding as the error reports.
    ``measure_dtype``: the dtype the error is measured for (default: the base weights' own); a run that loads in
    bf16 measures bf16 even when its base is already fp32.
    """
    if merge_dtype not in ("float32", "model"):
        raise ValueError(f"merge_dtype must be 'float32' or 'model', got {merge_dtype!r}")
    errors = lora_merge_error(model, measure_dtype)
    if merge_dtype == "float32":
        model = model.float()
    return model.merge_and_unload(), errors
