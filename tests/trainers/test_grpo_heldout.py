"""GRPO's held-out evaluation: logged before, during and after training without changing the training path, and
printed by ``guigym train grpo``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from guigym.cli import app
from trainers.grpo import train
from trainers.grpo_config import GRPOConfig

ROOT = Path(__file__).resolve().parents[2]
#: A uniformly random click's success on ClickBox-v0 (tests/gui_envs/grid/test_click_box.py measures it).
RANDOM_CLICK = 0.063
NUM_STEPS = 250


def _config(model: Path, out: Path, **kw: object) -> GRPOConfig:
    base = dict(model=str(model), env_id="ClickBox-v0", output_format="box", reward="env", group_size=4,
                groups_per_step=2, num_envs=8, num_steps=3, max_new_tokens=1, learning_rate=1e-2, device="cpu",
                num_train_seeds=1000, output_dir=str(out), progress=False, plot=False)  # fmt: skip
    return GRPOConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_held_out_eval_is_logged_and_leaves_training_unchanged(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    plain = train(_config(tiny_lm_path, tmp_path / "plain"))
    split = {"start": 1000, "count": 6}
    out = train(_config(tiny_lm_path, tmp_path / "eval", eval_seeds=split, eval_every=2, eval_samples=2, plot=True))
    # Evaluation restores torch's random state: the training rollouts and updates are those of a run without it.
    for a, b in zip(plain["history"], out["history"], strict=True):
        for key in ("reward_mean", "success_rate", "loss", "entropy"):
            assert a[key] == b[key], (key, a[key], b[key])
    assert [e["step"] for e in out["eval"]] == [0, 2, 3]
    for e in out["eval"]:
        assert 0 <= e["eval_greedy_success"] <= 1 and 0 <= e["eval_sampled_success"] <= 1
        assert (e["eval_greedy_success"] * 6) % 1 == 0 and (e["eval_sampled_success"] * 12) % 1 == 0
    lines = [json.loads(x) for x in (tmp_path / "eval/metrics.jsonl").read_text().splitlines()]
    assert [x["step"] for x in lines] == [0, 1, 2, 3]
    assert [("eval_greedy_success" in x) for x in lines] == [True, False, True, True]
    assert "eval_greedy_success" not in json.dumps(plain["history"])
    assert (tmp_path / "eval/learning_curve.png").is_file()


def test_train_grpo_prints_the_held_out_figure(tiny_lm_path: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    result = CliRunner().invoke(
        app,
        ["train", "grpo", "-c", str(ROOT / "configs/grpo_tiny_heldout.yaml"), "--set", f"model={tiny_lm_path}",
         "--set", "num_steps=1", "--set", "eval_seeds={start: 100000, count: 4}", "--set", "eval_samples=1",
         "--set", f"output_dir={tmp_path}", "--set", "progress=false", "--set", "save_every=0"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "held-out (4 seeds) after step 1: greedy success" in result.output


def test_constrained_answers_are_cell_letters_only(tiny_lm_path: Path, tmp_path: Path) -> None:
    import gymnasium as gym

    from agents.prompts.box import CELL_NAMES
    from trainers.grpo import make_agent

    agent = make_agent(_config(tiny_lm_path, tmp_path, constrain_answers=True, max_new_tokens=3), "cpu")
    env = gym.make("ClickBox-v0")
    observations = [env.reset(seed=s)[0] for s in range(16)]
    outputs = agent.act_batch(observations)
    assert all(len(o.text) == 3 and set(o.text) <= set(CELL_NAMES[:25]) for o in outputs), [o.text for o in outputs]
    assert all(o.action is not None for o in outputs)


def test_constrained_two_letter_answers_are_row_and_column_letters(tiny_lm_path: Path, tmp_path: Path) -> None:
    """A 10 x 10 grid named by two letters: both sampled tokens are grid letters A-J (each its own token), the
    completion ends after them (end of text is no answer token, so the budget of 2 ends it) and parses to the click
    at the named cell's centre; greedy held-out decoding is constrained the same way."""
    from dataclasses import replace

    import gymnasium as gym

    from trainers.grpo import make_agent

    config = _config(tiny_lm_path, tmp_path, constrain_answers=True, max_new_tokens=2,
                     format_kwargs={"grid": 10, "letters": 2}, env_kwargs={"n_boxes": 2, "min_side": 14, "max_side": 24})  # fmt: skip
    agent = make_agent(config, "cpu")
    letters = [agent.generator.tokenizer.encode(ch, add_special_tokens=False)[0] for ch in "ABCDEFGHIJ"]
    env = gym.make("ClickBox-v0", **config.env_kwargs)
    observations = [env.reset(seed=s)[0] for s in range(16)]
    for temperature in (1.0, 0.0):
        agent.sampling = replace(agent.sampling, temperature=temperature)
        for out in agent.act_batch(observations):
            assert len(out.text) == 2 and set(out.text) <= set("ABCDEFGHIJ"), out.text
            assert out.token_ids is not None and len(out.token_ids) == 2 and set(out.token_ids) <= set(letters)
            row, col = "ABCDEFGHIJ".index(out.text[0]), "ABCDEFGHIJ".index(out.text[1])
            assert out.action is not None and out.action.point == (10 * col + 4.5, 10 * row + 4.5)


def test_constrained_answers_need_a_format_that_names_its_tokens(tiny_lm_path: Path, tmp_path: Path) -> None:
    from trainers.config_io import ConfigError
    from trainers.grpo import make_agent

    with pytest.raises(ConfigError, match="constrain_answers=false"):
        make_agent(_config(tiny_lm_path, tmp_path, constrain_answers=True, output_format="cell"), "cpu")


def best_constant_cell(seeds: range, n_boxes: int, grid: int = 5) -> float:
    """The success of the best single answer-grid cell, clicked at its centre on every layout of ``seeds``: what a
    policy that memorised one position earns (a box covers the centre of the canvas more often than a corner)."""
    import gymnasium as gym
    import numpy as np

    import gui_envs  # noqa: F401

    env = gym.make("ClickBox-v0", n_boxes=n_boxes).unwrapped
    hits = np.zeros(grid * grid)
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        height, width = obs["screenshot"].shape[:2]
        x0, y0, x1, y1 = env.privileged()["target_bbox"]  # type: ignore[attr-defined]
        for k in range(grid * grid):
            row, col = divmod(k, grid)
            x, y = col * width / grid + (width / grid - 1) / 2, row * height / grid + (height / grid - 1) / 2
            hits[k] += x0 <= x <= x1 and y0 <= y <= y1
    env.close()
    return float(hits.max()) / len(seeds)


def test_grpo_raises_held_out_success_on_click_box(tmp_path: Path) -> None:
    """GRPO from a fixed seed lifts greedy success on 200 held-out layouts (seeds it never trained on) well above
    its start, a random click (0.063) and the best memorised position (one answer cell for every layout, 0.16
    on these seeds). Two boxes per layout, so naming the centre of a random *listed* box scores 0.5: the bar here
    says the policy reads the layout, not that it binds the label to its box."""
    from agents.tiny_models import build_causal_lm

    torch.set_num_threads(1)
    model = build_causal_lm(tmp_path / "tiny-llama-128", hidden_size=128)
    config = GRPOConfig(
        model=str(model), env_id="ClickBox-v0", env_kwargs={"n_boxes": 2}, output_format="box", constrain_answers=True,
        reward="env", estimator="grpo", group_size=16, groups_per_step=8, num_envs=128, num_steps=NUM_STEPS,
        learning_rate=1e-3, max_new_tokens=1, decoder="loop", device="cpu", seed=0, num_train_seeds=100_000,
        eval_seeds={"start": 100_000, "count": 200}, eval_every=0, eval_samples=0, output_dir=str(tmp_path / "run"),
        progress=False,
    )  # fmt: skip
    out = train(config)
    start, end = out["eval"][0]["eval_greedy_success"], out["eval"][-1]["eval_greedy_success"]
    print(f"held-out greedy success: step 0 {start:.3f}, step {NUM_STEPS} {end:.3f}")
    assert start < 0.12
    constant = best_constant_cell(range(100_000, 100_200), n_boxes=2)
    assert end > start + 0.1 and end > 2 * RANDOM_CLICK and end > constant + 0.05, (start, end, constant)
    assert (tmp_path / "run/learning_curve.png").is_file()
