"""Build and run TRL's ``GRPOTrainer`` on a guigym env: ``guigym train trl --config run.yaml [--set KEY=VALUE]``
(``python -m trainers.trl`` takes the same arguments).

A run file has two sections: ``guigym:`` (:class:`trainers.trl.config.GuiGymTRLConfig`) and ``trl:`` (TRL's
``GRPOConfig`` fields, passed as they are: ``use_vllm``, ``vllm_mode``, ``per_device_train_batch_size``, ...),
plus ``model:`` (a folder or hub id). Distributed runs are TRL's: ``accelerate launch --config_file
configs/trl/accelerate_zero3.yaml -m trainers.trl --config configs/trl/grpo_guiweb_vllm.yaml`` (docs/trl.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import Any, NoReturn

import yaml

from gui_envs.schema.errors import did_you_mean
from trainers.config_io import (
    ConfigError,
    check_output_dir,
    check_value_types,
    coerce_floats,
    parse_overrides,
    read_yaml_mapping,
)
from trainers.trl.config import GuiGymTRLConfig
from trainers.trl.data import build_dataset
from trainers.trl.env import EnvironmentFactory, make_environment_factory
from trainers.trl.rewards import reward_funcs


def build_trainer(
    guigym: GuiGymTRLConfig, args: Any, model: Any, processing_class: Any = None, **trainer_kwargs: Any
) -> Any:
    """TRL's ``GRPOTrainer`` (or :class:`trainers.trl.sca.SCAGRPOTrainer` for ``estimator: sca``) on
    ``guigym``'s env, rewards and seeds; ``args`` is a ``trl.GRPOConfig``."""
    if isinstance(model, str):
        from agents.hub import check_saved_model

        check_saved_model(model)  # a folder without config.json: one line, before TRL's slow import
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


#: The top-level keys of a run file.
RUN_KEYS: tuple[str, ...] = ("model", "guigym", "trl")


def load_run(path: str | Path, overrides: list[str] | None = None) -> tuple[str, GuiGymTRLConfig, Any]:
    """``(model, guigym config, trl.GRPOConfig)`` from a run file and ``--set`` overrides.

    An override is guigym's ``KEY=VALUE`` (the value parsed as YAML), with the key a run-file key: ``model=...``, or
    a field under its section, ``trl.max_steps=3``, ``guigym.estimator=sca``. The ``trl:`` section is built by TRL's
    own parser (``trl.TrlParser``, a ``transformers.HfArgumentParser``), so TRL's checks apply unchanged. The
    ``model`` is checked with :func:`agents.hub.resolve_model` before anything else loads (TRL included).

    Raises:
        trainers.config_io.ConfigError: a missing file (or a folder), an unknown key or field, or an override
            without its section, each with the closest names; a value of the wrong type for its field (which
            ``parse_dict`` lets through), a value TRL or guigym refuses, an unknown ``guigym.env_id``, a
            ``trl.output_dir`` that is a file. A model that cannot load raises :class:`agents.hub.ModelPathError`
            (a missing path, or a file) or :class:`agents.hub.HubUnavailableError`.
    """
    from agents.hub import resolve_model

    data = read_yaml_mapping(path)
    for key, value in parse_overrides(overrides or []).items():
        section, dot, name = key.partition(".")
        if not dot:
            if key not in RUN_KEYS:
                raise ConfigError(_no_section_message(key))
            data[key] = value
        else:
            if section not in ("guigym", "trl"):
                raise ConfigError(_unknown(f"no section {section!r} in --set {key}; the sections are guigym and trl", section, ("guigym", "trl")))
            data.setdefault(section, {})[name] = value
    unknown = [k for k in data if k not in RUN_KEYS]
    if unknown:
        raise ConfigError(_unknown(f"{path} has a key {unknown[0]!r}; a run file has model:, guigym: and trl:",
                                   unknown[0], RUN_KEYS))  # fmt: skip
    if "model" not in data:
        raise ConfigError(f"{path} names no model: add `model: FOLDER_OR_HUB_ID` or --set model=...")
    # The model first: an unreachable hub is then one line in seconds, before TRL's slow import.
    model = resolve_model(str(data["model"]))
    from trl import GRPOConfig, TrlParser

    sections = {name: dict(data.get(name) or {}) for name in ("guigym", "trl")}
    for name, cls in (("guigym", GuiGymTRLConfig), ("trl", GRPOConfig)):
        fields = [f.name for f in dataclasses.fields(cls)]
        bad = [k for k in sections[name] if k not in fields]
        if bad:
            raise ConfigError(_unknown(f"{cls.__name__} has no field {bad[0]!r} ({name}.{bad[0]})", bad[0], fields))
    trl_values = coerce_floats(GRPOConfig, sections["trl"])
    # parse_dict and the dataclasses take any value: `trl.learning_rate=fast` would fail in the first optimiser step.
    check_value_types(GuiGymTRLConfig, sections["guigym"])
    check_value_types(GRPOConfig, trl_values)
    try:
        guigym = GuiGymTRLConfig(**sections["guigym"])
        (args,) = TrlParser([GRPOConfig]).parse_dict(trl_values)
    except (TypeError, ValueError) as exc:
        raise ConfigError(" ".join(str(exc).split())) from None  # TRL's own message, on one line
    import gui_envs

    try:  # a typo in guigym.env_id, before TRL builds the trainer and gymnasium raises NameNotFound
        gui_envs.check_env_id(guigym.env_id)
    except gui_envs.UnknownEnvIdError as exc:
        raise ConfigError(f"guigym.env_id: {exc}") from None
    check_output_dir(args.output_dir, "trl.output_dir")
    return model, guigym, args


def _unknown(what: str, name: str, known: Any) -> str:
    return f"{what}.{did_you_mean(name, known)}"


def _no_section_message(key: str) -> str:
    """For ``--set max_steps=3``: which section has the field (``trl.max_steps``), or the closest names."""
    from trl import GRPOConfig

    owners = [s for s, cls in (("guigym", GuiGymTRLConfig), ("trl", GRPOConfig))
              if key in {f.name for f in dataclasses.fields(cls)}]  # fmt: skip
    if owners:
        hint = " or ".join(f"{s}.{key}" for s in owners)
        return f"--set {key}=... needs its section: did you mean --set {hint}=...?"
    every = [*RUN_KEYS, *(f"guigym.{f.name}" for f in dataclasses.fields(GuiGymTRLConfig)),
             *(f"trl.{f.name}" for f in dataclasses.fields(GRPOConfig))]  # fmt: skip
    hint = did_you_mean(key, every) or did_you_mean(key, [k.partition(".")[2] or k for k in every])
    return f"--set {key}=...: no run-file key {key!r}; keys are model, guigym.FIELD and trl.FIELD.{hint}"


def run(config: str | Path, overrides: list[str] | None = None) -> Any:
    """Load a run file (:func:`load_run`), train, save the model to ``trl.output_dir`` and close the envs; returns
    the trainer. What ``guigym train trl`` and ``python -m trainers.trl`` run."""
    model, guigym, args = load_run(config, overrides)
    trainer = build_trainer(guigym, args, model)
    try:
        trainer.train()
        trainer.save_model(args.output_dir)
    finally:
        close_environments(trainer)
    return trainer


#: The options of ``python -m trainers.trl``, for the closest one to a mistyped option.
OPTIONS: tuple[str, ...] = ("--config", "-c", "--set", "--help", "-h")


class _OneLineParser(argparse.ArgumentParser):
    """argparse with its usage errors on one ``error:`` line (the usage in brackets), as the run's own errors are
    printed, instead of a usage line and an error line."""

    def error(self, message: str) -> NoReturn:
        usage = self.format_usage().strip().removeprefix("usage: ")
        self.exit(2, f"error: {message} (usage: {usage})\n")


def main(argv: list[str] | None = None) -> None:
    """``python -m trainers.trl --config FILE [--set KEY=VALUE ...]``: :func:`run`, with a user error as one line
    on stderr (exit status 2) instead of a traceback, as ``guigym train trl`` prints it."""
    from agents.hub import HubUnavailableError, ModelPathError

    parser = _OneLineParser(
        prog="python -m trainers.trl", description="GRPO on a guigym env with TRL's GRPOTrainer"
    )
    # --config is checked below rather than by argparse, so that a mistyped `--confg` is named with its fix.
    parser.add_argument("--config", "-c", help="a run file (configs/trl/*.yaml); required")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a run-file key, e.g. trl.max_steps=3 or guigym.estimator=sca (repeatable)")  # fmt: skip
    ns, extra = parser.parse_known_args(argv)
    if extra:
        name = extra[0].partition("=")[0]
        hint = did_you_mean(name, OPTIONS) or (
            " Run-file fields go through --set, e.g. --set trl.max_steps=3." if name.startswith("--") else ""
        )
        parser.error(f"unrecognized argument {extra[0]!r}.{hint}")
    if ns.config is None:
        parser.error("--config FILE is required (a run file, e.g. configs/trl/grpo_tiny_clickgrid_cpu.yaml)")
    try:
        run(ns.config, ns.overrides)
    except (ConfigError, ModelPathError, HubUnavailableError) as exc:
        parser.exit(2, f"error: {exc}\n")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        parser.exit(2, f"error: {ns.config} is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}\n")


def close_environments(trainer: Any) -> None:
    """Close the envs (and their browsers) of a trainer from :func:`build_trainer`; call it before the process
    ends. The same as ``close()`` on each :class:`trainers.trl.env.EnvironmentFactory` the trainer was given
    (TRL keeps them as ``trainer.environment_factories``)."""
    for factory in (getattr(trainer, "environment_factories", None) or {}).values():
        if isinstance(factory, EnvironmentFactory):
            factory.close()
