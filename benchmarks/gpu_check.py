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

``--env clickbox`` swaps the config's env for ``ClickBox-v0`` at the GuiWebGround configs' screen size (1280 x
720, :data:`VIEWPORT`: the same 1,196 visual tokens a screenshot, drawn in numpy, no browser), keeping its
reward, batch, completion budget and everything else: what ``benchmarks/gpu_check.sh`` runs on a GPU machine
without Chromium.

``--decoder`` picks the sampler: ``hf`` (Hugging Face ``generate``) or ``vllm`` (the colocated engine,
:mod:`agents.vllm_generator`). ``--size tiny`` shrinks the architecture (hidden 64, 2 layers; vision 2 blocks
of width 32; images up to 112 x 112) for the CPU smoke test of the same path
(``tests/trainers/test_gpu_check.py``).

Printed per step and phase (rollout; log-probs: the old and reference log-probs, from the update's start to its
first pass with gradients; update: the rest, with vLLM including pushing the new weights into the engine):
seconds, the rollout's generated tokens and their rate, the peak memory torch allocated
(``torch.cuda.max_memory_allocated``, reset at each phase's start) beside the memory plan's figure for the phase
(:meth:`trainers.memory_plan.MemoryPlan.phases`) and their ratio. Then the prompt length measured against the
plan's, the fraction of weights that moved over the steps (the model's own, and the fp32 master copies that
AdamW steps, against the saved initial weights), and the device's peak used memory over the run
(``cudaMemGetInfo`` polled every 0.2 s: it includes what vLLM allocates outside torch's counters, and other
processes).
"""

from __future__ import annotations

import argparse
import contextlib
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
#: ``--env clickbox``'s screen size, ``(width, height)`` pixels: the GuiWebGround configs' viewport. A constant,
#: not read from GuiWebGround-v0's class, because importing that needs playwright, which the GPU machine lacks
#: (``tests/trainers/test_gpu_check.py`` holds the two equal).
VIEWPORT = (1280, 720)
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
    parser.add_argument("--env", default="config", choices=("config", "clickbox"),
                        help="the config's env, or ClickBox-v0 at its screen size (no browser)")  # fmt: skip
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
    parser.add_argument("--random-advantages", action="store_true",
                        help="seeded noise in place of the estimator's advantages (a random model's are all zero)")  # fmt: skip
    return parser.parse_args(argv)


def load_config(args: argparse.Namespace, model: Path, out: Path) -> Any:
    """The config file with the check's overrides (model, steps, no checkpoints, ``--set``)."""
    from trainers.grpo_config import GRPOConfig

    overrides = [f"model={model}", f"num_steps={args.steps}", f"output_dir={out / 'run'}", "save_every=0",
                 "progress=false", "plot=false", f"decoder={args.decoder}", f"device={args.device}"]  # fmt: skip
    if args.dtype:
        overrides.append(f"dtype={args.dtype}")
    if args.env == "clickbox":
        overrides += clickbox_overrides()
    return GRPOConfig.from_yaml(config_path(args), [*overrides, *args.set])


def config_path(args: argparse.Namespace) -> Path:
    """``--config`` as a path (relative ones from the repository root)."""
    return Path(args.config) if Path(args.config).is_absolute() else ROOT / args.config


def model_id(args: argparse.Namespace) -> str:
    """The hub id the config file names."""
    import yaml

    return str(yaml.safe_load(config_path(args).read_text())["model"])


def clickbox_overrides() -> list[str]:
    """Config overrides that put ``ClickBox-v0`` in place of the config's env, at :data:`VIEWPORT`."""
    return ["env_id=ClickBox-v0", f"env_kwargs={{viewport: [{VIEWPORT[0]}, {VIEWPORT[1]}]}}"]


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


class Phases:
    """Seconds and peak torch-allocated bytes of each phase of every step of :func:`trainers.grpo.train`.

    For the duration of a ``with`` block it wraps the functions ``train`` calls: ``collect_groups`` (the
    rollout), ``update`` (split at its first log-prob pass with gradients into ``log-probs``, the old and
    reference log-probs with the batch's encoding, and ``update``, the rest), ``completion_logprobs`` (that split,
    and the longest padded prompt it scores, image tokens included) and ``adamw_with_warmup`` (to keep the
    optimiser, whose fp32 masters :func:`weights_moved` reads). On CUDA each mark synchronises first and resets
    the peak; on CPU no peaks are recorded.
    """

    NAMES = ("rollout", "log-probs", "update")

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda
        #: One dict per step: phase -> {"s": seconds, "peak": bytes (CUDA only)}.
        self.steps: list[dict[str, dict[str, float]]] = []
        self.prompt_tokens = 0
        self.optimizer: Any = None
        self._open: tuple[str, float] | None = None

    def _start(self, phase: str) -> None:
        import torch

        if self.cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        self._open = (phase, time.perf_counter())

    def _stop(self) -> None:
        import torch

        if self._open is None:
            return
        if self.cuda:
            torch.cuda.synchronize()
        phase, start = self._open
        record: dict[str, float] = {"s": time.perf_counter() - start}
        if self.cuda:
            record["peak"] = torch.cuda.max_memory_allocated()
        self.steps[-1][phase] = record
        self._open = None

    def __enter__(self) -> Phases:
        import torch

        import trainers.grpo as grpo

        names = ("collect_groups", "update", "completion_logprobs", "adamw_with_warmup")
        self._saved = {name: getattr(grpo, name) for name in names}
        saved = self._saved

        def rollout(*a: Any, **k: Any) -> Any:
            self.steps.append({})
            self._start("rollout")
            result = saved["collect_groups"](*a, **k)
            self._stop()
            return result

        def update(*a: Any, **k: Any) -> Any:
            self._start("log-probs")
            result = saved["update"](*a, **k)
            self._stop()  # "update", or "log-probs" when no pass with gradients ran (no samples)
            return result

        def logprobs(*a: Any, **k: Any) -> Any:
            batch = a[1] if len(a) > 1 else k.get("batch")
            self.prompt_tokens = max(self.prompt_tokens, int(getattr(batch, "prompt_len", 0)))
            if self._open is not None and self._open[0] == "log-probs" and torch.is_grad_enabled():
                self._stop()
                self._start("update")
            return saved["completion_logprobs"](*a, **k)

        def optimiser(*a: Any, **k: Any) -> Any:
            result = saved["adamw_with_warmup"](*a, **k)
            self.optimizer = result[0]
            return result

        for name, f in zip(names, (rollout, update, logprobs, optimiser), strict=True):
            setattr(grpo, name, functools.wraps(saved[name])(f))
        return self

    def __exit__(self, *exc: Any) -> None:
        import trainers.grpo as grpo

        for name, f in self._saved.items():
            setattr(grpo, name, f)


class RandomAdvantages:
    """Within a ``with`` block, :func:`trainers.grpo.train`'s estimator returns seeded standard-normal advantages,
    centred per group, instead of its own.

    Why: a random model writes no parsable click, so every rollout of a group gets the same reward, GRPO's
    advantages are all zero and so is the update's gradient (the KL term's too, while the policy equals its
    reference): no weight would move, whatever the precision. The update's cost (shapes, passes, optimiser)
    does not depend on the values, so the check keeps the config's work and gets a gradient to move weights by;
    the learning signal is noise. Per-step rewards (``step_rewards``) are not supported.
    """

    def __init__(self, seed: int = 0) -> None:
        import numpy as np

        self.rng = np.random.default_rng(seed)

    def __enter__(self) -> RandomAdvantages:
        import trainers.grpo as grpo

        self._saved = grpo.get_estimator

        def get_estimator(name: str) -> Any:
            def estimator(batch: Any, **_: Any) -> Any:
                adv = self.rng.standard_normal(batch.rewards.shape)  # (G, N)
                return adv - adv.mean(axis=-1, keepdims=True)

            return estimator

        grpo.get_estimator = get_estimator
        return self

    def __exit__(self, *exc: Any) -> None:
        import trainers.grpo as grpo

        grpo.get_estimator = self._saved


def weights_moved(model: Any, optimizer: Any, folder: Path) -> dict[str, float]:
    """Fractions of parameter elements that differ from the initial weights saved in ``folder``: ``weights`` (the
    model's own, in its dtype) and ``masters`` (the fp32 copies a :class:`trainers.precision.MasterWeightAdamW`
    steps; an fp32 parameter is its own master), each also outside the token embedding (``*_no_embedding``: the
    rows of tokens never sampled get no gradient, and they are most of a tiny model's parameters).

    The initial model is loaded on the CPU (the saved file's names are the checkpoint's, not the module's, so it
    is loaded as ``from_pretrained`` maps them) and compared one parameter at a time on the model's device.
    """
    import torch

    initial = dict(type(model).from_pretrained(folder, dtype="auto").named_parameters())
    masters = {}
    if hasattr(optimizer, "master_state"):
        masters = {id(p): m for p, m in zip(optimizer.model_params, optimizer.master_state(), strict=True)}
    embedding = model.get_input_embeddings().weight
    n = {"weights": 0, "masters": 0, "all": 0, "weights_no_embedding": 0, "masters_no_embedding": 0, "rest": 0}
    with torch.no_grad():
        for name, p in model.named_parameters():
            init = initial[name].to(p.device, p.dtype)  # as the run loaded it (a master starts as this, upcast)
            master = masters.get(id(p), p)
            moved_w = int((p != init).sum())
            moved_m = int((master != init.to(master.dtype)).sum())
            n["weights"] += moved_w
            n["masters"] += moved_m
            n["all"] += p.numel()
            if p is not embedding:
                n["weights_no_embedding"] += moved_w
                n["masters_no_embedding"] += moved_m
                n["rest"] += p.numel()
    return {key: n[key] / n["all" if "no_embedding" not in key else "rest"]
            for key in ("weights", "masters", "weights_no_embedding", "masters_no_embedding")}  # fmt: skip


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
    noise = RandomAdvantages(config.seed) if args.random_advantages else contextlib.nullcontext()
    with DevicePeak(cuda) as device_peak, Phases(cuda) as phases, noise:
        result = train(config)
    wall = time.perf_counter() - start
    history = result["history"]
    from accelerate import PartialState

    if not PartialState().is_main_process:
        return history
    where = torch.cuda.get_device_name() if cuda else args.device
    print(f"gpu_check: {args.config} ({args.size} {model_id(args)}, random weights) on {where}, {config.env_id} "
          f"{config.env_kwargs or ''}, decoder={args.decoder}, {config.dtype}, {config.groups_per_step}x"
          f"{config.group_size} rollouts, up to {config.max_new_tokens} new tokens, gradient checkpointing "
          f"{config.gradient_checkpointing}, beta {config.beta}, advantages "
          f"{'random (seeded noise)' if args.random_advantages else config.estimator}")  # fmt: skip
    memory = phase_plan(config)
    rows = []
    for i, (r, measured) in enumerate(zip(history, phases.steps, strict=True)):
        planned = memory.phases(optimizer_stepped=i > 0) if memory is not None else {}
        tokens = r["tokens_per_s"] * r["time_rollout"]  # the step's generated tokens
        for phase in Phases.NAMES:
            m = measured.get(phase, {})
            r[f"phase_s_{phase}"] = m.get("s", float("nan"))
            if "peak" in m:
                r[f"phase_peak_{phase}"] = m["peak"]
            rate = [f"{tokens:.0f}", f"{r['tokens_per_s']:.1f}"] if phase == "rollout" else ["", ""]
            plan = planned.get(phase)
            ratio = f"{m['peak'] / plan:.2f}" if plan and "peak" in m else "n/a"
            rows.append([r["step"], phase, f"{m.get('s', float('nan')):.2f}", *rate,
                         gib_or_na([int(m["peak"])] if "peak" in m else [], 0),
                         f"{plan / GIB:.2f}" if plan else "n/a", ratio])  # fmt: skip
        rows.append([r["step"], "scoring", f"{r['time_scoring']:.2f}", "", "", "n/a", "n/a", "n/a"])
    print_table(["step", "phase", "s", "new tokens", "gen tokens/s", "peak GiB", "plan GiB", "peak / plan"], rows)
    if memory is not None:
        print("plan per phase: rollout = static + sampling; log-probs = static + inputs (the no-grad passes' own "
              "activations unplanned); update = static + activations + inputs; step 1's rollout and log-probs "
              "without gradients and AdamW moments (not allocated before the first optimiser step)")  # fmt: skip
        print(f"prompt tokens (padded, image included): measured {phases.prompt_tokens}, planned "
              f"{planned_prompt_tokens(config)}")  # fmt: skip
    moved = weights_moved(result["model"], phases.optimizer, model)
    history[-1].update({f"moved_{k}": v for k, v in moved.items()})
    print(f"weights moved after {len(history)} step(s), against the saved initial weights: {config.dtype} weights {moved['weights']:.2%} ({moved['weights_no_embedding']:.2%} "
          f"outside the token embedding), fp32 masters {moved['masters']:.2%} "
          f"({moved['masters_no_embedding']:.2%})")  # fmt: skip
    extra = {k: v for k, v in history[-1].items() if k.startswith("sampler_")}
    if extra:
        print(
            "last step's sampler/trainer log-prob gap: " + ", ".join(f"{k} {v:.4g}" for k, v in extra.items())
        )
    print(memory_line(device_peak, wall))
    return history


def phase_plan(config: Any) -> Any:
    """The run's :class:`trainers.memory_plan.MemoryPlan` (one device), or ``None`` where none can be made."""
    from trainers.memory_plan import UNPLANNABLE, grpo_plan

    try:
        return grpo_plan(config)
    except UNPLANNABLE as exc:
        print(f"memory plan: none ({exc})")
        return None


def planned_prompt_tokens(config: Any) -> str:
    """The prompt length the plan assumes: the screenshot's visual tokens plus the text allowance."""
    from trainers.memory_plan import PROMPT_TEXT_TOKENS, env_viewport, image_tokens

    image = image_tokens(config.model, env_viewport(config.env_id, config.env_kwargs))[0]
    return f"{image + PROMPT_TEXT_TOKENS} ({image} image + {PROMPT_TEXT_TOKENS} text)"


if __name__ == "__main__":
    main()
