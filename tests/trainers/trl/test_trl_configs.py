"""The TRL path's configs, entry point, rewards and dataset rows (issue 25, TRL path)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("trl")

from trainers.trl.config import GuiGymTRLConfig, TRLConfigError  # noqa: E402
from trainers.trl.data import dataset_rows  # noqa: E402
from trainers.trl.env import make_environment_factory  # noqa: E402
from trainers.trl.rewards import REWARD_FUNCS, reward_funcs  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = ROOT / "configs" / "trl"


def test_dataset_rows_carry_env_id_and_seed_from_the_range() -> None:
    rows = dataset_rows(GuiGymTRLConfig(env_id="GuiWeb-v0", seeds=[5, 8], task="shop.open_wishlist"))
    assert [(r["env_id"], r["seed"], r["task"]) for r in rows] == [
        ("GuiWeb-v0", s, "shop.open_wishlist") for s in (5, 6, 7)
    ]
    assert rows[0]["prompt"][0]["role"] == "user"


@pytest.mark.parametrize(
    "kwargs",
    [dict(rewards=["nope"]), dict(rewards=["graph"]), dict(tools=["fly"]), dict(estimator="ppo"),
     dict(seeds=[4, 2]), dict(rewards=["env"], reward_weights=[1.0, 2.0])],
)  # fmt: skip
def test_config_refuses_bad_fields(kwargs: dict) -> None:
    with pytest.raises(TRLConfigError):
        GuiGymTRLConfig(**kwargs)


def test_reward_functions_read_the_episode_on_clickgrid() -> None:
    """Text mode on ClickGrid: the right cell scores 1 under env / binary and C + lambda * S_hat under ssl;
    the wrong cell scores 0 under env / binary and less under ssl."""
    config = GuiGymTRLConfig(env_id="ClickGrid-v0", action_mode="text", rewards=["env", "binary", "ssl"])
    make = make_environment_factory(config)
    envs = [make(), make()]
    prompts = [env.reset(env_id="ClickGrid-v0", seed=3) for env in envs]
    target = prompts[0].split("click cell ")[1][0]
    wrong = next(c for c in "abcdefghi" if c != target)
    completions = [[{"role": "assistant", "content": target}], [{"role": "assistant", "content": wrong}]]
    scores = {
        name: fn(completions=completions, environments=envs)
        for name, fn in REWARD_FUNCS.items()
        if name != "graph"
    }
    assert scores["env"] == [1.0, 0.0] and scores["binary"] == [1.0, 0.0]
    assert scores["ssl"][0] > 1.0 > scores["ssl"][1] >= 0.0
    assert envs[0].episode.steps == 1  # the answer was played once, however many reward functions read it
    assert [f.__name__ for f in reward_funcs(["ssl", "env"])] == ["ssl", "env"]


def test_run_configs_name_real_fields() -> None:
    from trl import GRPOConfig

    trl_fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    runs = sorted(CONFIGS.glob("grpo_*.yaml"))
    assert len(runs) >= 2
    for path in runs:
        data = yaml.safe_load(path.read_text())
        GuiGymTRLConfig(**data["guigym"])
        assert set(data["trl"]) <= trl_fields, (path.name, set(data["trl"]) - trl_fields)
    gpu = yaml.safe_load((CONFIGS / "grpo_guiweb_qwen25_7b_vllm.yaml").read_text())["trl"]
    assert gpu["use_vllm"] and gpu["vllm_mode"] == "colocate"


def test_accelerate_configs_are_zero3_and_fsdp() -> None:
    zero3 = yaml.safe_load((CONFIGS / "accelerate_zero3.yaml").read_text())
    fsdp = yaml.safe_load((CONFIGS / "accelerate_fsdp.yaml").read_text())
    assert zero3["distributed_type"] == "DEEPSPEED" and zero3["deepspeed_config"]["zero_stage"] == 3
    assert fsdp["distributed_type"] == "FSDP" and fsdp["fsdp_config"]["fsdp_version"] == 2


@pytest.mark.parametrize("entry", [["-m", "trainers.trl"], ["-m", "guigym.cli", "train", "trl"]])
def test_entry_point_runs_the_cpu_config(entry: list[str], tmp_path: Path) -> None:
    from trainers.trl.tiny import build_tool_causal_lm

    model = build_tool_causal_lm(tmp_path / "model")
    out = tmp_path / "out"
    cmd = [sys.executable, *entry, "--config", str(CONFIGS / "grpo_tiny_clickgrid_cpu.yaml"),
           "--set", f"model={model}", "--set", f"trl.output_dir={out}", "--set", "trl.max_steps=2",
           "--set", "trl.per_device_train_batch_size=16", "--set", "guigym.estimator=sca"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (out / "config.json").exists() and (out / "model.safetensors").exists()


@pytest.mark.parametrize("name", ["trainers.trl.env", "trainers.trl.data"])
def test_module_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
