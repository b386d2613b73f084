"""``agents.tiny_models.build_vlm``: the documented sizes, a screenshot's visual tokens, and loading by path alone
(the image-only processor registers itself, no torchvision, no download)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.tiny_models import build_vlm

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("size", "params"), [("tiny", 209_120), ("pixels", 492_672)])
def test_build_vlm_sizes(tmp_path: Path, size: str, params: int) -> None:
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(build_vlm(tmp_path / size, size))
    assert sum(p.numel() for p in model.parameters()) == params  # the counts quoted in VLM_SIZES' comment


def test_a_140_pixel_screenshot_is_25_visual_tokens_one_per_answer_cell(tmp_path: Path) -> None:
    from agents.hf_agent import HFGenerator

    gen = HFGenerator(str(build_vlm(tmp_path / "vlm", "pixels")), device="cpu")
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "click the red box"}]}]
    shot = np.full((140, 140, 3), 245, np.uint8)
    inputs = gen.encode([conv], [[shot]])[1]
    assert inputs["image_grid_thw"].tolist() == [[1, 10, 10]]  # 10 x 10 patches of 14 pixels, no resizing
    assert int((inputs["input_ids"] == gen.processor.image_token_id).sum()) == 25  # merged 2 x 2


def test_a_saved_vlm_loads_by_path_in_a_fresh_process(tmp_path: Path) -> None:
    path = build_vlm(tmp_path / "vlm", "tiny")
    code = (
        "import sys; from agents.hf_agent import HFGenerator; "
        "g = HFGenerator(sys.argv[1], device='cpu'); assert g.supports_images; print(type(g.processor).__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ImageOnlyQwen2_5_VLProcessor"


def test_build_vlm_refuses_an_unknown_size(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="size must be one of"):
        build_vlm(tmp_path / "vlm", "huge")


def test_build_llava_size_and_one_visual_token_per_answer_cell(tmp_path: Path) -> None:
    from agents.hf_agent import HFGenerator
    from agents.tiny_models import build_llava

    gen = HFGenerator(str(build_llava(tmp_path / "llava")), device="cpu")
    assert sum(p.numel() for p in gen.model.parameters()) == 361_568  # the count quoted in LLAVA_SIZES' comment
    assert type(gen.processor).__name__ == "LlavaProcessor" and gen.supports_images
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "click the red box"}]}]
    inputs = gen.encode([conv], [[np.full((140, 140, 3), 245, np.uint8)]])[1]
    assert tuple(inputs["pixel_values"].shape) == (1, 3, 140, 140)  # resized, never cropped
    assert int((inputs["input_ids"] == gen.processor.image_token_id).sum()) == 25  # 5 x 5 patches, CLS dropped
    # A token's features depend on where it is (absolute position embeddings): two copies of one blank patch differ.
    features = gen.model.get_image_features(pixel_values=inputs["pixel_values"])
    features = features.pooler_output if hasattr(features, "pooler_output") else features
    rows = torch_rows(features)
    assert not np.allclose(rows[0], rows[1])


def torch_rows(features) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The visual tokens of the first image as a (tokens, hidden) array, whatever container transformers returns."""
    first = features[0] if isinstance(features, (list, tuple)) else features
    return first.detach().reshape(-1, first.shape[-1]).numpy()


def test_build_llava_refuses_a_patch_that_does_not_tile_the_image(tmp_path: Path) -> None:
    from agents.tiny_models import build_llava

    with pytest.raises(ValueError, match="multiple of the patch side"):
        build_llava(tmp_path / "llava", patch=30)


def test_the_cli_builds_each_architecture_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from guigym.cli import app

    runner = CliRunner()
    for arch in ("llava", "llama"):
        result = runner.invoke(app, ["tiny-model", str(tmp_path / arch), "--arch", arch], terminal_width=300)
        assert result.exit_code == 0, result.output
        assert json.loads((tmp_path / arch / "config.json").read_text())["model_type"] == arch
    bad = runner.invoke(app, ["tiny-model", str(tmp_path / "x"), "--arch", "gpt"], terminal_width=300)
    assert bad.exit_code == 2 and "--arch must be llama, llava or qwen2.5-vl" in bad.output
    assert not (tmp_path / "x").exists()


def test_the_image_only_processor_loads_where_auto_processor_ignores_its_registration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # transformers 5.17 (the GPU image's) skips AutoProcessor.register for its own config classes, so AutoProcessor
    # returned the bare tokenizer and a tiny VLM loaded as a causal LM. Simulated here on any version.
    from transformers import AutoProcessor
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING

    from agents.hf_agent import load_processor

    path = build_vlm(tmp_path / "vlm", "tiny")
    monkeypatch.setattr(PROCESSOR_MAPPING, "_extra_content", {})
    monkeypatch.setattr(AutoProcessor, "register", staticmethod(lambda *a, **k: None))
    processor = load_processor(str(path), False)
    assert type(processor).__name__ == "ImageOnlyQwen2_5_VLProcessor"
    assert processor.image_processor is not None and processor.tokenizer is not None
