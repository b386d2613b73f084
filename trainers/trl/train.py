"""Build and run TRL's ``GRPOTrainer`` on a guigym env: ``python -m trainers.trl --config run.yaml``.

A run file has two sections: ``guigym:`` (:class:`trainers.trl.config.GuiGymTRLConfig`) and ``trl:`` (TRL's
``GRPOConfig`` fields, passed as they are: ``use_vllm``, ``vllm_mode``, ``per_device_train_batch_size``, ...),
plus ``model:`` (a folder or hub id). Distributed runs are TRL's: ``accelerate launch --config_file
configs/trl/accelerate_zero3.yaml -m trainers.trl --config configs/trl/grpo_guiweb_vllm.yaml`` (docs/trl.md).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import yaml

from trainers.trl.config import GuiGymTRLConfig
from trainers.trl.data import build_dataset
from trainers.trl.env import EnvironmentFactory, make_environment_factory
from trainers.trl.rewards import reward_funcs


def build_trainer(
    guigym: GuiGymTRLConfig, args: Any, model: Any, processing_class: Any = None, **trainer_kwargs: Any
) -> Any:
    """TRL's ``GRPOTrainer`` (or :class:`trainers.trl.sca.SCAGRPOTrainer` for ``estimator: sca``) on
    ``guigym``'s env, rewards and seeds; ``args`` is a ``trl.GRPOConfig``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental in TRL 1.x
    from trl import GRPOTrainer

    if guigym.reward_weights is not None:
        args.reward_weights = list(guigym.reward_weights)
    if guigym.action_mode == "text":
        if processing_class is None and isinstance(model, str):
            from transformers import AutoProcessor

            processing_class = AutoProcessor.from_pretrained(
                model, truncation_side="left", padding_side="left"
            )
        if processing_class is not None:
            processing_class = with_tool_fallback(processing_class)
    kwargs: dict[str, Any] = dict(
        model=model,
        reward_funcs=reward_funcs(guigym.rewards),
        args=args,
        train_dataset=build_dataset(guigym),
        processing_class=processing_class,
        environment_factory=make_environment_factory(guigym),
        **trainer_kwargs,
    )
    if guigym.estimator == "sca":
        from trainers.trl.sca import SCAGRPOTrainer

        return SCAGRPOTrainer(sca_kwargs=guigym.sca_kwargs, **kwargs)
    return GRPOTrainer(**kwargs)


#: A tool-calling conversation in a ChatML-like shape: what :func:`with_tool_fallback` renders instead of the
#: model's own template for conversations that carry tool calls or tool messages.
_TOOL_FALLBACK = (
    "{%- for message in messages -%}<|im_start|>{{ message['role'] }}\n"
    "{%- if message['content'] is string -%}{{ message['content'] }}{%- endif -%}"
    "{%- for call in message.get('tool_calls') or [] -%}"
    "\n<tool_call>\n{{ {'name': call['function']['name'], 'arguments': call['function']['arguments']} | tojson }}"
    "\n</tool_call>{%- endfor -%}<|im_end|>\n{% endfor -%}"
    "{%- if add_generation_prompt -%}<|im_start|>assistant\n{%- endif -%}"
)


def with_tool_fallback(processing_class: Any) -> Any:
    """``processing_class`` (a copy) whose chat template also renders tool calls, for ``text`` mode.

    TRL's ``GRPOTrainer`` refuses an ``environment_factory`` unless the chat template renders a tool-calling
    conversation (``trl.chat_template_utils.supports_tool_calling``), even when the environment exposes no tools;
    ``text`` mode exposes none, so a model trained with a plain template (guigym's SFT on the tiny tokenizer) would
    be refused. The copy's template renders every conversation without tool calls exactly as the original does (the
    prompts the model was trained on) and a conversation with tool calls or tool messages, which ``text`` mode never
    builds, in a ChatML-like fallback. A template that already renders tool calls is kept as it is.
    """
    import copy

    from trl.chat_template_utils import supports_tool_calling

    template = getattr(processing_class, "chat_template", None)
    if not isinstance(template, str) or supports_tool_calling(processing_class):
        return processing_class
    wrapped = copy.deepcopy(processing_class)
    wrapped.chat_template = (
        "{%- if messages | selectattr('tool_calls', 'defined') | list or "
        "messages | selectattr('role', 'equalto', 'tool') | list -%}"
        + _TOOL_FALLBACK
        + "{%- else -%}"
        + template
        + "{%- endif -%}"
    )
    return wrapped


def load_run(path: str | Path, overrides: list[str] | None = None) -> tuple[str, GuiGymTRLConfig, Any]:
    """``(model, guigym config, trl.GRPOConfig)`` from a run file; ``overrides`` are ``section.field=value``
    strings (YAML values), e.g. ``trl.max_steps=3``."""
    from trl import GRPOConfig

    data = yaml.safe_load(Path(path).read_text()) or {}
    for item in overrides or []:
        key, _, value = item.partition("=")
        section, _, name = key.partition(".")
        if not name:
            data[section] = yaml.safe_load(value)
        else:
            data.setdefault(section, {})[name] = yaml.safe_load(value)
    unknown = set(data) - {"model", "guigym", "trl"}
    if unknown or "model" not in data:
        raise ValueError(f"a TRL run file has model:, guigym: and trl: (got {sorted(data)})")
    return (
        str(data["model"]),
        GuiGymTRLConfig(**(data.get("guigym") or {})),
        GRPOConfig(**(data.get("trl") or {})),
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="GRPO on a guigym env with TRL's GRPOTrainer")
    parser.add_argument("--config", required=True, help="a run file (configs/trl/*.yaml)")
    parser.add_argument("overrides", nargs="*", help="section.field=value, e.g. trl.max_steps=3")
    ns = parser.parse_args(argv)
    model, guigym, args = load_run(ns.config, ns.overrides)
    trainer = build_trainer(guigym, args, model)
    try:
        trainer.train()
        trainer.save_model(args.output_dir)
    finally:
        close_environments(trainer)


def close_environments(trainer: Any) -> None:
    """Close the envs (and their browsers) of a trainer from :func:`build_trainer`; call it before the process
    ends. The same as ``close()`` on each :class:`trainers.trl.env.EnvironmentFactory` the trainer was given
    (TRL keeps them as ``trainer.environment_factories``)."""
    for factory in (getattr(trainer, "environment_factories", None) or {}).values():
        if isinstance(factory, EnvironmentFactory):
            factory.close()
