"""DPO's held-out evaluation: pairs from env episodes record their seed, a held-out split (env seeds or a pair file)
that overlaps the training pairs is refused, task success and the held-out pair margin are logged without changing
the training path, and ``guigym train dpo`` prints both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

import gui_envs  # noqa: F401
from guigym.cli import app
from trainers.config_io import ConfigError
from trainers.dpo import PairSample, export_pairs, load_pairs, split_check, train_dpo
from trainers.dpo_config import DPOConfig
from trainers.dpo_pairs import box_pairs
from trainers.heldout import SplitOverlapError

ROOT = Path(__file__).resolve().parents[2]


def _config(model: Path, data: Path, out: Path, **kw: object) -> DPOConfig:
    base = dict(model=str(model), data=str(data), beta=0.1, epochs=2, batch_size=4, learning_rate=1e-3, device="cpu",
                output_dir=str(out), plot=False, progress=False, env_id="ClickBox-v0", env_kwargs={"n_boxes": 2},
                output_format="box", eval_max_new_tokens=2)  # fmt: skip
    return DPOConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_pairs_carry_their_seed_and_task_through_a_file(tmp_path: Path) -> None:
    pairs = box_pairs(range(6))
    pairs[0].task = "click_box"
    back = load_pairs(export_pairs(pairs, tmp_path / "p.parquet"))
    assert [p.seed for p in back] == [p.seed for p in pairs] and back[0].task == "click_box" and back[1].task is None
    plain = [PairSample("x", "a", "b"), PairSample("y", "a", "b")]
    import datasets

    # Pairs from no env keep TRL's three columns.
    assert datasets.Dataset.from_parquet(str(export_pairs(plain, tmp_path / "q.parquet"))).column_names == [
        "prompt", "chosen", "rejected"]  # fmt: skip


def test_an_overlapping_split_is_refused(tiny_lm_path: Path, tmp_path: Path) -> None:
    train = box_pairs(range(8))
    data = export_pairs(train, tmp_path / "train.parquet")
    with pytest.raises(SplitOverlapError, match=r"ClickBox-v0 seeds overlap .* at 5: the training pairs came"):
        train_dpo(_config(tiny_lm_path, data, tmp_path / "run", eval_seeds=[5, 100]))
    held = export_pairs(box_pairs(range(6, 12)), tmp_path / "held.parquet")
    with pytest.raises(SplitOverlapError, match="held-out pair prompts overlap"):
        train_dpo(_config(tiny_lm_path, data, tmp_path / "run", eval_data=str(held)))
    assert not (tmp_path / "run").exists()  # refused before any work
    unseeded = export_pairs([PairSample(p.prompt, p.chosen, p.rejected) for p in train], tmp_path / "u.parquet")
    with pytest.raises(ConfigError, match="record no env seed"):
        train_dpo(_config(tiny_lm_path, unseeded, tmp_path / "run", eval_seeds=[100]))
    # Same seed, another rendering of its prompt: still the same episode.
    other = [PairSample("another prompt", p.chosen, p.rejected, seed=p.seed) for p in train[:1]]
    with pytest.raises(SplitOverlapError, match="held-out pair seeds overlap the training pair seeds at"):
        split_check(train, [], other)


def test_held_out_eval_is_logged_and_leaves_training_unchanged(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    data = export_pairs(box_pairs(range(10))[:8], tmp_path / "train.parquet")
    held = export_pairs(box_pairs(range(500, 506)), tmp_path / "held.parquet")
    plain = train_dpo(_config(tiny_lm_path, data, tmp_path / "plain"))
    out = train_dpo(_config(tiny_lm_path, data, tmp_path / "eval", eval_data=str(held), plot=True,
                            eval_seeds={"start": 1000, "count": 4}, eval_every=3, eval_samples=2))  # fmt: skip
    for a, b in zip(plain["history"], out["history"], strict=True):
        for key in ("loss", "reward_margin", "accuracy"):
            assert a[key] == b[key], (key, a[key], b[key])
    assert [e["step"] for e in out["eval"]] == [0, 3, 4]  # 8 pairs / batch 4 = 2 steps per epoch, 2 epochs
    first, last = out["eval"][0], out["eval"][-1]
    assert first["eval_reward_margin"] == pytest.approx(0.0, abs=1e-5)  # the untrained policy is the reference
    assert last["eval_reward_margin"] != first["eval_reward_margin"]
    assert all((e["eval_greedy_success"] * 4) % 1 == 0 and (e["eval_sampled_success"] * 8) % 1 == 0
               for e in out["eval"])  # fmt: skip
    lines = [json.loads(x) for x in (tmp_path / "eval/metrics.jsonl").read_text().splitlines()]
    assert [x["step"] for x in lines if "eval_reward_margin" in x] == [0, 3, 4]
    assert [x["step"] for x in lines if "eval_greedy_success" in x] == [0, 3, 4]
    assert plain["eval"] == [] and (tmp_path / "eval/learning_curve.png").is_file()


def test_train_dpo_prints_the_held_out_figures(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    data = export_pairs(box_pairs(range(6)), tmp_path / "train.parquet")
    held = export_pairs(box_pairs(range(500, 504)), tmp_path / "held.parquet")
    result = CliRunner().invoke(
        app,
        ["train", "dpo", "-c", str(ROOT / "configs/dpo_tiny_heldout.yaml"), "--set", f"model={tiny_lm_path}",
         "--set", f"data={data}", "--set", f"eval_data={held}", "--set", "epochs=1", "--set", "batch_size=8",
         "--set", "eval_seeds={start: 100000, count: 4}", "--set", f"output_dir={tmp_path / 'run'}",
         "--set", "progress=false"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "held-out (4 seeds) after step 1: greedy success" in result.output
    assert "held-out pairs after step 1: margin" in result.output
