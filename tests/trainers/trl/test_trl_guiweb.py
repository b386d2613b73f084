"""TRL's GRPOTrainer trains on GuiWeb-v0 through the adapter: multi-step tool-call episodes, the env's verdict
as reward (issue 25, TRL path)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("playwright")

from trainers.trl.config import GuiGymTRLConfig  # noqa: E402
from trainers.trl.data import dataset_rows  # noqa: E402
from trainers.trl.env import make_environment_factory  # noqa: E402

pytestmark = pytest.mark.skipif(not os.environ.get("GUIGYM_CHROMIUM") and not Path("/usr/bin/chromium").exists(),
                                reason="needs Chromium")  # fmt: skip

CONFIG = dict(env_id="GuiWeb-v0", task="shop.open_wishlist", tools=["click", "hover"], max_elements=3,
              seeds=[0, 2], system_prompt="")  # fmt: skip


def transcript(env, *calls) -> list[dict]:  # noqa: ANN001, ANN002
    """Row 0's episode played with these tool calls, as chat messages (the env's real tool results)."""
    row = dataset_rows(env._config)[0]
    messages = [{"role": "user", "content": row["prompt"][0]["content"] + env.reset(**row)}]
    for name, args in calls:
        call = {"type": "function", "function": {"name": name, "arguments": args}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "name": name, "content": getattr(env, name)(**args)})
    messages.append({"role": "assistant", "content": "done"})
    return messages


def label(check: str) -> str:
    """A strategy-graph label function (the form :func:`gui_envs.verifiers.synth.synthesise` writes)."""
    return (f"from Function_APIs import *\ndef verify_function(trajectory):\n    if not {check}:\n        return False\n"
            "    return True\nresult = verify_function(trajectory)\n")  # fmt: skip


def test_tools_play_the_episode_and_every_reward_reads_it() -> None:
    from gui_envs.verifiers.graph import StrategyGraph
    from trainers.trl.rewards import REWARD_FUNCS

    # Two key steps in order: hover over "Catalogue", then the wishlist page.
    graph = StrategyGraph.linear([label("validate_click_or_hover_action(trajectory, 'hover', 'a', 'Catalogue')"),
                                  label("validate_url_visited(trajectory, 'http://shop.guigym.test/wishlist')")])  # fmt: skip
    config = GuiGymTRLConfig(**{**CONFIG, "rewards": ["env", "binary", "ssl", "graph"], "graphs": graph})
    env = make_environment_factory(config)()
    hover, wishlist, cart = (
        ("hover", {"element_id": "1"}),
        ("click", {"element_id": "2"}),
        ("click", {"element_id": "3"}),
    )
    try:
        scores = {}
        for name, calls in {
            "detour": (hover, wishlist),
            "wrong": (hover, cart),
            "oracle": (wishlist,),
        }.items():
            transcript(env, *calls)
            assert env.episode.steps == len(calls) and env.episode.done == (
                calls[-1] == wishlist
            )  # a state task
            scores[name] = {k: fn(completions=[[]], environments=[env])[0] for k, fn in REWARD_FUNCS.items()}
        detour, wrong, oracle = scores["detour"], scores["wrong"], scores["oracle"]
        assert (detour["env"], wrong["env"], oracle["env"]) == (1.0, 0.0, 1.0)  # the env's verdict: the page
        # SSL's verifier C grades every step against the oracle's plan: the hover detour fails it.
        assert (detour["binary"], wrong["binary"], oracle["binary"]) == (0.0, 0.0, 1.0)
        assert oracle["ssl"] > 1.0 and wrong["ssl"] == 0.0  # C + lambda * S_hat; unfinished episodes pay 0
        assert (detour["graph"], wrong["graph"]) == (1.0, 0.5)  # one key step of two, in order
        assert (
            "episode is over" in env.click(element_id="2") and env.episode.steps == 1
        )  # no step after the end
        transcript(env)  # a fresh episode
        assert "action error" in env.click()  # a click with neither point nor element is the env's no-op
    finally:
        env._close()


def test_grpo_trainer_trains_three_steps_on_guiweb(tmp_path: Path) -> None:
    import torch
    from transformers import AutoTokenizer
    from trl import GRPOConfig

    from trainers.trl.tiny import build_tool_causal_lm, teach_transcripts
    from trainers.trl.train import build_trainer, close_environments

    torch.set_num_threads(1)
    config = GuiGymTRLConfig(**CONFIG)
    model_dir = build_tool_causal_lm(tmp_path / "model")
    env = make_environment_factory(config)()
    try:
        # Half the taught transcripts open the wishlist (success), half the cart (failure): sampled groups
        # then mix verdicts, so the advantages are not all zero.
        good = transcript(env, ("hover", {"element_id": "1"}), ("click", {"element_id": "2"}))
        bad = transcript(env, ("hover", {"element_id": "1"}), ("click", {"element_id": "3"}))
        loss = teach_transcripts(model_dir, [good, bad], [env.click, env.hover], steps=150, lr=1e-2)
    finally:
        env._close()
    assert loss < 1.0

    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4,
        max_completion_length=200, max_tool_calling_iterations=3, max_steps=3, learning_rate=1e-3, beta=0.0,
        logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, seed=0, bf16=False,
        gradient_checkpointing=False, disable_tqdm=True,
    )  # fmt: skip
    tok = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
    trainer = build_trainer(config, args, str(model_dir), tok)
    before = {k: v.detach().clone() for k, v in trainer.model.named_parameters()}
    try:
        trainer.train()
        steps = [env.episode.steps for env in trainer.environment_factories[None].environments]
    finally:
        close_environments(trainer)
    logs = [h for h in trainer.state.log_history if "rewards/env/mean" in h]
    assert trainer.state.global_step == 3 and len(logs) == 3
    assert max(steps) >= 2  # a multi-step episode: two env steps from two tool calls
    assert (
        max(h["tools/call_frequency"] for h in logs) > 1.0
    )  # more than one tool call per rollout on average
    assert any(h["reward_std"] > 0 for h in logs)  # the verdict differed within a group
    moved = sum((before[k] - v.detach()).abs().sum().item() for k, v in trainer.model.named_parameters())
    assert moved > 0
