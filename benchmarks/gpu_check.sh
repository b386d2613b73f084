#!/usr/bin/env bash
# GRPO at real size on one GPU: the 3B SSL and SCA configs (configs/grpo_{ssl,sca}_qwen25vl3b_webground.yaml, Qwen2.5-VL-3B's
# architecture with random weights, built once from agents.hub_configs: nothing is downloaded) for 3 optimiser steps each at
# their own batch (SSL 16 groups x 8, SCA 16 x 5), completion budget (256 tokens), dtype, KL reference and GuiWebGround-v0
# screenshots (1280x720). Each run prints seconds of rollout, scoring and update per step, generated tokens/s, the peak
# memory torch allocated in the rollout and in the update, and the device's peak used memory (benchmarks/gpu_check.py).
# Samplers: Hugging Face generate ("hf"), and the colocated vLLM engine ("vllm") when vLLM is installed (guigym[vllm]);
# DECODERS="vllm" (or "hf") runs one of them. Each run is its own `accelerate launch` process (a vLLM engine is not torn
# down cleanly inside a process).
#
# Time on one H200, estimated (not measured: no GPU was reachable when this was written), per run = start-up + 3 steps:
#   start-up: imports, loading the policy and the KL reference (2 x 7.5 GB bf16), Chromium: ~40 s (vLLM: +60-90 s engine
#     start with CUDA-graph capture).
#   rollout per step: 128 GuiWebGround resets at ~0.15-0.35 s each (the envs step one after another) = 20-45 s, plus
#     sampling 8 waves of 16 rollouts (num_envs 16) x 256 tokens: HF generate at ~25 ms per token step = ~50 s;
#     vLLM at ~4 ms = ~8 s.
#   update per step: 128 x ~1,450 tokens forward + backward through 3.75B parameters with recomputation
#     (~6e15 FLOP) at ~40% of bf16 peak, plus the old and reference log-probs: ~20-30 s.
#   SSL: hf ~40 + 3 x 115 = ~6.5 min; vllm ~120 + 3 x 70 = ~5.5 min. SCA (80 rollouts): hf ~4.5 min; vllm ~4.5 min.
#   Total: ~11 min without vLLM; ~21 min with both samplers; DECODERS=vllm ~10 min. Building the model once adds ~1 min.
# The first step of each run also pays CUDA's and Chromium's warm-up; the table gives every step.
#
# The CPU smoke of the same path (tests/trainers/test_gpu_check.py) runs benchmarks/gpu_check.py in-process with
#   --size tiny --device cpu --dtype float32 --steps 1 --set groups_per_step=2 --set group_size=2 ...
# Arguments given to this script go to every run (see python benchmarks/gpu_check.py --help), e.g. config overrides:
#   bash benchmarks/gpu_check.sh --set 'vllm_kwargs={enable_sleep_mode: true}' --set vllm_gpu_memory_utilization=0.25
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=${GPU_CHECK_OUT:-$(mktemp -d -t gpu-check-XXXXXX)}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if [[ -z "${DECODERS:-}" ]]; then
  DECODERS="hf"
  if "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('vllm') is None)"; then
    DECODERS="hf vllm"
  else
    echo "gpu_check: vLLM is not installed (pip install 'guigym[vllm]'): the vLLM sampler is not checked"
  fi
fi
CONFIGS=(configs/grpo_ssl_qwen25vl3b_webground.yaml configs/grpo_sca_qwen25vl3b_webground.yaml)

# Built before the launches, once: both configs name Qwen/Qwen2.5-VL-3B-Instruct.
"$PY" benchmarks/gpu_check.py --build-only --out "$OUT" --config "${CONFIGS[0]}" "$@"
for config in "${CONFIGS[@]}"; do
  for decoder in $DECODERS; do
    "$PY" -m accelerate.commands.launch --num_processes 1 --num_machines 1 --mixed_precision no --dynamo_backend no \
      benchmarks/gpu_check.py --out "$OUT" --config "$config" --decoder "$decoder" "$@"
  done
done

# --- TRL path, one GPU (issue 25, item 6) ----------------------------------------------------------------------------------
# The TRL engine's one-GPU check (trainers/trl/, built in another change) is called here, on the same configs, with the
# same table; it is not part of this script yet.
