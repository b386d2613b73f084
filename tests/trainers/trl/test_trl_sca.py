"""SCA advantages computed inside TRL equal ``trainers.advantages``' on the same groups (issue 25, TRL path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("trl")

from trainers.advantages import GroupBatch, get_estimator  # noqa: E402
from trainers.trl.config import GuiGymTRLConfig  # noqa: E402


@pytest.fixture(scope="module")
def tool_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trainers.trl.tiny import build_tool_causal_lm

    return build_tool_causal_lm(tmp_path_factory.mktemp("tool-lm"))


def test_sca_advantages_inside_trl_equal_guigym_s(tool_lm: Path, tmp_path: Path) -> None:
    import torch
    from transformers import AutoTokenizer
    from trl import GRPOConfig

    from trainers.trl.sca import SCAGRPOTrainer
    from trainers.trl.train import build_trainer

    torch.set_num_threads(1)
    config = GuiGymTRLConfig(env_id="ClickGrid-v0", action_mode="text", output_format="cell", rewards=["env"],
                             estimator="sca", seeds=[0, 64])  # fmt: skip
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=32, num_generations=8, max_completion_length=2,
        max_steps=2, learning_rate=1e-3, beta=0.0, logging_steps=1, report_to="none", save_strategy="no",
        use_cpu=True, seed=0, bf16=False, gradient_checkpointing=False, disable_tqdm=True, temperature=1.0,
    )  # fmt: skip
    trainer = build_trainer(
        config, args, str(tool_lm), AutoTokenizer.from_pretrained(tool_lm, padding_side="left")
    )
    assert isinstance(trainer, SCAGRPOTrainer)
    seen: list[dict[str, Any]] = []
    inner = trainer._generate_and_score_completions

    def spy(inputs):  # noqa: ANN001, ANN202
        out = inner(inputs)
        envs = trainer.environments
        seen.append(
            {
                "advantages": out["advantages"].detach().numpy().copy(),
                "points": [e.episode.first_point for e in envs],
                "boxes": [e.episode.box for e in envs],
                "success": [e.episode.success for e in envs],
                "rewards": trainer._last_rewards_per_func[:, 0].numpy().copy(),
                "logged": list(trainer._logs["advantages"])[-len(envs) :],
            }
        )
        return out

    trainer._generate_and_score_completions = spy
    trainer.train()
    assert len(seen) == 2
    for batch in seen:
        n, b = 8, len(batch["points"])
        coords = np.array([p if p is not None else (np.nan, np.nan) for p in batch["points"]]).reshape(
            b // n, n, 2
        )
        boxes = np.array(
            batch["boxes"][::n], dtype=np.float64
        )  # the group's target box, from its first rollout
        success = np.array(batch["success"]).reshape(-1, n)
        expected = get_estimator("sca")(GroupBatch(batch["rewards"].reshape(-1, n), success, coords, boxes))
        np.testing.assert_allclose(batch["advantages"], expected.reshape(-1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(batch["logged"], expected.reshape(-1), rtol=1e-5, atol=1e-6)  # the table
        assert np.array_equal(success.reshape(-1), batch["rewards"] > 0)  # reward "env" is the verdict
    stacked = np.concatenate([s["advantages"] for s in seen])
    assert np.any(stacked != 0)  # some group had differing clicks: the check compares non-trivial credit
    # An all-miss group gets SCA's proximity credit where TRL's own GRPO advantage is 0: SCA was in effect.
    all_miss = [
        s["advantages"].reshape(-1, 8)[~np.array(s["success"]).reshape(-1, 8).any(axis=1)] for s in seen
    ]
    assert any(np.any(a != 0) for a in all_miss)
