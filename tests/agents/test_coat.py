"""CoaT dialogue: four turns, branching K at any turn, leaves parsed to pixel actions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.coat import CoaTAgent, CoaTDialogue
from agents.generation import Generation, SamplingParams
from gui_envs.schema.actions import Action


class ScriptedCoaT:
    """Replies by turn: description, thought, a decision from ``decisions`` (cycled), a grounding box."""

    supports_images = True

    def __init__(self, decisions: Sequence[str]) -> None:
        self.decisions = list(decisions)
        self.calls: list[tuple[int, int]] = []
        self.i = 0

    def generate(
        self,
        conversations: Sequence[list[dict[str, Any]]],
        images: Any = None,
        sampling: SamplingParams | None = None,
    ) -> list[list[Generation]]:
        n = (sampling or SamplingParams()).num_samples
        self.calls.append((len(conversations), n))
        out = []
        for conv in conversations:
            turn = sum(1 for m in conv if m["role"] == "user") - 1
            group = []
            for _ in range(n):
                if turn == 2:
                    text = self.decisions[self.i % len(self.decisions)]
                    self.i += 1
                else:
                    text = [
                        "A page with a search box.",
                        "I should search.",
                        "",
                        "<|box_start|>(100,100),(300,300)<|box_end|>",
                    ][turn]
                group.append(Generation(text, token_ids=[turn], logprobs=[-0.5], prompt=f"turn {turn}"))
            out.append(group)
        return out


OBS = {"screenshot": np.zeros((200, 100, 3), np.uint8), "instruction": "search milk", "elements": []}


def test_four_turns_with_grounding_give_a_pixel_click() -> None:
    agent = CoaTAgent(ScriptedCoaT(["click the search box"]))
    agent.reset("search milk")
    out = agent.act(OBS)
    assert out.action == Action.click(20.0, 40.0)  # centre (200, 200) on 0-1000 of a 100 x 200 screen
    assert [t["turn"] for t in out.extra["coat_turns"]] == ["description", "thought", "action", "grounding"]
    assert out.token_ids == [0, 1, 2, 3] and len(out.logprobs) == 4
    assert agent.history == ["click the search box"]


def test_non_pointer_decisions_stop_after_three_turns() -> None:
    gen = ScriptedCoaT(['type "milk"'])
    (out,) = CoaTAgent(gen).act_batch([OBS])
    assert out.action == Action.type_text("milk")
    assert len(out.extra["coat_turns"]) == 3


def test_branching_k_at_a_turn_is_one_batched_call_per_turn() -> None:
    gen = ScriptedCoaT(["click a", "scroll down", "press Back"])
    dialogue = CoaTDialogue(gen)
    roots = [dialogue.root(OBS), dialogue.root(OBS)]
    dialogue.run(roots, branching=(1, 1, 3, 1))
    # One call per turn: 2 roots x 1, 2 x 1, 2 x 3 decisions, then groundings only for the 2 clicks.
    assert gen.calls == [(2, 1), (2, 1), (2, 3), (2, 1)]
    leaves = [leaf for r in roots for leaf in r.leaves()]
    assert len(leaves) == 6
    assert sorted(leaf.action.type for leaf in leaves) == [
        "click",
        "click",
        "navigate",
        "navigate",
        "scroll",
        "scroll",
    ]
    assert all(leaf.path()[0].turn == 0 for leaf in leaves)


def test_unparseable_decision_is_a_structured_error() -> None:
    (out,) = CoaTAgent(ScriptedCoaT(["I am not sure"])).act_batch([OBS])
    assert out.action is None and out.parse_error.startswith("unknown_action")


def test_coat_with_a_tiny_vlm(tiny_vlm_path: Path) -> None:
    from agents.hf_agent import HFGenerator

    gen = HFGenerator(tiny_vlm_path, seed=0)
    dialogue = CoaTDialogue(gen, SamplingParams(max_new_tokens=3))
    root = dialogue.root({"screenshot": np.full((56, 56, 3), 128, np.uint8), "instruction": "go"})
    (children,) = dialogue.expand([root], k=2)
    assert len(children) == 2 and all(c.turn == 0 and c.token_ids for c in children)
    (grand,) = dialogue.expand([children[0]], k=1)
    assert grand[0].messages[0]["content"][0] == {"type": "image"} and len(grand[0].messages) == 4
