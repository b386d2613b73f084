"""SCA credit inside TRL: a ``GRPOTrainer`` whose advantages are guigym's spatial credit (seed 001, section 4.1).

Where TRL computes advantages: inline in ``GRPOTrainer._generate_and_score_completions``, right after
``_calculate_rewards`` returns the rewards of the whole batch (gathered over processes) and before the batch
is cut to this process's slice; there is no hook of its own. The smallest override that survives TRL's
releases is therefore a wrapper around those two methods, never a copy of either:

* ``_calculate_rewards`` (one line more than TRL's): keep the gathered ``(B, F)`` reward matrix it returns;
* ``_generate_and_score_completions`` (a few lines more): call TRL's, then replace the ``"advantages"`` entry of
  its output (this process's ``(B_local,)`` slice) with SCA's credits for the same rollouts.

Both are named seams whose contracts (the reward matrix; the output dict with per-sequence ``advantages``
sliced by ``process_index``) are simpler than the body around them, which changes with most releases (tool
loops, importance sampling, multi-objective aggregation); a copy of that body would have to follow every one.
Everything TRL computes besides the advantage (log-probs, importance ratios, metrics) stays TRL's. Tested
against TRL 1.16 (``tests/trainers/trl/test_trl_sca.py``). TRL's ``reward_weights`` weigh the rewards as in TRL.

What SCA reads, per rollout (:class:`trainers.trl.env.Episode`): the first action's click point (screenshot
pixels; NaN when it had none), the env's verdict, and each group's privileged target box at reset; the reward
is the weighted sum of the reward functions. Groups are TRL's: ``num_generations`` consecutive rollouts of one
prompt in the gathered batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from trl import GRPOTrainer

from trainers.advantages import GroupBatch, get_estimator
from trainers.trl.env import Episode


def group_batch_from_episodes(
    episodes: list[Episode], rewards: np.ndarray, success: np.ndarray | None, num_generations: int
) -> GroupBatch:
    """The :class:`trainers.advantages.GroupBatch` of ``B = G * N`` rollouts in TRL's order (``N`` =
    ``num_generations`` consecutive rollouts per group): rewards ``(G, N)``, successes, first clicks
    ``(G, N, 2)`` in pixels (NaN: no point) and each group's box ``(G, 4)`` from its first rollout."""
    b = len(episodes)
    g = b // num_generations
    coords = np.full((b, 2), np.nan)
    boxes = np.full((b, 4), np.nan)
    for i, ep in enumerate(episodes):
        if ep.first_point is not None:
            coords[i] = ep.first_point
        if ep.box is not None:
            boxes[i] = ep.box
    if success is None:
        success = np.array([ep.success for ep in episodes])
    return GroupBatch(
        np.asarray(rewards, dtype=np.float64).reshape(g, num_generations),
        np.asarray(success).reshape(g, num_generations),
        coords.reshape(g, num_generations, 2),
        boxes.reshape(g, num_generations, 4)[:, 0],
    )


class SCAGRPOTrainer(GRPOTrainer):
    """TRL's ``GRPOTrainer`` with guigym's ``sca`` estimator in place of TRL's group normalisation (see the
    module docstring for which methods it wraps and why).

    Args:
        *args, **kwargs: ``GRPOTrainer``'s; ``environment_factory`` must build
            :class:`trainers.trl.env.GuiGymEnvironment` objects (they record the clicks SCA reads).
        sca_kwargs: fields of :class:`rewards.sca_config.SCAConfig`.
    """

    def __init__(self, *args: Any, sca_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sca_kwargs = dict(sca_kwargs or {})
        self._sca_estimator = get_estimator("sca")
        self._last_rewards_per_func: torch.Tensor | None = None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # noqa: ANN001, ANN202
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._last_rewards_per_func = rewards_per_func  # (B_global, F), gathered over processes
        return rewards_per_func

    def _generate_and_score_completions(self, inputs):  # noqa: ANN001, ANN202
        output = super()._generate_and_score_completions(inputs)
        if self.environments is None or self._last_rewards_per_func is None:
            raise RuntimeError("SCAGRPOTrainer needs an environment_factory of guigym environments")
        credits = self.sca_credits(self._last_rewards_per_func)  # (B,), the whole gathered batch
        b_local = len(self.environments)
        start = self.accelerator.process_index * b_local
        like = output["advantages"]
        output["advantages"] = torch.as_tensor(
            credits[start : start + b_local], dtype=like.dtype, device=like.device
        )
        # TRL logged its own advantages for the completions table; show the ones trained on instead.
        logged = self._logs["advantages"]
        for i, value in enumerate(credits.tolist()):
            logged[len(logged) - len(credits) + i] = value
        return output

    def sca_credits(self, rewards_per_func: torch.Tensor) -> np.ndarray:
        """The ``(B,)`` SCA advantages of the whole batch, in TRL's gathered order, from the gathered ``(B, F)``
        rewards and the rollout slots' episodes (gathered the same way)."""
        device = rewards_per_func.device
        weights = self.reward_weights.to(device)
        rewards = torch.nansum(rewards_per_func * weights.unsqueeze(0), dim=1)  # (B,), as TRL sums them
        episodes = [env.episode for env in self.environments]
        local = torch.tensor(
            [
                [
                    *(ep.first_point if ep.first_point is not None else (np.nan, np.nan)),
                    *(ep.box if ep.box is not None else (np.nan,) * 4),
                    float(ep.success),
                ]
                for ep in episodes
            ],
            dtype=torch.float64,
            device=device,
        )  # (B_local, 7): click x, y; box x0, y0, x1, y1; success
        table = self.accelerator.gather(local).cpu().numpy()  # (B, 7)
        merged = [
            Episode(
                first_point=None if np.isnan(r[0]) else (r[0], r[1]),
                box=None if np.isnan(r[2]) else tuple(r[2:6]),
            )
            for r in table
        ]
        mode = "train" if self.model.training else "eval"
        n = self.num_generations if mode == "train" else self.num_generations_eval
        batch = group_batch_from_episodes(merged, rewards.double().cpu().numpy(), table[:, 6] > 0.5, n)
        credits = self._sca_estimator(batch, **self.sca_kwargs)  # (G, N)
        return np.asarray(credits, dtype=np.float64).reshape(-1)  # (B,)
