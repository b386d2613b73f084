"""MobileIPL rule-based rewards on CoaT trees (seed 003, section 3.3 and App. "Rule-based Reward Design").

* :func:`leaf_value`: the rule-based value ``v`` of a sampled final action against the ground truth ``a*``
  (Eq. leaf_value): 1 for an exact match, ``v_type + score_match`` when only the type matches, 0 otherwise.
* :func:`backpropagate`: ``v(s_{t-1}) = c * (1/K) * sum_k v(s_t^(k))`` (Eq. intra_value) over a
  :class:`TreeNode` tree.
* :func:`classify_tree`: alpha (every leaf is 1), beta (some are, some are not), gamma (none is).
* :func:`preference_pairs`: beta pairs where siblings branch, a value-1 continuation (chosen for diverse
  action types) over each sibling lower by more than ``1/K`` (Eq. dpo_pair1 and the text above it), and
  gamma pairs with the ground-truth action chosen (Eq. dpo_pair2).

The click formula as printed, ``score_match = v_format + (1 - d) - (v_type + v_format) * d``, gives
``v = (1 + v_type + v_format)(1 - d)``: above 1 at ``d = 0`` and 0 at ``d = 1``. The appendix says click
values range between ``v_format + v_type`` and 1, like input values, and the text says ``v`` lies in
``[0, 1]``. The default ``click_form="range"`` therefore uses the same linear form as input,
``score_match = v_format + (1 - v_type - v_format) * (1 - d)``; ``click_form="printed"`` keeps the
equation as printed (its values can exceed 1).

Choices where the paper is silent:

* ``v_format = 0.1``: the same size as ReFT's 0.1 signal that ``v_type`` reuses, so a well-formed click or
  input of the right type is worth at least 0.2 and an unextractable one 0.1.
* ``d``: distance between the predicted and ground-truth points in normalised screen coordinates (x / width,
  y / height; the paper's 0-1000 frame divided by 1000), clipped to ``[0, 1]``.
* "Exact match" for a click: the point lies inside the annotated box, or within ``match_radius = 0.05`` in
  normalised coordinates (``d_min = 0.05`` of the reward's draft in the paper's source). Input: the text is
  equal after whitespace normalisation. Other actions: type and every annotated argument match.
* ``discount c = 1``: the paper leaves ``c`` open; with 1 a wrong child lowers its parent by ``1/K``,
  which is the reasoning behind the ``1/K`` pair threshold.
* Gamma pairs are formed at the action (leaf) level: ``a*`` is chosen over each sampled final action,
  conditioned on that action's own CoaT prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from rewards.geometry import normalised_distance as _norm_dist
from rewards.geometry import point_in_box
from rewards.steps import CLICK_TYPES, TEXT_TYPES, StepPrediction, StepTarget, args_match, is_well_formed
from rewards.text import normalise_text, token_f1

TreeClass = Literal["alpha", "beta", "gamma"]


def _click_match(pred: StepPrediction, target: StepTarget, d: float, match_radius: float) -> bool:
    in_box = target.box is not None and bool(point_in_box(pred.point, target.box))
    return in_box or d <= match_radius


def leaf_value(
    pred: StepPrediction | None,
    target: StepTarget,
    screen_size: Sequence[float],
    *,
    v_type: float = 0.1,
    v_format: float = 0.1,
    click_form: Literal["range", "printed"] = "range",
    match_radius: float = 0.05,
    distance_mode: Literal["axes", "diagonal"] = "axes",
) -> float:
    """Rule-based value of one sampled action (Eq. leaf_value and score_match, section 3.3).

    Args:
        pred: parsed final CoaT action; ``None`` when unparseable (value 0).
        target: ground-truth action ``a*``; clicks need ``point`` or ``box`` (pixels), inputs ``text``.
        screen_size: ``(width, height)`` in pixels, to normalise click distances.
        v_type: reward for a matching action type (ReFT's 0.1 format signal, repurposed).
        v_format: reward for extractable arguments (coordinates or text).
        click_form: ``"range"`` (default, values in ``[v_type + v_format, 1]``) or ``"printed"``.
        match_radius: normalised distance under which a click is an exact match.
        distance_mode: how ``d`` is normalised; see :func:`rewards.geometry.normalised_distance`.

    Returns:
        ``v`` in ``[0, 1]`` (``"printed"`` can give up to ``1 + v_type + v_format``).

    >>> t = StepTarget("click", point=(500.0, 500.0))
    >>> round(leaf_value(StepPrediction("click", point=(500.0, 900.0)), t, (1000, 1000)), 4)  # d = 0.4
    0.68
    >>> leaf_value(StepPrediction("type", text="x"), t, (1000, 1000))
    0.0
    """
    if pred is None or pred.action_type != target.action_type:
        return 0.0  # "others"
    if not is_well_formed(pred):
        return v_type  # type right, arguments not extractable: score_match = 0
    if target.action_type in CLICK_TYPES:
        ref = target.reference_point()
        if ref is None:
            raise ValueError(f"click target {target!r} needs a point or a box")
        d = float(_norm_dist(pred.point, ref, screen_size, distance_mode))
        if _click_match(pred, target, d, match_radius) and args_match(pred, target):
            return 1.0
        if click_form == "printed":
            score = v_format + 1.0 * (1.0 - d) - (v_type + v_format) * d
        elif click_form == "range":
            score = v_format + (1.0 - v_type - v_format) * (1.0 - d)
        else:
            raise ValueError(f"click_form must be 'range' or 'printed', got {click_form!r}")
        return v_type + score
    if target.action_type in TEXT_TYPES:
        ref_text = target.text or ""
        if normalise_text(pred.text or "") == normalise_text(ref_text) and args_match(pred, target):
            return 1.0
        return v_type + v_format + (1.0 - v_type - v_format) * token_f1(pred.text or "", ref_text)
    return 1.0 if args_match(pred, target) else v_type


@dataclass
class TreeNode:
    """One node of a CoaT sampling tree (seed 003, section 3.3).

    The root is the state being reasoned about; each level is one CoaT stage (description, thought, action,
    grounding) sampled ``K`` times; leaves are final actions and carry the leaf value.

    Attributes:
        content: what was generated at this stage (text, a :class:`StepPrediction`, ...).
        value: the node value; set on leaves by the caller, filled on inner nodes by :func:`backpropagate`.
        children: the ``K`` sampled continuations.
    """

    content: Any = None
    value: float | None = None
    children: list[TreeNode] = field(default_factory=list)

    def leaves(self) -> Iterator[TreeNode]:
        """The leaves under this node, depth first, left to right."""
        if not self.children:
            yield self
        for child in self.children:
            yield from child.leaves()


def backpropagate(node: TreeNode, discount: float = 1.0) -> float:
    """Fill inner-node values with ``v(s_{t-1}) = c * mean_k v(s_t^(k))`` (Eq. intra_value); in place.

    Args:
        node: root of the (sub)tree; every leaf must already have a value.
        discount: ``c``.

    Returns:
        The value of ``node``.

    >>> root = TreeNode(children=[TreeNode(value=1.0), TreeNode(value=0.0), TreeNode(value=0.5)])
    >>> backpropagate(root)
    0.5
    """
    if not node.children:
        if node.value is None:
            raise ValueError(f"leaf {node.content!r} has no value; score it with leaf_value first")
        return float(node.value)
    node.value = discount * float(np.mean([backpropagate(child, discount) for child in node.children]))
    return node.value


def _is_one(v: float | None, atol: float) -> bool:
    return v is not None and abs(v - 1.0) <= atol


def classify_tree(root: TreeNode, atol: float = 1e-9) -> TreeClass:
    """Alpha if every leaf value is 1, gamma if none is, beta otherwise (section 3.3, Contrastive Data Filter).

    >>> classify_tree(TreeNode(children=[TreeNode(value=1.0), TreeNode(value=0.2)]))
    'beta'
    """
    ones = [_is_one(leaf.value, atol) for leaf in root.leaves()]
    if all(ones):
        return "alpha"
    return "beta" if any(ones) else "gamma"


@dataclass(frozen=True)
class PreferencePair:
    """One thinking-level DPO pair: ``chosen`` over ``rejected`` given the same CoaT ``prefix``.

    Attributes:
        prefix: contents from the root down to the shared parent (``s_1 .. s_{t-1}``).
        chosen: content of the preferred continuation (for gamma pairs, the ground-truth action).
        rejected: content of the dispreferred continuation.
        chosen_value: value of the chosen node (1.0 for the ground truth).
        rejected_value: value of the rejected node.
        kind: ``"beta"`` or ``"gamma"``.
    """

    prefix: tuple[Any, ...]
    chosen: Any
    rejected: Any
    chosen_value: float
    rejected_value: float
    kind: Literal["beta", "gamma"]


def _walk(node: TreeNode, prefix: tuple[Any, ...]) -> Iterator[tuple[TreeNode, tuple[Any, ...]]]:
    yield node, prefix
    for child in node.children:
        yield from _walk(child, (*prefix, node.content))


def node_action_type(node: TreeNode) -> Hashable | None:
    """The action type a continuation leads to: ``content.action_type`` (an attribute or a mapping key) of the
    node, else of its first value-1 leaf; ``None`` when nothing says."""
    for n in (node, *node.leaves()):
        c = n.content
        t = c.get("action_type") if isinstance(c, Mapping) else getattr(c, "action_type", None)
        if t is not None and (n is node or _is_one(n.value, 1e-9)):
            return t
    return None


def _diverse(cands: list[tuple[Any, Hashable | None]], limit: int | None) -> list[Any]:
    """Up to ``limit`` candidates, each new action type first; returned in their original order."""
    seen: set[Hashable | None] = set()
    first, rest = [], []
    for item, t in cands:
        (first if t not in seen else rest).append(item)
        seen.add(t)
    picked = {id(x) for x in (first + rest)[: len(cands) if limit is None else limit]}
    return [item for item, _ in cands if id(item) in picked]


def preference_pairs(
    root: TreeNode,
    ground_truth: Any = None,
    *,
    threshold: float | None = None,
    discount: float = 1.0,
    atol: float = 1e-9,
    max_positives: int | None = None,
    action_type: Callable[[TreeNode], Hashable | None] = node_action_type,
) -> list[PreferencePair]:
    """Thinking-level DPO pairs of one CoaT tree (section 3.3, Eqs. dpo_pair1 and dpo_pair2).

    Values are (re)computed with :func:`backpropagate`. Alpha trees give no pairs. In a beta tree the
    positives are the value-1 nodes with a sibling lower by more than ``1/K`` (or ``threshold``), i.e. the turn
    where a correct continuation and a worse one branch ("actions with a value of 1 and as many diverse action
    types as possible are extracted as positive samples"). With ``max_positives`` the positives are chosen to
    cover as many action types (``action_type(node)``) as possible before a type repeats. Each positive is
    paired with every such lower sibling. Gamma trees give ``(ground_truth, leaf)`` for every leaf.

    Args:
        root: the tree; leaves carry their values.
        ground_truth: the annotated action ``a*``; required for gamma trees.
        threshold: value-gap threshold; default ``1/K`` at each node.
        discount: ``c`` for the back-propagation.
        atol: tolerance for "value equals 1".
        max_positives: positives kept per beta tree (``None``: all).
        action_type: the action type of a continuation, for the diversity of the positives.

    Returns:
        The pairs, parents before children, siblings in order.

    >>> tree = TreeNode("s0", children=[TreeNode("a", 1.0), TreeNode("b", 0.5), TreeNode("c", 0.8)])
    >>> [(p.chosen, p.rejected) for p in preference_pairs(tree)]
    [('a', 'b')]
    """
    backpropagate(root, discount)
    kind = classify_tree(root, atol)
    pairs: list[PreferencePair] = []
    if kind == "alpha":
        return pairs
    if kind == "gamma":
        if ground_truth is None:
            raise ValueError("a gamma tree pairs the ground-truth action with each leaf; pass ground_truth")
        for node, prefix in _walk(root, ()):
            if not node.children and node is not root:
                pairs.append(
                    PreferencePair(prefix, ground_truth, node.content, 1.0, float(node.value), "gamma")
                )
        return pairs
    cands = []  # ((positive, its lower siblings, prefix), the positive's action type)
    for node, prefix in _walk(root, ()):
        gap = 1.0 / len(node.children) if threshold is None and node.children else threshold
        here = (*prefix, node.content)
        for a in node.children:
            if _is_one(a.value, atol):
                lower = [b for b in node.children if 1.0 - float(b.value) > gap]  # v(a) = 1
                if lower:
                    cands.append(((a, lower, here), action_type(a)))
    for a, lower, here in _diverse(cands, max_positives):
        for b in lower:
            pairs.append(PreferencePair(here, a.content, b.content, float(a.value), float(b.value), "beta"))
    return pairs
