"""The command-line mistake walk (issue 39): what a newcomer who knows Gymnasium, SB3, TRL and BrowserGym gets wrong
on guigym's command lines, one row each, across every subcommand and both TRL entry points (``guigym train trl``
and ``python -m trainers.trl``).

Every row must exit non-zero with exactly one message that names the problem and, where a close name exists, says
"Did you mean": one ``error:`` line (exit 1; exit 2 on the ``python -m trainers.trl`` path, argparse's status), or
typer's boxed usage panel (exit 2), which counts as one message once its borders are taken off. Never a traceback.
Nothing trains and no episode runs: each mistake is refused before any work starts. The older, narrower tables
(tests/test_cli_newcomer.py, tests/trainers/trl/test_trl_cli.py, tests/agents/test_hub.py, tests/test_cli.py) stay;
some of their mistakes are walked again here so that this table is the whole walk.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from guigym.cli import app

ROOT = Path(__file__).resolve().parents[1]
GRPO, SFT, DPO = "configs/grpo_tiny_cpu.yaml", "configs/sft_tiny_cpu.yaml", "configs/dpo_tiny_cpu.yaml"
IPL, CORE = "configs/ipl_tiny_cpu.yaml", "configs/core_tiny.yaml"
TRL = "configs/trl/grpo_tiny_clickgrid_cpu.yaml"
SCREENSPOT = ["-k", "dataset=screenspot"]

#: (entry, arguments, what the one message must say: parts joined by " … " appear in that order). ``entry``: ``guigym`` (the typer app) or ``trl`` (``python -m
#: trainers.trl``). ``<NAME>`` in an argument is a path under the walk's scratch folder (:func:`scratch`): MODEL a
#: folder holding config.json, EMPTY an empty folder, RUN a run's output_dir whose model sits in RUN/final, FILE a
#: text file, DIR a folder, NEW a path that does not exist, NOTJSONL / OTHERKEYS predictions files that are not JSON
#: lines / use another tool's keys, TRAJ a trajectory.jsonl file.
WALK: list[tuple[str, list[str], str]] = [
    # -- the command itself
    ("guigym", ["rn", "Sudoku-v0"], "No such command 'rn'. Did you mean 'run'?"),
    ("guigym", ["trian", "grpo", "-c", GRPO], "No such command 'trian'. Did you mean 'train'?"),
    ("guigym", ["env"], "No such command 'env'. Did you mean 'envs'"),
    # -- envs
    ("guigym", ["envs", "--al"], "No such option: --al. Did you mean --all"),
    ("guigym", ["envs", "Maze-v0"], "Got unexpected extra argument(s) (Maze-v0)"),
    # -- run: env ids, agent specs, counts, seeds, -k, --record, --task
    ("guigym", ["run", "sudoku-v0"], "unknown environment id 'sudoku-v0'. Did you mean Sudoku-v0"),
    ("guigym", ["run", "Maze-v1"], "unknown environment id 'Maze-v1'. Did you mean Maze-v0?"),
    ("guigym", ["run", "Sudoku"], "unknown environment id 'Sudoku'. Did you mean Sudoku-v0?"),
    ("guigym", ["run", "GuiWeb-MiniWoB-click-tset-v0"], "Did you mean GuiWeb-MiniWoB-click-test-v0"),
    ("guigym", ["run"], "Missing argument"),
    ("guigym", ["run", "Maze-v0", "-a", "orcale"], "unknown agent 'orcale'; choose one of random, oracle, hf:PATH, api:MODEL@URL, replay:FILE. Did you mean 'oracle'?"),
    ("guigym", ["run", "Maze-v0", "-a", "hf"], "unknown agent 'hf'; choose one of random, oracle, hf:PATH, api:MODEL@URL, replay:FILE. Did you mean 'hf:PATH'?"),
    ("guigym", ["run", "Maze-v0", "-a", "api:gpt-4o@localhost:8000"], "use api:MODEL@URL with an http(s) URL"),
    ("guigym", ["run", "Maze-v0", "-a", "api:gpt-4o"], "use api:MODEL@URL with an http(s) URL"),
    ("guigym", ["run", "ClickGrid-v0", "-a", "replay:<NOTJSONL>", "-n", "1"], "NOTJSONL line 1 is not JSON"),
    ("guigym", ["run", "ClickGrid-v0", "-a", "replay:<OTHERKEYS>", "-n", "1"], "OTHERKEYS line 1 lacks ['output']"),
    ("guigym", ["run", "ClickGrid-v0", "-a", "replay:<DIR>", "-n", "1"], "DIR' is a folder; pass a JSON-lines predictions file"),
    ("guigym", ["run", "ClickGrid-v0", "-a", "replay:/no/such.jsonl"], "replay file '/no/such.jsonl' does not exist"),
    ("guigym", ["run", "ClickGrid-v0", "-a", "hf:<MODEL>/config.json", "-n", "1"], "config.json' is a file; a model is the folder save_pretrained wrote (config.json and the weights). Did you mean its folder"),
    ("guigym", ["run", "ClickGrid-v0", "-a", "hf:<EMPTY>", "-n", "1"], "EMPTY' holds no config.json"),
    ("guigym", ["run", "ClickGrid-v0", "-a", "hf:<RUN>", "-n", "1"], "RUN' holds no config.json: it is not a folder saved with save_pretrained (a `guigym train` run writes one to its output_dir; `guigym tiny-model <RUN>` builds a test model). Did you mean '<RUN>/final'?"),
    ("guigym", ["run", "ClickGrid-v0", "-a", "hf:/no/such/model", "-n", "1"], "model '/no/such/model' does not exist"),
    ("guigym", ["run", "Sudoku-v0", "-n", "0"], "Invalid value for '--episodes' / '-n': Input should be greater than or equal to 1"),
    ("guigym", ["run", "Sudoku-v0", "-n", "three"], "Invalid value for '--episodes' / '-n': Input should be a valid integer"),
    ("guigym", ["run", "Sudoku-v0", "--episode", "3"], "No such option: --episode. Did you mean --episodes?"),
    ("guigym", ["run", "Sudoku-v0", "--seed", "-1"], "Invalid value for '--seed': Input should be greater than or equal to 0"),
    ("guigym", ["run", "Sudoku-v0", "--seed", "1.5"], "Invalid value for '--seed': Input should be a valid integer"),
    ("guigym", ["run", "Maze-v0", "-k", "mode=navigat", "-n", "1"], "mode='navigat' is unknown; use 'answer' or 'navigate'. Did you mean 'navigate'?"),
    ("guigym", ["run", "Maze-v0", "-k", "size=1", "-n", "1"], "size=1 must be an int in 2..64"),
    ("guigym", ["run", "Maze-v0", "-k", "mode:navigate"], "--kwarg expects KEY=VALUE, got 'mode:navigate'"),
    ("guigym", ["run", "Maze-v0", "-k", "=5"], "--kwarg expects KEY=VALUE, got '=5'"),
    ("guigym", ["run", "Arc-v0", "-k", "family=rotate", "-n", "1"], "Arc-v0 has no argument 'family' (-k family=...); it takes source, split, task_id, families, render_mode, cell_px. Did you mean 'families'?"),
    ("guigym", ["run", "ClickGrid-v0", "-k", "rows=abc", "-n", "1"], "ClickGrid-v0 cannot be made with {'rows': 'abc'}"),
    ("guigym", ["run", "ClickBox-v0", "-k", "n_boxes=9", "-n", "1"], "n_boxes must be 1-6, got 9"),
    ("guigym", ["run", "Sudoku-v0", "--record", "<FILE>", "-n", "1"], "--record '<FILE>' is a file; --record names a folder to write into"),
    ("guigym", ["run", "Maze-v0", "--task", "solve", "-n", "1"], "Maze-v0 has no reset option 'task': it takes no reset options"),
    # -- eval
    ("guigym", ["eval", "GuiOfline-v0"], "unknown environment id 'GuiOfline-v0'. Did you mean GuiOffline-v0"),
    ("guigym", ["eval", "GuiOffline-v0", "-k", "dataset=ScreenSpot"], "no dataset named 'ScreenSpot'; known: aitz, androidcontrol, gui_odyssey, gui_r1, screenspot, screenspot_pro. Did you mean 'screenspot'"),
    ("guigym", ["eval", "GuiOffline-v0", *SCREENSPOT, "-k", "split=test"], "GuiOffline-v0 has no argument 'split' (-k split=...); it takes dataset"),
    ("guigym", ["eval", "GuiOffline-v0", *SCREENSPOT, "-a", "randm"], "unknown agent 'randm'; choose one of random, oracle, hf:PATH, api:MODEL@URL, replay:FILE. Did you mean 'random'?"),
    ("guigym", ["eval", "GuiOffline-v0", *SCREENSPOT, "--pass-k", "0"], "--pass-k 0 must be in 1..1: k of each episode's --samples 1"),
    ("guigym", ["eval", "GuiOffline-v0", *SCREENSPOT, "--samples", "2", "--pass-k", "5"], "--pass-k 5 must be in 1..2: k of each episode's --samples 2"),
    ("guigym", ["eval", "GuiOffline-v0", *SCREENSPOT, "--samples", "0"], "Invalid value for '--samples': Input should be greater than or equal to 1"),
    ("guigym", ["eval", "GuiOffline-v0", *SCREENSPOT, "--report", "<DIR>"], "--report '<DIR>' is a folder; --report names a file to write, e.g. '<DIR>/report.json'"),
    ("guigym", ["eval", "GuiOffline-v0", *SCREENSPOT, "--plot", "<DIR>"], "--plot '<DIR>' is a folder; --plot names a file to write, e.g. '<DIR>/offsets.png'"),
    ("guigym", ["eval", "ClickGrid-v0", "-k", "rows=0", "-n", "1"], "rows and cols must be 1-3 with at least 2 cells, got 0x3"),
    # -- play
    ("guigym", ["play", "Maze-v1"], "unknown environment id 'Maze-v1'. Did you mean Maze-v0?"),
    ("guigym", ["play", "ClickGrid-v0", "--task", "A"], "ClickGrid-v0 has no reset option 'task'"),
    ("guigym", ["play", "ClickGrid-v0", "-k", "cols=abc"], "ClickGrid-v0 cannot be made with {'cols': 'abc'}"),
    ("guigym", ["play", "ClickGrid-v0", "--seed", "-3"], "Invalid value for '--seed': Input should be greater than or equal to 0"),
    # -- tasks
    ("guigym", ["tasks", "GuiWeb-Shpo-v0"], "unknown environment id 'GuiWeb-Shpo-v0'. Did you mean GuiWeb-Shop-v0"),
    ("guigym", ["tasks", "GuiWeb-Shop-v0", "-k", "site=shop"], "GuiWeb-Shop-v0 has no argument 'site' (-k site=...); it takes sites"),
    ("guigym", ["tasks", "Maze-v0"], "Maze-v0 has no named tasks"),
    # -- report
    ("guigym", ["report", "/no/such/run"], "/no/such/run is not a folder; pass the folder given to `guigym run --record`"),
    ("guigym", ["report", "<TRAJ>"], "trajectory.jsonl is not a folder"),
    ("guigym", ["report", "<EMPTY>"], "holds no trajectory (trajectory.jsonl), strategy graph or metrics.jsonl"),
    ("guigym", ["report", "<EMPTY>", "--out", "<DIR>"], "--out '<DIR>' is a folder; --out names a file to write, e.g. '<DIR>/report.html'"),
    # -- bench
    ("guigym", ["bench", "--only", "grid_sped"], "no benchmark named grid_sped in … choose from … Did you mean 'grid_speed'"),
    ("guigym", ["bench", "--folder", "/no/such/benchmarks"], "benchmark folder '/no/such/benchmarks' is not a folder"),
    ("guigym", ["bench", "--quick"], "No such option: --quick. Did you mean --quiet?"),
    # -- demo
    ("guigym", ["demo", "--quik"], "No such option: --quik. Did you mean --quick?"),
    ("guigym", ["demo", "--episodes", "0"], "Invalid value for '--episodes' / '-n': Input should be greater than or equal to 1"),
    ("guigym", ["demo", "--out", "<FILE>"], "--out '<FILE>' is a file; --out names a folder to write into"),
    # -- tiny-model
    ("guigym", ["tiny-model", "<NEW>", "--arch", "qwen"], "--arch must be llama, llava or qwen2.5-vl, got 'qwen'. Did you mean 'qwen2.5-vl'?"),
    ("guigym", ["tiny-model", "<NEW>", "--hidden-size", "30"], "--hidden-size must be a multiple of 4 (the model has 4 heads), got 30"),
    ("guigym", ["tiny-model", "<NEW>", "--hidden", "64"], "No such option: --hidden. Did you mean --hidden-size?"),
    ("guigym", ["tiny-model", "<FILE>"], "PATH '<FILE>' is a file; PATH names a folder to write into"),
    # -- pairs
    ("guigym", ["pairs", "<DIR>", "-n", "2"], "OUT '<DIR>' is a folder; OUT names a file to write, e.g. '<DIR>/train.parquet'"),
    ("guigym", ["pairs", "<NEW>.parquet", "--boxes", "9"], "Invalid value for '--boxes': Input should be less than or equal to 6"),
    ("guigym", ["pairs", "<NEW>.parquet", "-n", "0"], "Invalid value for '--layouts' / '-n': Input should be greater than or equal to 1"),
    # -- train: the subcommand, the config file, --set keys and values, the model, the data, output_dir
    ("guigym", ["train", "gpro", "-c", GRPO], "No such command 'gpro'. Did you mean 'grpo'?"),
    ("guigym", ["train", "grpo"], "Missing option '--config' / '-c'"),
    ("guigym", ["train", "grpo", "-c", "configs/grpo_tiny_cpu.yml"], "config file 'configs/grpo_tiny_cpu.yml' does not exist. Did you mean 'configs/grpo_tiny_cpu.yaml'"),
    ("guigym", ["train", "grpo", "-c", "configs"], "config 'configs' is a folder; pass one of its files: configs/core_tiny.yaml"),
    ("guigym", ["train", "grpo", "-c", "README.md"], "README.md is not valid YAML (line"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "num_step=5"], "GRPOConfig has no field 'num_step'. Did you mean 'num_steps'"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "num_steps"], "override 'num_steps' must be KEY=VALUE"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "num_steps=-5"], "num_steps must be an integer >= 1, got -5"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "learning_rate=fast"], "GRPOConfig: learning_rate must be a float, got 'fast'"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "reward=sls"], "'sweet_spot']. Did you mean 'ssl'?"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "estimator=grp"], "unknown advantage estimator 'grp'; registered: ['dr_grpo', 'grpo', 'none', 'sca']. Did you mean 'grpo'"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "group_size=1"], "group_size=1: group-relative estimators need >= 2 rollouts"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "report_to=[wandbb]"], "report_to=['wandbb']: unknown ['wandbb']; use a list of ['tensorboard', 'wandb'], or [] / 'none' for the JSONL log only. Did you mean 'wandb'?"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "env_kwargs=rows=2"], "GRPOConfig: env_kwargs must be a mapping, e.g. env_kwargs={rows: 2}, got 'rows=2'"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "env_id=ClickGrd-v0"], "unknown environment id 'ClickGrd-v0'. Did you mean ClickGrid-v0"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "eval_seeds=[0, 1]"], "eval_seeds overlap the training seeds"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "output_dir=<FILE>"], "output_dir '<FILE>' is a file; a run writes a folder there"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--set", "model=<MODEL>/config.json"], "config.json' is a file; a model is the folder save_pretrained wrote (config.json and the weights). Did you mean its folder"),
    ("guigym", ["train", "grpo", "-c", GRPO, "--resum"], "No such option: --resum. Did you mean --no-resume or --resume?"),
    ("guigym", ["train", "sft", "-c", SFT, "--set", "epochs=0"], "epochs must be an int >= 1, got 0"),
    ("guigym", ["train", "sft", "-c", SFT, "--set", "data=<FILE>", "--set", "model=<MODEL>", "--set", "output_dir=<NEW>"], "<FILE> is not a folder of trajectories"),
    ("guigym", ["train", "sft", "-c", GRPO], "SFTConfig has no field 'reward'"),
    ("guigym", ["train", "dpo", "-c", DPO, "--set", "beta=-1"], "beta must be > 0 (the DPO temperature), got -1"),
    ("guigym", ["train", "dpo", "-c", DPO, "--set", "data=<FILE>", "--set", "model=<MODEL>", "--set", "output_dir=<NEW>"], "give a .parquet, .json / .jsonl file or a save_to_disk folder"),
    ("guigym", ["train", "ipl", "-c", IPL, "--set", "rounds=0"], "rounds must be an int >= 1, got 0"),
    ("guigym", ["train", "ipl", "-c", IPL, "--set", "tree_width=4"], "IPLConfig has no field 'tree_width'. Did you mean 'tree_batch'?"),
    ("guigym", ["train", "core", "-c", CORE, "--set", "envs=[GuiAndroid-v1]"], "unknown environment id 'GuiAndroid-v1'. Did you mean GuiAndroid-v0"),
    ("guigym", ["train", "core", "-c", CORE, "--set", "templates=[GuiAndroid-v0:clock.set_alram]", "--set", "model=<MODEL>", "--set", "output_dir=<NEW>"], "unknown GuiAndroid-v0 task 'clock.set_alram'. Did you mean clock.delete_alarm, clock.add_alarm"),
    ("guigym", ["train", "core", "-c", CORE, "--no-graph-expand"], "No such option: --no-graph-expand. Did you mean --no-graph-expansion?"),
    ("guigym", ["train", "core", "-c", CORE, "--set", "iterations=-1"], "iterations must be an integer >= 0"),
    # -- the TRL path: guigym train trl
    ("guigym", ["train", "trl", "-c", TRL, "--set", "model=<MODEL>", "--set", "guigym.env_id=ClickGrd-v0"], "guigym.env_id: unknown environment id 'ClickGrd-v0'. Did you mean ClickGrid-v0"),
    ("guigym", ["train", "trl", "-c", TRL, "--set", "model=<MODEL>", "--set", "trl.learning_rate=fast"], "GRPOConfig: learning_rate must be a float, got 'fast'"),
    ("guigym", ["train", "trl", "-c", TRL, "--set", "model=<MODEL>", "--set", "guigym.rewards=[bianry]"], "rewards ['bianry'] must be a non-empty list of ['env', 'binary', 'ssl', 'graph']. Did you mean 'binary'?"),
    ("guigym", ["train", "trl", "-c", TRL, "--set", "model=<MODEL>", "--set", "guigym.action_mode=tool"], "action_mode='tool'; use one of ('tools', 'text'). Did you mean 'tools'?"),
    ("guigym", ["train", "trl", "-c", TRL, "--set", "model=<MODEL>", "--set", "trl.output_dir=<FILE>"], "trl.output_dir '<FILE>' is a file"),
    ("guigym", ["train", "trl", "-c", TRL, "--set", "model=<MODEL>/config.json"], "config.json' is a file; a model is the folder save_pretrained wrote"),
    ("guigym", ["train", "trl", "-c", "configs/trl", "--set", "model=<MODEL>"], "config 'configs/trl' is a folder; pass one of its files"),
    ("guigym", ["train", "trl", "-c", "configs/trl/accelerate_zero3.yaml"], "has a key 'compute_environment'; a run file has model:, guigym: and trl:"),
    # -- the TRL path: python -m trainers.trl
    ("trl", ["--confg", TRL], "unrecognized argument '--confg'. Did you mean '--config'?"),
    ("trl", ["--config"], "argument --config/-c: expected one argument"),
    ("trl", ["-c", TRL, "--set", "model=<MODEL>", "--max-steps", "3"], "unrecognized argument '--max-steps'. Run-file fields go through --set, e.g. --set trl.max_steps=3."),
    ("trl", ["-c", "configs/trl/grpo_tiny_clickgrid_cpu.yml"], "does not exist. Did you mean 'configs/trl/grpo_tiny_clickgrid_cpu.yaml'"),
    ("trl", ["-c", TRL, "--set", "model=<MODEL>", "--set", "trl.max_steps=abc"], "GRPOConfig: max_steps must be an int, got 'abc'"),
    ("trl", ["-c", TRL, "--set", "model=<MODEL>", "--set", "guigym.output_format=cel"], "output_format='cel'; use one of ('cell', 'box', 'act', 'gui_r1', 'text'). Did you mean 'cell'"),
    ("trl", ["-c", TRL, "--set", "model=<MODEL>", "--set", "guigym.max_elements=many"], "GuiGymTRLConfig: max_elements must be an int, got 'many'"),
    ("trl", ["-c", TRL, "--set", "model=<EMPTY>"], "EMPTY' holds no config.json"),
    ("trl", ["-c", TRL, "--set", "model=<RUN>"], "RUN' holds no config.json: it is not a folder saved with save_pretrained (a `guigym train` run writes one to its output_dir; `guigym tiny-model <RUN>` builds a test model). Did you mean '<RUN>/final'?"),
]  # fmt: skip

#: Left on typer's usage panel or an error line once the box borders are taken off.
_BORDERS = re.compile("[│╭╮╰╯─]")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The paths the rows' ``<NAME>`` markers stand for (see :data:`WALK`)."""
    root = tmp_path_factory.mktemp("walk")
    (root / "MODEL").mkdir()
    (root / "MODEL" / "config.json").write_text("{}")  # enough for the checks; nothing loads it
    (root / "EMPTY").mkdir()
    (root / "RUN" / "final").mkdir(parents=True)
    (root / "RUN" / "final" / "config.json").write_text("{}")
    (root / "RUN" / "metrics.jsonl").write_text("")
    (root / "FILE").write_text("notes\n")
    (root / "DIR").mkdir()
    (root / "NOTJSONL").write_text("episode 0 step 0: click(3, 4)\n")
    (root / "OTHERKEYS").write_text(json.dumps({"episode_id": "0", "step": 0, "prediction": "A"}) + "\n")
    (root / "trajectory.jsonl").write_text("{}\n")
    names = ("MODEL", "EMPTY", "RUN", "FILE", "DIR", "NEW", "NOTJSONL", "OTHERKEYS")
    return {**{f"<{n}>": str(root / n) for n in names}, "<TRAJ>": str(root / "trajectory.jsonl")}


@pytest.fixture(autouse=True)
def _offline_at_the_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    # The configs/ paths as the README writes them; no hub request from any row (a hub id is tests/agents/test_hub.py).
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    yield


def _swap(text: str, scratch: dict[str, str]) -> str:
    for marker, path in scratch.items():
        text = text.replace(marker, path)
    return text


def _one_message(output: str, exit_code: int) -> str:
    """The one message of a failed guigym command, on one line; fails the test when there is anything else."""
    lines = [line for line in output.splitlines() if line.strip()]
    assert "Traceback" not in output, output
    if exit_code == 1:  # guigym.errors.user_errors: one `error:` line
        assert len(lines) == 1 and lines[0].startswith("error: "), output
        return lines[0]
    # typer's usage error: "Usage: ...", "Try '... --help' for help.", then one boxed Error panel
    assert exit_code == 2, output
    assert lines[0].startswith("Usage: ") and lines[1].startswith("Try "), output
    assert lines[2].startswith("╭─ Error"), output
    assert lines[-1].startswith("╰") and all(line.startswith("│") for line in lines[3:-1]), output
    return " ".join(_BORDERS.sub(" ", " ".join(lines[3:-1])).split())


def test_the_walk_has_62_distinct_mistakes_over_every_command() -> None:
    assert len({(entry, tuple(args)) for entry, args, _ in WALK}) == len(WALK) >= 62
    walked = {args[0] for entry, args, _ in WALK if entry == "guigym"}
    walked |= {" ".join(args[:2]) for entry, args, _ in WALK if args[0] == "train"}
    group = typer.main.get_command(app)
    every = {*group.commands, *(f"train {name}" for name in group.commands["train"].commands)}
    assert every <= walked, every - walked
    trl_path = [row for row in WALK if row[0] == "trl" or row[1][:2] == ["train", "trl"]]
    assert len(trl_path) >= 4 and {row[0] for row in trl_path} == {"guigym", "trl"}


#: A row's test id: its entry point and arguments.
IDS = [f"{entry}: {' '.join(args)}"[:80] for entry, args, _ in WALK]


@pytest.mark.parametrize(("entry", "args", "needle"), WALK, ids=IDS)
def test_each_mistake_is_one_message(
    entry: str, args: list[str], needle: str, scratch: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    args, needle = [_swap(a, scratch) for a in args], _swap(needle, scratch)
    if entry == "trl":
        pytest.importorskip("trl")
        from trainers.trl.train import main

        with pytest.raises(SystemExit) as exit_info:
            main(args)
        out, err = capsys.readouterr()
        lines = [line for line in err.splitlines() if line.strip()]
        assert exit_info.value.code == 2 and not out.strip(), (out, err)
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
        message = lines[0]
    else:
        if args[:2] == ["train", "trl"]:
            pytest.importorskip("trl")
        result = CliRunner().invoke(app, args, terminal_width=400)
        assert result.exit_code in (1, 2), result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        message = _one_message(result.output, result.exit_code)
    at = 0
    for part in needle.split(" … "):  # a long message (every benchmark, every field) is matched by its parts
        found = message.find(part, at)
        assert found >= 0, f"{part!r} not in {message!r}"
        at = found + len(part)


def test_right_values_pass_the_type_check_on_every_parse(scratch: dict[str, str]) -> None:
    # The TRL rows' type check reads the annotations: a list for report_to, a float logging_steps (annotated float,
    # default 10) and an int pad_to_multiple_of (int | str | None) pass, also after TRL's parser has rewritten the
    # fields' types in place (which it does on the first parse in a process).
    pytest.importorskip("trl")
    from trainers.trl.train import load_run

    sets = [f"model={scratch['<MODEL>']}", "trl.report_to=[tensorboard]", "trl.logging_steps=0.5"]
    for _ in range(2):
        _, _, args = load_run(TRL, [*sets, "trl.pad_to_multiple_of=64"])
    assert args.report_to == ["tensorboard"] and args.logging_steps == 0.5 and args.pad_to_multiple_of == 64
