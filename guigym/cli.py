"""The ``guigym`` command.

guigym envs [--all]                           list the registered ids (MiniWoB folded into one line)
guigym tasks GuiWeb-Shop-v0                   task templates, difficulty and an example instruction
guigym run Sudoku-v0 --agent random -n 3      run episodes and print returns and success
guigym run Maze-v0 --agent oracle --record runs/maze --kwarg mode=navigate
guigym run GuiWeb-v0 --agent oracle --task shop.add_to_cart --record runs/web
guigym play GuiWeb-v0                         play it yourself (headed browser where a display exists)
guigym report runs/web                        one HTML page (and a GIF per episode) for a run folder
guigym bench                                  every benchmark in quick mode, one table
guigym eval GuiOffline-v0 -k dataset=screenspot --agent hf:PATH --report r.json --plot offsets.png
guigym demo [--quick]                         what ``./run demo`` shows: the mission in miniature
guigym tiny-model runs/tiny-llama                the tiny test model the configs name (--hidden-size 64, 128)
guigym pairs runs/box-pairs/train.parquet     DPO pairs from ClickBox-v0 layouts
guigym train grpo --config configs/grpo_tiny_cpu.yaml --set num_steps=20
guigym train sft --config configs/sft_tiny_cpu.yaml       (README: the lines that make each config's data)
guigym train core --config configs/core_tiny.yaml           CORE self-training (--resume, ablation flags)
guigym train dpo --config configs/dpo_tiny_cpu.yaml
guigym train ipl --config configs/ipl_tiny_cpu.yaml
guigym train trl --config configs/trl/grpo_tiny_clickgrid_cpu.yaml --set trl.max_steps=20   TRL's GRPOTrainer
"""

from __future__ import annotations

import difflib
import json
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import gymnasium as gym
import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

import gui_envs
from agents import OracleAgent, RandomAgent
from agents.base import Agent
from agents.episode import run_episode
from gui_envs.grid.click_box import MAX_BOXES
from gui_envs.schema.errors import did_you_mean
from guigym.errors import check_config_model, check_model_path, user_errors


class SuggestingGroup(TyperGroup):
    """typer's command group, with a mistyped option's close names worded "Did you mean --episodes?", as every
    other hint of this command line is (typer writes "(Possible options: --episodes)")."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)  # the subcommands parse their options in here, nested groups included
        except typer.TyperException as exc:
            close = getattr(exc, "possibilities", None)  # typer's NoSuchOption, from a private module
            if close and hasattr(exc, "option_name"):
                exc.message = f"No such option: {exc.option_name}. Did you mean {' or '.join(sorted(close))}?"
                exc.possibilities = None
            raise


app = typer.Typer(
    cls=SuggestingGroup,
    add_completion=False,
    no_args_is_help=True,
    help="guigym: Gymnasium environments for GUI agents.",
)
console = Console()

#: ``--kwarg/-k KEY=VALUE``, shared by every command that makes an env.
EnvKwargsOption = Annotated[
    list[str] | None,
    typer.Option("--kwarg", "-k", help="Env constructor argument KEY=VALUE (repeatable)."),
]

AGENTS = ("random", "oracle", "hf:PATH", "api:MODEL@URL", "replay:FILE")


class UnknownEnvError(typer.BadParameter):
    """The id is not registered; the message suggests the closest ids."""


def resolve_env_id(env_id: str) -> str:
    """Return ``env_id`` if registered, else raise a usage error with the closest matches
    (:func:`gui_envs.check_env_id`, which trainers call too)."""
    try:
        return gui_envs.check_env_id(env_id)
    except gui_envs.UnknownEnvIdError as exc:
        raise UnknownEnvError(str(exc)) from None


def parse_kwargs(pairs: list[str]) -> dict[str, Any]:
    """``["mode=navigate", "size=7"]`` -> ``{"mode": "navigate", "size": 7}`` (values parsed as JSON if they can be)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, value = pair.split("=", 1) if "=" in pair else ("", "")
        if not key.strip():  # `-k mode`, `-k =5`: gymnasium would report an unexpected keyword argument ''
            raise typer.BadParameter(f"--kwarg expects KEY=VALUE, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def make_agent(name: str, env: gym.Env[Any, Any], seed: int) -> Agent:
    """``random``, ``oracle``, ``hf:PATH`` (a Hugging Face model), ``api:MODEL@URL`` (an OpenAI-compatible
    endpoint) or ``replay:FILE`` (recorded outputs, JSON lines ``{"episode_id", "step", "output"}``)."""
    if name == "random":
        return RandomAgent(env.action_space, seed=seed)
    if name == "oracle":
        return OracleAgent(env)
    if name.startswith("hf:"):
        # A missing or empty folder, a file, an unreachable hub: one line before torch and transformers load.
        check_model_path(name[3:])
        from agents.hf_agent import HFAgent

        return HFAgent(name[3:], seed=seed)
    if name.startswith("api:"):
        model, _, url = name[4:].partition("@")
        # Refused here: the agent retried a URL without its scheme for seconds before it failed.
        if not model or not url.startswith(("http://", "https://")):
            example = "api:gpt-4o@http://localhost:8000/v1"
            raise typer.BadParameter(
                f"--agent {name!r}: use api:MODEL@URL with an http(s) URL, e.g. {example}"
            )
        from agents.api_agent import APIAgent

        return APIAgent(url, model)
    if name.startswith("replay:"):
        from agents.replay import ReplayAgent, ReplayFormatError

        path = Path(name[7:]).expanduser()
        if path.is_dir():
            raise typer.BadParameter(
                f"replay file {name[7:]!r} is a folder; pass a JSON-lines predictions file"
            )
        if not path.is_file():
            raise typer.BadParameter(f"replay file {name[7:]!r} does not exist (JSON lines of episode_id, step, output)")
        try:
            return ReplayAgent(path)
        except ReplayFormatError as exc:
            raise typer.BadParameter(str(exc)) from None
    # `orcale`, `hf` without its colon: the spec whose kind is closest.
    kinds = {spec.partition(":")[0]: spec for spec in AGENTS}
    close = difflib.get_close_matches(name.partition(":")[0].lower(), list(kinds), n=1)
    hint = f" Did you mean {kinds[close[0]]!r}?" if close else ""
    raise typer.BadParameter(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}.{hint}")


def check_output_path(path: Path | None, option: str, folder: bool, example: str = "") -> None:
    """Refuse, before any work, an output path of the wrong kind: an existing file where a folder is written
    (``--record``, the demo's ``--out``) or an existing folder where a file is (``--report``, ``--plot``); the
    write would otherwise fail with a traceback after the episodes, the evaluation or the training have run."""
    if path is None:
        return
    if folder and path.is_file():
        raise typer.BadParameter(f"{option} {str(path)!r} is a file; {option} names a folder to write into")
    if not folder and path.is_dir():
        raise typer.BadParameter(
            f"{option} {str(path)!r} is a folder; {option} names a file to write, e.g. {str(path / example)!r}"
        )


MINIWOB_PREFIX = "GuiWeb-MiniWoB-"
#: The suite id shares the task ids' prefix but is listed on its own line.
MINIWOB_SUITE_ID = "GuiWeb-MiniWoB-Suite-v0"


@app.command()
def envs(
    all_ids: Annotated[bool, typer.Option("--all", help="List every MiniWoB++ id instead of one folded line.")] = False,
) -> None:
    """List the registered environment ids with a one-line description each."""
    table = Table(title="guigym environments")
    table.add_column("id", style="bold")
    table.add_column("description")
    ids = gui_envs.guigym_env_ids()
    miniwob = [i for i in ids if i.startswith(MINIWOB_PREFIX) and i != MINIWOB_SUITE_ID]
    for env_id in ids:
        if env_id in miniwob and not all_ids:
            if env_id == miniwob[0]:  # the 125 MiniWoB++ ids fold into one line where the first one sorts
                names = [i[len(MINIWOB_PREFIX) : -len("-v0")] for i in miniwob]
                table.add_row(
                    f"{MINIWOB_PREFIX}<task>-v0",
                    f"{len(miniwob)} MiniWoB++ tasks in the GuiWeb session ({', '.join(names[:4])}, ...); "
                    "`guigym envs --all` lists them",
                )
            continue
        table.add_row(env_id, gui_envs.ENV_DESCRIPTIONS[env_id])
    console.print(table)


@app.command()
def run(
    env_id: Annotated[str, typer.Argument(help="A registered id, for example Sudoku-v0.")],
    agent: Annotated[str, typer.Option("--agent", "-a", help=f"One of: {', '.join(AGENTS)}.")] = "random",
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Number of episodes.")] = 3,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the first episode; episode i uses seed + i.")] = 0,
    record: Annotated[
        Path | None, typer.Option(help="Save trajectories (JSONL + PNG) under this folder.")
    ] = None,
    task: Annotated[
        str | None, typer.Option(help="Task template for every episode (see `guigym tasks ENV_ID`).")
    ] = None,
    kwarg: EnvKwargsOption = None,
) -> None:
    """Run episodes and print each one's return and success."""
    with user_errors():
        _run(env_id, agent, episodes, seed, record, task, kwarg)


def _run(
    env_id: str, agent: str, episodes: int, seed: int, record: Path | None, task: str | None, kwarg: list[str] | None
) -> None:
    env_id = resolve_env_id(env_id)
    kwargs = parse_kwargs(kwarg or [])
    check_output_path(record, "--record", folder=True)
    if record is not None:
        kwargs.setdefault("render_mode", "rgb_array")
    options = {"task": task} if task else None
    saved: list[Path] = []
    with gym.make(env_id, **kwargs) as env:
        policy = make_agent(agent, env, seed)
        table = Table(title=f"{env_id} / {agent} agent")
        for col in ("episode", "seed", "steps", "return", "success"):
            table.add_column(col, justify="right")
        returns, successes = [], []
        for i in range(episodes):
            traj = run_episode(
                env, policy, seed=seed + i, options=options, record_screenshots=record is not None
            )
            if record is not None:
                saved.append(traj.save(record))
            returns.append(traj.total_reward)
            successes.append(bool(traj.success))
            table.add_row(
                str(i), str(seed + i), str(len(traj.steps)), f"{traj.total_reward:.3f}", str(traj.success)
            )
        table.add_section()
        table.add_row(
            "mean", "", "", f"{statistics.fmean(returns):.3f}", f"{sum(successes) / len(successes):.0%}"
        )
    console.print(table)
    for i, folder in enumerate(saved):
        console.print(f"episode {i}: trajectory saved to {folder}", soft_wrap=True)
    if saved:
        console.print(
            f"replay: `guigym report {record}` (HTML + GIFs) or `python -m guigym.episode_gif {saved[0]} ep.gif`",
            soft_wrap=True,
        )


@app.command("eval")
def eval_(
    env_id: Annotated[str, typer.Argument(help="A registered id, for example GuiOffline-v0.")],
    agent: Annotated[str, typer.Option("--agent", "-a", help=f"One of: {', '.join(AGENTS)}.")] = "oracle",
    episodes: Annotated[
        int | None,
        typer.Option("--episodes", "-n", min=1, help="Episodes (default: the whole offline split, else 10)."),
    ] = None,
    samples: Annotated[int, typer.Option(min=1, help="Attempts per episode (for pass@k).")] = 1,
    pass_k: Annotated[
        list[int] | None, typer.Option("--pass-k", help="k values for pass@k (repeatable).")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Episode i uses seed + i.")] = 0,
    report: Annotated[Path | None, typer.Option(help="Write the JSON report here.")] = None,
    plot: Annotated[Path | None, typer.Option(help="Write the click-offset scatter plot (PNG) here.")] = None,
    kwarg: EnvKwargsOption = None,
) -> None:
    """Evaluate an agent: success rate, Type/GR/SR with per-platform and per-category breakdowns, pass@k."""
    from agents.evaluate import evaluate, save_offset_plot

    env_id = resolve_env_id(env_id)
    check_output_path(report, "--report", folder=False, example="report.json")
    check_output_path(plot, "--plot", folder=False, example="offsets.png")
    bad_k = [k for k in pass_k or [] if not 1 <= k <= samples]
    # pass@k draws k of an episode's samples: k = 0 printed "pass@0: 0.0", k > samples printed nothing.
    if bad_k:
        raise typer.BadParameter(
            f"--pass-k {bad_k[0]} must be in 1..{samples}: k of each episode's --samples {samples}"
        )
    with user_errors(), gym.make(env_id, **parse_kwargs(kwarg or [])) as env:
        policy = make_agent(agent, env, seed)
        n = episodes or len(getattr(env.unwrapped, "episodes", range(10)))
        result, _ = evaluate(env, policy, n, samples, pass_k or [1], seed)
    fmt = lambda v: "-" if v is None else f"{100 * v:.1f}"  # noqa: E731
    table = Table(title=f"{env_id} / {result.agent}: {n} episodes x {samples}")
    for col in ("split", "Type", "GR", "SR", "success"):
        table.add_column(col, justify="right")
    table.add_row("all", *(fmt(result.metrics[k]) for k in ("Type", "GR", "SR")), fmt(result.success_rate))
    for kind, groups in (("platform", result.by_platform), ("category", result.by_category)):
        table.add_section()
        for name, m in groups.items():
            table.add_row(
                f"{kind}={name}", *(fmt(m[k]) for k in ("Type", "GR", "SR")), fmt(m["success_rate"])
            )
    console.print(table)
    for key, value in result.pass_at_k.items():
        console.print(f"{key}: {fmt(value)}")
    if report is not None:
        result.save(report)
        console.print(f"report written to {report}")
    if plot is not None:
        save_offset_plot(result.click_offsets, plot, f"{env_id} click offsets")
        console.print(f"click-offset plot written to {plot}")


@app.command()
def demo(
    quick: Annotated[bool, typer.Option("--quick", help="The same stages cut down to about a minute.")] = False,
    out: Annotated[Path, typer.Option(help="Output folder (report.html, figures, demonstrations).")] = Path("runs/demo"),
    episodes: Annotated[
        int | None, typer.Option("--episodes", "-n", min=1, help="Episodes per env and agent in the baselines table.")
    ] = None,
) -> None:
    """The mission in miniature on CPU: baselines, oracle demos, CORE, GRPO ssl vs binary, offline eval, report."""
    check_output_path(out, "--out", folder=True)  # before the stages run: the first write comes minutes in
    from guigym.demo import DemoConfig, run_mission

    config = DemoConfig.quick(str(out)) if quick else DemoConfig(out=str(out))
    if episodes is not None:
        config.baseline_episodes = episodes
    run_mission(config, console=console)


train_app = typer.Typer(no_args_is_help=True, help="Train a policy (GRPO, SFT, DPO, MobileIPL, CORE; GRPO in TRL).")
app.add_typer(train_app, name="train")


def _load_train_config(cls: Any, path: Path, overrides: list[str] | None, resume: bool) -> Any:
    """A trainer config from YAML plus ``--set`` overrides; a bad key or value is a CLI usage error."""
    import yaml

    from trainers.config_io import ConfigError, check_output_dir

    try:
        cfg = cls.from_yaml(path, [*(overrides or []), *(["resume=true"] if resume else [])])
        # A file at output_dir fails only at the first save, after training has run.
        if isinstance(getattr(cfg, "output_dir", None), str):
            check_output_dir(cfg.output_dir)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise typer.BadParameter(f"{path} is not valid YAML{where}: {problem}") from None
    except FileNotFoundError as exc:
        raise typer.BadParameter(f"no config file {exc.filename or path}") from None
    except (ConfigError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    for env_id in [getattr(cfg, "env_id", None), *(getattr(cfg, "envs", None) or [])]:
        if env_id:  # a typo in the config's env_id (CORE's envs): one line with the closest ids
            resolve_env_id(env_id)
    data = getattr(cfg, "data", None)
    # DPO's data may also be a hub dataset id ("org/name"); a path is checked when it looks like one.
    hub_allowed = cls.__name__ == "DPOConfig"
    looks_local = isinstance(data, str) and (
        not hub_allowed or data.startswith((".", "/", "~")) or Path(data).suffix in (".jsonl", ".json", ".parquet", ".csv")
    )
    if looks_local and data and not Path(data).expanduser().exists():
        raise typer.BadParameter(
            f"data {data!r} does not exist: make it first (the header comment of {path} says how), or point data "
            "at your own"
        )
    if isinstance(getattr(cfg, "model", None), str):
        with user_errors():
            check_config_model(cfg.model)
    return cfg


@contextmanager
def _train_errors(*refusals: type[Exception]) -> Iterator[None]:
    """A trainer's start-up refusals as one usage error: a config error found once the run starts (an overlapping
    held-out split, ``SplitOverlapError``), a finished run in ``output_dir``, and ``refusals``, the trainer's own
    (data in the wrong format); a model that cannot load as one ``error:`` line (:func:`guigym.errors.user_errors`).
    """
    from trainers.config_io import ConfigError
    from trainers.core.loop import RunExistsError

    with user_errors():
        try:
            yield
        except (ConfigError, RunExistsError, *refusals) as exc:
            raise typer.BadParameter(str(exc)) from None


@train_app.command("grpo")
def train_grpo(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML file of GRPOConfig fields.")],
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="Override a field, KEY=VALUE (repeatable).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the latest checkpoint in output_dir.")] = False,
) -> None:
    """GRPO with the config's reward and advantage estimator; logs, curve and checkpoints in output_dir."""
    from trainers.grpo import train
    from trainers.grpo_config import GRPOConfig

    cfg = _load_train_config(GRPOConfig, config, overrides, resume)
    with _train_errors():
        result = train(cfg)
    history = result["history"]
    if history:
        last = history[-1]
        console.print(f"step {last['step']}: reward {last['reward_mean']:.3f}, success {last['success_rate']:.3f}")
    if result["eval"]:
        first, final = result["eval"][0], result["eval"][-1]
        sampled = final.get("eval_sampled_success")
        console.print(
            f"held-out ({len(cfg.eval_seed_list)} seeds) after step {final['step']}: greedy success "
            f"{final['eval_greedy_success']:.3f} (step {first['step']}: {first['eval_greedy_success']:.3f})"
            + (f", sampled {sampled:.3f}" if sampled is not None else "")
        )
    console.print(f"logs, curve and model in {cfg.output_dir}")


@train_app.command("sft")
def train_sft_command(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML file of SFTConfig fields.")],
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="Override a field, KEY=VALUE (repeatable).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the latest checkpoint in output_dir.")] = False,
) -> None:
    """Behaviour cloning on folders of saved trajectories; loss on the answer tokens only."""
    from gui_envs.schema.trajectory import TrajectoryFormatError
    from trainers.heldout import held_out_summary
    from trainers.sft import train_sft
    from trainers.sft_config import SFTConfig

    cfg = _load_train_config(SFTConfig, config, overrides, resume)
    with _train_errors(TrajectoryFormatError):  # data that is not a folder of trajectories
        result = train_sft(cfg)
    history = result["history"]
    if history:
        console.print(f"step {history[-1]['step']}: loss {history[-1]['loss']:.4f}")
    line = held_out_summary(result["eval"], len(cfg.eval_seed_list))
    if line:
        console.print(line)
    console.print(f"log, curve and model in {cfg.output_dir}")


@train_app.command("core")
def train_core_command(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML file of CoreConfig fields.")],
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="Override a field, KEY=VALUE (repeatable).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue after the last finished iteration in output_dir.")] = False,
    no_graph_expansion: Annotated[bool, typer.Option("--no-graph-expansion", help="Ablation: never expand graphs.")] = False,
    no_extrapolation: Annotated[bool, typer.Option("--no-extrapolation", help="Ablation: mine no new tasks.")] = False,
    env_only: Annotated[bool, typer.Option("--env-only", help="Ablation: keep env-verified trajectories only.")] = False,
) -> None:
    """CORE self-training: BC on oracle demos, then sample, verify with strategy graphs, expand, extrapolate, SFT."""
    from rich.table import Table

    from trainers.core.config import CoreConfig
    from trainers.core.loop import train_core

    flags = [f for f, on in (("graph_expansion=false", no_graph_expansion), ("extrapolation=false", no_extrapolation),
                             ("env_only=true", env_only)) if on]  # fmt: skip
    cfg = _load_train_config(CoreConfig, config, [*(overrides or []), *flags], resume)
    with _train_errors():
        metrics = train_core(cfg, console=console)["metrics"]
    columns = ("iteration", "heldout_greedy", "heldout_sampled", "unseen_template_greedy", "overall", "generalisation",
               "sampled", "fully", "partially", "failed", "expanded", "new_success", "new_failure", "kept",
               "kept_policy", "avg_path_count", "sft_steps", "seconds")  # fmt: skip
    table = Table(title=f"CORE run {cfg.output_dir}")
    for c in columns:
        table.add_column(c, justify="right")
    for row in metrics:
        table.add_row(*(f"{row[c]:.3f}" if isinstance(row.get(c), float) else str(row.get(c, "-")) for c in columns))
    console.print(table)
    held = [(row["iteration"], row[k]) for row in metrics for k in ("heldout_greedy",) if k in row]
    if held:
        console.print(f"held-out success (unseen seeds, greedy): {held[-1][1]:.3f} after iteration {held[-1][0]} "
                      f"(behaviour cloning: {held[0][1]:.3f})")  # fmt: skip
    console.print(f"graphs, label functions, new tasks, datasets, checkpoints and metrics in {cfg.output_dir}")


@train_app.command("dpo")
def train_dpo_command(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML file of DPOConfig fields.")],
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="Override a field, KEY=VALUE (repeatable).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the latest checkpoint in output_dir.")] = False,
) -> None:
    """DPO (sigmoid loss, optional SFT term) on a pair file in TRL's prompt/chosen/rejected format."""
    from trainers.dpo import PairFormatError, train_dpo
    from trainers.dpo_config import DPOConfig
    from trainers.heldout import held_out_summary

    cfg = _load_train_config(DPOConfig, config, overrides, resume)
    with _train_errors(PairFormatError):  # data that is not a pair file
        result = train_dpo(cfg)
    history = result["history"]
    if history:
        last = history[-1]
        console.print(f"step {last['step']}: loss {last['loss']:.4f}, margin {last['reward_margin']:.3f}, "
                      f"accuracy {last['accuracy']:.2f}")  # fmt: skip
    line = held_out_summary(result["eval"], len(cfg.eval_seed_list))
    if line:
        console.print(line)
    pairs = [e for e in result["eval"] if "eval_reward_margin" in e]
    if pairs:
        first, final = pairs[0], pairs[-1]
        console.print(f"held-out pairs after step {final['step']}: margin {final['eval_reward_margin']:.3f}, "
                      f"accuracy {final['eval_accuracy']:.2f} (step {first['step']}: margin "
                      f"{first['eval_reward_margin']:.3f}, accuracy {first['eval_accuracy']:.2f})")  # fmt: skip
    console.print(f"log, curve and model in {cfg.output_dir}")


@train_app.command("ipl")
def train_ipl_command(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML file of IPLConfig fields.")],
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="Override a field, KEY=VALUE (repeatable).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Skip finished rounds; continue the last from its checkpoint.")] = False,
) -> None:
    """MobileIPL: CoaT trees sampled per recorded step, scored, paired, T-DPO; iterated over rounds."""
    from rich.markup import escape

    from trainers.ipl import heldout_line, train_ipl
    from trainers.ipl_config import IPLConfig

    cfg = _load_train_config(IPLConfig, config, overrides, resume)
    with _train_errors():
        result = train_ipl(cfg)
    for rec in result["rounds"]:
        console.print(f"round {rec['step']}: potential correct {rec['potential_correct_ratio']:.3f}, pairs "
                      f"{rec['pairs']} (beta {rec['pairs_beta']}, gamma {rec['pairs_gamma']}), "
                      f"Div_R {rec['div_r']:.4f} ({escape(rec['div_r_encoder'])})")  # fmt: skip
    line = heldout_line(result["heldout"])
    console.print(line if line else "no held-out evaluation (set env_id and eval_seeds)")
    console.print(f"rounds.jsonl, heldout.jsonl, rounds.png and each round's pairs, log and policy in {cfg.output_dir}")


@train_app.command("trl")
def train_trl_command(
    config: Annotated[Path, typer.Option("--config", "-c", help="Run file: model:, guigym: and trl: (configs/trl/).")],
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a run-file key, KEY=VALUE: model=..., trl.max_steps=3 (repeatable)."),
    ] = None,
) -> None:
    """GRPO in TRL's GRPOTrainer on a guigym env (vLLM, DeepSpeed, FSDP through `accelerate launch -m trainers.trl`)."""
    import yaml

    from trainers.trl.train import run

    try:
        with _train_errors():
            trainer = run(config, overrides or [])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise typer.BadParameter(f"{config} is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    if rewards:
        console.print(f"step {trainer.state.global_step}: reward {rewards[-1]:.3f} (step 1: {rewards[0]:.3f})")
    console.print(f"model and logs in {trainer.args.output_dir}")


# ----- newcomer commands: tasks, play, report, bench (their logic lives in guigym/<name>.py) --------------------
@app.command()
def tasks(
    env_id: Annotated[str, typer.Argument(help="A task env id, for example GuiWeb-Shop-v0 or GuiAndroid-v0.")],
    seed: Annotated[int, typer.Option(min=0, help="Task seed of the example instructions.")] = 0,
    kwarg: EnvKwargsOption = None,
) -> None:
    """List an env's task templates: site or app, difficulty, how it is judged, an example instruction."""
    from guigym.tasks_list import task_rows

    env_id = resolve_env_id(env_id)
    with user_errors():  # an env without templates (NoTasksError), a mistyped -k
        rows = task_rows(env_id, parse_kwargs(kwarg or []), seed)
    table = Table(title=f"{env_id}: {len(rows)} task templates (`guigym run {env_id} --task NAME`)")
    for col in ("template", "site/app", "difficulty", "judged by", f"example (task seed {seed})"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["where"], "-" if r["difficulty"] is None else str(r["difficulty"]), r["kind"], r["example"])
    console.print(table)


@app.command()
def play(
    env_id: Annotated[str, typer.Argument(help="A registered id, for example GuiWeb-v0.")],
    seed: Annotated[int | None, typer.Option(min=0, help="Seed of the first episode.")] = None,
    task: Annotated[str | None, typer.Option(help="Task template (see `guigym tasks ENV_ID`).")] = None,
    shots: Annotated[Path, typer.Option(help="Folder for the latest screenshots (PNG).")] = Path("runs/play"),
    kwarg: EnvKwargsOption = None,
) -> None:
    """Play an env yourself: a headed browser where a display exists, and a terminal loop of typed actions."""
    import sys

    from gui_envs.browser.chromium import display_available
    from guigym.play import play as play_loop

    env_id = resolve_env_id(env_id)
    kwargs = parse_kwargs(kwarg or [])
    entry = str(gym.spec(env_id).entry_point)
    if entry.startswith(("gui_envs.web.", "gui_envs.android.")) and "render_mode" not in kwargs:
        kwargs["render_mode"] = "human" if display_available() else "rgb_array"
    with user_errors():
        returns = play_loop(env_id, kwargs, sys.stdin, sys.stdout, shots, seed=seed, task=task)
    if returns:
        console.print(f"{len(returns)} episodes, mean return {statistics.fmean(returns):+.3f}")


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A folder written by `guigym run --record` or a trainer.")],
    out: Annotated[Path | None, typer.Option(help="HTML file to write (default RUN_DIR/report.html).")] = None,
) -> None:
    """One self-contained HTML page for a run: episodes, screenshots, clicks, rewards, verdicts, curves, GIFs."""
    from guigym.report import write_report

    check_output_path(out, "--out", folder=False, example="report.html")
    with user_errors():
        path = write_report(run_dir, out)
    console.print(f"report written to {path} (GIFs in {run_dir / 'report_gifs'})")


@app.command()
def bench(
    only: Annotated[list[str] | None, typer.Option(help="Run only this script (stem; repeatable).")] = None,
    folder: Annotated[Path | None, typer.Option(help="Benchmark folder (default: the project's).")] = None,
    quiet: Annotated[bool, typer.Option(help="Do not echo each script's own output.")] = False,
) -> None:
    """Run the benchmarks/ scripts in quick mode and print one table."""
    from guigym.bench import BENCHMARKS, results_table, run_benchmarks

    with user_errors():
        results = run_benchmarks(folder or BENCHMARKS, only, console=None if quiet else console)
    console.print(results_table(results))
    if any(r.status not in ("ok", "skipped") for r in results):
        raise typer.Exit(1)


# ----- starter data for the tiny configs: the model and the pair file that `guigym train` lines need ---------------
@app.command("tiny-model")
def tiny_model(
    path: Annotated[Path, typer.Argument(help="Folder to save the model and tokenizer in, e.g. runs/tiny-llama.")],
    hidden_size: Annotated[int, typer.Option(min=4, help="Hidden size of the Llama (the configs use 32, 64 or 128).")] = 32,
    arch: Annotated[str, typer.Option(help="llama (text), llava (pixels: learns to ground on CPU) or qwen2.5-vl.")] = "llama",
) -> None:
    """Build a tiny, randomly initialised model and its tokenizer (or processor) under PATH (nothing is downloaded).

    ``llama``: the 2-layer Llama of the text configs. ``llava`` and ``qwen2.5-vl``: the vision-language models of the
    pixel configs (their ``pixels`` size, 140-pixel screenshots; ``--hidden-size`` is not used)."""
    from agents.tiny_models import build_causal_lm, build_llava, build_vlm

    # save_pretrained onto a file logs an error and returns: the command printed "saved to" and saved nothing.
    check_output_path(path, "PATH", folder=True)
    builders = {"llava": lambda: build_llava(path), "qwen2.5-vl": lambda: build_vlm(path, "pixels")}
    if arch in builders:
        console.print(f"tiny {arch} (random weights) saved to {builders[arch]()}")
        return
    if arch != "llama":
        hint = did_you_mean(arch, ["llama", *builders], cutoff=0.4)  # `qwen` for qwen2.5-vl
        raise typer.BadParameter(f"--arch must be llama, llava or qwen2.5-vl, got {arch!r}.{hint}")
    if hidden_size % 4:
        raise typer.BadParameter(f"--hidden-size must be a multiple of 4 (the model has 4 heads), got {hidden_size}")
    console.print(f"tiny model (hidden size {hidden_size}) saved to {build_causal_lm(path, hidden_size=hidden_size)}")


@app.command()
def pairs(
    out: Annotated[Path, typer.Argument(help="Parquet file to write, e.g. runs/box-pairs/train.parquet.")],
    layouts: Annotated[int, typer.Option("--layouts", "-n", min=1, help="ClickBox-v0 layouts (reset seeds) to read.")] = 64,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the first layout; layout i uses seed + i.")] = 0,
    boxes: Annotated[int, typer.Option(min=2, max=MAX_BOXES, help="Boxes per layout.")] = 2,
) -> None:
    """Write DPO pairs in TRL's format from ClickBox-v0 layouts: the target box's cell chosen, another's rejected."""
    check_output_path(out, "OUT", folder=False, example="train.parquet")
    from trainers.dpo_pairs import write_box_pairs

    with user_errors():
        path, count = write_box_pairs(out, layouts, seed_start=seed, n_boxes=boxes)
    console.print(f"{count} pairs (seeds {seed}..{seed + layouts - 1}, layouts with a shared cell skipped) -> {path}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
