"""Hugging Face models as agents: any causal LM, or any vision-language model through ``AutoProcessor``.

:class:`HFGenerator` samples with ``model.generate`` and returns, for each completion, the generated token
ids and their log-probabilities **under the sampling policy**: at step ``t`` the log-prob is
``log_softmax(processed_logits_t)[token_t]``, where ``processed_logits_t`` are the scores ``generate``
actually sampled from, i.e. the raw logits after every logits processor -- temperature division, then the
top-k and top-p masks (masked tokens get ``-inf``). So with ``temperature=T`` and no top-k/top-p the
log-prob is ``log_softmax(logits / T)``; with greedy decoding (``temperature=0``) nothing is processed and
the log-prob is that of the raw logits. Trainers that need ``log pi_theta`` at ``T = 1`` recompute it with
:meth:`HFGenerator.token_logprobs`.

:class:`HFAgent` is an :class:`~agents.lm_agent.LMAgent` on top of an :class:`HFGenerator` loaded by path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.generation import Conversation, Generation, SamplingParams, count_images, flatten_text
from agents.lm_agent import LMAgent
from agents.prompts.formats import OutputFormat


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
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Any,
        processor: Any = None,
        device: str | None = None,
        dtype: Any = None,
        seed: int | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        import torch

        if seed is not None:
            torch.manual_seed(seed)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        path = None if hasattr(model, "generate") else str(model)
        self.processor = processor if processor is not None else _load_processor(path, trust_remote_code)
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        #: Whether the processor turns images into model inputs (a VLM).
        self.supports_images = getattr(self.processor, "image_processor", None) is not None
        if path is None:
            self.model = model
        else:
            self.model = _load_model(path, self.supports_images, dtype, trust_remote_code)
        self.model.to(self.device)
        self.model.eval()
        self.tokenizer.padding_side = "left"  # generation appends on the right, so prompts pad on the left
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.eos_ids = _eos_ids(self.model, self.tokenizer)

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
        flat = [_to_pil(img) for imgs in (images or []) for img in imgs]
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
        prompts, inputs = self.encode(conversations, images)
        n = sampling.num_samples
        kwargs: dict[str, Any] = {
            "max_new_tokens": sampling.max_new_tokens,
            "num_return_sequences": n,
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
        with torch.no_grad():
            out = self.model.generate(**inputs, **kwargs)
        prompt_len = inputs["input_ids"].shape[1]
        new_tokens = out.sequences[:, prompt_len:]  # (B * n, T), rows grouped per conversation
        # log pi(token_t) under the processed (post temperature / top-k / top-p) scores; (B * n, T)
        logprobs = torch.stack(
            [
                torch.log_softmax(score.float(), dim=-1).gather(1, new_tokens[:, t : t + 1]).squeeze(1)
                for t, score in enumerate(out.scores)
            ],
            dim=1,
        )
        attention = inputs["attention_mask"]
        results: list[list[Generation]] = []
        for i, prompt in enumerate(prompts):
            prompt_ids = inputs["input_ids"][i][attention[i].bool()].tolist()
            group = []
            for row in range(i * n, (i + 1) * n):
                ids = new_tokens[row].tolist()
                length, finish = _completion_length(ids, self.eos_ids)
                ids = ids[:length]
                group.append(
                    Generation(
                        text=self.tokenizer.decode(ids, skip_special_tokens=True),
                        token_ids=ids,
                        logprobs=logprobs[row, :length].tolist(),
                        prompt=prompt,
                        finish_reason=finish,
                        extra={"prompt_token_ids": prompt_ids},
                    )
                )
            results.append(group)
        return results

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
    ) -> None:
        generator = HFGenerator(model, processor=processor, device=device, dtype=dtype, seed=seed)
        sampling = SamplingParams(
            temperature=temperature, top_p=top_p, top_k=top_k, max_new_tokens=max_new_tokens
        )
        name = (
            f"hf:{os.path.basename(str(model).rstrip('/'))}" if isinstance(model, str | os.PathLike) else "hf"
        )
        super().__init__(generator, output_format, sampling, use_images, name=name)


# ----- loading -----------------------------------------------------------------------------------------


def _load_processor(path: str | None, trust_remote_code: bool) -> Any:
    if path is None:
        raise ModelLoadError("pass processor= (a tokenizer or processor) together with a loaded model")
    from transformers import AutoProcessor, AutoTokenizer

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


def _load_model(path: str, vision: bool, dtype: Any, trust_remote_code: bool) -> Any:
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


def _completion_length(ids: list[int], eos_ids: set[int]) -> tuple[int, str]:
    """Tokens up to and including the first end-of-sequence token; what follows is padding."""
    for t, token in enumerate(ids):
        if token in eos_ids:
            return t + 1, "stop"
    return len(ids), "length"


def _to_pil(image: Any) -> Any:
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    array = np.asarray(image)
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    return Image.fromarray(array).convert("RGB")
