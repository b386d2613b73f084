"""SFT learns from oracle trajectories: a tiny random Llama goes from chance to solving ClickGrid-v0."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest
import torch

import gui_envs  # noqa: F401
from agents import OracleAgent
from agents.hf_agent import HFAgent
from agents.prompts.cell import CellFormat
from trainers.rollout import RolloutConfig, collect_episodes
from trainers.sft import NoSamplesError, train_sft
from trainers.sft_config import SFTConfig


def _success(model: object, tokenizer_path: Path, seeds: list[int]) -> float:
    from transformers import AutoTokenizer

    agent = HFAgent(model, output_format=CellFormat(), temperature=0.0, max_new_tokens=2, device="cpu",
                    processor=AutoTokenizer.from_pretrained(tokenizer_path))  # fmt: skip
    envs = [gym.make("ClickGrid-v0") for _ in seeds]
    trajs = collect_episodes(envs, agent, seeds, RolloutConfig(max_steps=1, progress=False))
    return sum(bool(t.success) for t in trajs) / len(trajs)


def test_sft_on_oracle_trajectories(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    env = gym.make("ClickGrid-v0")
    cfg = RolloutConfig(max_steps=1, record_screenshots=True, progress=False, save_dir=tmp_path / "demos")
    for seed in range(90):
        collect_episodes([env], OracleAgent(env), [seed], cfg)
    eval_seeds = list(range(1000, 1036))
    from transformers import AutoModelForCausalLM

    before = _success(AutoModelForCausalLM.from_pretrained(tiny_lm_path), tiny_lm_path, eval_seeds)
    config = SFTConfig(model=str(tiny_lm_path), data=str(tmp_path / "demos"), output_format="cell", epochs=30,
                       batch_size=16, learning_rate=3e-3, warmup_ratio=0.0, device="cpu",
                       output_dir=str(tmp_path / "run"))  # fmt: skip
    out = train_sft(config)
    losses = [r["loss"] for r in out["history"]]
    after = _success(out["model"], tiny_lm_path, eval_seeds)
    print(f"SFT: loss {losses[0]:.3f} -> {losses[-1]:.3f}; greedy success {before:.3f} -> {after:.3f}")
    assert losses[-1] < 0.5 * losses[0]
    assert before < 0.3 and after > 0.8, (before, after)
    assert (tmp_path / "run" / "learning_curve.png").is_file()


def test_no_successful_trajectories_is_a_clear_error(tiny_lm_path: Path, tmp_path: Path) -> None:
    env = gym.make("ClickGrid-v0")
    collect_episodes([env], OracleAgent(env), [0], RolloutConfig(max_steps=1, progress=False, save_dir=tmp_path / "d"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoSamplesError, match="0 trajectories"):
        train_sft(SFTConfig(model=str(tiny_lm_path), data=str(tmp_path / "empty"), device="cpu",
                            output_dir=str(tmp_path / "r")))  # fmt: skip


def test_a_fresh_run_removes_a_killed_save_s_temporary_folder(tiny_lm_path: Path, tmp_path: Path) -> None:
    """A killed save leaves a full-size temp folder; the next run cleans it at start, resume or not."""
    import os

    env = gym.make("ClickGrid-v0")
    cfg = RolloutConfig(max_steps=1, record_screenshots=True, progress=False, save_dir=tmp_path / "demos")
    for seed in (0, 1):
        collect_episodes([env], OracleAgent(env), [seed], cfg)
    run = tmp_path / "run"
    stale = run / ".tmp-checkpoint-000003-999999"  # a dead writer's folder in the old naming: cleaned by age
    stale.mkdir(parents=True)
    (stale / "model.pt").write_bytes(b"half a checkpoint")
    os.utime(stale, (0, 0))
    config = SFTConfig(model=str(tiny_lm_path), data=str(tmp_path / "demos"), output_format="cell", epochs=1,
                       batch_size=2, device="cpu", output_dir=str(run))  # fmt: skip
    train_sft(config)
    assert not list(run.glob(".tmp-checkpoint-*"))


def test_balance_tasks_draws_every_tasks_steps_equally_often(tiny_lm_path: Path) -> None:
    from agents.hf_agent import HFGenerator
    from gui_envs.schema.actions import Action
    from gui_envs.schema.trajectory import Step, Trajectory
    from trainers.sft import config_samples

    def demo(task: str, answers: list[str]) -> Trajectory:
        steps = [Step(action=Action.click_element("0"), output_text=a) for a in answers]
        return Trajectory(instruction=f"do {task}", steps=steps, task=task, success=True)

    # A 4-step login beside two one-click tasks: unbalanced, the login is 4 of 6 samples.
    demos = [demo("login", ["l1", "l2", "l3", "l4"]), demo("click", ["c"]), demo("focus", ["f"])]
    gen = HFGenerator(str(tiny_lm_path), device="cpu")
    config = SFTConfig(model=str(tiny_lm_path), data="unused", output_format="act")
    assert [s.answer for s in config_samples(config, demos, gen)] == ["l1", "l2", "l3", "l4", "c", "f"]
    config.balance_tasks = True
    answers = [s.answer for s in config_samples(config, demos, gen)]
    assert answers == ["l1", "l2", "l3", "l4", "c", "c", "c", "c", "f", "f", "f", "f"]


def test_an_unknown_lr_scheduler_type_is_a_config_error(tiny_lm_path: Path) -> None:
    from trainers.config_io import ConfigError

    with pytest.raises(ConfigError, match="lr_scheduler_type"):
        SFTConfig(model=str(tiny_lm_path), data="unused", lr_scheduler_type="cosine")
