"""Hugging Face models as agents: any causal LM, or any vision-language model through ``AutoProcessor``.

:class:`HFGenerator` samples with ``model.generate`` and returns, for each completion, the generated token
ids and their log-probabilities **under the sampling policy**: at step ``t`` the log-prob is
``log_softmax(processed_logits_t)[token_t]``, where ``processed_logits_t`` are the scores ``generate``
actually sampled from, i.e. the raw logits after every logits processor -- temperature division, then the
top-k and top-p masks (masked tokens get ``-inf``; so do a VLM's image placeholder tokens,
``HFGenerator.suppress_ids``, which the policy never emits). So with ``temperature=T`` and no top-k/top-p the
log-prob is ``log_softmax(logits / T)``; with greedy decoding (``temperature=0``) nothing is processed and
the log-prob is that of the raw logits. Trainers that need ``log pi_theta`` at ``T = 1`` recompute it with
:meth:`HFGenerator.token_logprobs`.

A GRPO group is ``N`` copies of one conversation (``N`` env slots reset with the same seed). With
``prompt_sharing="cache"`` each distinct conversation of a batch is rendered, tokenised and prefilled once,
and its KV cache is copied to its samples before decoding (one extra forward call: the prefill);
``"encode"`` renders and tokenises once but lets ``generate`` expand the rows before the prefill (what
vision-language inputs use, whose image tensors do not split by row); ``"none"`` encodes every conversation
separately. ``"auto"`` is ``"cache"`` when it spares at least :data:`CACHE_MIN_TOKENS` prompt tokens of
prefill, else ``"encode"``. Every mode samples the same distribution. ``"encode"`` (the default) also draws
the same random numbers as ``"none"`` (the same rows, prefilled the same way), so seeded runs repeat what they
gave before sharing existed; the cache's logits differ from a full prefill in the last float bits, which sends
a seeded run down another (equally likely) path.

``decoder="loop"`` replaces ``generate`` for text batches with :func:`agents.decode_loop.sample_tokens`: the
same distribution, the same log-probs, less overhead per token (see that module).

:class:`HFAgent` is an :class:`~agents.lm_agent.LMAgent` on top of an :class:`HFGenerator` loaded by path.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.generation import Conversation, Generation, SamplingParams, count_images, flatten_text
from agents.lm_agent import LMAgent
from agents.prompts.formats import OutputFormat

#: The ``prompt_sharing`` modes of :class:`HFGenerator`.
PROMPT_SHARING = ("auto", "cache", "encode", "none")
#: ``prompt_sharing="auto"`` prefills once when that spares at least this many prompt tokens (rows x padded
#: length): below it the extra forward call costs more than it saves (measured with the tiny CPU model of
#: ``benchmarks/trainer_speed.py``: a 1x4 group of 60-token prompts is slower shared, an 8x8 batch faster).
CACHE_MIN_TOKENS = 512


#: The ``decoder`` values of :class:`HFGenerator`.
DECODERS = ("hf", "loop")


class ModelLoadError(RuntimeError):
    """The model or its processor could not be loaded from the given path."""


class HFGenerator:
    """Batched sampling with a Hugging Face model.

    Args:
        model: a path or hub id, or an already loaded ``PreTrainedModel``.
        processor: a tokenizer or multimodal processor; loaded with ``AutoProcessor`` from ``model`` (falling
            back to ``AutoTokenizer``) when ``None``.
        device: ``"cpu"``, ``"cuda"``, ...; default CUDA when available.
        dtype: a torch dtype (or its name) for loading; default the checkpoint's.
        seed: seeds torch's global generator once, so that a fresh generator samples reproducibly.
        trust_remote_code: passed to ``from_pretrained``.
        prompt_sharing: ``"auto"``, ``"cache"``, ``"encode"`` or ``"none"``: how much work identical
            conversations of one batch share (see the module docstring). Samples are drawn from the same distribution in
            every mode; only the random draws differ.
        decoder: ``"hf"`` (default): Hugging Face ``generate``; ``"loop"``: guigym's own sampling loop
            (:mod:`agents.decode_loop`), the same distribution with less per-token overhead, for text-only
            batches (image batches, and checkpoints whose generation config sets something the loop does not
            apply, go to ``generate``). Under ``prompt_sharing`` ``"encode"`` or ``"none"`` the loop draws the
            same tokens as ``generate`` from the same seed; under ``"auto"`` or ``"cache"`` it prefills each
            distinct prompt once (that costs the loop no extra call, so ``"auto"`` always shares).
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Any,
        processor: Any = None,
        device: str | None = None,
        dtype: Any = None,
        seed: int | None = None,
        trust_remote_code: bool = False,
        prompt_sharing: str = "encode",
        decoder: str = "hf",
    ) -> None:
        import torch

        if prompt_sharing not in PROMPT_SHARING:
            raise ValueError(f"prompt_sharing={prompt_sharing!r}: use one of {PROMPT_SHARING}")
        if decoder not in DECODERS:
            raise ValueError(f"decoder={decoder!r}: use one of {DECODERS}")
        self.prompt_sharing = prompt_sharing
        self.decoder = decoder
        if seed is not None:
            torch.manual_seed(seed)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        path = None if hasattr(model, "generate") else str(model)
        self.processor = processor if processor is not None else load_processor(path, trust_remote_code)
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        #: Whether the processor turns images into model inputs (a VLM).
        self.supports_images = getattr(self.processor, "image_processor", None) is not None
        if path is None:
            self.model = model
        else:
            self.model = load_model(path, self.supports_images, dtype, trust_remote_code)
        self.model.to(self.device)
        self.model.eval()
        self.tokenizer.padding_side = "left"  # generation appends on the right, so prompts pad on the left
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.eos_ids = _eos_ids(self.model, self.tokenizer)
        #: Token ids the policy never emits: a VLM's image / video placeholders, which the model would read back
        #: as slots for image features when the completion is scored (and fail: more slots than images).
        self.suppress_ids: tuple[int, ...] = tuple(
            int(i) for name in ("image_token_id", "video_token_id")
            if isinstance(i := getattr(self.processor, name, None), int) and self.supports_images
        )  # fmt: skip

    # ----- prompts ------------------------------------------------------------------------------------
    def prompt_text(self, conversation: Conversation) -> str:
        """The conversation rendered by the chat template (with the generation prompt), or plain text."""
        owner = self.processor if getattr(self.processor, "chat_template", None) else self.tokenizer
        if getattr(owner, "chat_template", None):
            return owner.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
        return flatten_text(conversation)

    def encode(
        self, conversations: Sequence[Conversation], images: Sequence[Sequence[Any]] | None
    ) -> tuple[list[str], Any]:
        """Prompts and the padded model inputs for a batch of conversations."""
        prompts = [self.prompt_text(c) for c in conversations]
        flat = [to_pil(img) for imgs in (images or []) for img in imgs]
        if self.supports_images and flat:
            n_parts = sum(count_images(c) for c in conversations)
            if n_parts != len(flat):
                raise ValueError(f"{len(flat)} images for {n_parts} image parts in the conversations")
            inputs = self.processor(text=prompts, images=flat, padding=True, return_tensors="pt")
        else:
            inputs = self.tokenizer(prompts, padding=True, return_tensors="pt", add_special_tokens=False)
        return prompts, inputs.to(self.device)

    # ----- sampling -----------------------------------------------------------------------------------
    def generate(
        self,
        conversations: Sequence[Conversation],
        images: Sequence[Sequence[Any]] | None = None,
        sampling: SamplingParams | None = None,
    ) -> list[list[Generation]]:
        """Sample ``sampling.num_samples`` completions per conversation in one ``model.generate`` call."""
        import torch

        sampling = sampling or SamplingParams()
        if not conversations:
            return []
        n = sampling.num_samples
        # Distinct conversations and how many rows ask for each (a group asks N times for one).
        slot_of: list[int] = []  # (B,) the distinct conversation of each row
        distinct: list[int] = []  # (U,) the first row of each distinct conversation
        first: dict[Any, int] = {}
        for i, conversation in enumerate(conversations):
            key = (
                i
                if self.prompt_sharing == "none"
                else conversation_key(conversation, images[i] if images else None)
            )
            if key not in first:
                first[key] = len(distinct)
                distinct.append(i)
            slot_of.append(first[key])
        counts = np.bincount(slot_of).tolist()  # (U,) rows per distinct conversation
        prompts, inputs = self.encode(
            [conversations[i] for i in distinct], [images[i] for i in distinct] if images else None
        )
        kwargs: dict[str, Any] = {
            "max_new_tokens": sampling.max_new_tokens,
            "output_scores": True,
            "return_dict_in_generate": True,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if sampling.greedy:
            if n > 1:
                raise ValueError(
                    "greedy decoding (temperature=0) gives identical samples; use temperature > 0"
                )
            kwargs.update(do_sample=False, temperature=None, top_k=None, top_p=None)
        else:
            # Explicit "off" values (top_k=0, top_p=1) override any generation_config.json defaults.
            kwargs.update(
                do_sample=True,
                temperature=sampling.temperature,
                top_k=sampling.top_k or 0,
                top_p=sampling.top_p if sampling.top_p is not None else 1.0,
            )
        if self.suppress_ids:
            kwargs["suppress_tokens"] = list(self.suppress_ids)
        repeats = [c * n for c in counts]  # (U,) sampled rows per distinct conversation
        text_only = set(inputs) == {"input_ids", "attention_mask"}
        spared = (sum(repeats) - len(repeats)) * inputs["input_ids"].shape[1]  # prompt tokens not prefilled
        use_cache = self.prompt_sharing == "cache" or (
            self.prompt_sharing == "auto" and spared >= CACHE_MIN_TOKENS
        )
        # Text rows index by row, so they are sampled in the caller's order (conversation i's samples at rows
        # i * n ... i * n + n - 1), as without sharing: a seeded run draws the same random numbers for each.
        in_order = text_only
        # Inference mode, not only no_grad: no autograd bookkeeping per op (version counters, view tracking), which
        # on a small model is a sixth of the sampling time; what leaves the block is converted to lists.
        with torch.inference_mode():
            if text_only and self._loop_decodes():
                new_tokens, logprobs = self._sample_with_loop(
                    inputs, np.repeat(slot_of, n).tolist(), sampling
                )
            else:
                if use_cache and text_only and inputs["input_ids"].shape[1] > 1:
                    out = self._generate_from_shared_cache(inputs, np.repeat(slot_of, n).tolist(), kwargs)
                elif text_only:
                    rows = torch.as_tensor(slot_of, device=inputs["input_ids"].device)
                    out = self.model.generate(
                        **{k: v[rows] for k, v in inputs.items()}, num_return_sequences=n, **kwargs
                    )
                elif (
                    len(set(repeats)) == 1
                ):  # image tensors do not index by row: rows grouped per distinct one
                    out = self.model.generate(**inputs, num_return_sequences=repeats[0], **kwargs)
                else:  # unequal counts with image tensors: encode every row
                    return self._generate_rows(conversations, images, sampling)
                new_tokens = out.sequences[:, inputs["input_ids"].shape[1] :]  # (B * n, T)
                # log pi(token_t) under the processed (post temperature / top-k / top-p) scores; (rows, T)
                logprobs = torch.stack(
                    [
                        torch.log_softmax(score.float(), dim=-1)
                        .gather(1, new_tokens[:, t : t + 1])
                        .squeeze(1)
                        for t, score in enumerate(out.scores)
                    ],
                    dim=1,
                )
        attention = inputs["attention_mask"].bool()
        # One tensor-to-list conversion and one batched decode for the whole batch: per-row calls cost more
        # than the tiny model's decoding step on a large batch.
        prompt_ids = [inputs["input_ids"][u][attention[u]].tolist() for u in range(len(distinct))]
        all_ids, all_logprobs = new_tokens.tolist(), logprobs.tolist()
        ends = [completion_length(ids, self.eos_ids) for ids in all_ids]  # (rows,) (length, finish reason)
        texts = self.tokenizer.batch_decode(
            [ids[:length] for ids, (length, _) in zip(all_ids, ends, strict=True)], skip_special_tokens=True
        )
        starts = np.concatenate([[0], np.cumsum(repeats)]).tolist()
        taken = [0] * len(distinct)  # samples of each distinct conversation handed out so far
        results: list[list[Generation]] = []
        for i, u in enumerate(slot_of):
            group = []
            first_row = i * n if in_order else starts[u] + taken[u]
            for row in range(first_row, first_row + n):
                length, finish = ends[row]
                group.append(
                    Generation(
                        text=texts[row],
                        token_ids=all_ids[row][:length],
                        logprobs=all_logprobs[row][:length],
                        prompt=prompts[u],
                        finish_reason=finish,
                        extra={"prompt_token_ids": prompt_ids[u]},
                    )
                )
            taken[u] += n
            results.append(group)
        return results

    def _loop_decodes(self) -> bool:
        """Whether text batches go to :func:`agents.decode_loop.sample_tokens` (``decoder="loop"`` and nothing in
        the model's generation config that only ``generate`` applies; that case is warned about once)."""
        if self.decoder != "loop":
            return False
        if not hasattr(self, "_loop_ignores"):
            from agents.decode_loop import settings_the_loop_ignores

            self._loop_ignores = settings_the_loop_ignores(self.model)
            if self._loop_ignores:
                warnings.warn(
                    f"decoder='loop' does not apply {', '.join(self._loop_ignores)} from the model's generation "
                    "config: sampling with Hugging Face generate instead",
                    stacklevel=3,
                )
        return not self._loop_ignores

    def _sample_with_loop(self, inputs: Any, source: list[int], sampling: SamplingParams) -> tuple[Any, Any]:
        """``(rows, T)`` tokens and log-probs from guigym's loop; row ``r`` continues distinct prompt
        ``source[r]``. Without sharing every row is prefilled on its own, as ``generate`` does."""
        import torch

        from agents.decode_loop import sample_tokens

        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        if self.prompt_sharing in ("encode", "none"):
            index = torch.as_tensor(source, device=ids.device)
            ids, mask, source = ids[index], mask[index], list(range(len(source)))
        return sample_tokens(
            self.model, ids, mask, source, max_new_tokens=sampling.max_new_tokens, eos_ids=sorted(self.eos_ids),
            pad_id=self.tokenizer.pad_token_id, temperature=sampling.temperature, top_k=sampling.top_k,
            top_p=sampling.top_p, suppress_ids=self.suppress_ids,
        )  # fmt: skip

    def _generate_from_shared_cache(self, inputs: Any, source: list[int], kwargs: dict[str, Any]) -> Any:
        """Prefill each distinct prompt once, copy its KV cache to the sampled rows (row ``r`` continues distinct
        prompt ``source[r]``), then decode.

        All but the last prompt token are run here; ``generate`` runs the last one for every row (so its
        first sampling step starts from the shared cache) and counts positions along the attention mask the
        same way, so the result is the distribution of an unshared ``generate`` call.
        """
        import torch

        ids, mask = inputs["input_ids"], inputs["attention_mask"]  # (U, P)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)  # left padding does not shift positions
        prefill = self.model(
            input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=positions[:, :-1], use_cache=True
        )
        # transformers 5 calls the cache ``cache``; 4.x ``past_key_values``.
        cache, name = getattr(prefill, "cache", None), "cache"
        if cache is None:
            cache, name = prefill.past_key_values, "past_key_values"
        index = torch.as_tensor(source, device=ids.device)  # (rows,) the distinct prompt of each sampled row
        cache.batch_select_indices(index)
        return self.model.generate(
            input_ids=ids[index], attention_mask=mask[index], **{name: cache}, **kwargs
        )

    def _generate_rows(
        self,
        conversations: Sequence[Conversation],
        images: Sequence[Sequence[Any]] | None,
        sampling: SamplingParams,
    ) -> list[list[Generation]]:
        """:meth:`generate` with sharing off, for batches it cannot share."""
        saved, self.prompt_sharing = self.prompt_sharing, "none"
        try:
            return self.generate(conversations, images, sampling)
        finally:
            self.prompt_sharing = saved

    def token_logprobs(
        self,
        conversation: Conversation,
        token_ids: Sequence[int],
        images: Sequence[Any] | None = None,
        temperature: float = 1.0,
    ) -> Any:
        """Teacher-forced ``log_softmax(logits / temperature)`` of ``token_ids`` after the prompt; shape (T,).

        Gradients flow when called outside ``torch.no_grad`` (for trainers).
        """
        import torch

        _, inputs = self.encode([conversation], [list(images or [])])
        completion = torch.tensor([list(token_ids)], dtype=torch.long, device=self.device)
        ids = torch.cat([inputs["input_ids"], completion], dim=1)
        mask = torch.ones_like(ids)
        extra = {
            k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask", "mm_token_type_ids")
        }
        if "mm_token_type_ids" in inputs:
            extra["mm_token_type_ids"] = torch.cat(
                [inputs["mm_token_type_ids"], torch.zeros_like(completion)], dim=1
            )
        logits = self.model(input_ids=ids, attention_mask=mask, **extra).logits  # (1, P + T, V)
        p = inputs["input_ids"].shape[1]
        step_logits = logits[0, p - 1 : p - 1 + completion.shape[1]].float() / temperature  # (T, V)
        step_logits = suppress_logits(step_logits, self.suppress_ids)
        return torch.log_softmax(step_logits, dim=-1).gather(1, completion[0][:, None]).squeeze(1)


class HFAgent(LMAgent):
    """A Hugging Face causal LM or VLM, loaded by path, as an agent.

    Args:
        model: a path (or hub id) or a loaded model.
        output_format: ``"auto"``, ``"gui_r1"``, ``"text"`` or an :class:`OutputFormat`.
        temperature: softmax temperature (0: greedy).
        top_p: nucleus mass (``None``: off).
        top_k: top-k cut (``None``: off).
        max_new_tokens: token budget per completion.
        processor: tokenizer/processor to use instead of loading one.
        device: torch device; default CUDA when available.
        dtype: torch dtype for loading.
        seed: seeds torch once, for reproducible sampling.
        use_images: send screenshots (default: when the processor handles images).
        prompt_sharing: ``"auto"``, ``"cache"``, ``"encode"`` or ``"none"`` (see :class:`HFGenerator`).
        decoder: ``"hf"`` (``generate``) or ``"loop"`` (see :class:`HFGenerator`).
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Any,
        output_format: OutputFormat | str | None = "auto",
        temperature: float = 1.0,
        top_p: float | None = None,
        top_k: int | None = None,
        max_new_tokens: int = 256,
        processor: Any = None,
        device: str | None = None,
        dtype: Any = None,
        seed: int | None = None,
        use_images: bool | None = None,
        prompt_sharing: str = "encode",
        decoder: str = "hf",
    ) -> None:
        generator = HFGenerator(
            model, processor=processor, device=device, dtype=dtype, seed=seed, prompt_sharing=prompt_sharing,
            decoder=decoder,
        )  # fmt: skip
        sampling = SamplingParams(
            temperature=temperature, top_p=top_p, top_k=top_k, max_new_tokens=max_new_tokens
        )
        name = (
            f"hf:{os.path.basename(str(model).rstrip('/'))}" if isinstance(model, str | os.PathLike) else "hf"
        )
        super().__init__(generator, output_format, sampling, use_images, name=name)


# ----- loading -----------------------------------------------------------------------------------------


def load_processor(path: str | None, trust_remote_code: bool) -> Any:
    """The processor of the checkpoint at ``path`` (a VLM's), else its tokenizer (a text-only checkpoint's).

    Raises:
        ModelLoadError: ``path`` is ``None``, or neither loads (the message says why).
    """
    if path is None:
        raise ModelLoadError("pass processor= (a tokenizer or processor) together with a loaded model")
    from transformers import AutoProcessor, AutoTokenizer

    _register_image_only_processor(path)
    try:
        processor = AutoProcessor.from_pretrained(path, trust_remote_code=trust_remote_code)
    except Exception as processor_error:  # text-only checkpoints may have no processor config
        try:
            return AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
        except Exception as exc:
            raise ModelLoadError(
                f"could not load a processor or tokenizer from {path!r}: {processor_error}; {exc}. "
                "Vision-language processors need torchvision for their video half (pip install torchvision)."
            ) from exc
    return processor


def _register_image_only_processor(path: str) -> None:
    """Register the image-only Qwen-VL processor (:mod:`agents.tiny_models`) that a local folder's processor
    config names, so that ``AutoProcessor`` finds its class without torchvision; other folders are untouched."""
    config = Path(path) / "processor_config.json"
    if not config.is_file():
        return
    try:
        name = json.loads(config.read_text()).get("processor_class")
    except (OSError, ValueError, AttributeError):
        return  # AutoProcessor reports an unreadable config itself
    from agents.tiny_models import IMAGE_ONLY_PROCESSORS, image_only_qwen2_vl_processor_class

    if name in IMAGE_ONLY_PROCESSORS:
        image_only_qwen2_vl_processor_class(IMAGE_ONLY_PROCESSORS[name])


def load_model(path: str, vision: bool, dtype: Any, trust_remote_code: bool) -> Any:
    """The model at ``path``: image-text-to-text when ``vision``, else a causal LM, in ``dtype`` (``None``: the
    checkpoint's). Trainers load their frozen reference model with it.

    Raises:
        ModelLoadError: naming the path and the kind of model it could not be loaded as.
    """
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText

    kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if dtype is not None:
        kwargs["dtype"] = dtype
    try:
        if vision:
            return AutoModelForImageTextToText.from_pretrained(path, **kwargs)
        return AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except Exception as exc:
        kind = "image-text-to-text" if vision else "causal LM"
        raise ModelLoadError(f"could not load {path!r} as a {kind} model: {exc}") from exc


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), getattr(model, "config", None), tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids


def completion_length(ids: list[int], eos_ids: set[int]) -> tuple[int, str]:
    """Tokens up to and including the first end-of-sequence token; what follows is padding."""
    for t, token in enumerate(ids):
        if token in eos_ids:
            return t + 1, "stop"
    return len(ids), "length"


def suppress_logits(logits: Any, ids: Sequence[int]) -> Any:
    """``logits`` (``(..., V)``, float32) with the ``ids`` columns at -1e9: probability exactly 0, as the sampler's
    ``-inf`` (``suppress_tokens``) gives them, while the entropy's ``p * log p`` stays 0 (``-inf`` or
    ``finfo.min`` would make it NaN)."""
    import torch

    if not ids:
        return logits
    return logits.index_fill(-1, torch.as_tensor(list(ids), device=logits.device), -1e9)


def conversation_key(
    conversation: Conversation, images: Sequence[Any] | None
) -> tuple[str, tuple[str, ...]]:
    """What makes two conversations the same prompt: their messages and the bytes of their images."""
    digests = []
    for img in images or []:
        arr = np.asarray(img)
        digests.append(
            f"{arr.shape}:{hashlib.blake2b(np.ascontiguousarray(arr).tobytes(), digest_size=16).hexdigest()}"
        )
    return json.dumps(conversation, sort_keys=True, default=str), tuple(digests)


def to_pil(image: Any) -> Any:
    """An RGB ``PIL.Image`` of a screenshot given as a PIL image or an ``(H, W, 3)`` array (clipped to uint8)."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    array = np.asarray(image)
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    return Image.fromarray(array).convert("RGB")
