"""A language-model agent: an output format (prompt + parser) on top of any :class:`Generator`.

:class:`LMAgent` is the policy; where the tokens come from is the generator's business (Hugging Face
``generate`` in :class:`agents.hf_agent.HFAgent`, an OpenAI-compatible server in
:class:`agents.api_agent.APIAgent`). One ``act_batch`` call is one batched model call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agents.base import AgentOutput, BaseAgent
from agents.generation import Generation, Generator, SamplingParams
from agents.prompts.formats import GuiR1Format, OutputFormat, PromptContext, TextAnswerFormat, auto_format
from agents.prompts.observation import instruction_of
from gui_envs.schema.privileged import public_info


def resolve_format(spec: OutputFormat | str | None) -> OutputFormat | None:
    """``"gui_r1"``, ``"text"`` or an :class:`OutputFormat`; ``"auto"``/``None`` decide per observation."""
    if spec is None or spec == "auto":
        return None
    if spec == "gui_r1":
        return GuiR1Format()
    if spec in ("text", "text_answer"):
        return TextAnswerFormat()
    if isinstance(spec, str):
        raise ValueError(f"unknown output format {spec!r}; use 'auto', 'gui_r1', 'text' or an OutputFormat")
    return spec


class LMAgent(BaseAgent):
    """Prompts a generator with the observation and parses its answer into an env action.

    Args:
        generator: anything implementing :class:`agents.generation.Generator`.
        output_format: ``"auto"`` (GUI-R1 for GUI observations, free text otherwise), ``"gui_r1"``,
            ``"text"``, or an :class:`~agents.prompts.formats.OutputFormat`.
        sampling: sampling parameters (``num_samples`` is ignored by ``act``; see :meth:`sample_groups`).
        use_images: send screenshots; defaults to the generator's ``supports_images``.
        name: the agent's name in trajectories.
    """

    def __init__(
        self,
        generator: Generator,
        output_format: OutputFormat | str | None = "auto",
        sampling: SamplingParams | None = None,
        use_images: bool | None = None,
        name: str = "lm",
    ) -> None:
        self.generator = generator
        self.output_format = resolve_format(output_format)
        self.sampling = sampling or SamplingParams()
        self.use_images = (
            bool(getattr(generator, "supports_images", False)) if use_images is None else use_images
        )
        self.name = name
        self.instruction = ""
        self.info: dict[str, Any] = {}
        self.history: list[str] = []

    # ----- episode state ------------------------------------------------------------------------------
    def reset(self, instruction: str = "", info: dict[str, Any] | None = None) -> None:
        """Forget the previous episode's history.

        ``info`` goes through :func:`~gui_envs.schema.privileged.public_info` again, so that a prompt template can never
        receive a privileged value even when a caller passes an env's raw info.
        """
        self.instruction = instruction
        self.info = public_info(info or {})
        self.history = []

    def act(self, observation: Any) -> AgentOutput:
        """One sampled action; the action joins this agent's history."""
        (out,) = self.act_batch([observation])
        fmt = self._format(observation)
        self.history.append(fmt.describe(out.action) if out.action is not None else "invalid action")
        return out

    def act_batch(
        self,
        observations: Sequence[Any],
        histories: Sequence[Sequence[str]] | None = None,
        instructions: Sequence[str] | None = None,
    ) -> list[AgentOutput]:
        """One output per observation, from a single batched model call.

        Args:
            observations: one per env.
            histories: per-env action histories; defaults to this agent's own history for every env.
            instructions: per-env instructions; defaults to each observation's ``instruction`` or the one
                given to :meth:`reset`.
        """
        groups = self.sample_groups(observations, 1, histories, instructions)
        return [group[0] for group in groups]

    def sample_groups(
        self,
        observations: Sequence[Any],
        num_samples: int,
        histories: Sequence[Sequence[str]] | None = None,
        instructions: Sequence[str] | None = None,
    ) -> list[list[AgentOutput]]:
        """``num_samples`` outputs per observation (a GRPO group each), from one batched model call."""
        contexts = [
            self._context(
                obs,
                histories[i] if histories is not None else None,
                instructions[i] if instructions else None,
            )
            for i, obs in enumerate(observations)
        ]
        formats = [self._format(obs) for obs in observations]
        conversations = [fmt.messages(ctx) for fmt, ctx in zip(formats, contexts, strict=True)]
        images = [_images(ctx) for ctx in contexts]
        sampling = replace(self.sampling, num_samples=num_samples)
        generations = self.generator.generate(conversations, images if self.use_images else None, sampling)
        return [
            [self._output(gen, fmt, obs) for gen in gens]
            for gens, fmt, obs in zip(generations, formats, observations, strict=True)
        ]

    # ----- helpers ------------------------------------------------------------------------------------
    def _format(self, observation: Any) -> OutputFormat:
        return self.output_format if self.output_format is not None else auto_format(observation)

    def _context(
        self, observation: Any, history: Sequence[str] | None, instruction: str | None
    ) -> PromptContext:
        has_shot = isinstance(observation, Mapping) and isinstance(observation.get("screenshot"), np.ndarray)
        return PromptContext(
            observation=observation,
            instruction=instruction or instruction_of(observation, self.instruction),
            history=list(self.history if history is None else history),
            with_image=self.use_images and has_shot,
            info=self.info,
        )

    def _output(self, gen: Generation, fmt: OutputFormat, observation: Any) -> AgentOutput:
        action, error = fmt.parse(gen.text, observation)
        return AgentOutput(
            action=action,
            text=gen.text,
            token_ids=gen.token_ids,
            logprobs=gen.logprobs,
            parse_error=f"{error.code}: {error.message}" if error is not None else None,
            extra={"prompt": gen.prompt, "finish_reason": gen.finish_reason, **gen.extra},
        )


def _images(ctx: PromptContext) -> list[Any]:
    if not ctx.with_image:
        return []
    return [ctx.observation["screenshot"]]
