"""What a trainer sets up on the policy before its first step: the output format it prompts and parses with,
a LoRA adapter, activation checkpointing, and the state that trains (all parameters, or only the adapter's).
"""

from __future__ import annotations

from typing import Any

import torch


def enable_activation_checkpointing(model: Any) -> None:
    """Recompute each decoder layer in the backward instead of keeping its activations (non-reentrant, so a LoRA
    adapter's gradients flow without making the inputs require grad). Takes effect in ``train()`` mode."""
    inner = getattr(model, "module", model)
    if hasattr(inner, "activation_checkpointing_enable"):  # transformers >= 5.x; the old name warns
        inner.activation_checkpointing_enable({"use_reentrant": False})
    else:
        inner.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def resolve_output_format(name: Any, kwargs: dict[str, Any] | None = None) -> Any:
    """An output format by name: ``cell`` (:class:`agents.prompts.cell.CellFormat`, with ``rows`` / ``cols``
    from ``kwargs``), ``box`` (:class:`agents.prompts.box.BoxFormat`, for ``ClickBox-v0``, with ``grid`` /
    ``letters`` from ``kwargs`` when given, other keys ignored: GRPO passes the env's arguments when it has no
    ``format_kwargs``), ``act`` (:class:`agents.prompts.act.ActFormat`, a text agent's click / type answers), else whatever :func:`agents.lm_agent.resolve_format` takes (``auto``, ``gui_r1``, ...)."""
    if name == "cell":
        from agents.prompts.cell import CellFormat

        kwargs = kwargs or {}
        return CellFormat(int(kwargs.get("rows", 3)), int(kwargs.get("cols", 3)))
    if name == "box":
        from agents.prompts.box import BoxFormat

        return BoxFormat(**{k: int(v) for k, v in (kwargs or {}).items() if k in ("grid", "letters")})
    if name == "act":
        from agents.prompts.act import ActFormat

        return ActFormat()
    return name


def apply_lora(model: Any, r: int, alpha: int, target_modules: str | list[str]) -> Any:
    """Wrap ``model`` with a trainable LoRA adapter (``peft``); the base weights are frozen."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:  # pragma: no cover - peft is in the train extra
        raise ImportError("lora=true needs peft: pip install 'guigym[train]'") from exc
    config = LoraConfig(
        r=r, lora_alpha=alpha, target_modules=target_modules, lora_dropout=0.0, task_type="CAUSAL_LM"
    )
    return get_peft_model(model, config)


def trainable_state(model: Any) -> dict[str, torch.Tensor]:
    """The parameters that train (all of them, or only the adapter under LoRA), detached on CPU."""
    return {n: p.detach().cpu().clone() for n, p in model.named_parameters() if p.requires_grad}
