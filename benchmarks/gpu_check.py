"""A few GRPO steps of a small real VLM configuration on a grounding env with screenshots: tokens/s, peak memory.

The model is a Qwen2.5-VL (the real architecture: windowed vision attention, M-RoPE) built from a config with
random weights (:func:`agents.tiny_models.build_vlm`, sizes ``VLM_SIZES``; nothing is downloaded, so it runs on a machine
without internet). The env is ``ClickGrid-v0`` with ``--cell-px`` pixel cells: the policy reads the
screenshot through the processor and answers a cell; the reward is ``continuous`` (SSL's proximity to the
target box), the estimator ``grpo``. Everything else is :func:`trainers.grpo.train` as a user runs it.

``benchmarks/gpu_check.sh`` runs it through ``accelerate launch`` on one GPU in bf16; a CPU test
(``tests/trainers/test_gpu_check.py``) runs this same ``main`` with ``--device cpu --dtype float32 --size tiny``.
Printed per step: seconds of rollout and update, generated tokens, generation tokens/s (generated tokens
over rollout seconds) and step tokens/s (over the whole step); then the median over the steps after the first
(which pays for CUDA's start-up) and the peak GPU memory (``torch.cuda.max_memory_allocated``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="small", choices=("tiny", "small"), help="model size preset")
    parser.add_argument("--device", default="cuda", help="torch device (cuda or cpu)")
    parser.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    parser.add_argument("--steps", type=int, default=5, help="GRPO optimiser steps")
    parser.add_argument("--groups", type=int, default=2, help="groups (seeds) per step")
    parser.add_argument("--group-size", type=int, default=4, help="rollouts per group")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="completion budget, tokens")
    parser.add_argument(
        "--cell-px", type=int, default=112, help="ClickGrid cell size; the screenshot is 3x this, pixels"
    )
    parser.add_argument(
        "--out", default=None, help="folder for the model and the run (default: a temporary one)"
    )
    parser.add_argument("--build-only", action="store_true", help="build and save the model, then exit")
    return parser.parse_args(argv)


def build(out: Path, size: str) -> Path:
    """The model folder ``out/model-<size>``, built once."""
    from agents.tiny_models import build_vlm

    path = out / f"model-{size}"
    if not (path / "config.json").is_file():
        build_vlm(path, size)
    return path


def run(args: argparse.Namespace, model: Path, out: Path) -> list[dict[str, Any]]:
    """GRPO as configured by ``args``; the per-step history."""
    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    config = GRPOConfig(
        model=str(model), env_id="ClickGrid-v0", env_kwargs={"cell_px": args.cell_px}, output_format="cell",
        reward="continuous", estimator="grpo", group_size=args.group_size, groups_per_step=args.groups,
        num_envs=args.groups * args.group_size, num_steps=args.steps, max_new_tokens=args.max_new_tokens,
        learning_rate=1e-6, device=args.device, dtype=args.dtype, output_dir=str(out / "run"), progress=False,
        plot=False,
    )  # fmt: skip
    return train(config)["history"]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    import torch

    out = Path(args.out or tempfile.mkdtemp(prefix="gpu-check-"))
    model = build(out, args.size)
    if args.build_only:
        return []
    cuda = torch.cuda.is_available() and args.device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    history = run(args, model, out)
    from accelerate import PartialState

    if not PartialState().is_main_process:
        return history
    where = torch.cuda.get_device_name() if cuda else args.device
    print(f"gpu_check: Qwen2.5-VL '{args.size}' on {where}, {args.dtype}, {args.groups}x{args.group_size} rollouts, "
          f"screenshot {3 * args.cell_px}x{3 * args.cell_px} px, up to {args.max_new_tokens} new tokens")  # fmt: skip
    print("| step | rollout s | update s | new tokens | gen tokens/s | step tokens/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    rates = []
    for r in history:
        secs = r["time_rollout"] + r["time_scoring"] + r["time_update"]
        tokens = r["completion_len"] * args.groups * args.group_size
        rates.append((r["tokens_per_s"], tokens / secs))
        print(f"| {r['step']} | {r['time_rollout']:.3f} | {r['time_update']:.3f} | {tokens:.0f} "
              f"| {r['tokens_per_s']:.1f} | {tokens / secs:.1f} |")  # fmt: skip
    timed = rates[1:] or rates
    print(f"median after the first step: {statistics.median(g for g, _ in timed):.1f} generated tokens/s, "
          f"{statistics.median(s for _, s in timed):.1f} tokens/s per whole step")  # fmt: skip
    if cuda:
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    else:
        print("peak GPU memory: n/a (no GPU in use)")
    return history


if __name__ == "__main__":
    main()
