"""The swap test: keep the page, change what the instruction asks, and see whether the policy's action follows.

Held-out success says a policy does the task; it does not say the policy read the instruction. On a page with two
buttons, a policy that learned where the right button tends to be scores well and ignores the words. The swap
test asks the question directly (DESIGN.md, "Learned"): on each held-out episode's first screen, the instruction is
rewritten to name another target on the same page (:func:`gui_envs.web.miniwob_swap.swap_instruction`: another
button, link, tab, ordinal, text or selection, in the same wording), the policy answers the rewritten screen
greedily, and the answer counts when it is the action the rewritten instruction calls for: the scripted
demonstrator's first action on it (:func:`agents.miniwob_demonstrator.first_action`), the same element and, for
typing, the same text. The page is not stepped: the rewritten instruction is never judged by MiniWoB.

Reported beside it, on the same episodes:

* ``eval_swap_chance``: the rate of a policy that picks one of the listed elements uniformly (and, for typing, one
  of the instruction's quoted phrases uniformly), the level an instruction-blind policy is measured against;
* ``eval_swap_kept``: how often the answer to the rewritten screen is the answer to the original one (an
  instruction-blind policy keeps its answer every time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from gui_envs.browser.observation import parse_elements
from gui_envs.schema.actions import Action

#: The metric names a swap test writes into the run log (shares of the swapped episodes), and its episode count.
SWAP_KEYS = ("eval_swap_rate", "eval_swap_chance", "eval_swap_kept")


def same_target(action: Any, expected: Action, elements: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``action`` does what ``expected`` does: the same type, on the same element (a point click counts
    on the element whose box holds the point; an element and one nested in it with the same text, a tab and its
    inner link, are one target), typing the same text."""
    if not isinstance(action, Action) or action.type != expected.type:
        return False
    if expected.type == "type" and (action.text or "") != (expected.text or ""):
        return False
    return _element_of(action, elements) == _element_of(expected, elements) is not None


def _element_of(action: Action, elements: Sequence[Mapping[str, Any]]) -> str | None:
    if action.element_id is not None:
        return _outermost_same(str(action.element_id), elements)
    if action.point is None:
        return None
    x, y = action.point
    under = [(_area(e["bbox"]), str(e["id"])) for e in elements if e.get("bbox") and _holds(e["bbox"], x, y)]
    return _outermost_same(min(under)[1], elements) if under else None  # the innermost element under the point


def _outermost_same(element_id: str, elements: Sequence[Mapping[str, Any]]) -> str:
    """The largest element holding ``element_id``'s box with the same text (itself where none does): what a text
    listing shows once (:func:`agents.prompts.act.listed_elements`), so answering either counts as the same."""
    me = next((e for e in elements if str(e.get("id")) == element_id), None)
    if me is None or not me.get("bbox") or not _label(me):
        return element_id
    a = me["bbox"]
    same = [(_area(e["bbox"]), str(e["id"])) for e in elements
            if e.get("bbox") and _label(e) == _label(me) and _holds(e["bbox"], a[0], a[1]) and _holds(e["bbox"], a[2], a[3])]  # fmt: skip
    return max(same)[1] if same else element_id


def _label(element: Mapping[str, Any]) -> str:
    return " ".join(str(element.get("text") or "").split())


def _area(b: Sequence[float]) -> float:
    return (float(b[2]) - float(b[0])) * (float(b[3]) - float(b[1]))


def _holds(b: Sequence[float], x: float, y: float) -> bool:
    return b[0] <= x <= b[2] and b[1] <= y <= b[3]


def swap_test(workers: Any, agent: Any, seeds: Sequence[int], seed: int = 0) -> dict[str, tuple[float, int]]:
    """The swap test on the first screens of ``seeds`` (module docstring).

    Args:
        workers: env slots (:class:`agents.episode.EnvWorkers`) of a MiniWoB env (a task or the suite).
        agent: the policy; answered greedily (its temperature is set to 0 for the test, when it has one).
        seeds: the held-out reset seeds.
        seed: seeds the draw of the new target where a page offers several.

    Returns:
        ``{metric: (sum over swapped episodes, swapped episodes)}`` for :data:`SWAP_KEYS`, so that ranks can add
        their shares; seeds whose page has no other target (one button label on the page) are left out.
    """
    from agents.miniwob_demonstrator import first_action
    from agents.prompts.act import listed_elements, quoted_phrases
    from gui_envs.web.miniwob_swap import swap_instruction

    rng = np.random.default_rng(seed)
    follows = chance = kept = 0.0
    count = 0
    sampling = getattr(agent, "sampling", None)
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        if sampling is not None:
            agent.sampling = replace(sampling, temperature=0.0)
        try:
            for lo in range(0, len(seeds), workers.num_envs):
                chunk = list(seeds[lo : lo + workers.num_envs])
                firsts = [obs for obs, _ in workers.reset(chunk, len(chunk))]
                cases = []
                for obs in firsts:
                    elements = parse_elements(obs["elements"])
                    swapped = swap_instruction(obs["instruction"], elements, rng)
                    expected = first_action(swapped, elements) if swapped else None
                    if expected is not None:
                        cases.append((obs, {**obs, "instruction": swapped}, expected, elements))
                if not cases:
                    continue
                answers = _answers(agent, [c[0] for c in cases] + [c[1] for c in cases])
                for k, (_, rewritten, expected, elements) in enumerate(cases):
                    before, after = answers[k], answers[len(cases) + k]
                    follows += same_target(after, expected, elements)
                    kept += isinstance(after, Action) and isinstance(before, Action) and after == before
                    n_listed = max(1, len(listed_elements(rewritten)))
                    n_texts = (
                        max(1, len(quoted_phrases(rewritten["instruction"])))
                        if expected.type == "type"
                        else 1
                    )
                    chance += 1.0 / (n_listed * n_texts)
                    count += 1
        finally:
            if sampling is not None:
                agent.sampling = sampling
    return {SWAP_KEYS[0]: (follows, count), SWAP_KEYS[1]: (chance, count), SWAP_KEYS[2]: (kept, count)}


def _answers(agent: Any, observations: list[dict[str, Any]]) -> list[Any]:
    """The agent's first-step actions, one batched call; the instruction travels in the observation."""
    if hasattr(agent, "reset"):
        agent.reset()
    try:
        outs = agent.act_batch(observations, histories=[[] for _ in observations],
                               instructions=[o["instruction"] for o in observations])  # fmt: skip
    except TypeError:  # an agent whose act_batch takes observations only
        outs = agent.act_batch(observations)
    return [out.action for out in outs]


__all__ = ["SWAP_KEYS", "same_target", "swap_test"]
