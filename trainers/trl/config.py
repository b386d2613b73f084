"""``GuiGymTRLConfig``: what the TRL adapter needs besides TRL's own ``GRPOConfig``.

TRL's ``GRPOConfig`` keeps every optimisation and generation setting (batch, ``num_generations``, learning rate,
vLLM, DeepSpeed / FSDP through ``accelerate launch``); this dataclass says which guigym env the rollouts play,
how the model talks to it, how episodes are scored and how credit is assigned. A YAML run file has one section
per dataclass (``guigym:`` and ``trl:``, see ``configs/trl/``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gui_envs.schema.actions import ACTION_TYPES
from gui_envs.schema.errors import did_you_mean
from trainers.config_io import ConfigError

#: Reward function names (:mod:`trainers.trl.rewards`).
TRL_REWARDS: tuple[str, ...] = ("env", "binary", "ssl", "graph")
#: How the policy acts: GUI actions as TRL tools (multi-turn), or one answer in an output format (one step).
ACTION_MODES: tuple[str, ...] = ("tools", "text")
#: The answer formats of ``text`` mode; each resets and steps (tests/trainers/trl/test_trl_formats.py).
OUTPUT_FORMATS: tuple[str, ...] = ("cell", "box", "act", "gui_r1", "text")


class TRLConfigError(ConfigError):
    """A field of :class:`GuiGymTRLConfig` is out of range; the message says which and what to use."""


@dataclass
class GuiGymTRLConfig:
    """The guigym side of a TRL ``GRPOTrainer`` run.

    Attributes:
        env_id: a registered guigym env id (``GuiWeb-v0``, ``ClickGrid-v0``, ...). Default ``ClickGrid-v0``.
        env_kwargs: keyword arguments of ``gym.make``. Default none.
        action_mode: ``tools`` (default): each GUI action type in ``tools`` is a method of the TRL environment,
            called by the model through TRL's tool-calling loop (multi-turn, one env step per call); ``text``:
            the completion is one answer in ``output_format`` (parsed by guigym's parser) and the env takes one
            step with it (one-step grounding, the setting of guigym's own trainer).
        tools: action types (:data:`gui_envs.schema.actions.ACTION_TYPES`) exposed as tools; every extra tool is more
            prompt tokens. Default ``click``, ``type``, ``scroll``, ``press``, ``navigate``, ``stop``.
        output_format: ``text`` mode's answer format (``cell``, ``box``, ``act``, ``gui_r1``, ``text``).
            Default ``cell``.
        max_elements: most page elements listed in a text observation (the first ones in reading order).
            Default 30.
        shared_browser: the envs of all rollout slots open contexts on one Chromium (one launch, not one per
            slot; browser envs only). Default true.
        rewards: reward functions, summed with ``reward_weights``: ``env`` (the env's verdict: 1 for a success),
            ``binary`` (SSL's verifier ``C``), ``ssl`` (the sweet-spot reward ``C + lambda * S_hat``) and
            ``graph`` (the strategy-graph progress, needs ``graphs``). Default ``["env"]``.
        reward_weights: one weight per reward; default 1 each.
        ssl_kwargs: options of :class:`gui_envs.reward_wrappers.SweetSpotReward` (``zones``, ...). Default none.
        graphs: strategy graphs for ``graph``: a JSON file, or ``{task name: JSON file or dict}``. Default none.
        estimator: ``grpo`` (TRL's own advantage) or ``sca`` (guigym's spatial credit, through
            :class:`trainers.trl.sca.SCAGRPOTrainer`). Default ``grpo``.
        sca_kwargs: fields of :class:`rewards.sca_config.SCAConfig`. Default none.
        seeds: ``[start, stop)`` of the training seeds; one dataset row per seed. Default ``[0, 256]``.
        task: a fixed task template name for every row (task envs); default none (drawn from the seed).
        system_prompt: the first user message's text before the env's observation (tools mode); ``None``
            for the default, which says to act through the tools.
        screenshot: tools mode, for VLMs: ``reset`` and every tool return the screenshot as an image content block
            before the text (``[{"type": "image", "image": PIL image}, {"type": "text", "text": ...}]``), which TRL
            hands to the model's processor; the image is the env's screenshot at its own size in pixels (the
            processor resizes it). Default false: text only, for text models.
    """

    env_id: str = "ClickGrid-v0"
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    action_mode: str = "tools"
    tools: list[str] = field(default_factory=lambda: ["click", "type", "scroll", "press", "navigate", "stop"])
    output_format: str = "cell"
    max_elements: int = 30
    shared_browser: bool = True
    rewards: list[str] = field(default_factory=lambda: ["env"])
    reward_weights: list[float] | None = None
    ssl_kwargs: dict[str, Any] = field(default_factory=dict)
    graphs: Any = None
    estimator: str = "grpo"
    sca_kwargs: dict[str, Any] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=lambda: [0, 256])
    task: str | None = None
    system_prompt: str | None = None
    screenshot: bool = False

    def __post_init__(self) -> None:
        if self.action_mode not in ACTION_MODES:
            hint = did_you_mean(self.action_mode, ACTION_MODES)
            raise TRLConfigError(f"action_mode={self.action_mode!r}; use one of {ACTION_MODES}.{hint}")
        if self.output_format not in OUTPUT_FORMATS:
            hint = did_you_mean(self.output_format, OUTPUT_FORMATS)
            raise TRLConfigError(f"output_format={self.output_format!r}; use one of {OUTPUT_FORMATS}.{hint}")
        bad = [t for t in self.tools if t not in ACTION_TYPES]
        if bad:
            hint = did_you_mean(bad[0], ACTION_TYPES)
            raise TRLConfigError(f"tools {bad} are not action types; choose from {list(ACTION_TYPES)}.{hint}")
        if self.action_mode == "tools" and not self.tools:
            raise TRLConfigError("action_mode='tools' needs at least one tool (tools: [click, stop], ...)")
        bad = [r for r in self.rewards if r not in TRL_REWARDS]
        if bad or not self.rewards:
            hint = did_you_mean(bad[0], TRL_REWARDS) if bad else ""
            raise TRLConfigError(
                f"rewards {self.rewards} must be a non-empty list of {list(TRL_REWARDS)}.{hint}"
            )
        if "graph" in self.rewards and self.graphs is None:
            raise TRLConfigError("reward 'graph' needs graphs: a strategy-graph JSON file or {task: file}")
        if self.reward_weights is not None and len(self.reward_weights) != len(self.rewards):
            raise TRLConfigError(
                f"reward_weights has {len(self.reward_weights)} entries for {len(self.rewards)} rewards"
            )
        if self.estimator not in ("grpo", "sca"):
            raise TRLConfigError(f"estimator={self.estimator!r}; use 'grpo' (TRL's) or 'sca'")
        if len(self.seeds) != 2 or not 0 <= self.seeds[0] < self.seeds[1]:
            raise TRLConfigError(f"seeds={self.seeds!r} must be [start, stop) with 0 <= start < stop")
        if self.screenshot and self.action_mode != "tools":
            raise TRLConfigError(
                "screenshot=True is for action_mode='tools' (images in reset and tool results); text mode's "
                "prompt is its output format's"
            )
        if self.screenshot and self.env_kwargs.get("screenshots") is False:
            raise TRLConfigError(
                "screenshot=True sends the env's screenshots, but env_kwargs has screenshots: false (blank images); "
                "drop one of the two"
            )
        if self.max_elements < 1:
            raise TRLConfigError(f"max_elements={self.max_elements} must be at least 1")
