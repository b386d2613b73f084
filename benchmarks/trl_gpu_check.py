"""TRL's ``GRPOTrainer`` on one GPU at 3B size through ``trainers.trl``: seconds, tokens/s and peak memory per step.

The run file ``configs/trl/grpo_guiweb_gpu_check.yaml`` (GuiWeb-v0, tools mode, the env's verdict, bf16 autocast
over fp32 weights, gradient checkpointing, vLLM colocated, 32 rollouts per step, 3 steps) runs as
``python -m trainers.trl`` runs it (:func:`trainers.trl.train.build_trainer`) with two changes: no checkpoints,
and the model. Nothing can be downloaded, so the model is built once into ``--out``: the text part of
Qwen2.5-VL-3B's architecture (:func:`agents.hub_configs.hub_config`) as a Qwen2 causal LM with random weights,
and the tool-template tokenizer of :func:`trainers.trl.tiny.build_tool_tokenizer` (TRL's Qwen2.5 chat template,
744 tokens; the model keeps its 151,936-row embedding, so sampled ids past the tokenizer decode to nothing). With
text alone Qwen2.5-VL's M-RoPE gives every section the same position, which is Qwen2's RoPE, so the text model
has the VLM's language-model architecture. vLLM is used where it is installed (``trl.use_vllm``), else HF ``generate``.

``--size tiny`` cuts the architecture (hidden 64, 2 layers, :data:`gpu_check.TINY`'s text part; the vocabulary
rule stays) for the CPU smoke test of the same path (``tests/trainers/trl/test_trl_gpu_check.py``);
``--quick`` is that smoke run (tiny, CPU, 1 step of 2 rollouts, 8 new tokens, short prompts).

Printed per optimiser step: its seconds, split into rollout (env resets, sampling, tool calls, rewards, and with
vLLM the old log-probs; TRL's ``_generate_and_score_completions``) and update (the rest: forward, backward and
the optimiser step); sampling seconds alone (TRL's ``_generate_single_turn``, every turn) and the tokens the model
generated (tool results excluded) with their rate over the sampling time (with vLLM the sampling time includes
waking the engine and loading the step's new weights into it); the peak memory torch allocated in the
rollout and over the whole step (``torch.cuda.max_memory_allocated``, reset at the step's start); the mean
reward. Then the device's peak used memory over the run (``cudaMemGetInfo`` polled, so vLLM's own pools count).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_check: the shared table, peaks and tiny sizes
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gpu_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The run file the check runs by default.
CONFIG = "configs/trl/grpo_guiweb_gpu_check.yaml"
#: The hub model whose text architecture the check trains.
ARCHITECTURE = "Qwen/Qwen2.5-VL-3B-Instruct"
#: Qwen2 config fields read from the hub model's ``text_config`` (the rest are Qwen2.5-VL's own, or derived).
TEXT_FIELDS = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
               "num_key_value_heads", "hidden_act", "max_position_embeddings", "initializer_range", "rms_norm_eps",
               "tie_word_embeddings", "attention_dropout", "use_sliding_window", "sliding_window")  # fmt: skip
#: ``--quick``: the CPU smoke run (the test's settings). Shorter prompts (two tools, three page elements) because
#: TRL's fused output layer takes log-probs at every position over the 151,936-row vocabulary.
QUICK = ["--size", "tiny", "--device", "cpu", "--steps", "1", "--set", "trl.per_device_train_batch_size=2",
         "--set", "trl.gradient_accumulation_steps=1", "--set", "trl.num_generations=2",
         "--set", "trl.max_completion_length=8", "--set", "trl.max_tool_calling_iterations=1",
         "--set", "guigym.tools=[click, stop]", "--set", "guigym.max_elements=3"]  # fmt: skip


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=CONFIG, help="a TRL run file (configs/trl/*.yaml)")
    parser.add_argument(
        "--size", default="real", choices=("real", "tiny"), help="the 3B architecture, or tiny"
    )
    parser.add_argument("--device", default="cuda", help="torch device (cuda or cpu)")
    parser.add_argument("--steps", type=int, default=3, help="optimiser steps (trl.max_steps)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        help="more run-file overrides (the CPU smoke cuts the batch: trl.num_generations=2 ...)")  # fmt: skip
    parser.add_argument(
        "--out", default=None, help="folder for the model and the run (default: a temporary one)"
    )
    parser.add_argument("--build-only", action="store_true", help="build and save the model, then exit")
    parser.add_argument("--quick", action="store_true", help="the CPU smoke run: " + " ".join(QUICK))
    args = parser.parse_args(argv)
    if args.quick:  # the smoke settings first, so that explicit flags (--out, more --set) still apply
        args = parser.parse_args(
            QUICK + [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--quick"]
        )
    return args


def text_config(size: str, tokenizer: Any) -> Any:
    """:data:`ARCHITECTURE`'s text part as a ``Qwen2Config`` (cut to :data:`gpu_check.TINY` for ``tiny``), with
    ``tokenizer``'s end and padding ids; refuses a tokenizer with ids past the model's vocabulary."""
    from transformers import Qwen2Config

    from agents.hub_configs import hub_config

    values = hub_config(ARCHITECTURE).text_config.to_dict()
    fields = {name: values[name] for name in TEXT_FIELDS}
    if size == "tiny":
        fields.update(gpu_check.TINY["text_config"])
    # M-RoPE's sections split the rotary dimensions over (time, height, width); text positions are equal in
    # all three, so plain RoPE with the same theta is the same function.
    rope = {k: v for k, v in values["rope_parameters"].items() if k != "mrope_section"}
    if len(tokenizer) > fields["vocab_size"]:
        raise ValueError(f"tokenizer has {len(tokenizer)} ids, the model's vocabulary {fields['vocab_size']}")
    return Qwen2Config(**fields, rope_parameters=rope, bos_token_id=None, eos_token_id=tokenizer.eos_token_id,
                       pad_token_id=tokenizer.pad_token_id)  # fmt: skip


def build(out: Path, size: str, device: str) -> Path:
    """The 3B text architecture (or its tiny cut) with random weights and the tool-template tokenizer, saved
    once under ``out`` (bf16 for ``real``, as hub checkpoints ship; fp32 for ``tiny``). Returns the folder."""
    import torch
    from transformers import AutoModelForCausalLM

    from trainers.trl.tiny import build_tool_tokenizer

    path = out / f"{ARCHITECTURE.replace('/', '--')}-text-{size}"
    if (path / "config.json").is_file():
        return path
    tokenizer = build_tool_tokenizer(path)
    config = text_config(size, tokenizer)
    torch.manual_seed(0)
    # Built in place on the device (not on the meta device: accelerate's init_empty_weights breaks the tie
    # between the embedding and the output layer).
    with torch.device(device):
        net = AutoModelForCausalLM.from_config(
            config, dtype=torch.bfloat16 if size == "real" else torch.float32
        )
    net.save_pretrained(path)
    del net
    if device.startswith("cuda"):
        torch.cuda.empty_cache()  # the build's cached blocks go back before TRL loads the model and vLLM starts
    return path


def overrides(args: argparse.Namespace, model: Path, out: Path) -> list[str]:
    """The check's run-file overrides: the built model, steps, no checkpoints, the device, the sampler, ``--set``."""
    items = [f"model={model}", f"trl.output_dir={out / 'trl-run'}", f"trl.max_steps={args.steps}",
             "trl.save_strategy='no'", "trl.report_to=none", "trl.logging_steps=1"]  # fmt: skip
    if not args.device.startswith("cuda"):
        items += ["trl.use_cpu=true", "trl.bf16=false", "trl.use_vllm=false"]
    elif importlib.util.find_spec("vllm") is None:
        print("trl_gpu_check: vLLM is not installed (pip install 'guigym[vllm]'): sampling with HF generate")
        items.append("trl.use_vllm=false")
    return [*items, *args.set]


class StepProbe:
    """Seconds, generated tokens and peak torch-allocated bytes of each optimiser step of a TRL ``GRPOTrainer``.

    A ``TrainerCallback`` brackets the step (``on_step_begin`` / ``on_step_end``); :meth:`attach` wraps the
    trainer's rollout (``_generate_and_score_completions``), its sampling (``_generate_single_turn``, each turn)
    and ``_generate`` (whose tool mask counts the model's own tokens) on the instance. On CUDA each mark
    synchronises first. ``records``: one dict per step with ``step_s``, ``rollout_s``, ``sampling_s``,
    ``tokens``, ``rollout_peak`` and ``step_peak`` (bytes; absent on CPU).
    """

    def __init__(self, cuda: bool) -> None:
        from transformers import TrainerCallback

        self.cuda = cuda
        self.records: list[dict[str, float]] = []
        self._current: dict[str, float] = {}
        probe = self

        class _Callback(TrainerCallback):
            def on_step_begin(self, *a: Any, **k: Any) -> None:
                probe._sync()
                if probe.cuda:
                    import torch

                    torch.cuda.reset_peak_memory_stats()
                probe._current = {
                    "start": time.perf_counter(),
                    "rollout_s": 0.0,
                    "sampling_s": 0.0,
                    "tokens": 0,
                }

            def on_step_end(self, *a: Any, **k: Any) -> None:
                probe._sync()
                record = dict(probe._current)
                record["step_s"] = time.perf_counter() - record.pop("start")
                if probe.cuda:
                    import torch

                    record["step_peak"] = torch.cuda.max_memory_allocated()
                probe.records.append(record)
                probe._current = {}

        self.callback = _Callback()

    def _sync(self) -> None:
        if self.cuda:
            import torch

            torch.cuda.synchronize()

    def _timed(self, f: Any, key: str | None, after: Any = None) -> Any:
        @functools.wraps(f)
        def wrapped(*a: Any, **k: Any) -> Any:
            self._sync()
            start = time.perf_counter()
            result = f(*a, **k)
            self._sync()
            if self._current:  # outside a training step (none in this check) nothing is recorded
                if key is not None:
                    self._current[key] += time.perf_counter() - start
                if after is not None:
                    after(result)
            return result

        return wrapped

    def _count_tokens(self, result: tuple) -> None:
        """This process's generated tokens (one process on one GPU: all of them)."""
        # TRL's _generate returns prompt ids, completion ids, the tool mask (1: the model's tokens), ...
        _, completion_ids, tool_mask = result[:3]
        self._current["tokens"] += (
            sum(map(sum, tool_mask)) if tool_mask is not None else sum(map(len, completion_ids))
        )

    def _rollout_peak(self, _: Any) -> None:
        if self.cuda:
            import torch

            self._current["rollout_peak"] = torch.cuda.max_memory_allocated()

    def attach(self, trainer: Any) -> None:
        """Wrap ``trainer``'s rollout, sampling and generation methods (on the instance only)."""
        trainer._generate_and_score_completions = self._timed(
            trainer._generate_and_score_completions, "rollout_s", self._rollout_peak
        )
        trainer._generate_single_turn = self._timed(trainer._generate_single_turn, "sampling_s")
        trainer._generate = self._timed(trainer._generate, None, self._count_tokens)


def gib(record: dict[str, float], key: str) -> str:
    """``record[key]`` bytes in GiB, or ``n/a`` where none was recorded (on CPU)."""
    return gpu_check.gib_or_na([record[key]] if key in record else [], 0)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    import torch

    out = Path(args.out or tempfile.mkdtemp(prefix="trl-gpu-check-"))
    model = build(out, args.size, args.device)
    if args.build_only:
        return []
    from trainers.trl.train import build_trainer, close_environments, load_run

    config = ROOT / args.config if not Path(args.config).is_absolute() else Path(args.config)
    model_path, guigym, trl_args = load_run(config, overrides(args, model, out))
    cuda = torch.cuda.is_available() and args.device.startswith("cuda")
    probe = StepProbe(cuda)
    trainer = build_trainer(guigym, trl_args, model_path, callbacks=[probe.callback])
    probe.attach(trainer)
    start = time.perf_counter()
    try:
        with gpu_check.DevicePeak(cuda) as device_peak:
            trainer.train()
    finally:
        close_environments(trainer)
    wall = time.perf_counter() - start
    if not trainer.accelerator.is_main_process:
        return probe.records
    logs = {h["step"]: h for h in trainer.state.log_history if "reward" in h}
    where = torch.cuda.get_device_name() if cuda else args.device
    print(f"trl_gpu_check: {args.config} ({args.size} {ARCHITECTURE} text, random weights, "
          f"{sum(p.numel() for p in trainer.model.parameters()) / 1e9:.2f}B parameters) on {where}, "
          f"sampler {'vLLM ' + trl_args.vllm_mode if trl_args.use_vllm else 'HF generate'}, "
          f"{'bf16 autocast' if trl_args.bf16 else 'fp32 compute'} over {next(trainer.model.parameters()).dtype} weights, "
          f"{trl_args.generation_batch_size} rollouts per step ({trl_args.num_generations} per prompt, micro-batches of "
          f"{trl_args.per_device_train_batch_size}), up to {trl_args.max_completion_length} completion tokens, "
          f"{guigym.env_id} {guigym.action_mode}, gradient checkpointing {trl_args.gradient_checkpointing}")  # fmt: skip
    rows = []
    for i, r in enumerate(probe.records, start=1):
        rate = r["tokens"] / r["sampling_s"] if r["sampling_s"] > 0 else float("nan")
        reward = logs.get(i, {}).get("reward", float("nan"))
        rows.append([i, f"{r['step_s']:.1f}", f"{r['rollout_s']:.1f}", f"{r['sampling_s']:.1f}",
                     f"{r['step_s'] - r['rollout_s']:.1f}", f"{r['tokens']:.0f}", f"{rate:.1f}",
                     gib(r, "rollout_peak"), gib(r, "step_peak"), f"{reward:.3f}"])  # fmt: skip
    gpu_check.print_table(["step", "step s", "rollout s", "sampling s", "update s", "new tokens", "gen tokens/s",
                           "rollout peak GiB", "step peak GiB", "reward"], rows)  # fmt: skip
    last = logs.get(len(probe.records), {})
    gap = {k: v for k, v in last.items() if k.startswith("sampling/")}
    if gap:
        print("last step's sampler/trainer gap: " + ", ".join(f"{k} {v:.4g}" for k, v in gap.items()))
    print(gpu_check.memory_line(device_peak, wall))
    return probe.records


if __name__ == "__main__":
    main()
