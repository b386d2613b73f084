"""vLLM as the sampler of a model that trains in the same process, on the same GPU (colocated).

:class:`VLLMGenerator` is an :class:`agents.hf_agent.HFGenerator` whose ``generate`` runs on a vLLM engine. The
Hugging Face model stays what the trainer trains and scores with (``generator.model``, ``encode``,
``token_logprobs``); the engine holds a second copy of its weights for sampling, in the engine's dtype, and
:meth:`VLLMGenerator.sync_weights` pushes the trained weights into it after each optimiser step. Everything
else is the Hugging Face generator's contract (:mod:`agents.generation`): ``num_samples`` completions per
conversation, token ids ending with the end-of-sequence token when the model stopped, and per-token
log-probs **under the sampling policy** -- vLLM runs with ``logprobs_mode="processed_logprobs"``, so a
log-prob is ``log_softmax`` of the logits after temperature, top-k / top-p and the suppressed tokens
(``suppress_ids``; see :meth:`VLLMGenerator._suppression`), as :mod:`agents.sampling` defines it.
vLLM's kernels are not the trainer's, so those log-probs are close to, not equal to, the trained model's:
trainers recompute the old log-probs with the trained model and log the difference
(:func:`trainers.sampler_stats.logprob_mismatch`).

How the engine is built and fed (vLLM's offline ``LLM`` API, the way TRL's ``vllm_mode="colocate"`` does it):

* ``distributed_executor_backend="external_launcher"``: the engine runs in this process (vLLM turns its
  engine-core process off for it), one engine per training process, so weights go in by reference:
  ``llm.llm_engine.model_executor.driver_worker.model_runner.model.load_weights(pairs)``, then
  ``llm.reset_prefix_cache()`` (the cached prefixes were computed with the old weights).
* ``gpu_memory_utilization``: the fraction of the GPU's memory the engine may take (its weights, activations
  and KV cache); the rest is the trainer's.
* ``enable_sleep_mode=True`` (in ``engine_kwargs``): :meth:`VLLMGenerator.sleep` frees the engine's weights and
  KV cache (sleep level 2) while the trainer updates; :meth:`~VLLMGenerator.sync_weights` wakes it and pushes
  the weights back.
* Prompts go in as token ids (the chat template applied and tokenised exactly as the Hugging Face generator
  does), with screenshots as ``multi_modal_data``; vLLM expands each image placeholder itself. Identical
  conversations of a batch (a GRPO group) become one request with ``n`` samples.

LoRA (peft): the engine gets the merged weights ``W + B A * scale``, computed for each adapted layer into a new
fp32 tensor and rounded once to the engine's dtype (:func:`vllm_named_weights`); the trained model is never
merged in place, so its bf16 base weights take no merge/unmerge rounding, and the engine samples without
LoRA kernels.

vLLM is optional: ``pip install 'guigym[vllm]'`` on a CUDA machine (PyPI's wheel is a CUDA build). Without
it, constructing a :class:`VLLMGenerator` (or a GRPO config with ``decoder: vllm``) raises
:class:`VLLMUnavailableError` before any model loads.
"""

from __future__ import annotations

import importlib.util
import os
import socket
from collections.abc import Iterator, Sequence
from typing import Any

from agents.generation import Conversation, Generation, SamplingParams, count_images
from agents.hf_agent import HFGenerator, to_pil
from agents.sampling import RowPlan, refuse_greedy_groups, to_generations

#: The extra that installs vLLM.
VLLM_EXTRA = "guigym[vllm]"

#: The logit bias that keeps a suppressed token out where ``allowed_token_ids`` cannot (vLLM's bias range is +-100).
SUPPRESS_BIAS = -100.0

#: Parameter-name fragments of peft's adapter weights, which the merged weights replace.
LORA_PARAM_PARTS = (
    ".lora_A.",
    ".lora_B.",
    ".lora_embedding_A.",
    ".lora_embedding_B.",
    ".lora_magnitude_vector.",
)


class VLLMUnavailableError(ImportError):
    """vLLM is not installed, and something asked for it."""


def vllm_available() -> bool:
    """Whether ``import vllm`` can succeed (the package is installed); nothing is imported."""
    return importlib.util.find_spec("vllm") is not None


def require_vllm(what: str = "the vLLM sampler") -> None:
    """Raise :class:`VLLMUnavailableError` naming the extra unless vLLM is installed."""
    if not vllm_available():
        raise VLLMUnavailableError(
            f"{what} needs vLLM, which is not installed: pip install '{VLLM_EXTRA}' on a CUDA machine (PyPI's vllm "
            "wheel is a CUDA build; there is no CPU build to install). Without a GPU use decoder 'hf' or 'loop'."
        )


# ----- weights -------------------------------------------------------------------------------------------


def checkpoint_name(name: str) -> str:
    """The Hugging Face checkpoint name of a parameter of a wrapped model, which vLLM's ``load_weights`` reads.

    Strips what wrappers add: peft's ``base_model.model.`` prefix, ``.base_layer`` of adapted layers and
    ``modules_to_save.default.`` of fully trained modules; DDP's ``module.``; ``torch.compile``'s ``_orig_mod.``;
    activation checkpointing's ``_checkpoint_wrapped_module.``.

    >>> checkpoint_name("base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight")
    'model.layers.0.self_attn.q_proj.weight'
    >>> checkpoint_name("base_model.model.lm_head.modules_to_save.default.weight")
    'lm_head.weight'
    >>> checkpoint_name("module._orig_mod.model.norm.weight")
    'model.norm.weight'
    """
    name = name.removeprefix("module.").removeprefix("base_model.model.")
    for part in ("_orig_mod.", "_checkpoint_wrapped_module.", "modules_to_save.default."):
        name = name.replace(part, "")
    return name.replace(".base_layer.", ".")


def vllm_named_weights(model: Any, dtype: Any = None) -> Iterator[tuple[str, Any]]:
    """``(checkpoint name, tensor)`` for every weight of ``model``, one at a time, as the engine needs them.

    A plain model yields its parameters (detached, by reference; cast to ``dtype`` when given) under their own
    names. A peft model yields the weights of the model with its active adapters merged: for each LoRA layer
    ``W + sum_a delta_a`` (peft's ``get_delta_weight``: ``B A * alpha / r``), summed in fp32 into a new tensor;
    the adapter matrices and the ``original_module`` copies of ``modules_to_save`` are left out; the names are
    those of the model without peft (:func:`checkpoint_name`). Tied weights come once (``named_parameters``
    deduplicates). DoRA layers are refused (their merge also rescales by a magnitude vector).
    """
    import torch

    merged_of: dict[str, Any] = {}  # parameter name of an adapted layer's base weight -> the layer
    for module_name, module in model.named_modules():
        if hasattr(module, "get_delta_weight") and hasattr(module, "base_layer"):
            merged_of[f"{module_name}.base_layer.weight"] = module
    with torch.no_grad():
        for name, param in model.named_parameters():
            if any(part in name for part in LORA_PARAM_PARTS) or ".original_module." in name:
                continue
            tensor = param.detach()
            layer = merged_of.get(name)
            if layer is not None and not getattr(layer, "merged", False):
                tensor = _merged_weight(layer, tensor)
            yield checkpoint_name(name), tensor if dtype is None else tensor.to(dtype)


def _merged_weight(layer: Any, base: Any) -> Any:
    """``base + sum of the active adapters' deltas`` in fp32 (a new tensor; ``base`` is untouched)."""
    weight = base.float()  # a copy when base is bf16; cloned below when it is already fp32
    weight = weight.clone() if weight is base else weight
    for adapter in layer.active_adapters:
        if adapter not in getattr(layer, "lora_A", {}) and adapter not in getattr(
            layer, "lora_embedding_A", {}
        ):
            continue
        if getattr(layer, "use_dora", {}).get(adapter, False):
            raise NotImplementedError(
                "the vLLM sampler merges LoRA adapters into the weights it pushes; DoRA's magnitude rescaling is not "
                "merged here: train without use_dora, or sample with decoder 'hf'"
            )
        weight += layer.get_delta_weight(adapter).float()
    return weight


# ----- the generator -------------------------------------------------------------------------------------


class VLLMGenerator(HFGenerator):
    """Sampling on a colocated vLLM engine, scoring and training on the Hugging Face model.

    Args:
        model: a path (or hub id) the Hugging Face model and the engine both load; or a loaded model, with
            ``model_path`` naming the folder the engine loads (default: the model's ``name_or_path``).
        processor: tokenizer / processor (see :class:`~agents.hf_agent.HFGenerator`).
        device: torch device of the Hugging Face model (the engine uses this process's GPU, ``LOCAL_RANK``).
        dtype: torch dtype of the Hugging Face model (e.g. fp32 master weights); the engine's is
            ``engine_kwargs["dtype"]``, default the checkpoint's.
        seed: the engine's sampling seed (default 0); torch's global generator is left alone.
        trust_remote_code: passed to both loaders.
        gpu_memory_utilization: fraction of the GPU's memory the engine may take, in ``(0, 1)``.
        engine_kwargs: more ``vllm.LLM`` arguments (``enable_sleep_mode``, ``max_model_len``, ``dtype``,
            ``enforce_eager``, ``load_format="dummy"``, ...); they override the defaults above.
        max_images_per_prompt: screenshots one conversation may hold (vLLM's ``limit_mm_per_prompt``).
        model_path: the folder the engine loads, when ``model`` is a loaded model.
        llm: an engine already built (tests share one); ``engine_kwargs`` and the memory share are then unused.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Any,
        processor: Any = None,
        device: str | None = None,
        dtype: Any = None,
        seed: int | None = None,
        trust_remote_code: bool = False,
        gpu_memory_utilization: float = 0.3,
        engine_kwargs: dict[str, Any] | None = None,
        max_images_per_prompt: int = 1,
        model_path: str | os.PathLike[str] | None = None,
        llm: Any = None,
    ) -> None:
        if llm is None:
            require_vllm()  # before any model loads
        if not 0 < gpu_memory_utilization < 1:
            raise ValueError(f"gpu_memory_utilization must be in (0, 1), got {gpu_memory_utilization}")
        super().__init__(
            model, processor=processor, device=device, dtype=dtype, trust_remote_code=trust_remote_code
        )
        self.engine_kwargs = dict(engine_kwargs or {})
        self.sleep_mode = bool(self.engine_kwargs.get("enable_sleep_mode", False))
        self._asleep = False
        self._allowed: tuple[tuple[int, ...], dict[str, Any]] | None = (
            None  # (suppress_ids, engine arguments)
        )
        path = str(model_path or (model if isinstance(model, str | os.PathLike) else self.model.name_or_path))
        if llm is None:
            llm = self._build_engine(
                path, seed, trust_remote_code, gpu_memory_utilization, max_images_per_prompt
            )
        self.llm = llm
        if self.engine_kwargs.get("load_format") == "dummy":
            self.sync_weights()  # a dummy-loaded engine has random weights: give it the model's

    def _build_engine(
        self, path: str, seed: int | None, trust_remote_code: bool, memory: float, max_images: int
    ) -> Any:
        from vllm import LLM

        # external_launcher reads the torchrun variables; accelerate launch sets them for multi-process runs, a
        # plain `python` run is rank 0 of 1.
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("LOCAL_RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(_free_port()))
        kwargs: dict[str, Any] = {
            "model": path,
            "gpu_memory_utilization": memory,
            "seed": 0 if seed is None else int(seed),
            "distributed_executor_backend": "external_launcher",
            # The sampled tokens' log-probs after temperature / top-k / top-p: the sampling policy's.
            "logprobs_mode": "processed_logprobs",
            "trust_remote_code": trust_remote_code,
        }
        if self.supports_images:
            kwargs["limit_mm_per_prompt"] = {"image": max_images, "video": 0}
        kwargs.update(self.engine_kwargs)
        return LLM(**kwargs)

    # ----- weights --------------------------------------------------------------------------------------
    def _engine_model(self) -> Any:
        """The engine's ``nn.Module`` (reachable because external_launcher keeps the engine in this process)."""
        try:
            return self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        except AttributeError as exc:
            raise RuntimeError(
                "cannot reach the vLLM engine's model in this process: the weight sync needs "
                "distributed_executor_backend='external_launcher' (the default here; do not override it in "
                "vllm_kwargs)"
            ) from exc

    def sync_weights(self, model: Any = None) -> None:
        """Push ``model``'s weights (default ``self.model``; LoRA merged, see :func:`vllm_named_weights`) into the
        engine and drop its prefix cache; a sleeping engine is woken (weights, then KV cache) first."""
        import torch

        model = self.model if model is None else model
        if self._asleep:
            torch.cuda.empty_cache()
            self.llm.wake_up(tags=["weights"])  # level 2 freed them: map the memory back before writing it
        engine = self._engine_model()
        dtype = next(engine.parameters()).dtype
        engine.load_weights(vllm_named_weights(model, dtype))
        if self._asleep:
            self.llm.wake_up(tags=["kv_cache"])
            self._asleep = False
        self.llm.reset_prefix_cache()

    def sleep(self) -> None:
        """With ``enable_sleep_mode``: free the engine's weights and KV cache for the trainer (sleep level 2; the
        next :meth:`sync_weights` or :meth:`generate` brings them back). Without it: nothing."""
        if self.sleep_mode and not self._asleep:
            self.llm.sleep(level=2)
            self._asleep = True

    # ----- sampling -------------------------------------------------------------------------------------
    def generate(
        self,
        conversations: Sequence[Conversation],
        images: Sequence[Sequence[Any]] | None = None,
        sampling: SamplingParams | None = None,
    ) -> list[list[Generation]]:
        """``sampling.num_samples`` completions per conversation: one engine call for the batch, one request per
        distinct conversation (its rows' samples drawn as that request's ``n``)."""
        sampling = sampling or SamplingParams()
        if not conversations:
            return []
        refuse_greedy_groups(sampling)
        if self._asleep:
            self.sync_weights()  # sleep level 2 discarded the weights
        n = sampling.num_samples
        plan = RowPlan.of(conversations, images)
        prompts, requests = [], []
        for i in plan.distinct:
            prompt, request = self._request(conversations[i], images[i] if images else None)
            prompts.append(prompt)
            requests.append(request)
        params = [self._sampling_params(sampling, c * n) for c in plan.counts]
        outputs = self.llm.generate(requests, params, use_tqdm=False)
        samples = [o for out in outputs for o in out.outputs]  # each request's c * n samples together
        rows = [samples[r] for r in plan.grouped_order(n)]  # the caller's order
        ids = [list(o.token_ids) for o in rows]
        logprobs = [sampled_logprobs(o.token_ids, o.logprobs) for o in rows]
        prompt_ids = [list(out.prompt_token_ids or []) for out in outputs]
        return to_generations(self.tokenizer, self.eos_ids, ids, logprobs, plan, n, prompts, prompt_ids)

    def _request(
        self, conversation: Conversation, images: Sequence[Any] | None
    ) -> tuple[str, dict[str, Any]]:
        """The rendered prompt and the engine request: token ids as the Hugging Face tokenizer gives them and the
        screenshots. The ids hold one placeholder per image: the engine runs the image processor itself and
        expands each placeholder to the image's tokens; ids the processor had already expanded would be
        expanded twice (TRL issue 6294)."""
        prompt = self.prompt_text(conversation)
        request: dict[str, Any] = {
            "prompt_token_ids": self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        }
        pictures = [to_pil(img) for img in (images or [])]
        if self.supports_images and pictures:
            if count_images(conversation) != len(pictures):
                raise ValueError(f"{len(pictures)} images for {count_images(conversation)} image parts")
            request["multi_modal_data"] = {"image": pictures[0] if len(pictures) == 1 else pictures}
        return prompt, request

    def _sampling_params(self, sampling: SamplingParams, n: int) -> Any:
        from vllm import SamplingParams as EngineSamplingParams

        kwargs: dict[str, Any] = {
            "n": n,
            "max_tokens": sampling.max_new_tokens,
            "temperature": sampling.temperature,
            "top_p": 1.0 if sampling.top_p is None else sampling.top_p,
            "top_k": sampling.top_k or 0,  # 0: off
            "logprobs": 0,  # the sampled token's log-prob only
            "stop_token_ids": sorted(self.eos_ids),
            "detokenize": False,  # texts are decoded here, as the Hugging Face generator decodes them
        }
        if self.suppress_ids:
            kwargs.update(self._suppression())
        return EngineSamplingParams(**kwargs)

    def _suppression(self) -> dict[str, Any]:
        """How the engine leaves ``suppress_ids`` out (cached per ``suppress_ids``).

        ``allowed_token_ids`` masks everything else to ``-inf``, exactly as the Hugging Face sampler does, but vLLM
        accepts only ids below the tokenizer's length, and a model's output layer is often longer (Qwen2.5-VL:
        151,936 rows for 151,665 tokens). So when every id left is a tokenizer id (``constrain_answers``: a few
        answer tokens kept) it is ``allowed_token_ids``; otherwise (a VLM's two image placeholders) a logit bias
        of ``SUPPRESS_BIAS`` on the suppressed ids, which leaves them a probability below ``exp(-100)`` relative
        to any token within 100 nats of the best: zero in float32 sampling and log-probs.
        """
        key = tuple(self.suppress_ids)
        if self._allowed is None or self._allowed[0] != key:
            head = self.model.get_output_embeddings()
            vocab = int(head.weight.shape[0]) if head is not None else len(self.tokenizer)
            banned = set(key)
            kept = [i for i in range(vocab) if i not in banned]
            if kept and kept[-1] < len(self.tokenizer):
                self._allowed = (key, {"allowed_token_ids": kept})
            else:
                self._allowed = (key, {"logit_bias": {i: SUPPRESS_BIAS for i in key}})
        return self._allowed[1]


def sampled_logprobs(token_ids: Sequence[int], logprobs: Any) -> list[float]:
    """The sampled tokens' log-probs from a vLLM ``CompletionOutput.logprobs`` (one ``{token id: Logprob}`` per
    position; with ``logprobs=0`` it holds the sampled token)."""
    if logprobs is None:
        raise ValueError("the engine returned no log-probs: request logprobs=0")
    return [float(step[token].logprob) for token, step in zip(token_ids, logprobs, strict=True)]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


__all__ = [
    "VLLM_EXTRA",
    "VLLMGenerator",
    "VLLMUnavailableError",
    "checkpoint_name",
    "require_vllm",
    "sampled_logprobs",
    "vllm_available",
    "vllm_named_weights",
]
