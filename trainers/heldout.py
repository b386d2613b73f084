"""Held-out evaluation: a split of env reset seeds the trainer never trains on, and greedy / sampled success on it.

Training-rollout success says how well a policy does on what it is being trained on; on an env with few distinct
prompts that is a lookup table. A held-out split of seeds (on an env that draws its layout from the seed, such
as ``ClickBox-v0``) says whether the skill carries over to layouts the policy never saw. The split is checked
against the training seed stream before any work, and evaluated with the same rollout machinery as training
(:func:`trainers.rollout.collect_groups`), greedily (temperature 0) and at the training temperature.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch

from trainers.config_io import ConfigError
from trainers.rollout import RolloutConfig, collect_groups

#: The metric names an evaluation writes into the run log.
EVAL_KEYS = ("eval_greedy_success", "eval_sampled_success")


class SplitOverlapError(ConfigError):
    """The held-out evaluation seeds overlap the training seed stream."""


def resolve_seeds(spec: Sequence[int] | Mapping[str, int] | None) -> list[int]:
    """The evaluation seeds named by ``spec``: a list of seeds, ``{"start": s, "count": n}`` (seeds ``s .. s+n-1``)
    or ``None`` (no split: ``[]``). Raises :class:`ConfigError` for anything else.

    >>> resolve_seeds({"start": 10, "count": 3})
    [10, 11, 12]
    """
    if spec is None:
        return []
    if isinstance(spec, Mapping):
        if set(spec) != {"start", "count"}:
            raise ConfigError(f"eval_seeds as a mapping needs exactly the keys start and count, got {sorted(spec)}")
        start, count = spec["start"], spec["count"]
        if not (isinstance(start, int) and isinstance(count, int) and start >= 0 and count >= 1):
            raise ConfigError(f"eval_seeds: start must be an int >= 0 and count an int >= 1, got {dict(spec)}")
        return list(range(start, start + count))
    seeds = list(spec)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise ConfigError(f"eval_seeds must be a non-empty list of ints >= 0 or {{start, count}}, got {spec!r}")
    if len(set(seeds)) != len(seeds):
        raise ConfigError("eval_seeds lists a seed twice: each held-out seed is evaluated once")
    return seeds


def check_disjoint(seed_start: int, num_train_seeds: int, eval_seeds: Sequence[int]) -> None:
    """Raise :class:`SplitOverlapError` when an evaluation seed is in ``[seed_start, seed_start + num_train_seeds)``."""
    end = seed_start + num_train_seeds
    shared = sorted(s for s in eval_seeds if seed_start <= s < end)
    if shared:
        shown = ", ".join(map(str, shared[:5])) + (f", ... ({len(shared)} in all)" if len(shared) > 5 else "")
        raise SplitOverlapError(
            f"eval_seeds overlap the training seeds {seed_start}..{end - 1} (seed_start={seed_start}, "
            f"num_train_seeds={num_train_seeds}) at {shown}: move the split out, e.g. "
            f"eval_seeds={{start: {end}, count: {len(eval_seeds)}}}, or lower num_train_seeds / raise seed_start"
        )


def check_no_overlap(train: Iterable[Hashable], held_out: Iterable[Hashable], what: str, hint: str = "") -> None:
    """Raise :class:`SplitOverlapError` when an item of ``held_out`` is also in ``train``.

    For splits that are not a seed range: task templates, ``(template, seed)`` task keys, episode ids, apps.
    ``what`` names the items in the message (``"task templates"``), ``hint`` says how to fix the config.
    """
    train_set = set(train)
    shared = sorted((x for x in dict.fromkeys(held_out) if x in train_set), key=str)
    if shared:
        shown = ", ".join(map(str, shared[:5])) + (f", ... ({len(shared)} in all)" if len(shared) > 5 else "")
        raise SplitOverlapError(
            f"the held-out {what} overlap the training {what} at {shown}" + (f": {hint}" if hint else "")
        )


def evaluate(
    workers: Any, agent: Any, seeds: Sequence[int], samples: int, rollout: RolloutConfig
) -> dict[str, tuple[int, int]]:
    """Held-out hits on ``seeds``: ``{metric: (hits, episodes)}`` for :data:`EVAL_KEYS` (sampled only when
    ``samples > 0``), so ranks can sum their shares before dividing.

    The greedy pass sets the agent's temperature to 0 for its duration; the sampled pass draws ``samples``
    rollouts per seed at the agent's own sampling settings. Torch's random state is restored afterwards, so a
    run with evaluation draws the same training samples as one without.
    """
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    out: dict[str, tuple[int, int]] = {}
    if not seeds:
        return out
    with torch.random.fork_rng(devices=devices):
        sampling = agent.sampling
        agent.sampling = replace(sampling, temperature=0.0)
        try:
            greedy = [t for grp in collect_groups(workers, agent, seeds, 1, rollout) for t in grp]
        finally:
            agent.sampling = sampling
        out[EVAL_KEYS[0]] = (sum(bool(t.success) for t in greedy), len(greedy))
        if samples > 0:
            drawn = [t for grp in collect_groups(workers, agent, seeds, samples, rollout) for t in grp]
            out[EVAL_KEYS[1]] = (sum(bool(t.success) for t in drawn), len(drawn))
    return out


# ----- for trainers that do not roll out while training (SFT, DPO) -------------------------------------------


def due(done: int, every: int, total: int) -> bool:
    """Whether an evaluation follows optimiser step ``done`` (1-based) of ``total``: every ``every`` steps
    (0: never in between) and after the last."""
    return done == total or (every > 0 and done % every == 0)


def held_out_row(step: int, counts: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    """The log record of one evaluation: ``step`` and each metric's share of hits (metrics without episodes are
    left out)."""
    row: dict[str, Any] = {"step": step}
    for key, (hits, total) in counts.items():
        if total:
            row[key] = hits / total
    return row


class EnvHeldOut:
    """Held-out success of a generator's policy, for trainers that learn from data rather than from their own
    rollouts (SFT, DPO): the policy is run in fresh copies of the env at the held-out seeds, with the rollout
    machinery GRPO uses (:func:`evaluate`).

    Args:
        gen: the trainer's :class:`agents.hf_agent.HFGenerator`; its current ``model`` is what is evaluated.
        env_id: registered gymnasium id.
        env_kwargs: its constructor arguments.
        seeds: the held-out reset seeds.
        samples: sampled rollouts per seed besides the greedy one (0: greedy only).
        output_format: the prompt/answer format the policy is trained for (an object or a name).
        temperature: sampling temperature of the sampled pass (> 0).
        max_new_tokens: completion budget per step, in tokens.
        max_steps: step cap per episode.
        num_envs: env copies the episodes are scheduled over.
        swap: also run the swap test (:mod:`trainers.swap_test`; MiniWoB envs) at each evaluation.
    """

    def __init__(
        self,
        gen: Any,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        seeds: Sequence[int],
        samples: int,
        output_format: Any,
        *,
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        max_steps: int = 1,
        num_envs: int = 8,
        swap: bool = False,
    ) -> None:
        import gymnasium as gym

        import gui_envs  # noqa: F401  (registers the ids)
        from agents.generation import SamplingParams
        from agents.lm_agent import LMAgent
        from trainers.rollout import make_workers

        self.seeds = list(seeds)
        self.samples = samples
        self.swap = swap
        self.model = gen.model
        sampling = SamplingParams(temperature=temperature, max_new_tokens=max_new_tokens)
        self.agent = LMAgent(gen, output_format, sampling, name="held-out")
        n = max(1, min(num_envs, len(self.seeds) * max(1, samples)))
        self.workers = make_workers([gym.make(env_id, **dict(env_kwargs)) for _ in range(n)])
        self.rollout = RolloutConfig(max_steps=max_steps, progress=False, record_screenshots=self.agent.use_images)

    def __call__(self, step: int) -> dict[str, Any]:
        """Evaluate now; the record ``{"step": step, "eval_greedy_success": ..., "eval_sampled_success": ...}``.

        The model is put in eval mode for the rollouts and back in the mode it was in; torch's random state is
        restored (:func:`evaluate`), so the training path is that of a run without evaluation.
        """
        model = self.agent.generator.model
        training = bool(getattr(model, "training", False))
        model.eval()
        try:
            counts = evaluate(self.workers, self.agent, self.seeds, self.samples, self.rollout)
            if self.swap:
                from trainers.swap_test import swap_test

                counts.update(swap_test(self.workers, self.agent, self.seeds))
        finally:
            model.train(training)
        return held_out_row(step, counts)

    def close(self) -> None:
        self.workers.close()


def held_out_summary(evals: Sequence[Mapping[str, Any]], num_seeds: int, unit: str = "step") -> str | None:
    """The line ``guigym train`` prints at the end: the last evaluation's greedy (and sampled) success beside the
    first's, ``None`` without evaluations.

    >>> held_out_summary([{"step": 0, "eval_greedy_success": 0.1}, {"step": 5, "eval_greedy_success": 0.5,
    ...                   "eval_sampled_success": 0.4}], 10)
    'held-out (10 seeds) after step 5: greedy success 0.500 (step 0: 0.100), sampled 0.400'
    """
    rows = [e for e in evals if EVAL_KEYS[0] in e]
    if not rows:
        return None
    first, final = rows[0], rows[-1]
    sampled = final.get(EVAL_KEYS[1])
    return (
        f"held-out ({num_seeds} seeds) after {unit} {final['step']}: greedy success {final[EVAL_KEYS[0]]:.3f} "
        f"({unit} {first['step']}: {first[EVAL_KEYS[0]]:.3f})" + (f", sampled {sampled:.3f}" if sampled is not None else "")
    )
