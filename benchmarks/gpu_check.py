"""GRPO steps of a real-size guigym config on one GPU: seconds, tokens/s and peak memory per phase.

A config file (``configs/grpo_ssl_qwen25vl3b_webground.yaml`` or ``..._sca_...``) runs as a user runs it
(:func:`trainers.grpo.train`, ``GuiWebGround-v0`` screenshots, the config's reward, estimator, KL reference,
batch, completion budget, dtype and gradient checkpointing) with three changes: ``num_steps`` (default 3),
no checkpoints or plots, and the model. Nothing can be downloaded, so the model is the config's architecture
(:func:`agents.hub_configs.hub_config`: Qwen2.5-VL-3B, 3.75B parameters) with random weights, saved once to a
folder with guigym's offline tokenizer (:func:`agents.tiny_models.build_tokenizer`, 400 tokens; the model keeps
its 151,936-row embedding and output layer, so sampled ids past the tokenizer decode to nothing) and a
Qwen2.5-VL image processor at the real model's pixel limits (3,136 to 12,845,056 pixels: a 1280x720 screenshot
is about 1,200 visual tokens). A random model rarely samples its end-of-sequence token, so completions run to
the full budget: the slowest case. Text prompts tokenise into more tokens than with Qwen's tokenizer.

``--decoder`` picks the sampler: ``hf`` (Hugging Face ``generate``) or ``vllm`` (the colocated engine,
:mod:`agents.vllm_generator`). ``--size tiny`` shrinks the architecture (hidden 64, 2 layers; vision 2 blocks
of width 32; images up to 112 x 112) for the CPU smoke test of the same path
(``tests/trainers/test_gpu_check.py``).

Printed per step: seconds of rollout, scoring and update (with vLLM the update includes pushing the new weights
into the engine); generated tokens and their rate (over the rollout);
the peak memory torch allocated in the rollout and in the update (``torch.cuda.max_memory_allocated``, reset at
each phase's start); then the device's peak used memory over the run (``cudaMemGetInfo`` polled every 0.2 s:
it includes what vLLM allocates outside torch's counters, and other processes).
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
#: The real-size GRPO configs the check runs by default.
CONFIGS = ("configs/grpo_ssl_qwen25vl3b_webground.yaml", "configs/grpo_sca_qwen25vl3b_webground.yaml")
#: Qwen2.5-VL's image processor limits, pixels (the hub model's preprocessor_config.json).
MIN_PIXELS, MAX_PIXELS = 56 * 56, 28 * 28 * 16384
#: ``--size tiny``: the hub architecture cut down to a CPU-fast one (text, then vision fields).
TINY = {
    "text_config": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                    "num_key_value_heads": 2},
    "vision_config": {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 64,
                      "fullatt_block_indexes": [0, 1]},
    "max_pixels": 28 * 28 * 16,
}  # fmt: skip


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=CONFIGS[0], help="GRPO config file (a real-size one)")
    parser.add_argument("--decoder", default="hf", choices=("hf", "loop", "vllm"), help="the sampler")
    parser.add_argument(
        "--size", default="real", choices=("real", "tiny"), help="the config's architecture, or tiny"
    )
    parser.add_argument("--device", default="cuda", help="torch device (cuda or cpu)")
    parser.add_argument(
        "--dtype", default=None, help="override the config's dtype (the CPU smoke uses float32)"
    )
    parser.add_argument("--steps", type=int, default=3, help="GRPO optimiser steps")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="more config overrides (the CPU smoke cuts the batch: groups_per_step=2 ...)")  # fmt: skip
    parser.add_argument(
        "--out", default=None, help="folder for the model and the runs (default: a temporary one)"
    )
    parser.add_argument("--build-only", action="store_true", help="build and save the model, then exit")
    return parser.parse_args(argv)


def load_config(args: argparse.Namespace, model: Path, out: Path) -> Any:
    """The config file with the check's overrides (model, steps, no checkpoints, ``--set``)."""
    from trainers.grpo_config import GRPOConfig

    overrides = [f"model={model}", f"num_steps={args.steps}", f"output_dir={out / 'run'}", "save_every=0",
                 "progress=false", "plot=false", f"decoder={args.decoder}", f"device={args.device}"]  # fmt: skip
    if args.dtype:
        overrides.append(f"dtype={args.dtype}")
    return GRPOConfig.from_yaml(ROOT / args.config if not Path(args.config).is_absolute() else args.config,
                                [*overrides, *args.set])  # fmt: skip


def model_id(args: argparse.Namespace) -> str:
    """The hub id the config file names."""
    import yaml

    return str(yaml.safe_load((ROOT / args.config).read_text())["model"])


def build(model: str, out: Path, size: str, device: str) -> Path:
    """``model``'s architecture with random weights and guigym's offline processor, saved once under ``out``."""
    import torch
    from transformers import AutoConfig, AutoModelForImageTextToText

    from agents.hub_configs import hub_config
    from agents.tiny_models import SPECIAL_TOKENS, build_tokenizer

    path = out / f"{model.replace('/', '--')}-{size}"
    if (path / "config.json").is_file():
        return path
    tokenizer = build_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    values = hub_config(model).to_dict()
    # The special tokens where guigym's tokenizer has them (the embedding keeps the hub model's size).
    values.update(image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
                  vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
                  bos_token_id=None, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)  # fmt: skip
    values["text_config"].update(bos_token_id=None, eos_token_id=tokenizer.eos_token_id,
                                 pad_token_id=tokenizer.pad_token_id)  # fmt: skip
    max_pixels = MAX_PIXELS
    if size == "tiny":
        values["text_config"].update(TINY["text_config"])
        values["text_config"].pop("layer_types", None)  # derived from the layer count again
        values["text_config"].pop("max_window_layers", None)
        half = TINY["text_config"]["hidden_size"] // TINY["text_config"]["num_attention_heads"] // 2
        values["text_config"]["rope_parameters"] = {**values["text_config"]["rope_parameters"],
                                                    "mrope_section": [half - 2 * (half // 3), half // 3, half // 3]}  # fmt: skip
        values["vision_config"].update(TINY["vision_config"])
        max_pixels = TINY["max_pixels"]
    config = AutoConfig.for_model(values.pop("model_type"), **values)
    processor(tokenizer, max_pixels).save_pretrained(path)
    torch.manual_seed(0)
    dtype = torch.bfloat16 if size == "real" else torch.float32
    with torch.device(device):
        net = AutoModelForImageTextToText.from_config(config, dtype=dtype)
    net.save_pretrained(path)
    del net
    return path


def processor(tokenizer: Any, max_pixels: int) -> Any:
    """Qwen2.5-VL's processor over ``tokenizer``: the full one where torchvision (its video half) is installed,
    as on a GPU machine with vLLM, else guigym's image-only one (:mod:`agents.tiny_models`)."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from agents.tiny_models import CHAT_TEMPLATE, image_only_qwen2_vl_processor_class

    images = Qwen2VLImageProcessorPil(min_pixels=MIN_PIXELS, max_pixels=max_pixels)
    try:
        import torchvision  # noqa: F401
        from transformers import Qwen2_5_VLProcessor
        from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor
    except ImportError:
        cls = image_only_qwen2_vl_processor_class("2.5")
        return cls(image_processor=images, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    return Qwen2_5_VLProcessor(image_processor=images, tokenizer=tokenizer, video_processor=Qwen2VLVideoProcessor(),
                               chat_template=CHAT_TEMPLATE)  # fmt: skip


class PhasePeaks:
    """Peak torch-allocated bytes of each rollout and update call of :func:`trainers.grpo.train`, by wrapping the
    two functions it calls (``collect_groups``, ``update``) for the duration of a ``with`` block; on CPU, nothing
    is recorded."""

    PHASES = {"rollout": "collect_groups", "update": "update"}

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda
        self.peaks: dict[str, list[int]] = {phase: [] for phase in self.PHASES}

    def __enter__(self) -> PhasePeaks:
        import torch

        import trainers.grpo as grpo

        self._saved = {name: getattr(grpo, name) for name in self.PHASES.values()}
        for phase, name in self.PHASES.items():

            def wrapped(*a: Any, _f: Any = self._saved[name], _phase: str = phase, **k: Any) -> Any:
                if self.cuda:
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                result = _f(*a, **k)
                if self.cuda:
                    torch.cuda.synchronize()
                    self.peaks[_phase].append(torch.cuda.max_memory_allocated())
                return result

            setattr(grpo, name, functools.wraps(self._saved[name])(wrapped))
        return self

    def __exit__(self, *exc: Any) -> None:
        import trainers.grpo as grpo

        for name, f in self._saved.items():
            setattr(grpo, name, f)


class DevicePeak:
    """The device's peak used memory (total minus free, ``cudaMemGetInfo``), polled in a thread."""

    def __init__(self, cuda: bool, every_s: float = 0.2) -> None:
        self.cuda, self.every_s, self.peak = cuda, every_s, 0
        self._stop = threading.Event()

    def _poll(self) -> None:
        import torch

        while not self._stop.is_set():
            free, total = torch.cuda.mem_get_info()
            self.peak = max(self.peak, total - free)
            time.sleep(self.every_s)

    def __enter__(self) -> DevicePeak:
        if self.cuda:
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.cuda:
            self._stop.set()
            self._thread.join()


GIB = 2**30


def print_table(header: list[str], rows: list[list[Any]]) -> None:
    """A Markdown table, one row per step (the check's output format, shared with ``trl_gpu_check.py``)."""
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def gib_or_na(peaks: list[int], i: int) -> str:
    """``peaks[i]`` bytes in GiB, or ``n/a`` where none was recorded (on CPU)."""
    return f"{peaks[i] / GIB:.2f}" if i < len(peaks) else "n/a"


def memory_line(device_peak: DevicePeak, wall: float) -> str:
    """The run's last line: the device's peak used memory (or that no GPU was in use) and the wall time, s."""
    import torch

    if device_peak.cuda:
        return (f"peak device memory used: {device_peak.peak / GIB:.1f} GiB of "
                f"{torch.cuda.mem_get_info()[1] / GIB:.1f} GiB; run wall time {wall:.0f} s")  # fmt: skip
    return f"peak GPU memory: n/a (no GPU in use); run wall time {wall:.0f} s"


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    import torch

    out = Path(args.out or tempfile.mkdtemp(prefix="gpu-check-"))
    model = build(model_id(args), out, args.size, args.device)
    if args.build_only:
        return []
    config = load_config(args, model, out / f"{Path(args.config).stem}-{args.decoder}")
    cuda = torch.cuda.is_available() and args.device.startswith("cuda")
    from trainers.grpo import train

    start = time.perf_counter()
    with DevicePeak(cuda) as device_peak, PhasePeaks(cuda) as phases:
        history = train(config)["history"]
    wall = time.perf_counter() - start
    from accelerate import PartialState

    if not PartialState().is_main_process:
        return history
    where = torch.cuda.get_device_name() if cuda else args.device
    print(f"gpu_check: {args.config} ({args.size} {model_id(args)}, random weights) on {where}, decoder={args.decoder}, "
          f"{config.dtype}, {config.groups_per_step}x{config.group_size} rollouts, up to {config.max_new_tokens} new "
          f"tokens, gradient checkpointing {config.gradient_checkpointing}, beta {config.beta}")  # fmt: skip
    rows = []
    for i, r in enumerate(history):
        tokens = r["tokens_per_s"] * r["time_rollout"]  # the step's generated tokens
        peaks = [gib_or_na(phases.peaks[p], i) for p in PhasePeaks.PHASES]
        rows.append([r["step"], f"{r['time_rollout']:.1f}", f"{r['time_scoring']:.2f}", f"{r['time_update']:.1f}",
                     f"{tokens:.0f}", f"{r['tokens_per_s']:.1f}", *peaks])  # fmt: skip
    print_table(["step", "rollout s", "scoring s", "update s", "new tokens", "gen tokens/s", "rollout peak GiB",
                 "update peak GiB"], rows)  # fmt: skip
    extra = {k: v for k, v in history[-1].items() if k.startswith("sampler_")}
    if extra:
        print(
            "last step's sampler/trainer log-prob gap: " + ", ".join(f"{k} {v:.4g}" for k, v in extra.items())
        )
    print(memory_line(device_peak, wall))
    return history


if __name__ == "__main__":
    main()
