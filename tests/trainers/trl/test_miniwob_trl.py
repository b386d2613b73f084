"""``benchmarks/miniwob_trl.py``: SFT then GRPO through TRL on the six single-step MiniWoB++ tasks (issue 37).

A tiny model (hidden 64, 2 layers, byte tokenizer) is first fitted for a few steps to the scripted
demonstrator's ``act`` answers on seeds the GRPO run does not play (a stand-in for the benchmark's SFT
checkpoint: it answers ``click X`` but not always the right X, so GRPO's groups have different verdicts), then
the benchmark's CLI runs 3 TRL GRPO steps of 6 prompts x 4 completions on CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("playwright")

pytestmark = pytest.mark.skipif(
    not os.environ.get("GUIGYM_CHROMIUM") and not Path("/usr/bin/chromium").exists(), reason="needs Chromium"
)

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from benchmarks.miniwob_trl import ENV_ID, SINGLE_STEP_TASKS, MultiStepTaskError, build_tiny  # noqa: E402

#: Demonstration seeds of the warm start, disjoint from the GRPO run's seeds [0, 18).
DEMO_SEEDS = range(900_000, 900_024)


def warm_start(model_dir: Path, steps: int = 40, lr: float = 3e-3) -> None:
    """Fit the model under ``model_dir`` to the demonstrator's first answer (``click X``) on :data:`DEMO_SEEDS`,
    the prompt rendered as the TRL arm renders it (the ``act`` format through the chat template)."""
    import gymnasium as gym
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.miniwob_demonstrator import MiniWoBDemonstrator
    from agents.prompts.act import ActFormat
    from agents.prompts.formats import PromptContext
    from agents.prompts.observation import instruction_of

    fmt, demo = ActFormat(), MiniWoBDemonstrator()
    env = gym.make(ENV_ID, tasks=list(SINGLE_STEP_TASKS), screenshots=False, reload_page=False)
    tok = AutoTokenizer.from_pretrained(model_dir)
    pairs = []
    try:
        for seed in DEMO_SEEDS:
            obs, _ = env.reset(seed=seed)
            action = demo.act_batch([obs])[0].action
            try:
                answer = fmt.answer_text(action, obs)
            except (
                AttributeError,
                ValueError,
            ):  # no action, or one on an unlisted element (a tab's inner link)
                continue
            content = fmt.messages(PromptContext(observation=obs, instruction=instruction_of(obs)))[-1][
                "content"
            ]
            prompt = tok.apply_chat_template(
                [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True
            )
            pairs.append((prompt, answer + tok.eos_token))
    finally:
        env.close()
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    batch = []
    for prompt, answer in pairs:
        p, a = (
            tok(prompt, add_special_tokens=False).input_ids,
            tok(answer, add_special_tokens=False).input_ids,
        )
        batch.append((torch.tensor([p + a]), torch.tensor([[-100] * len(p) + a])))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(model(input_ids=x, labels=y).loss for x, y in batch) / len(batch)
        loss.backward()
        opt.step()
    model.save_pretrained(model_dir)


def test_the_adapter_plays_act_answers_on_the_suite() -> None:
    """Text mode on the suite env: the prompt is the ``act`` listing of the seed's task (no ``task`` in the row),
    the demonstrator's answer is played as one step and MiniWoB judges it; an unparseable answer fails."""
    from agents.miniwob_demonstrator import MiniWoBDemonstrator
    from agents.prompts.act import ActFormat
    from benchmarks.miniwob_trl import trl_arm_configs
    from trainers.trl.data import dataset_rows
    from trainers.trl.env import make_environment_factory
    from trainers.trl.rewards import env as env_reward

    guigym, _ = trl_arm_configs("/tmp/unused", SINGLE_STEP_TASKS, seed=0, num_steps=1, prompts_per_step=12)
    slot, fmt, demo = make_environment_factory(guigym)(), ActFormat(), MiniWoBDemonstrator()
    played = 0
    try:
        for row in dataset_rows(guigym):
            prompt = slot.reset(**row)
            assert prompt.startswith(slot._obs["instruction"]) and "\nA" in prompt
            assert slot._obs["url"].endswith(f"/{SINGLE_STEP_TASKS[row['seed'] % 6]}.html")
            action = demo.act_batch([slot._obs])[0].action
            if action is None or action.point is not None:
                continue  # a covered button the demonstrator clicks at a visible point: no letter answer does that
            answer = fmt.answer_text(action, slot._obs)
            assert env_reward([answer], [slot]) == [1.0], (row, answer)
            played += 1
        slot.reset(**dataset_rows(guigym)[0])
        assert env_reward(["no answer"], [slot]) == [0.0]
    finally:
        slot._close()
    assert played >= 8


def test_multi_step_tasks_are_refused() -> None:
    from benchmarks.miniwob_trl import trl_arm_configs

    with pytest.raises(MultiStepTaskError, match="enter-text"):
        trl_arm_configs("/tmp/unused", ["click-button", "enter-text"], seed=0, num_steps=1)


def test_three_trl_steps_on_the_single_step_suite(tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    model_dir = build_tiny(tmp_path / "sft")
    warm_start(model_dir)
    before = AutoModelForCausalLM.from_pretrained(model_dir).state_dict()
    out = tmp_path / "trl"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "miniwob_trl.py"), "--model", str(model_dir), "--out", str(out),
           "--steps", "3", "--group-size", "4", "--prompts-per-step", "6"]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=240, check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1", "TRL_EXPERIMENTAL_SILENCE": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    final = out / "final"
    assert (final / "tokenizer.json").exists()
    # the saved tokenizer is the checkpoint's, not the tool-call fallback TRL was given (trainers.trl.train)
    assert (final / "chat_template.jinja").read_text() == (model_dir / "chat_template.jinja").read_text()
    after = AutoModelForCausalLM.from_pretrained(final).state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before), "no weight changed"
    steps = [h for h in json.loads((out / "log_history.json").read_text()) if "rewards/env/mean" in h]
    assert len(steps) == 3
    rewards = [float(h["rewards/env/mean"]) for h in steps]
    assert all(0.0 <= r <= 1.0 for r in rewards), rewards
    # 6 prompts x 4 completions: the mean verdict is a multiple of 1/24
    assert all(abs(r * 24 - round(r * 24)) < 1e-6 for r in rewards), rewards
    # the update is GRPO's, not weight decay alone: some group had different verdicts, so a gradient flowed
    assert any(float(h["grad_norm"]) > 0 for h in steps), steps
