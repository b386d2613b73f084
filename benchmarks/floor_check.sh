#!/usr/bin/env bash
# guigym's tests of the modules the GPU check uses, on the lowest versions pyproject.toml declares for them: the
# GPU image's torch 2.11 and transformers 5.17 (with its accelerate 1.15, huggingface-hub 1.33, tokenizers
# 0.23.2, safetensors 0.8.0: benchmarks/gpu_wheels.py IMAGE_VERSIONS) and the carried wheels (gymnasium, TRL,
# datasets: .gpu-wheels, from 'python benchmarks/gpu_wheels.py download'), in a second virtual environment.
#   bash benchmarks/floor_check.sh                 # FLOOR_VENV (default .venv-floor, ignored by git) is made once
#   FLOOR_VENV=/work/venv-old bash benchmarks/floor_check.sh -x -q    # extra arguments go to pytest
# Torch and torchvision: the CPU builds from PyTorch's index where it is reachable; otherwise PyPI's CUDA builds
# (the image's own) without their dependencies, plus the CUDA libraries libtorch_cuda.so links (about 2 GiB
# installed, from pip's configured index or find-links): torch then imports and runs on the CPU. Python is this machine's python3 (the
# image's is 3.12; numpy's recorded 2.5.2 needs 3.12, so numpy is left to pip).
# Then runs the tests below, and the CPU dry run of gpu_check.sh with this venv's Python (its image stand-in
# then holds these versions).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${FLOOR_VENV:-.venv-floor}
PY=${PYTHON:-python3}
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
VPY="$VENV/bin/python"
pins() {  # the image's recorded versions of the named packages, as pip requirements
  "$PY" -c "import sys; sys.path.insert(0, 'benchmarks'); import gpu_wheels as g
print(' '.join(f'{n}=={g.IMAGE_VERSIONS[n]}' for n in sys.argv[1:]))" "$@"
}
TORCH=$(pins torch)
VISION=$(pins torchvision)  # the image has it: gpu_check.py then builds the full Qwen2.5-VL processor, as there
if ! "$VPY" -c "import torch, torchvision, sys
sys.exit(torch.__version__.split('+')[0] != '${TORCH#torch==}' or torchvision.__version__.split('+')[0] != '${VISION#torchvision==}')" \
    2>/dev/null; then
  "$VPY" -m pip install --quiet --timeout 20 --retries 0 "$TORCH" "$VISION" \
    --index-url https://download.pytorch.org/whl/cpu \
    || {
      # The CUDA build, with the libraries libtorch_cuda.so needs at import (readelf -d: NEEDED), none of it used.
      "$VPY" -m pip install --quiet --no-deps "$TORCH" "$VISION"
      "$VPY" -m pip install --quiet --no-deps nvidia-cuda-runtime nvidia-cublas nvidia-cudnn-cu13 nvidia-cufft \
        nvidia-cufile nvidia-curand nvidia-cusparse nvidia-cusparselt-cu13 nvidia-nccl-cu13 nvidia-nvjitlink \
        nvidia-nvshmem-cu13
      "$VPY" -m pip install --quiet filelock "typing-extensions>=4.10" "setuptools<82" "sympy>=1.13.3" networkx \
        jinja2 fsspec
    }
fi
# The image's versions; the rest of what the tests import at whatever pip resolves (torch stays as installed);
# playwright (no browser) because the memory plan reads GuiWebGround-v0's screen size from its class.
"$VPY" -m pip install --quiet $(pins transformers accelerate huggingface-hub tokenizers safetensors) pyyaml pillow \
  scipy rich tqdm typer pytest pytest-timeout hypothesis pyarrow pandas psutil matplotlib tensorboard peft xxhash \
  cloudpickle requests playwright greenlet -c <("$VPY" -c "import torch; print('torch==' + torch.__version__.split('+')[0])")
"$PY" benchmarks/gpu_wheels.py download
"$VPY" -m pip install --quiet --no-index --no-deps --find-links .gpu-wheels \
  $("$PY" -c "import sys; sys.path.insert(0, 'benchmarks'); import gpu_wheels as g; print(' '.join(g.WHEELS))")
"$VPY" -c "import torch, transformers, accelerate, trl, gymnasium, datasets
print('floor_check:', *(f'{m.__name__} {m.__version__}' for m in (torch, transformers, accelerate, trl, gymnasium, datasets)))"

# The modules the GPU check runs: ClickBox, the memory plan, master weights, the VLM path of GRPO on ClickBox
# pixels, the hub architecture and tiny models, the GPU check's own tests (the browser ones skip: no playwright
# here), TRL's adapter, and the dry run itself.
PYTHONPATH="$PWD" "$VPY" -m pytest -p no:cacheprovider "$@" \
  tests/gui_envs/grid/test_click_box.py tests/trainers/test_memory_plan.py tests/trainers/test_precision.py \
  tests/trainers/test_grpo_pixels.py tests/agents/test_hub_configs.py tests/agents/test_tiny_models.py \
  tests/trainers/test_gpu_check.py tests/trainers/trl/test_trl_gpu_check.py tests/trainers/trl/test_trl_sca.py \
  tests/trainers/test_gpu_check_dry_run.py
