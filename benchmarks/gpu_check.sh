#!/usr/bin/env bash
# GRPO on one GPU, a short check (under 5 minutes): a few steps of a small Qwen2.5-VL configuration (random
# weights built from a config, no download) on ClickGrid-v0 screenshots, in bf16, through `accelerate launch`.
# Prints tokens/s and peak GPU memory. Arguments go to benchmarks/gpu_check.py (see --help), e.g. the CPU
# smoke run that tests/trainers/test_gpu_check.py does in-process:
#   bash benchmarks/gpu_check.sh --device cpu --dtype float32 --size tiny --steps 1
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=${GPU_CHECK_OUT:-$(mktemp -d -t gpu-check-XXXXXX)}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# Built before the launch, so that every process of a multi-process launch loads the same saved model.
"$PY" benchmarks/gpu_check.py --build-only --out "$OUT" "$@"
"$PY" -m accelerate.commands.launch --num_processes 1 --num_machines 1 --mixed_precision no --dynamo_backend no \
  benchmarks/gpu_check.py --out "$OUT" "$@"
