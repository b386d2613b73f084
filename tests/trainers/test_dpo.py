"""DPO: the loss by hand, learning on held-out pairs with a tiny model, TRL-format pair files in and out."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from trainers.dpo import (
    PairSample,
    dpo_loss,
    export_pairs,
    load_pairs,
    load_policy,
    optimise_pairs,
    pair_margins,
)
from trainers.dpo_config import DPOConfig

ROOT = Path(__file__).resolve().parents[2]


def test_dpo_sigmoid_loss_by_hand() -> None:
    lp_c, lp_r = torch.tensor([-2.0, -3.0]), torch.tensor([-4.0, -3.0])
    rf_c, rf_r = torch.tensor([-3.0, -3.0]), torch.tensor([-3.0, -2.0])
    # z1 = 0.5 * ((-2 + 3) - (-4 + 3)) = 1.0 -> -log sigmoid(1) = log(1 + e^-1) = 0.3132617
    # z2 = 0.5 * ((-3 + 3) - (-3 + 2)) = 0.5 -> log(1 + e^-0.5) = 0.4740770; mean 0.3936693
    loss, st = dpo_loss(lp_c, lp_r, rf_c, rf_r, beta=0.5)
    assert float(loss) == pytest.approx((math.log1p(math.exp(-1)) + math.log1p(math.exp(-0.5))) / 2)
    assert float(loss) == pytest.approx(0.3936693, abs=1e-6)
    assert st["reward_chosen"] == pytest.approx(0.25)  # 0.5 * mean(1, 0)
    assert st["reward_rejected"] == pytest.approx(-0.5)  # 0.5 * mean(-1, -1)
    assert st["reward_margin"] == pytest.approx(0.75) and st["accuracy"] == 1.0
    assert st["logp_margin"] == pytest.approx(1.0)  # mean(-2 + 4, -3 + 3)


def test_t_dpo_loss_with_the_sft_term_by_hand() -> None:
    lp_c, lp_r = torch.tensor([-2.0, -3.0]), torch.tensor([-4.0, -3.0])
    rf_c, rf_r = torch.tensor([-3.0, -3.0]), torch.tensor([-3.0, -2.0])
    # SFT term: mean(2 / 4, 3 / 2) = mean(0.5, 1.5) = 1.0; c = 0.5 -> 0.3936693 + 0.5 * 1.0 = 0.8936693
    loss, st = dpo_loss(lp_c, lp_r, rf_c, rf_r, beta=0.5, sft_weight=0.5, chosen_lengths=torch.tensor([4.0, 2.0]))
    assert float(loss) == pytest.approx(0.8936693, abs=1e-6)
    assert st["sft_loss"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="chosen_lengths"):
        dpo_loss(lp_c, lp_r, rf_c, rf_r, beta=0.5, sft_weight=1.0)


def _pairs(words: list[str]) -> list[PairSample]:
    return [PairSample([{"role": "user", "content": f"Task: go {w}. What next?"}], f"press {w}", f"scroll {w}")
            for w in words]  # fmt: skip


def test_t_dpo_raises_the_held_out_margin(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    train = _pairs(["Back", "Home", "Enter", "up", "down", "left", "right", "search", "menu", "space", "tab", "next"])
    held = _pairs(["settings", "wifi", "camera", "clock", "maps", "music"])
    cfg = DPOConfig(model=str(tiny_lm_path), data="-", beta=0.1, sft_weight=1.0, epochs=6, batch_size=4,
                    learning_rate=3e-3, device="cpu", progress=False, output_dir=str(tmp_path / "run"))  # fmt: skip
    gen, ref = load_policy(cfg, tiny_lm_path)
    before = pair_margins(gen.model, gen, held)
    history = optimise_pairs(cfg, gen, ref, train, tmp_path / "run")
    after = pair_margins(gen.model, gen, held)
    print(f"T-DPO held-out log-prob margin (chosen - rejected, nats): {before.mean():.3f} -> {after.mean():.3f}; "
          f"train accuracy {history[0]['accuracy']:.2f} -> {history[-1]['accuracy']:.2f}")  # fmt: skip
    assert after.mean() > before.mean() + 1.0
    assert (after > before).all()
    assert len(history) == 18 and history[-1]["reward_margin"] > history[0]["reward_margin"]


def test_exported_pairs_load_with_datasets_in_trl_format(tmp_path: Path) -> None:
    import datasets
    from PIL import Image

    shot = np.zeros((8, 6, 3), dtype=np.uint8)
    shot[2, 3] = (255, 0, 0)
    prompt = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Describe the page."}]},
              {"role": "assistant", "content": "A page."}, {"role": "user", "content": "Next action?"}]  # fmt: skip
    pairs = [PairSample(prompt, "press Back", "scroll up", [shot], "beta"),
             PairSample(prompt, "press Home", "stop", [shot], "gamma")]  # fmt: skip
    path = export_pairs(pairs, tmp_path / "pairs.parquet")
    ds = datasets.load_dataset("parquet", data_files=str(path), split="train")
    assert set(ds.column_names) == {"prompt", "chosen", "rejected", "images"}
    row = ds[0]
    assert row["chosen"] == [{"role": "assistant", "content": [{"type": "text", "text": "press Back"}]}]
    assert row["prompt"][0]["content"][0]["type"] == "image" and row["prompt"][2]["role"] == "user"
    assert isinstance(row["images"][0], Image.Image)
    assert np.array_equal(np.asarray(row["images"][0]), shot)
    trl = pytest.importorskip("trl")
    assert trl.data_utils.is_conversational(row)
    back = load_pairs(path)
    assert [(p.chosen, p.rejected) for p in back] == [("press Back", "scroll up"), ("press Home", "stop")]
    assert back[0].prompt[0]["content"] == [{"type": "image"}, {"type": "text", "text": "Describe the page."}]


def test_a_trl_format_pair_file_trains_from_the_command_line(tiny_lm_path: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from guigym.cli import app

    rows = [{"prompt": f"Question: which way is {w}?\nAnswer:", "chosen": f" press {w}", "rejected": f" scroll {w}"}
            for w in ("up", "down", "left", "right")]  # fmt: skip
    data = tmp_path / "trl.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["train", "dpo", "-c", str(ROOT / "configs/dpo_tiny_cpu.yaml"), "--set",
                                      f"model={tiny_lm_path}", "--set", f"data={data}", "--set", "progress=false",
                                      "--set", f"output_dir={tmp_path / 'run'}"])  # fmt: skip
    assert result.exit_code == 0, result.output
    log = [json.loads(x) for x in (tmp_path / "run/metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [1, 2]  # 4 pairs, batch 4, 2 epochs
    assert log[0]["reward_margin"] == pytest.approx(0.0, abs=1e-6)  # policy == reference at step 1
    assert (tmp_path / "run/final/config.json").is_file() and (tmp_path / "run/learning_curve.png").is_file()
    assert (tmp_path / "run/checkpoint-000002/model.safetensors").is_file()


def test_configs_load_and_unknown_keys_are_usage_errors() -> None:
    from typer.testing import CliRunner

    from guigym.cli import app
    from trainers.ipl_config import IPLConfig

    tiny = IPLConfig.from_yaml(ROOT / "configs/ipl_tiny_cpu.yaml")
    qwen = IPLConfig.from_yaml(ROOT / "configs/ipl_qwen25vl3b_android.yaml")
    assert (tiny.rounds, qwen.k, qwen.learning_rate, qwen.later_learning_rate) == (3, 3, 1e-6, 1e-7)
    for cmd, cfg in (("dpo", "dpo_tiny_cpu.yaml"), ("ipl", "ipl_tiny_cpu.yaml")):
        result = CliRunner().invoke(app, ["train", cmd, "-c", str(ROOT / "configs" / cfg), "--set", "lr=0.1"])
        assert result.exit_code != 0 and "no field 'lr'" in result.output


def test_lora_dpo_uses_the_disabled_adapter_as_reference(tiny_lm_path: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    cfg = DPOConfig(model=str(tiny_lm_path), data="-", epochs=2, batch_size=2, learning_rate=1e-2, lora=True, lora_r=4,
                    lora_alpha=8, device="cpu", progress=False, output_dir=str(tmp_path / "run"))  # fmt: skip
    gen, ref = load_policy(cfg, tiny_lm_path)
    assert ref is None  # no second copy: the adapter switched off is the reference
    base = load_file(tiny_lm_path / "model.safetensors")
    history = optimise_pairs(cfg, gen, ref, _pairs(["Back", "Home"]), tmp_path / "run")
    assert history[0]["reward_margin"] == pytest.approx(0.0, abs=1e-6)  # LoRA's B starts at 0: policy == ref
    assert history[1]["reward_margin"] != pytest.approx(0.0, abs=1e-6)
    frozen = {n.replace("base_model.model.", "").replace(".base_layer", ""): p for n, p in gen.model.named_parameters()
              if "lora_" not in n}  # fmt: skip
    assert set(base) <= set(frozen)
    assert all(torch.equal(frozen[k], base[k]) for k in base)


def test_docstring_examples() -> None:
    import doctest

    import trainers.dpo

    assert doctest.testmod(trainers.dpo).failed == 0
