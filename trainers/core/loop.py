"""CORE's iterative self-training loop (seed 002, App. C.4 Algorithm 4; parameters of App. B.4), top to bottom.

    split templates 70/30 by difficulty (App. B.3); pick 20% of the training tasks for oracle demonstrations
    iteration 0 (behaviour cloning): demos -> semantic code abstraction -> linear strategy graphs; SFT on demos
    for i in 1..N:
        sample 5 trajectories per task from pi^(i-1) (T=1.0, top_p=0.9, top_k=50) on every task
        classify each training trajectory with its task's graph (fully / partially / failed) and the env verdict
        expand:       partially passed + env success -> the trajectory's own key steps become a new path
        extrapolate:  env success on a task without a graph -> a new task (section 3.3.1)
                      env failure -> a new intent from the final state change or an LLM (section 3.3.2)
        aggregate:    kept = fully passed (after expansion) + new tasks' trajectories; dataset_i = demos + kept_1..i
        SFT pi^(i-1) on dataset_i -> pi^(i)

Test-template trajectories are only scored ("generalisation"); "overall" is the success of the policy's samples
on every task (Table 1 of seed 002). Held-out evaluation: after every iteration's SFT (behaviour cloning
included) the new policy plays, greedily and sampled, (a) the training templates on seeds never trained on
(``eval_seeds``: ``heldout_greedy`` / ``heldout_sampled``, the learning figure) and (b) the test templates
(``unseen_template_greedy`` / ``unseen_template_sampled``, generalisation); a held-out split that overlaps the
training split is a :class:`~trainers.heldout.SplitOverlapError` before any work. Kept trajectories are counted
by source: ``kept_oracle`` (the demonstrations), ``kept_policy`` (the policy's own samples, verified),
``kept_policy_relabelled`` (its failures relabelled by failure-driven exploration) and ``kept_scripted``. Every artefact of an iteration is built in a temporary folder and moved into
place as ``iter_XX`` when the iteration finishes (:mod:`gui_envs.schema.atomic_folder`), so after ``kill -9`` a run
resumes from the last finished iteration and nothing is written twice.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.episode import ListWorkers, play
from agents.noisy_oracle import NoisyOracleAgent
from agents.oracle import OracleAgent
from gui_envs.schema.atomic_folder import clean_stale_temporaries, install_folder, temp_name
from gui_envs.schema.trajectory import Trajectory, save_trajectories
from gui_envs.tasks.base import check_task
from gui_envs.verifiers.graph import StrategyGraph
from trainers.core.abstraction import (
    LLM,
    abstract,
    accepted,
    generator_llm,
    key_steps,
    semantic_descriptions,
    synthesis_metrics,
    to_mapping,
)
from trainers.core.config import CoreConfig
from trainers.core.extrapolation import NewTask, augment_success, explore_failure
from trainers.heldout import check_no_overlap, resolve_seeds
from trainers.rollout import make_workers
from trainers.run_log import plot_curve, read_log

#: Difficulty strata of App. B.3 (a template's ``difficulty`` is its oracle step count): easy, medium, hard.
STRATA = ((1, 3, "easy"), (4, 7, "medium"), (8, 10**9, "hard"))


class RunExistsError(FileExistsError):
    """``output_dir`` already holds finished iterations and ``resume`` is off; the message says what to set."""


@dataclass(frozen=True)
class CoreTask:
    """One task instance: ``env_id``, ``template`` and task ``seed``; ``key`` is ``env_id|template|seed``."""

    env_id: str
    template: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.env_id}|{self.template}|{self.seed}"


@dataclass
class RunState:
    """What carries over between iterations (and is saved in each iteration's ``state.json``)."""

    train: list[CoreTask]
    test: list[CoreTask]
    demo: list[str]
    heldout: list[CoreTask] = field(default_factory=list)
    graphs: dict[str, StrategyGraph] = field(default_factory=dict)
    new_tasks: list[NewTask] = field(default_factory=list)
    model: str = ""
    iteration: int = -1


def _stratum(env_id: str, template: str) -> str:
    env = gym.spec(env_id).entry_point
    from gui_envs.android.tasks.base import TASKS as PHONE
    from gui_envs.web.tasks.base import TASKS as WEB

    cls = (WEB if "web" in str(env) else PHONE).get(template)
    difficulty = getattr(cls, "difficulty", None)
    # AndroidWorld is split at random (App. B.3); templates without a difficulty share one stratum.
    return next((name for lo, hi, name in STRATA if difficulty is not None and lo <= difficulty <= hi), "any")


def split_tasks(
    config: CoreConfig, names: dict[str, list[str]]
) -> tuple[list[CoreTask], list[CoreTask], list[str]]:
    """Train tasks, test tasks (templates split ``1 - test_fraction`` / ``test_fraction`` within each
    difficulty stratum) and the keys of the demonstrated training tasks (``demo_fraction``, at least one)."""
    rng = random.Random(config.seed)
    strata: dict[str, list[tuple[str, str]]] = {}
    for env_id, templates in names.items():
        for t in templates:
            strata.setdefault(_stratum(env_id, t), []).append((env_id, t))
    train_t: list[tuple[str, str]] = []
    test_t: list[tuple[str, str]] = []
    if config.test_templates:
        # The held-out templates are named: every listed template trains, the named ones are only evaluated.
        train_t = [pair for _, members in sorted(strata.items()) for pair in members]
        test_t = [(e, t) for e, _, t in (item.partition(":") for item in config.test_templates)]
        check_no_overlap(train_t, test_t, "task templates", "drop them from templates or from test_templates")
    for _, members in [] if config.test_templates else sorted(strata.items()):
        rng.shuffle(members)
        k = round(len(members) * config.test_fraction)
        test_t += members[:k]
        train_t += members[k:]
    if not config.test_templates and not test_t and config.test_fraction > 0 and len(train_t) > 1:
        test_t.append(train_t.pop())  # a split too small to round still holds one test template out

    def instances(pairs: list[tuple[str, str]]) -> list[CoreTask]:
        return [
            CoreTask(e, t, config.seed_base + s)
            for e, t in sorted(pairs)
            for s in range(config.seeds_per_template)
        ]

    train, test = instances(train_t), instances(test_t)
    n_demo = max(1, math.ceil(config.demo_fraction * len(train)))
    demo = sorted(t.key for t in rng.sample(train, n_demo))
    return train, test, demo


def heldout_tasks(config: CoreConfig, train: list[CoreTask]) -> list[CoreTask]:
    """The unseen-seed split: every training template on each of ``eval_seeds``. Raises
    :class:`~trainers.heldout.SplitOverlapError` when one of them is a training task (same template and seed)."""
    seeds = resolve_seeds(config.eval_seeds)
    templates = sorted({(t.env_id, t.template) for t in train})
    heldout = [CoreTask(e, t, s) for e, t in templates for s in seeds]
    first, last = config.seed_base, config.seed_base + config.seeds_per_template - 1
    check_no_overlap([t.key for t in train], [t.key for t in heldout], "tasks (env|template|seed)",
                     f"the training seeds are {first}..{last} (seed_base, seeds_per_template): move eval_seeds "
                     f"out, e.g. eval_seeds={{start: {last + 1}, count: {len(seeds)}}}")  # fmt: skip
    return heldout


def template_names(config: CoreConfig) -> dict[str, list[str]]:
    """``{env id: template names}`` a run draws its split from (:func:`split_tasks`): the config's ``templates``,
    or for an env named only in ``envs`` every template of it that ``test_templates`` does not hold out."""
    names: dict[str, list[str]] = {}
    for item in config.templates:
        env_id, _, template = item.partition(":")
        names.setdefault(env_id, []).append(template)
    for env_id, templates in names.items():
        # A mistyped template is refused here, before the split (UnknownTaskError, with close names); it used to
        # fail at the first demonstration's reset, after the run had begun to print and write.
        pool = dict.fromkeys(_task_names(env_id, config.env_kwargs))
        for template in templates if pool else ():
            check_task(template, pool, env_id)
    # "Every template of the env" means every one not held out: ``templates: []`` beside a config's named
    # ``test_templates`` trains on the rest instead of refusing the split as overlapping.
    held_out = set(config.test_templates)
    for env_id in config.envs:
        if env_id not in names:
            templates = _task_names(env_id, config.env_kwargs)
            names[env_id] = [t for t in templates if f"{env_id}:{t}" not in held_out]
    return names


def _task_names(env_id: str, env_kwargs: dict[str, Any]) -> list[str]:
    """The task templates of ``env_id``'s pool (none for an env without templates), read without a reset."""
    env = gym.make(env_id, **env_kwargs)
    try:
        return list(getattr(env.unwrapped, "task_names", None) or [])
    finally:
        env.close()


class _Envs:
    """One set of rollout workers per env id, made on first use and closed at the end."""

    def __init__(self, config: CoreConfig) -> None:
        self.config, self.workers = config, {}

    def get(self, env_id: str) -> Any:
        if env_id not in self.workers:
            self.workers[env_id] = make_workers(
                env_id, self.config.backend, self.config.num_envs, self.config.env_kwargs
            )
        return self.workers[env_id]

    def local(self, env_id: str) -> gym.Env[Any, Any]:
        """An in-process env for the scripted agents (they read the env's plan)."""
        workers = self.get(env_id)
        if isinstance(workers, ListWorkers):
            return workers.envs[0]
        key = f"local:{env_id}"
        if key not in self.workers:
            self.workers[key] = ListWorkers([gym.make(env_id, **self.config.env_kwargs)])
        return self.workers[key].envs[0]

    def close(self) -> None:
        for w in self.workers.values():
            w.close()


def _scripted(
    envs: _Envs, task: CoreTask, agent_of: Callable[[gym.Env[Any, Any]], Any], n: int, config: CoreConfig
) -> list[Trajectory]:
    env = envs.local(task.env_id)
    agent = agent_of(env)
    out = []
    for _ in range(n):
        (traj,) = play(ListWorkers([env]), agent, [None], max_steps=config.scripted_max_steps, stateful_agent=True,
                       options={"task": task.template, "seed": task.seed})  # fmt: skip
        out.append(traj)
    return out


def _policy(envs: _Envs, task: CoreTask, agent: Any, n: int, config: CoreConfig) -> list[Trajectory]:
    workers, out = envs.get(task.env_id), []
    while len(out) < n:
        k = min(workers.num_envs, n - len(out))
        out += play(workers, agent, [None] * k, max_steps=config.max_steps,
                    options={"task": task.template, "seed": task.seed})  # fmt: skip
    return out


def _hf_llm(path: str | None, device: str | None) -> LLM | None:
    if not path:
        return None
    from agents.hf_agent import HFGenerator

    return generator_llm(HFGenerator(path, device=device))


def _safe(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key)


def policy_format(config: CoreConfig) -> Any:
    """The policy's output format: an :class:`~agents.prompts.element.ElementFormat` for ``element``, else
    the name (``HFAgent`` and SFT resolve it)."""
    if config.output_format == "element":
        from agents.prompts.element import ElementFormat

        return ElementFormat()
    return config.output_format


def element_samples(fmt: Any) -> Callable[[list[Trajectory], Any], list[Any]]:
    """SFT samples for a format that reads the screen's element list (``trainers.sft.build_samples`` rebuilds a
    prompt from the step's text rendering only): the prompt from the elements the env recorded before each step
    (``privileged["verifier_record"]``, the list the policy saw), the answer the format's rendering of the
    executed action (a policy's raw output may carry tokens after its letter; the letter is what acted)."""
    from agents.prompts.formats import PromptContext
    from trainers.sft import SFTSample

    def make(trajectories: list[Trajectory], generator: Any) -> list[Any]:
        out = []
        for traj in trajectories:
            for step in traj.steps:
                record = (step.privileged or {}).get("verifier_record") or {}
                obs = {"instruction": traj.instruction, "elements": list(record.get("elements") or [])}
                if step.action is None:
                    continue
                try:
                    answer = fmt.answer_text(step.action, obs)
                except ValueError:
                    continue  # a step this format cannot express (a typed text): nothing to imitate
                prompt = generator.prompt_text(fmt.messages(PromptContext(obs, traj.instruction)))
                out.append(SFTSample(prompt, answer))
        return out

    return make


def _sft(
    config: CoreConfig, model: str, folders: list[str], out: Path, epochs: int | None = None
) -> dict[str, Any]:
    from trainers.sft import train_sft
    from trainers.sft_config import SFTConfig

    fmt = policy_format(config)
    custom = not isinstance(fmt, str)
    cfg = SFTConfig(model=model, data=folders, output_format="auto" if custom else fmt, successful_only=False,
                    epochs=epochs or config.epochs, batch_size=config.batch_size, learning_rate=config.learning_rate,
                    warmup_ratio=0.0, device=config.device, seed=config.seed, output_dir=str(out), plot=False,
                    progress=False)  # fmt: skip
    history = train_sft(cfg, make_samples=element_samples(fmt) if custom else None)["history"]
    return {"sft_steps": len(history), "sft_loss": history[-1]["loss"] if history else None}


def _agent(config: CoreConfig, model: str, seed: int, temperature: float | None = None) -> Any:
    from agents.hf_agent import HFAgent

    return HFAgent(model, output_format=policy_format(config), temperature=config.temperature if temperature is None else temperature,
                   top_p=config.top_p, top_k=config.top_k, max_new_tokens=config.max_new_tokens,
                   device=config.device, seed=seed)  # fmt: skip


def evaluate_heldout(
    config: CoreConfig, state: RunState, envs: _Envs, model: str, iteration: int
) -> dict[str, Any]:
    """Greedy and sampled success of ``model`` on the unseen-seed split (``heldout_*``) and the unseen templates
    (``unseen_template_*``): fractions of episodes, each split's keys absent when it is empty; and the greedy
    unseen-seed success per template (``heldout_greedy_by_template``)."""
    out: dict[str, Any] = {}
    seed = config.seed * 1000 + 500 + iteration  # its own sampling stream: evaluation never shifts training's
    for split, tasks in (("heldout", state.heldout), ("unseen_template", state.test)):
        if not tasks:
            continue
        for mode, temperature, n in (("greedy", 0.0, 1), ("sampled", None, config.eval_samples)):
            if n == 0:
                continue
            agent = _agent(config, model, seed, temperature)
            wins = [(task.template, bool(t.success)) for task in tasks for t in _policy(envs, task, agent, n, config)]
            out[f"{split}_{mode}"] = float(np.mean([w for _, w in wins]))
            if split == "heldout" and mode == "greedy":
                # Which templates the policy solves: a rise can then be read as templates learned.
                names = sorted({name for name, _ in wins})
                out["heldout_greedy_by_template"] = {
                    name: float(np.mean([w for x, w in wins if x == name])) for name in names
                }
    return out


def _save_graphs(state: RunState, tmp: Path, draw: bool) -> None:
    (tmp / "graphs").mkdir()
    for key, graph in sorted(state.graphs.items()):
        graph.save(tmp / "graphs" / f"{_safe(key)}.json")
        if draw:
            graph.draw(tmp / "graphs" / f"{_safe(key)}.png")


def _save_state(state: RunState, tmp: Path, metrics: dict[str, Any]) -> None:
    data = {
        "iteration": state.iteration, "model": state.model, "demo": state.demo,
        "train": [vars(t) for t in state.train], "test": [vars(t) for t in state.test],
        "heldout": [vars(t) for t in state.heldout],
        "graph_keys": {k: f"graphs/{_safe(k)}.json" for k in state.graphs},
        "new_tasks": [t.to_json() for t in state.new_tasks],
    }  # fmt: skip
    (tmp / "state.json").write_text(json.dumps(data, indent=1))
    (tmp / "metrics.json").write_text(json.dumps(metrics))
    with (tmp / "new_tasks.jsonl").open("w") as f:
        for t in state.new_tasks:
            if t.metadata.get("iteration") == state.iteration:
                f.write(json.dumps(t.to_json()) + "\n")


def _load_state(folder: Path) -> RunState:
    data = json.loads((folder / "state.json").read_text())
    state = RunState(
        train=[CoreTask(**t) for t in data["train"]], test=[CoreTask(**t) for t in data["test"]], demo=data["demo"],
        heldout=[CoreTask(**t) for t in data.get("heldout", [])],
        graphs={k: StrategyGraph.load(folder / p) for k, p in data["graph_keys"].items()},
        new_tasks=[NewTask(**t) for t in data["new_tasks"]], iteration=int(data["iteration"]),
    )  # fmt: skip
    state.model = str(folder / "sft" / "final")
    return state


def finished_iterations(out: Path) -> list[Path]:
    """The installed ``iter_XX`` folders, in order (a killed iteration only ever left a ``.tmp-`` folder)."""
    return sorted(p for p in out.glob("iter_*") if (p / "state.json").is_file())


def _write_metrics(out: Path) -> None:
    """Rebuild ``metrics.jsonl`` (and its plot) from the finished iterations' ``metrics.json``: a kill between
    installing an iteration and this write can neither lose nor duplicate a line."""
    rows = [json.loads((p / "metrics.json").read_text()) for p in finished_iterations(out)]
    part = out / "metrics.jsonl.tmp"
    part.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(part, out / "metrics.jsonl")
    # Held-out success (greedy and sampled, both splits) shares one panel, the training samples' success another.
    held = [k for k in ("heldout_greedy", "heldout_sampled", "unseen_template_greedy", "unseen_template_sampled")
            if any(k in r for r in rows)]  # fmt: skip
    keys = ([held] if held else []) + [("overall", "generalisation"), "avg_path_count"]
    plot_curve(out / "metrics.jsonl", out / "metrics.png", keys=keys, xlabel="iteration")


def _finish(out: Path, tmp: Path, state: RunState, metrics: dict[str, Any], console: Any) -> None:
    _save_state(state, tmp, metrics)
    final = out / f"iter_{state.iteration:02d}"
    install_folder(tmp, final)
    state.model = str(final / "sft" / "final")
    _write_metrics(out)
    console.print(
        f"[bold]iteration {state.iteration} done[/bold]: "
        + ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items() if k != "step"
        )
    )


def _behaviour_cloning(
    config: CoreConfig, state: RunState, envs: _Envs, tmp: Path, llm: LLM | None, console: Any
) -> dict[str, Any]:
    by_key = {t.key: t for t in state.train}
    console.print(f"[cyan]iteration 0[/cyan]: {len(state.demo)} oracle demonstrations")
    demos = [t for key in state.demo for t in _scripted(envs, by_key[key], OracleAgent, 1, config)]
    for traj in demos:
        traj.metadata["core_task"] = f"{traj.env_id}|{traj.task}|{traj.seed}"
    save_trajectories(demos, tmp / "dataset")
    records_all, lf = [], {}
    for key, traj in zip(state.demo, demos, strict=True):
        records = abstract(traj, llm, timeout_s=config.timeout_s)
        records_all += records
        # Section 3.1's intermediate products are kept beside the functions: what a reader checks first.
        lf[key] = {"descriptions": semantic_descriptions(traj), "key_steps": key_steps(traj, llm),
                   "records": to_mapping(records)}  # fmt: skip
        functions = accepted(records)
        if functions and not config.env_only:
            state.graphs[key] = StrategyGraph.linear(functions, task=key)
    (tmp / "label_functions.json").write_text(json.dumps(lf, indent=1))
    console.print("[cyan]iteration 0[/cyan]: SFT on the demonstrations")
    sft = _sft(config, config.model, [str(tmp / "dataset")], tmp / "sft", config.bc_epochs or None)
    return {**synthesis_metrics(records_all), **sft, "demos_success": float(np.mean([bool(t.success) for t in demos])),
            "key_steps": sum(len(r["key_steps"]) for r in lf.values()),
            "kept": len(demos), "kept_oracle": len(demos), "kept_policy": 0, "kept_policy_relabelled": 0,
            "kept_scripted": 0}  # fmt: skip


def _iteration(
    config: CoreConfig,
    state: RunState,
    envs: _Envs,
    tmp: Path,
    out: Path,
    llm: LLM | None,
    judge: LLM | None,
    console: Any,
) -> dict[str, Any]:
    i = state.iteration
    stage = f"[cyan]iteration {i}[/cyan]"
    console.print(
        f"{stage}: sampling {config.samples_per_task} per task ({len(state.train)} train, {len(state.test)} test)"
    )
    policy = _agent(config, state.model, config.seed + i)
    rng_seed = config.seed * 1000 + i
    samples: list[tuple[CoreTask, str, Trajectory]] = []
    from tqdm.auto import tqdm

    for task in tqdm(state.train + state.test, desc=f"iteration {i}: sampling", unit="task"):
        # Test tasks get the policy's share only: the scripted samples are a training aid, not the policy.
        n_script = config.scripted_samples if task in state.train else 0
        for traj in _policy(envs, task, policy, config.samples_per_task - config.scripted_samples, config):
            samples.append((task, "policy", traj))
        noisy = lambda env: NoisyOracleAgent(env, p=config.detour_p, seed=rng_seed + len(samples))  # noqa: E731
        for traj in _scripted(envs, task, noisy, n_script, config) if n_script else []:
            samples.append((task, "scripted", traj))
    for task, sampler, traj in samples:
        traj.metadata.update(
            core_task=task.key, sampler=sampler, split="train" if task in state.train else "test"
        )
    save_trajectories([t for _, _, t in samples], tmp / "samples")

    console.print(f"{stage}: classify, expand, extrapolate")
    counts = {"fully": 0, "partially": 0, "failed": 0, "no_graph": 0, "expanded": 0, "env_success": 0}
    kept: list[Trajectory] = []
    mined = 0
    graph_tasks = {t.name: t for t in state.new_tasks}
    # Env-verified successes first: the cap on mined tasks (max_new_tasks) must not drop the policy's own
    # successes on undemonstrated tasks (section 3.3.1) in favour of relabelled failures sampled before them.
    ordered = sorted(samples, key=lambda s: not s[2].success)  # stable: sampling order within each group
    for task, _sampler, traj in tqdm(ordered, desc=f"iteration {i}: verify", unit="traj"):
        if task not in state.train:
            continue
        success = bool(traj.success)
        counts["env_success"] += success
        if config.env_only:
            if success:
                kept.append(traj)
            continue
        graph = state.graphs.get(task.key)
        if graph is None:
            counts["no_graph"] += 1
            if config.extrapolation and success and mined < config.max_new_tasks:
                new = augment_success(traj, task.key, llm, config.timeout_s)
                if new is not None and new.name not in graph_tasks:
                    new.metadata["iteration"] = i
                    state.new_tasks.append(new)
                    graph_tasks[new.name] = new
                    state.graphs[task.key] = StrategyGraph.linear(new.functions, task=task.key)
                    kept.append(traj)
                    mined += 1
            elif config.extrapolation and not success and mined < config.max_new_tasks:
                mined += _explore(traj, task, llm, judge, config, state, graph_tasks, kept, i)
            continue
        label = graph.classify(traj, config.timeout_s).label
        counts[label] += 1
        if label == "fully":
            kept.append(traj)
        elif label == "partially" and success and config.graph_expansion:
            functions = accepted(abstract(traj, llm, timeout_s=config.timeout_s))
            before = graph.path_count()
            if graph.expand(traj, functions, config.timeout_s):
                counts["expanded"] += int(graph.path_count() > before)
                kept.append(traj)
        elif not success and config.extrapolation and mined < config.max_new_tasks:
            mined += _explore(traj, task, llm, judge, config, state, graph_tasks, kept, i)
    save_trajectories(kept, tmp / "dataset")
    _save_graphs(state, tmp, config.draw_graphs)
    (tmp / "label_functions.json").write_text(
        json.dumps({k: g.to_json()["vertices"] for k, g in state.graphs.items()}, indent=1)
    )

    console.print(f"{stage}: SFT on {len(kept)} new trajectories + earlier data")
    folders = [str(p / "dataset") for p in finished_iterations(out)] + [str(tmp / "dataset")]
    folders = [f for f in folders if Path(f).is_dir() and any(Path(f).iterdir())]
    sft = _sft(config, state.model, folders, tmp / "sft")
    by_source = {"kept_oracle": 0, "kept_policy": 0, "kept_policy_relabelled": 0, "kept_scripted": 0}
    for traj in kept:
        sampler = traj.metadata.get("sampler", "policy")
        relabelled = "relabelled_from" in traj.metadata
        by_source[
            "kept_scripted"
            if sampler == "scripted"
            else "kept_policy_relabelled"
            if relabelled
            else "kept_policy"
        ] += 1

    def rate(split: str) -> float:
        rows = [
            bool(t.success)
            for task, s, t in samples
            if s == "policy" and (split == "all" or t.metadata["split"] == split)
        ]
        return float(np.mean(rows)) if rows else 0.0

    demo_graphs = [g for k, g in state.graphs.items() if k in state.demo]
    return {
        "overall": rate("all"), "generalisation": rate("test"), "train_success": rate("train"),
        "scripted_success": float(np.mean([bool(t.success) for _, s, t in samples if s == "scripted"] or [0.0])),
        "sampled": len(samples), **counts, "kept": len(kept), **by_source,
        "new_success": sum(t.origin == "success" and t.metadata.get("iteration") == i for t in state.new_tasks),
        "new_failure": sum(t.origin == "failure" and t.metadata.get("iteration") == i for t in state.new_tasks),
        "graphs": len(state.graphs), "avg_path_count": StrategyGraph.average_path_count(state.graphs.values()),
        "avg_path_count_demo": StrategyGraph.average_path_count(demo_graphs), **sft,
    }  # fmt: skip


def _explore(traj: Trajectory, task: CoreTask, llm: LLM | None, judge: LLM | None, config: CoreConfig,
             state: RunState, graph_tasks: dict[str, NewTask], kept: list[Trajectory], i: int) -> int:  # fmt: skip
    found = explore_failure(traj, task.key, llm, judge, config.timeout_s)
    if found is None or found[0].name in graph_tasks:
        return 0
    new, relabelled = found
    new.metadata["iteration"] = i
    state.new_tasks.append(new)
    graph_tasks[new.name] = new
    kept.append(relabelled)
    return 1


def train_core(config: CoreConfig, console: Any = None) -> dict[str, Any]:
    """Run (or resume) CORE as configured; returns ``{"metrics": [per-iteration records], "state": RunState}``."""
    if console is None:
        from rich.console import Console

        console = Console()
    out = Path(config.output_dir)
    done = finished_iterations(out)
    if done and not config.resume:
        raise RunExistsError(
            f"{out} holds finished iterations ({done[-1].name} last): pass --resume (resume=true) to continue, "
            "or set output_dir to a new folder"
        )
    if not done:
        # The splits first: an overlapping held-out split is refused before anything is written or trained.
        train, test, demo = split_tasks(config, template_names(config))
        state = RunState(train, test, demo, heldout=heldout_tasks(config, train), model=config.model)
    out.mkdir(parents=True, exist_ok=True)
    clean_stale_temporaries(out)
    if done:
        state = _load_state(done[-1])
        _write_metrics(out)
        console.print(f"resuming after iteration {state.iteration} from {done[-1]}")
    else:
        (out / "config.json").write_text(json.dumps(config.to_dict(), indent=1))
    llm, judge = _hf_llm(config.llm, config.device), _hf_llm(config.judge, config.device)
    envs = _Envs(config)
    try:
        while state.iteration < config.iterations:
            state.iteration += 1
            tmp = out / temp_name("tmp", f"iter_{state.iteration:02d}")
            tmp.mkdir()
            start = time.time()
            if state.iteration == 0:
                metrics = _behaviour_cloning(config, state, envs, tmp, llm, console)
                _save_graphs(state, tmp, config.draw_graphs)
                metrics.update(
                    graphs=len(state.graphs),
                    avg_path_count=StrategyGraph.average_path_count(state.graphs.values()),
                )
            else:
                metrics = _iteration(config, state, envs, tmp, out, llm, judge, console)
            if state.heldout or state.test:
                console.print(f"[cyan]iteration {state.iteration}[/cyan]: held-out evaluation")
                metrics.update(
                    evaluate_heldout(config, state, envs, str(tmp / "sft" / "final"), state.iteration)
                )
            metrics = {
                "step": state.iteration,
                "iteration": state.iteration,
                **metrics,
                "seconds": time.time() - start,
            }
            _finish(out, tmp, state, metrics, console)
    finally:
        envs.close()
    return {"metrics": read_log(out / "metrics.jsonl"), "state": state}
