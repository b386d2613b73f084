"""The memory plan of a training run: what one device holds, estimated on the meta device before any work.

``python -m trainers.memory_plan configs/grpo_ssl_qwen25vl3b_webground.yaml`` prints the table;
:func:`trainers.grpo.train` prints it at start and refuses a plan over ``device_memory_gib`` before any env is
made or rollout runs (:class:`MemoryPlanError`, naming the number that does not fit).

The model is built from its config on the meta device (no weights, no memory): parameter counts are exact. The
rest is arithmetic, in bytes per device:

* weights: ``P * w`` (``w`` = 2 for bf16 / fp16, 4 for fp32);
* gradients: ``P_train * g`` (``g``: the trainable parameters' dtype: ``w`` for a full fine-tune, 4 for a LoRA
  adapter, which ``peft`` keeps in fp32);
* optimiser: AdamW's two moments in the trainable dtype, ``2 * P_train * g``; with fp32 master weights
  (:mod:`trainers.precision`) ``P_train * (8 + 4)``: fp32 moments and the master copy;
* reference: a second copy of the weights, ``P * w``, when ``beta > 0`` and not LoRA (LoRA's reference is the
  adapter switched off);
* activations of one micro-batch of ``N`` tokens (``R`` rows of ``S`` tokens; the training forward and backward,
  bf16 compute, SDPA / flash attention so no ``S x S`` scores are kept). A decoder layer keeps about
  ``a = 10 H + 4 kv + 4 I`` values per token for its backward (norms, q/k/v, attention output, residuals, the
  gated MLP's four ``I``-wide tensors; Korthikanti et al. 2022, section 4.1, for a gated MLP without dropout;
  within 2% of the bytes autograd saves for a bf16 Llama layer, ``tests/trainers/test_memory_plan.py``).
  With gradient checkpointing: one hidden state per layer per token (``L * N * H``) plus one layer recomputed
  with its gradients (``2 * N * a``); without: ``L * N * a``. The vision tower (a VLM) the same way with its
  own sizes over the images' patches (``4x`` the image tokens: 2 x 2 patches merge into one token). Plus one
  log-prob chunk: ``c * V * (2 + 3 * 4)`` bytes (bf16 head output, fp32 logits, log-softmax and its gradient)
  for ``c`` = ``logprob_chunk_size`` positions x rows, or the whole ``R * T`` completion without chunking
  (``c * V * (2 + 4 * 4)``: the model's own logits, their fp32 copy, scaled copy, log-softmax, entropy);
* inputs: the samples encoded at once on the device (a VLM's fp32 pixel values, ``1176`` values per 14 x 14 patch
  over 2 frames and 3 channels): GRPO's whole step batch, one micro-batch for SFT and DPO (MobileIPL's stages);
* sampling: the KV cache of ``num_envs`` sequences of ``S`` tokens (``2 * L * kv * w`` per token); rollouts and
  the update do not overlap, so the peak takes the larger of sampling and activations plus inputs.

Sequence length ``S``: the prompt (:data:`PROMPT_TEXT_TOKENS` text tokens, plus one screenshot for a VLM:
``(h / 28) * (w / 28)`` tokens after the processor's resize to at most ``max_pixels``, from the env's viewport)
plus ``max_new_tokens``. Not counted: the CUDA context and allocator fragmentation (keep a few GiB free), the
old / reference log-prob passes (no gradients, smaller than the training pass), and the fp32 gradient copies of
the master-weight step (one bucket at a time, :attr:`trainers.precision.MasterWeightAdamW.BUCKET_NUMEL`).
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainers.config_io import ConfigError

GIB = 2**30
#: Text tokens of a prompt besides the screenshot: the GUI-R1 prompt is about 1,000 characters (about 250 tokens)
#: plus the chat template and the instruction.
PROMPT_TEXT_TOKENS = 320
#: Qwen2-VL / Qwen2.5-VL image processor defaults (``preprocessor_config.json`` of the hub models).
QWEN_MAX_PIXELS = 12_845_056
QWEN_MIN_PIXELS = 3_136
_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


class MemoryPlanError(ConfigError):
    """A run's memory plan does not fit the device; raised before any env is made or rollout runs."""


@dataclass
class MemoryPlan:
    """Bytes per device, by part (see the module docstring for each formula)."""

    parts: dict[str, float]
    notes: dict[str, str] = field(default_factory=dict)
    #: Bytes of ``parts["optimizer"]`` that exist from the optimiser's construction (the fp32 master copy); the
    #: rest (AdamW's moments) is allocated at the first ``step()``.
    optimizer_at_start: float = 0.0

    @property
    def static(self) -> float:
        """Bytes held throughout the run: weights, gradients, optimiser and reference."""
        return sum(self.parts[k] for k in ("weights", "gradients", "optimizer", "reference"))

    @property
    def total(self) -> float:
        """The peak: the static part plus the larger of the update's activations and the sampler's KV cache."""
        return self.static + max(self.parts["activations"] + self.parts["inputs"], self.parts["sampling"])

    def phases(self, optimizer_stepped: bool = True) -> dict[str, float]:
        """The plan's bytes at the peak of each phase of a GRPO step, the figures ``benchmarks/gpu_check.py``
        holds against ``torch.cuda.max_memory_allocated``:

        * ``rollout``: static + sampling (the KV cache);
        * ``log-probs`` (the old and reference log-probs, no gradients): static + inputs; the no-grad passes' own
          activations are not counted (see the module docstring);
        * ``update``: static + activations + inputs.

        Before the first optimiser step (``optimizer_stepped=False``) the rollout and log-probs phases hold no
        gradients and no AdamW moments yet (only :attr:`optimizer_at_start` of the optimiser part); the update
        is planned with all of the static part either way.
        """
        p = self.parts
        early = self.static
        if not optimizer_stepped:
            early -= p["gradients"] + p["optimizer"] - self.optimizer_at_start
        return {"rollout": early + p["sampling"], "log-probs": early + p["inputs"],
                "update": self.static + p["activations"] + p["inputs"]}  # fmt: skip

    def table(self) -> str:
        """A printable table, in GiB."""
        lines = [f"{'part':<12} {'GiB':>8}  how"]
        for k, v in self.parts.items():
            lines.append(f"{k:<12} {v / GIB:8.2f}  {self.notes.get(k, '')}")
        lines.append(f"{'total':<12} {self.total / GIB:8.2f}  static + max(activations + inputs, sampling)")
        return "\n".join(lines)

    def check(self, budget_gib: float | None) -> None:
        """Raise :class:`MemoryPlanError` when the total is over ``budget_gib`` (``None``: no check)."""
        if budget_gib is None or self.total <= budget_gib * GIB:
            return
        acts = self.parts["activations"]
        if self.static > budget_gib * GIB:
            fix = "weights, gradients, optimiser and reference alone do not fit: use LoRA, beta=0, or more memory"
            worst = f"static {self.static / GIB:.1f} GiB"
        else:
            fix = "lower micro_batch_tokens and/or logprob_chunk_size, or turn on gradient_checkpointing"
            worst = f"activations per micro-batch {acts / GIB:.1f} GiB ({self.notes['activations']})"
        raise MemoryPlanError(
            f"memory plan needs {self.total / GIB:.1f} GiB per device, over device_memory_gib={budget_gib:g}: "
            f"{worst} does not fit beside static {self.static / GIB:.1f} GiB; {fix}.\n{self.table()}"
        )


def meta_model(name: str) -> Any:
    """The model ``name`` (hub id or folder) built from its config on the meta device: shapes only, no memory."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText

    from agents.hub_configs import hub_config

    cfg = hub_config(name)
    cls = AutoModelForImageTextToText if hasattr(cfg, "vision_config") else AutoModelForCausalLM
    # torch.device("meta"), not accelerate's init_empty_weights: the latter breaks weight tying (a tied head
    # would count twice).
    with torch.device("meta"):
        return cls.from_config(cfg)


def image_tokens(model: str, viewport: tuple[int, int] | None) -> tuple[int, int]:
    """``(tokens, patches)`` of one ``(width, height)`` screenshot after the Qwen-VL processor's resize."""
    if viewport is None:
        return 0, 0
    lo, hi = QWEN_MIN_PIXELS, QWEN_MAX_PIXELS
    pre = Path(model) / "preprocessor_config.json"
    joint = Path(model) / "processor_config.json"  # transformers 5 saves the image processor's settings here
    values = None
    if pre.is_file():
        values = json.loads(pre.read_text())
    elif joint.is_file():
        values = json.loads(joint.read_text()).get("image_processor")
    if values:
        size = values.get("size") or {}
        lo = int(values.get("min_pixels", size.get("shortest_edge", lo)))
        hi = int(values.get("max_pixels", size.get("longest_edge", hi)))
    w, h = viewport
    # Qwen2-VL's smart_resize: multiples of 28 a side, area scaled into [min_pixels, max_pixels].
    hb, wb = max(28, round(h / 28) * 28), max(28, round(w / 28) * 28)
    if hb * wb > hi:
        beta = math.sqrt(h * w / hi)
        hb, wb = max(28, math.floor(h / beta / 28) * 28), max(28, math.floor(w / beta / 28) * 28)
    elif hb * wb < lo:
        beta = math.sqrt(lo / (h * w))
        hb, wb = math.ceil(h * beta / 28) * 28, math.ceil(w * beta / 28) * 28
    return (hb // 28) * (wb // 28), (hb // 14) * (wb // 14)


def env_viewport(env_id: str, env_kwargs: dict[str, Any]) -> tuple[int, int] | None:
    """The env's screenshot size ``(width, height)`` in pixels, from its kwargs or its class's ``viewport``
    default, without making the env; ``None`` when the env names none."""
    import gymnasium as gym

    import gui_envs  # noqa: F401  (registers the env ids)

    if "viewport" in env_kwargs:
        return tuple(env_kwargs["viewport"])  # type: ignore[return-value]
    spec = gym.spec(env_id)
    if "viewport" in spec.kwargs:
        return tuple(spec.kwargs["viewport"])  # type: ignore[return-value]
    entry = spec.entry_point
    if not isinstance(entry, str):
        return None
    module, _, name = entry.partition(":")
    cls = getattr(__import__(module, fromlist=[name]), name)
    for klass in cls.__mro__:
        param = (
            inspect.signature(klass.__init__).parameters.get("viewport")
            if "__init__" in vars(klass)
            else None
        )
        if param is not None and param.default is not inspect.Parameter.empty:
            # ``None``: the env's own size otherwise (ClickBox's square canvas_px): no screenshot size named.
            return None if param.default is None else tuple(param.default)  # type: ignore[return-value]
    return None


def _layer_values(hidden: int, inter: int, kv: int) -> int:
    """Values one decoder layer keeps per token for its backward (see the module docstring)."""
    return 10 * hidden + 4 * kv + 4 * inter


def plan(
    model_name: str,
    *,
    dtype: str | None,
    lora: bool,
    lora_r: int,
    lora_target_modules: str | list[str],
    master_weights: bool | None,
    reference: bool,
    gradient_checkpointing: bool,
    rows: int,
    batch_rows: int | None,
    prompt_text_tokens: int,
    completion_tokens: int,
    viewport: tuple[int, int] | None,
    micro_batch_tokens: int,
    logprob_chunk_size: int,
    sampling_sequences: int,
    paired: bool = False,
) -> MemoryPlan:
    """The memory plan of one device; ``rows``: samples per mini-batch on this device, ``batch_rows``: samples
    encoded at once on the device (per optimiser step; ``None``: per micro-batch, as SFT and DPO encode them).
    ``paired``: rows come as DPO pairs (chosen and rejected) that a micro-batch never separates. See the module
    docstring."""
    import torch

    model = meta_model(model_name)
    cfg = model.config
    text = getattr(cfg, "text_config", cfg)
    hidden, inter, layers = text.hidden_size, text.intermediate_size, text.num_hidden_layers
    heads = text.num_attention_heads
    head_dim = getattr(text, "head_dim", None) or hidden // heads
    kv = (getattr(text, "num_key_value_heads", None) or heads) * head_dim
    vocab = text.vocab_size
    n_params = sum(p.numel() for p in model.parameters())
    w = _DTYPE_BYTES.get(dtype or str(getattr(cfg, "dtype", None) or "float32").replace("torch.", ""), 4)

    if lora:
        head = model.get_output_embeddings()
        n_train = 0
        for name, module in model.named_modules():
            if not isinstance(module, torch.nn.Linear) or module is head:
                continue
            if lora_target_modules != "all-linear" and name.rsplit(".", 1)[-1] not in lora_target_modules:
                continue
            n_train += lora_r * (module.in_features + module.out_features)
        g = 4  # peft keeps adapters in fp32
    else:
        n_train, g = n_params, w
    master = g < 4 if master_weights is None else (bool(master_weights) and g < 4)
    parts: dict[str, float] = {}
    notes: dict[str, str] = {}
    parts["weights"] = n_params * w
    notes["weights"] = f"{n_params / 1e9:.3f}B params x {w} B"
    parts["gradients"] = n_train * g
    notes["gradients"] = f"{n_train / 1e9:.3f}B trainable x {g} B"
    parts["optimizer"] = n_train * (12 if master else 2 * g)
    notes["optimizer"] = (
        "AdamW fp32 moments + fp32 master copy (12 B)" if master else f"AdamW moments (2 x {g} B)"
    )
    parts["reference"] = n_params * w if reference else 0.0
    notes["reference"] = "frozen copy for the KL term" if reference else "none (beta = 0 or LoRA)"

    img_tokens, patches = image_tokens(model_name, viewport) if hasattr(cfg, "vision_config") else (0, 0)
    seq = prompt_text_tokens + img_tokens + completion_tokens
    if micro_batch_tokens <= 0:
        r = rows
    elif paired:  # whole pairs, at 2 (P + T) tokens each (trainers.dpo.pair_micro_batches)
        r = 2 * max(1, min(rows // 2, micro_batch_tokens // (2 * seq)))
    else:
        r = max(1, min(rows, micro_batch_tokens // seq))
    n = r * seq
    a = 2  # bf16 / fp16 compute (fp32: the same formula at 4)
    if w == 4:
        a = 4
    per_layer = _layer_values(hidden, inter, kv) * a
    acts = (layers * n * hidden * a + 2 * n * per_layer) if gradient_checkpointing else layers * n * per_layer
    if patches:
        vis = cfg.vision_config
        v_layer = _layer_values(vis.hidden_size, vis.intermediate_size, vis.hidden_size) * a
        np_ = r * patches
        acts += (
            (vis.depth * np_ * vis.hidden_size * a + 2 * np_ * v_layer)
            if gradient_checkpointing
            else (vis.depth * np_ * v_layer)
        )
    if logprob_chunk_size > 0:
        c = max(1, logprob_chunk_size // r) * r
        c = min(c, r * completion_tokens)
        acts += c * vocab * (2 + 3 * 4)
        chunk_note = f"log-prob chunk {c} tokens"
    else:
        c = r * completion_tokens
        acts += c * vocab * (2 + 4 * 4)
        chunk_note = f"full (B, T, V) log-probs of {c} tokens"
    parts["activations"] = float(acts)
    notes["activations"] = (
        f"{r} rows x {seq} tokens ({img_tokens} image + {prompt_text_tokens} text + {completion_tokens} completion), "
        f"checkpointing {'on' if gradient_checkpointing else 'off'}, {chunk_note}"
    )
    # The encoded samples on the device: a VLM's fp32 pixel values, 3 x 2 x 14 x 14 per patch.
    encoded = r if batch_rows is None else batch_rows
    parts["inputs"] = float(encoded * patches * 1176 * 4)
    whose = f"a micro-batch's {r}" if batch_rows is None else f"the step's {batch_rows}"
    notes["inputs"] = f"{whose} encoded samples' fp32 pixel values" if patches else "token ids only"
    parts["sampling"] = float(sampling_sequences * seq * 2 * layers * kv * w)
    notes["sampling"] = f"KV cache of {sampling_sequences} sequences x {seq} tokens"
    return MemoryPlan(parts, notes, optimizer_at_start=n_train * 4.0 if master else 0.0)


def grpo_plan(config: Any, world_size: int = 1) -> MemoryPlan:
    """The plan of a :class:`trainers.grpo_config.GRPOConfig` run on each of ``world_size`` devices."""
    rows = max(1, config.batch_size // world_size // config.mini_batches) * config.max_episode_steps
    return plan(
        config.model, dtype=config.dtype, lora=config.lora, lora_r=config.lora_r,
        lora_target_modules=config.lora_target_modules, master_weights=config.master_weights,
        reference=config.beta > 0 and not config.lora, gradient_checkpointing=config.gradient_checkpointing,
        rows=rows, batch_rows=max(1, config.batch_size // world_size) * config.max_episode_steps,
        prompt_text_tokens=PROMPT_TEXT_TOKENS, completion_tokens=config.max_new_tokens,
        viewport=env_viewport(config.env_id, config.env_kwargs), micro_batch_tokens=config.micro_batch_tokens,
        logprob_chunk_size=config.logprob_chunk_size, sampling_sequences=config.num_envs,
    )  # fmt: skip


#: Screenshot size assumed for recorded Android data when the config names no env: a 1080 x 2400 phone screen.
ANDROID_VIEWPORT = (1080, 2400)


#: Text tokens of a CoaT dialogue's four user turns in the paper's wording (``agents.prompts.coat``: about 2,100
#: characters with an instruction and a five-step history, at about 4 characters a token) and the chat template.
#: A turn's prompt also holds the earlier turns' answers, up to ``max_new_tokens`` each.
COAT_PROMPT_TEXT_TOKENS = 600


def ipl_plans(config: Any, viewport: tuple[int, int] | None = None) -> dict[str, MemoryPlan]:
    """The plans of a :class:`trainers.ipl_config.IPLConfig` run's two stages on one device: the CoaT SFT warm-up
    (``warmup_sft_batch_size`` rows) and a T-DPO round (``batch_size`` pairs: ``2 * batch_size`` rows, chosen and
    rejected).

    Both stages take ``micro_batch_tokens`` (a DPO micro-batch holds whole pairs), ``logprob_chunk_size`` and
    ``gradient_checkpointing`` from the config, as :func:`trainers.ipl.warmup_policy` and
    :func:`trainers.dpo.optimise_pairs` do, and encode one micro-batch at a time on the device. A sample is the
    deepest CoaT turn: :data:`COAT_PROMPT_TEXT_TOKENS` of user turns, the three earlier answers and the screenshot
    before a ``max_new_tokens`` completion. After an fp32 LoRA merge (``lora_merge: float32``) a round's frozen base
    is fp32, and so is its compute. ``viewport``: the screenshot size; default the env's, else
    :data:`ANDROID_VIEWPORT`.
    """
    if viewport is None:
        viewport = (
            env_viewport(config.env_id, config.env_kwargs) if config.env_id else None
        ) or ANDROID_VIEWPORT
    common = dict(lora=config.lora, lora_r=config.lora_r, lora_target_modules=config.lora_target_modules,
                  master_weights=None, gradient_checkpointing=config.gradient_checkpointing,
                  prompt_text_tokens=COAT_PROMPT_TEXT_TOKENS + 3 * config.max_new_tokens,
                  completion_tokens=config.max_new_tokens, viewport=viewport,
                  micro_batch_tokens=config.micro_batch_tokens, logprob_chunk_size=config.logprob_chunk_size,
                  batch_rows=None)  # fmt: skip
    rows = config.warmup_sft_batch_size
    warmup = plan(config.model, dtype=config.dtype, reference=False, rows=rows, sampling_sequences=0, **common)
    merged = config.lora and config.lora_merge == "float32" and config.warmup_sft_epochs > 0
    rows = 2 * config.batch_size
    rounds = plan(config.model, dtype="float32" if merged else config.dtype, reference=not config.lora, rows=rows,
                  sampling_sequences=config.tree_batch * config.k, paired=True, **common)  # fmt: skip
    return {"warm-up SFT": warmup, "T-DPO round": rounds}


def device_budget_gib(setting: float | None, device: Any) -> float | None:
    """``setting`` when given, else the CUDA ``device``'s total memory in GiB, else ``None`` (no check)."""
    import torch

    if setting is not None:
        return float(setting)
    dev = torch.device(device)
    if dev.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_properties(dev).total_memory / GIB
    return None


#: What reading a model the plan cannot handle raises (no config offline, an architecture without the fields).
UNPLANNABLE = (OSError, ValueError, AttributeError, KeyError, TypeError)


def check_memory_plan(config: Any, device: Any, world: int = 1, verbose: bool = True) -> MemoryPlan | None:
    """Print a GRPO run's memory plan and refuse it when it does not fit the device (``config``: a GRPOConfig).

    The budget is ``config.device_memory_gib``, else the CUDA device's memory, else there is no check. Raises
    :class:`~trainers.memory_plan.MemoryPlanError` naming the part that does not fit. A model whose config cannot
    be read offline, or whose architecture the plan does not know, gets no plan (a note says so) unless
    ``device_memory_gib`` asks for a check.
    """
    budget = device_budget_gib(config.device_memory_gib, device)
    try:
        memory = grpo_plan(config, world)
    except UNPLANNABLE as exc:
        if config.device_memory_gib is not None:
            raise MemoryPlanError(f"device_memory_gib is set but no memory plan can be made: {exc}") from exc
        if verbose:
            print(f"memory plan: skipped ({exc})")
        return None
    if verbose:
        shown = "none" if budget is None else f"{budget:.1f} GiB"
        print(f"memory plan per device (world size {world}, budget {shown}):\n{memory.table()}")
    memory.check(budget)
    return memory


def main(argv: list[str] | None = None) -> None:
    """``python -m trainers.memory_plan CONFIG.yaml [key=value ...]``: print the plan of a GRPO or IPL config."""
    import yaml

    from trainers.grpo_config import GRPOConfig
    from trainers.ipl_config import IPLConfig

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="a GRPO or IPL config YAML")
    parser.add_argument("overrides", nargs="*", help="key=value overrides")
    parser.add_argument("--world-size", type=int, default=1, help="devices the batch is split over")
    parser.add_argument("--budget-gib", type=float, default=None, help="check the plan against this many GiB")
    args = parser.parse_args(argv)
    keys = set(yaml.safe_load(Path(args.config).read_text()) or {})
    if "rounds" in keys or "warmup_sft_epochs" in keys:
        ipl = IPLConfig.from_yaml(args.config, args.overrides)
        for stage, p in ipl_plans(ipl).items():
            print(f"memory plan of {args.config}, {stage} (per device)")
            print(p.table())
            if args.budget_gib is not None:
                p.check(args.budget_gib)
                print(f"fits {args.budget_gib:g} GiB")
        return
    config = GRPOConfig.from_yaml(args.config, args.overrides)
    p = grpo_plan(config, args.world_size)
    print(f"memory plan of {args.config} (per device, world size {args.world_size})")
    print(p.table())
    budget = args.budget_gib if args.budget_gib is not None else config.device_memory_gib
    if budget is not None:
        p.check(budget)
        print(f"fits device_memory_gib={budget}")


if __name__ == "__main__":
    main()
