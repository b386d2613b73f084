"""Entry point for the multi-process test: ``accelerate launch ... accelerate_entry.py CONFIG [KEY=VALUE ...]``.

Runs GRPO and saves each rank's trainable weights to ``<output_dir>/weights-rank<r>.pt``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from trainers.grpo import train
from trainers.grpo_config import GRPOConfig
from trainers.policy_setup import trainable_state

if __name__ == "__main__":
    from accelerate import PartialState

    config = GRPOConfig.from_yaml(sys.argv[1], sys.argv[2:])
    model = train(config)["model"]
    torch.save(trainable_state(model), Path(config.output_dir) / f"weights-rank{PartialState().process_index}.pt")
