"""HFAgent with tiny models saved to disk: groups, token ids, log-probs that match a forward pass, images."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

import gui_envs  # noqa: F401  (registers the ids)
from agents.generation import SamplingParams
from agents.hf_agent import HFAgent, HFGenerator
from agents.prompts.formats import GuiR1Format, TextAnswerFormat
from gui_envs.schema.actions import Action


def _forward_logprobs(gen: HFGenerator, prompt_ids: list[int], token_ids: list[int]) -> torch.Tensor:
    """log_softmax of one unpadded forward pass's logits at the generated positions (T = 1)."""
    ids = torch.tensor([prompt_ids + token_ids])
    with torch.no_grad():
        logits = gen.model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0]
    p = len(prompt_ids)
    return torch.log_softmax(logits[p - 1 : p - 1 + len(token_ids)].float(), -1).gather(
        1, torch.tensor(token_ids)[:, None]
    )[:, 0]


def test_group_of_four_on_sudoku_with_logprobs_matching_a_forward_pass(tiny_lm_path: Path) -> None:
    agent = HFAgent(tiny_lm_path, temperature=1.0, max_new_tokens=12, seed=0)
    assert agent.output_format is None  # auto: text answers for the grid env
    env = gym.make("Sudoku-v0")
    obs, info = env.reset(seed=3)
    agent.reset("", info)
    (group,) = agent.sample_groups([obs], 4)
    assert len(group) == 4
    for out in group:
        assert out.token_ids and len(out.token_ids) == len(out.logprobs) <= 12
        assert all(lp <= 0.0 for lp in out.logprobs)
        assert isinstance(out.action, str) and "Sudoku" in out.extra["prompt"]
        expected = _forward_logprobs(agent.generator, out.extra["prompt_token_ids"], out.token_ids)
        assert torch.allclose(torch.tensor(out.logprobs), expected, atol=1e-4), (out.logprobs, expected)
        # The generator's own teacher-forced scorer agrees too.
        conv = TextAnswerFormat().messages(agent._context(obs, None, None))
        scored = agent.generator.token_logprobs(conv, out.token_ids)
        assert torch.allclose(scored.detach(), expected, atol=1e-4)
        _, reward, terminated, _, step_info = env.step(out.action)  # the env judges the text
        assert terminated and reward == 0.0 and "success" in step_info
        env.reset(seed=3)
    assert len({tuple(o.token_ids) for o in group}) > 1  # sampling, not four copies


def test_batched_call_pads_without_changing_logprobs(tiny_lm_path: Path) -> None:
    """Prompts of different lengths share one left-padded batch; each row still matches its own forward."""
    agent = HFAgent(tiny_lm_path, max_new_tokens=6, seed=1)
    outs = agent.act_batch([{"text": "short"}, {"text": "a much longer observation " * 5}])
    for out in outs:
        expected = _forward_logprobs(agent.generator, out.extra["prompt_token_ids"], out.token_ids)
        assert torch.allclose(torch.tensor(out.logprobs), expected, atol=1e-4)


def test_logprobs_are_those_of_the_processed_sampling_distribution(tiny_lm_path: Path) -> None:
    """With top-k = 1 the policy is deterministic, so every token has log-prob 0 (log 1)."""
    gen = HFGenerator(tiny_lm_path, seed=0)
    (group,) = gen.generate(
        [[{"role": "user", "content": "hi"}]], None, SamplingParams(top_k=1, max_new_tokens=5, num_samples=2)
    )
    for g in group:
        assert np.allclose(g.logprobs, 0.0)
    assert group[0].token_ids == group[1].token_ids
    # Temperature 0.5 sharpens: log-probs equal log_softmax(logits / 0.5).
    (group,) = gen.generate(
        [[{"role": "user", "content": "hi"}]], None, SamplingParams(temperature=0.5, max_new_tokens=5)
    )
    conv = [{"role": "user", "content": "hi"}]
    scored = gen.token_logprobs(conv, group[0].token_ids, temperature=0.5).detach()
    assert torch.allclose(torch.tensor(group[0].logprobs), scored, atol=1e-4)


def test_gui_observation_gets_a_gui_r1_prompt_and_parsed_actions(tiny_lm_path: Path) -> None:
    class Scripted:
        supports_images = False

        def generate(self, conversations, images=None, sampling=None):
            from agents.generation import Generation

            n = (sampling or SamplingParams()).num_samples
            return [
                [Generation('<think>x</think><answer>[{"action": "click", "point": [5, 6]}]</answer>')] * n
                for _ in conversations
            ]

    from agents.lm_agent import LMAgent

    obs = {
        "screenshot": np.zeros((20, 30, 3), np.uint8),
        "elements": [{"id": "b1", "role": "button", "text": "OK", "bbox": [1, 2, 10, 12]}],
        "instruction": "press ok",
    }
    agent = LMAgent(Scripted())
    agent.reset("press ok")
    out = agent.act(obs)
    assert out.action == Action.click(5, 6) and out.parse_error is None
    assert agent.history == [Action.click(5, 6).to_json()]
    conv = GuiR1Format().messages(agent._context(obs, None, None))
    assert "[b1] button 'OK'" in conv[0]["content"] and "press ok" in conv[0]["content"]


def test_vlm_sees_the_screenshot(tiny_vlm_path: Path) -> None:
    agent = HFAgent(tiny_vlm_path, output_format=GuiR1Format(actions="grounding"), max_new_tokens=4, seed=0)
    gen = agent.generator
    assert gen.supports_images and agent.use_images
    rng = np.random.default_rng(0)
    shot_a = rng.integers(0, 255, (56, 84, 3), dtype=np.uint8)
    shot_b = 255 - shot_a
    obs_a = {"screenshot": shot_a, "instruction": "click the button", "elements": []}
    conv = GuiR1Format(actions="grounding").messages(agent._context(obs_a, None, None))

    def logits(shot: np.ndarray) -> torch.Tensor:
        _, inputs = gen.encode([conv], [[shot]])
        assert "pixel_values" in inputs
        with torch.no_grad():
            return gen.model(**inputs).logits[0, -1]

    assert not torch.allclose(logits(shot_a), logits(shot_b))
    assert torch.allclose(logits(shot_a), logits(shot_a.copy()))
    # A full batched group through the agent: token ids and processed log-probs come back, and they match
    # the teacher-forced recomputation (temperature 1, no top-k/p).
    (group,) = agent.sample_groups([obs_a], 2)
    for out in group:
        assert len(out.token_ids) == len(out.logprobs) > 0
        scored = gen.token_logprobs(conv, out.token_ids, images=[shot_a]).detach()
        assert torch.allclose(torch.tensor(out.logprobs), scored, atol=1e-4)
