#!/usr/bin/env bash
# GRPO at real size on one GPU: the 3B SSL and SCA configs (configs/grpo_{ssl,sca}_qwen25vl3b_webground.yaml, Qwen2.5-VL-3B's
# architecture with random weights, built once from agents.hub_configs: nothing is downloaded) for 3 optimiser steps each at
# their own batch (SSL 16 groups x 8, SCA 16 x 5), completion budget (256 tokens), dtype, KL reference and GuiWebGround-v0
# screenshots (1280x720). Each run prints seconds of rollout, scoring and update per step, generated tokens/s, the peak
# memory torch allocated in the rollout and in the update, and the device's peak used memory (benchmarks/gpu_check.py).
# Samplers: Hugging Face generate ("hf") and the colocated vLLM engine ("vllm", guigym[vllm]). By default each config
# runs once, with vLLM when it is installed, else with hf (one sampler keeps the default run short; see the time
# below); DECODERS="hf vllm" runs both, DECODERS="hf" or "vllm" one of them. Each run is its own `accelerate launch`
# process (a vLLM engine is not torn down cleanly inside a process).
# Then the TRL path on one GPU (benchmarks/trl_gpu_check.py, configs/trl/grpo_guiweb_gpu_check.yaml): TRL's GRPOTrainer
# through trainers.trl on GuiWeb-v0 (tools mode, the env's verdict), Qwen2.5-VL-3B's text architecture (3.09B
# parameters, random weights, fp32 weights under bf16 autocast, gradient checkpointing), vLLM colocated when installed
# else HF generate, 3 steps of 32 rollouts (4 prompts x 8) up to 512 completion tokens. TRL=0 skips it; TRL_ARGS adds
# its options (e.g. TRL_ARGS="--set trl.max_completion_length=1024").
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
#   TRL: start-up ~20 s imports + ~10 s loading 3.09B parameters in fp32 + ~10 s opening 32 browser contexts (vLLM:
#     +60-90 s engine start); per step 32 GuiWeb resets at ~0.2 s = ~7 s, sampling 32 x 512 tokens (a random model
#     runs to the budget) with HF generate at ~25-30 ms per token step = ~15 s (vLLM ~4 s plus ~4 s waking the
#     engine and loading the new weights), the update over 32 x ~2,300 tokens with recomputation (~1.8e15 FLOP)
#     plus AdamW: ~7 s. hf ~40 + 3 x 30 = ~2.2 min; vllm ~115 + 3 x 25 = ~3.2 min. Building its model once: ~30 s.
#   Total of the default run: ~15 min either way (without vLLM: 1 + 11 + 0.5 + 2.2; with it: 1 + 10 + 0.5 + 3.2),
#   over the 10 minutes issue 25 asks for, even with one sampler per config: the GRPO configs' real batch (128 and
#   80 rollouts of GuiWebGround screenshots per step, resets one after another) is most of it. TRL=0 saves ~3 min;
#   DECODERS="hf vllm" adds ~10 min.
# The first step of each run also pays CUDA's and Chromium's warm-up; the table gives every step.
#
# The CPU smoke of the same path (tests/trainers/test_gpu_check.py) runs benchmarks/gpu_check.py in-process with
#   --size tiny --device cpu --dtype float32 --steps 1 --set groups_per_step=2 --set group_size=2 ...
# and the TRL check's (tests/trainers/trl/test_trl_gpu_check.py) runs benchmarks/trl_gpu_check.py --quick (the same
#   run file, its architecture cut to 2 layers of width 64, 1 step of 2 rollouts on CPU).
# Arguments given to this script go to every GRPO run (see python benchmarks/gpu_check.py --help; the TRL check takes
# TRL_ARGS), e.g. config overrides:
#   bash benchmarks/gpu_check.sh --set 'vllm_kwargs={enable_sleep_mode: true}' --set vllm_gpu_memory_utilization=0.25
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=${GPU_CHECK_OUT:-$(mktemp -d -t gpu-check-XXXXXX)}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if [[ -z "${DECODERS:-}" ]]; then
  DECODERS="hf"
  if "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('vllm') is None)"; then
    DECODERS="vllm"
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
# One plain process: TRL sets up the single-process rendezvous its colocated vLLM engine needs. The model folder
# (Qwen2.5-VL-3B's text architecture, random weights) is built into the same output folder.
if [[ "${TRL:-1}" != 0 ]]; then
  # shellcheck disable=SC2086  # TRL_ARGS is a list of options
  "$PY" benchmarks/trl_gpu_check.py --out "$OUT" ${TRL_ARGS:-}
fi
