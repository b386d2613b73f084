"""Hugging Face models as agents: any causal LM, or any vision-language model through ``AutoProcessor``.

:class:`HFGenerator` loads the model and its processor, renders and encodes conversations, and scores
completions (:meth:`HFGenerator.token_logprobs`); how it samples -- the decoding strategies, prompt sharing and
the log-probs it returns with each token (those of the sampling policy) -- is :mod:`agents.sampling`.

:class:`HFAgent` is an :class:`~agents.lm_agent.LMAgent` on top of an :class:`HFGenerator` loaded by path.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.generation import Conversation, Generation, SamplingParams, count_images, flatten_text
from agents.hub import check_saved_model, resolve_model
from agents.lm_agent import LMAgent
from agents.prompts.formats import OutputFormat
from agents.sampling import (
    DECODERS,
    PROMPT_SHARING,
    RowPlan,
    SpecialTokens,
    choose_strategy,
    decode,
    refuse_greedy_groups,
    settings_the_loop_ignores,
    to_generations,
)


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
            conversations of one batch share (:mod:`agents.sampling`). Samples are drawn from the same
            distribution in every mode; only the random draws differ.
        decoder: ``"hf"`` (default): Hugging Face ``generate``; ``"loop"``: guigym's own sampling loop
            (:func:`agents.sampling.sample_tokens`), the same distribution with less per-token overhead, for
            text-only batches (image batches, and checkpoints whose generation config sets something the loop
            does not apply, go to ``generate``). Under ``prompt_sharing`` ``"encode"`` or ``"none"`` the loop
            draws the same tokens as ``generate`` from the same seed; under ``"auto"`` or ``"cache"`` it prefills
            each distinct prompt once (that costs the loop no extra call, so ``"auto"`` always shares). Together
            with ``prompt_sharing`` and the batch, it picks the decoding strategy
            (:func:`agents.sampling.choose_strategy`).
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
        # A hub id is checked before loading: offline, one line within seconds instead of minutes of retries.
        path = None if hasattr(model, "generate") else resolve_model(model)
        if path is not None:
            check_saved_model(path)  # a folder that holds no model: one line, not from_pretrained's dozen
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
        """Sample ``sampling.num_samples`` completions per conversation in one batched decode: each distinct
        conversation encoded once (unless ``prompt_sharing="none"``), then the strategy
        :func:`agents.sampling.choose_strategy` picks."""
        sampling = sampling or SamplingParams()
        if not conversations:
            return []
        refuse_greedy_groups(sampling)
        n = sampling.num_samples
        plan = RowPlan.of(conversations, images, share=self.prompt_sharing != "none")
        prompts, inputs = self.encode(
            [conversations[i] for i in plan.distinct], [images[i] for i in plan.distinct] if images else None
        )
        strategy = choose_strategy(
            inputs,
            plan,
            n,
            decoder=self.decoder,
            prompt_sharing=self.prompt_sharing,
            loop_applies=self._loop_applies,
            greedy=sampling.greedy,
        )
        if strategy is None:  # an image batch that cannot be grouped: every row encoded on its own
            plan = RowPlan.of(conversations, images, share=False)
            prompts, inputs = self.encode(conversations, images)
            strategy = "generate_groups"
        special = SpecialTokens(frozenset(self.eos_ids), self.tokenizer.pad_token_id, self.suppress_ids)
        new_tokens, logprobs = decode(strategy, self.model, inputs, plan, sampling, special)
        attention = inputs["attention_mask"].bool()
        # One tensor-to-list conversion for the whole batch: per-row calls cost more than the tiny model's
        # decoding step on a large batch.
        prompt_ids = [inputs["input_ids"][u][attention[u]].tolist() for u in range(len(plan.distinct))]
        return to_generations(
            self.tokenizer, self.eos_ids, new_tokens.tolist(), logprobs.tolist(), plan, n, prompts, prompt_ids
        )

    def _loop_applies(self) -> bool:
        """Whether ``decoder="loop"`` may sample this model: nothing in its generation config that only
        ``generate`` applies (checked once; that case is warned about)."""
        if not hasattr(self, "_loop_ignores"):
            self._loop_ignores = settings_the_loop_ignores(self.model)
            if self._loop_ignores:
                warnings.warn(
                    f"decoder='loop' does not apply {', '.join(self._loop_ignores)} from the model's generation "
                    "config: sampling with Hugging Face generate instead",
                    stacklevel=4,
                )
        return not self._loop_ignores

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

    image_only = _image_only_processor_class(path)
    try:
        if image_only is not None:
            # Loaded by its own class: transformers before 5.2x ignores AutoProcessor.register for a config class of
            # its own (Qwen2_5_VLConfig), and AutoProcessor then returns the bare tokenizer (seen on 5.17).
            return image_only.from_pretrained(path)
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


def _image_only_processor_class(path: str) -> Any:
    """The image-only Qwen-VL processor class (:mod:`agents.tiny_models`, no torchvision) that a local folder's
    processor config names, registered with ``AutoProcessor`` too; ``None`` for any other folder."""
    config = Path(path) / "processor_config.json"
    if not config.is_file():
        return None
    try:
        name = json.loads(config.read_text()).get("processor_class")
    except (OSError, ValueError, AttributeError):
        return None  # AutoProcessor reports an unreadable config itself
    from agents.tiny_models import IMAGE_ONLY_PROCESSORS, image_only_qwen2_vl_processor_class

    if name in IMAGE_ONLY_PROCESSORS:
        return image_only_qwen2_vl_processor_class(IMAGE_ONLY_PROCESSORS[name])
    return None


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


def suppress_logits(logits: Any, ids: Sequence[int]) -> Any:
    """``logits`` (``(..., V)``, float32) with the ``ids`` columns at -1e9: probability exactly 0, as the sampler's
    ``-inf`` (``suppress_tokens``) gives them, while the entropy's ``p * log p`` stays 0 (``-inf`` or
    ``finfo.min`` would make it NaN)."""
    import torch

    if not ids:
        return logits
    return logits.index_fill(-1, torch.as_tensor(list(ids), device=logits.device), -1e9)


def to_pil(image: Any) -> Any:
    """An RGB ``PIL.Image`` of a screenshot given as a PIL image or an ``(H, W, 3)`` array (clipped to uint8)."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    array = np.asarray(image)
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    return Image.fromarray(array).convert("RGB")
