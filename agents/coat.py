"""MobileIPL's CoaT reasoning as a multi-turn dialogue, with K-way branching at any turn (seed 003, sec. 3.1).

Each action is four dialogue turns ``[s1, s2, s3, s4]``: page description, action thought, action decision and
grounding (grounding only for pointer actions). :class:`CoaTDialogue` grows a tree of :class:`CoaTNode`: every
node is one sampled assistant reply conditioned on its ancestors' dialogue, and :meth:`CoaTDialogue.expand`
samples ``K`` children for each of many nodes in **one** batched generator call. The trainers' CoaT-tree
sampler (seed 003, sec. 3.3) branches with ``K > 1``; :class:`CoaTAgent` runs one path (``K = 1``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from agents.base import AgentOutput, BaseAgent
from agents.generation import Conversation, Generator, SamplingParams
from agents.parsing import (
    NORM_1000,
    CoordinateFrame,
    ParseError,
    coat_action,
    parse_coat_decision,
    screen_size_of,
)
from agents.prompts.coat import TURNS, coat_user_turn
from agents.prompts.observation import instruction_of, render_history
from gui_envs.schema.actions import Action


@dataclass
class CoaTNode:
    """One sampled CoaT turn (the root, ``turn == -1``, holds only the context).

    Attributes:
        turn: 0 description, 1 thought, 2 action decision, 3 grounding; -1 for the root.
        text: the assistant reply of this turn.
        token_ids: its generated token ids (when the generator exposes them).
        logprobs: their log-probs under the sampling policy.
        prompt: the full prompt text the model read for this turn.
        messages: the dialogue up to and including this reply.
        parent: the node this one continues.
        children: sampled continuations.
        action: the final action in screenshot pixels, set on leaves that parsed.
        error: why a leaf did not give an action.
        value: free slot for the trainers' value back-propagation (seed 003, eq. 7).
    """

    turn: int
    text: str = ""
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt: str | None = None
    messages: Conversation = field(default_factory=list)
    parent: CoaTNode | None = field(default=None, repr=False)
    children: list[CoaTNode] = field(default_factory=list, repr=False)
    action: Action | None = None
    error: ParseError | None = None
    value: float | None = None
    context: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_leaf(self) -> bool:
        """No further turn is needed: grounding is done, or the decision needs no grounding, or it failed."""
        return self.action is not None or self.error is not None

    def path(self) -> list[CoaTNode]:
        """The nodes from the first turn down to this one (the root excluded)."""
        nodes, node = [], self
        while node is not None and node.turn >= 0:
            nodes.append(node)
            node = node.parent
        return nodes[::-1]

    def leaves(self) -> list[CoaTNode]:
        """Every leaf below (or at) this node."""
        if not self.children:
            return [self] if self.turn >= 0 else []
        return [leaf for child in self.children for leaf in child.leaves()]


class CoaTDialogue:
    """Samples CoaT turns with any :class:`~agents.generation.Generator`.

    Args:
        generator: the model.
        sampling: sampling parameters (``num_samples`` is set per call from the branching factor).
        frame: the grounding turn's coordinate frame (MobileIPL: integers on 0-1000).
        use_images: send the screenshot with turn 1; defaults to ``generator.supports_images``.
        style: the user turns' wording, ``paper`` or ``compact`` (see :mod:`agents.prompts.coat`).
    """

    def __init__(
        self,
        generator: Generator,
        sampling: SamplingParams | None = None,
        frame: CoordinateFrame = NORM_1000,
        use_images: bool | None = None,
        style: str = "paper",
    ) -> None:
        self.generator = generator
        self.style = style
        self.sampling = sampling or SamplingParams(max_new_tokens=128)
        self.frame = frame
        self.use_images = (
            bool(getattr(generator, "supports_images", False)) if use_images is None else use_images
        )

    def root(self, observation: Any, instruction: str = "", history: Sequence[str] = ()) -> CoaTNode:
        """A fresh tree for one observation."""
        shot = observation.get("screenshot") if isinstance(observation, Mapping) else None
        with_image = self.use_images and isinstance(shot, np.ndarray)
        return CoaTNode(
            turn=-1,
            context={
                "observation": observation,
                "instruction": instruction or instruction_of(observation),
                "history": render_history(list(history)),
                "images": [shot] if with_image else [],
                "with_image": with_image,
            },
        )

    def expand(self, nodes: Sequence[CoaTNode], k: int = 1) -> list[list[CoaTNode]]:
        """Sample the next turn ``k`` times for every non-leaf node, in one batched call."""
        todo = [n for n in nodes if not n.is_leaf and n.turn < len(TURNS) - 1]
        if not todo:
            return [[] for _ in nodes]
        conversations, images = [], []
        for node in todo:
            ctx = _root(node).context
            turn = node.turn + 1
            decision = node.text if turn == 3 else ""
            message = coat_user_turn(
                turn, ctx["instruction"], ctx["history"], decision, ctx["with_image"], self.style
            )
            conversations.append([*node.messages, message])
            images.append(ctx["images"])
        generations = self.generator.generate(
            conversations, images if self.use_images else None, replace(self.sampling, num_samples=k)
        )
        by_node: dict[int, list[CoaTNode]] = {}
        for node, conv, gens in zip(todo, conversations, generations, strict=True):
            children = []
            for gen in gens:
                child = CoaTNode(
                    turn=node.turn + 1,
                    text=gen.text,
                    token_ids=gen.token_ids,
                    logprobs=gen.logprobs,
                    prompt=gen.prompt,
                    messages=[*conv, {"role": "assistant", "content": gen.text}],
                    parent=node,
                )
                self._judge(child)
                children.append(child)
            node.children.extend(children)
            by_node[id(node)] = children
        return [by_node.get(id(n), []) for n in nodes]

    def run(self, roots: Sequence[CoaTNode], branching: Sequence[int] = (1, 1, 1, 1)) -> list[CoaTNode]:
        """Grow each root to its leaves, sampling ``branching[t]`` children at turn ``t``."""
        if len(branching) != len(TURNS):
            raise ValueError(f"branching needs one factor per turn {TURNS}, got {tuple(branching)}")
        frontier = list(roots)
        for k in branching:
            children = self.expand(frontier, k)
            frontier = [c for group in children for c in group if not c.is_leaf]
            if not frontier:
                break
        return list(roots)

    def _judge(self, node: CoaTNode) -> None:
        """Decide whether ``node`` ends the dialogue, and with which action."""
        obs = _root(node).context["observation"]
        if node.turn == 2:
            decision = parse_coat_decision(node.text)
            if decision.error is not None:
                node.error = decision.error
            elif not decision.needs_grounding:
                node.action = decision.action
        elif node.turn == 3:
            assert node.parent is not None
            result = coat_action(node.parent.text, node.text, self.frame, screen_size_of(obs))
            node.action, node.error = result.action, result.error


def _root(node: CoaTNode) -> CoaTNode:
    while node.parent is not None:
        node = node.parent
    return node


class CoaTAgent(BaseAgent):
    """Acts by running one CoaT dialogue per observation (no branching); batched across observations.

    The output's ``text`` joins the turns; ``token_ids``/``logprobs`` concatenate them; ``extra["coat_turns"]``
    keeps each turn's prompt, text, ids and log-probs for trainers.
    """

    name = "coat"

    def __init__(
        self,
        generator: Generator,
        sampling: SamplingParams | None = None,
        frame: CoordinateFrame = NORM_1000,
        style: str = "paper",
    ) -> None:
        self.dialogue = CoaTDialogue(generator, sampling, frame, style=style)
        self.instruction = ""
        self.history: list[str] = []

    def reset(self, instruction: str = "", info: dict[str, Any] | None = None) -> None:
        self.instruction = instruction
        self.history = []

    def act(self, observation: Any) -> AgentOutput:
        (out,) = self.act_batch([observation])
        self.history.append(out.extra.get("decision") or "invalid action")
        return out

    def act_batch(
        self, observations: Sequence[Any], histories: Sequence[Sequence[str]] | None = None
    ) -> list[AgentOutput]:
        roots = [
            self.dialogue.root(obs, self.instruction, histories[i] if histories is not None else self.history)
            for i, obs in enumerate(observations)
        ]
        self.dialogue.run(roots)
        return [_leaf_output(root) for root in roots]


def _leaf_output(root: CoaTNode) -> AgentOutput:
    leaves = root.leaves()
    if not leaves:
        return AgentOutput(action=None, text="", parse_error="empty: no CoaT turn was generated")
    leaf = leaves[0]
    path = leaf.path()
    ids = [t for n in path for t in (n.token_ids or [])]
    lps = [v for n in path for v in (n.logprobs or [])]
    has_tokens = all(n.token_ids is not None for n in path)
    error = leaf.error if leaf.action is None else None
    return AgentOutput(
        action=leaf.action,
        text="\n\n".join(f"[{TURNS[n.turn]}] {n.text}" for n in path),
        token_ids=ids if has_tokens else None,
        logprobs=lps if has_tokens else None,
        parse_error=f"{error.code}: {error.message}" if error is not None else None,
        extra={
            "decision": path[2].text if len(path) > 2 else None,
            "coat_turns": [
                {
                    "turn": TURNS[n.turn],
                    "prompt": n.prompt,
                    "text": n.text,
                    "token_ids": n.token_ids,
                    "logprobs": n.logprobs,
                }
                for n in path
            ],
        },
    )
