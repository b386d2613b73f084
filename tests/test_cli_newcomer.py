"""The newcomer commands: tasks, run --task / --record paths, folded envs, play from stdin, bench, and one
clear line (no traceback) for the usual mistakes."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import gymnasium as gym
import pytest
from typer.testing import CliRunner

from guigym.bench import run_benchmarks
from guigym.cli import app
from guigym.play import play

runner = CliRunner()


def test_envs_folds_miniwob_and_all_expands() -> None:
    folded = runner.invoke(app, ["envs"], terminal_width=400)
    assert folded.exit_code == 0, folded.output
    assert "GuiWeb-MiniWoB-<task>-v0" in folded.output and "125 MiniWoB++ tasks" in folded.output
    assert "GuiWeb-MiniWoB-click-test-v0" not in folded.output
    full = runner.invoke(app, ["envs", "--all"], terminal_width=400)
    assert full.output.count("GuiWeb-MiniWoB-") >= 125


def test_tasks_lists_templates_with_examples() -> None:
    result = runner.invoke(app, ["tasks", "GuiWeb-Shop-v0"], terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "shop.add_to_cart" in result.output and "24 task templates" in result.output
    none = runner.invoke(app, ["tasks", "Maze-v0"])
    assert none.exit_code == 1 and "no named tasks" in none.output and "Traceback" not in none.output


def test_every_web_template_has_the_example_its_episode_shows() -> None:
    # The example was once a second setup() on the built task: it drew other values and could insert a seeded row
    # twice (4 of 69 templates printed "no example: IntegrityError").
    from guigym.tasks_list import task_rows

    rows = task_rows("GuiWeb-v0")
    assert len(rows) == 63 and not [r["name"] for r in rows if r["example"].startswith("(no example")]
    env = gym.make("GuiWeb-v0")
    try:
        by_name = {r["name"]: r["example"] for r in rows}
        for name in ("classifieds.unfavourite", "forum.unsubscribe", "shop.add_to_cart"):
            _, info = env.reset(options={"task": name, "seed": 0})
            assert info["instruction"] == by_name[name], name
    finally:
        env.close()


def test_run_task_and_record_print_each_trajectory_folder(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["run", "Maze-v0", "-a", "oracle", "-n", "2", "-k", "mode=navigate", "-k", "size=3",
              "--record", str(tmp_path / "maze")], terminal_width=300,
    )
    assert result.exit_code == 0, result.output
    folders = sorted((tmp_path / "maze").iterdir())
    assert len(folders) == 2 and all(f"trajectory saved to {f}" in result.output for f in folders)
    bad = runner.invoke(app, ["run", "GuiWeb-Shop-v0", "--task", "shop.add_to_kart", "-n", "1"])
    assert bad.exit_code == 1 and "error:" in bad.output and "shop.add_to_cart" in bad.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "Sudoku-v0", "-a", "hf:/no/such/model", "-n", "1"], "does not exist"),
        # A hub id with the network cut: tests/agents/test_hub.py.
        (["eval", "GuiOffline-v0", "-k", "dataset=screenspot", "-k", "path=/no/such/folder"], "is not a folder"),
        (["run", "GuiWeb-MiniWoB-click-test-v0", "-a", "oracle", "-n", "1"], "no oracle_action"),
        (["run", "Maze-v0", "-a", "random", "-n", "1", "--task", "x"], "takes no reset options"),
        # A mistyped -k name: the env's own arguments are listed (gymnasium raised a 40-line TypeError).
        (["run", "ClickGrid-v0", "-k", "sise=5", "-n", "1"], "ClickGrid-v0 has no argument 'sise' (-k sise=...); it takes rows"),
        (["eval", "GuiOffline-v0", "-k", "dataset=screenspot_v3"], "no dataset named 'screenspot_v3'; known: aitz"),
        # A -k value of the wrong type: the env's own TypeError, wrapped by gymnasium, in one line.
        (["run", "ClickGrid-v0", "-k", "rows=abc", "-n", "1"], "ClickGrid-v0 cannot be made with {'rows': 'abc'}"),
    ],
)
def test_user_mistakes_get_one_line_not_a_traceback(args: list[str], needle: str) -> None:
    result = runner.invoke(app, args, terminal_width=300)
    assert result.exit_code == 1, result.output
    assert needle in result.output and "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("command", ["run", "eval", "play", "tasks"])
def test_a_negative_seed_is_a_usage_error(command: str) -> None:
    result = runner.invoke(app, [command, "ClickGrid-v0", "--seed", "-1"], terminal_width=300)
    assert result.exit_code == 2 and "--seed" in result.output and "Traceback" not in result.output


def test_device_without_adb_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uiautomator2")
    from gui_envs.android import uiautomator2_backend as u2

    monkeypatch.setattr(u2, "adb_server_running", lambda timeout_s=0.5: False)
    monkeypatch.setattr(u2.shutil, "which", lambda name: None)
    start = time.perf_counter()
    result = runner.invoke(
        app, ["run", "GuiAndroid-v0", "-k", "backend=uiautomator2", "-k", "serial=emulator-5554", "-n", "1"],
        terminal_width=300,
    )
    assert time.perf_counter() - start < 5.0
    assert result.exit_code == 1 and "adb is not installed" in result.output and "Traceback" not in result.output


def test_play_takes_typed_actions_from_stdin(tmp_path: Path) -> None:
    out = io.StringIO()
    # ClickGrid: 3 x 3 cells of 64 px; "click X Y" lines become click actions. Two episodes, then quit.
    lines = "click 32 32\nclick 96 96\nnonsense\nq\n"
    returns = play("ClickGrid-v0", {}, io.StringIO(lines), out, tmp_path, seed=0)
    text = out.getvalue()
    assert len(returns) == 3 and all(r in (0.0, 1.0) for r in returns)
    assert "instruction: click cell" in text and "screenshot:" in text and "action error" in text
    assert len(list(tmp_path.glob("screen_*.png"))) == 4  # one screen per reset: 3 episodes + the one left open


def test_bench_runs_quick_scripts_and_tabulates(tmp_path: Path) -> None:
    (tmp_path / "fast.py").write_text('import sys\nassert "--quick" in sys.argv\nprint("rows: 3")\n')
    (tmp_path / "broken.py").write_text('import sys\nif "--quick" in sys.argv:\n    raise SystemExit(2)\n')
    (tmp_path / "slow.py").write_text("print('full run only')\n")
    results = {r.script: r for r in run_benchmarks(tmp_path)}
    assert results["fast"].status == "ok" and results["fast"].last_line == "rows: 3"
    assert results["broken"].status == "failed (exit 2)"
    assert results["slow"].status == "skipped"
    cli = runner.invoke(app, ["bench", "--folder", str(tmp_path), "--only", "fast", "--quiet"], terminal_width=200)
    assert cli.exit_code == 0 and "guigym benchmarks" in cli.output and "rows: 3" in cli.output
    # A name the folder lacks is refused in one line that lists the scripts, before anything runs.
    typo = runner.invoke(app, ["bench", "--folder", str(tmp_path), "--only", "fsat"], terminal_width=200)
    assert typo.exit_code == 1 and "no benchmark named fsat" in typo.output and "fast" in typo.output
    assert "Traceback" not in typo.output


def test_every_project_benchmark_but_the_gpu_and_probe_helpers_has_a_quick_mode() -> None:
    from guigym.bench import BENCHMARKS, has_quick_mode

    without = sorted(p.stem for p in BENCHMARKS.glob("*.py") if not has_quick_mode(p))
    # gpu_check needs a GPU; browsergym_probe is web_speed's subprocess, run from BrowserGym's own venv; gpu_wheels
    # fetches and checks the GPU check's wheels (no timing); miniwob_trl is miniwob_learning's TRL arm, run from a
    # checkpoint that benchmark trains (its --quick covers the path).
    assert without == ["browsergym_probe", "gpu_check", "gpu_wheels", "miniwob_trl"]


@pytest.mark.parametrize("name", ["guigym.play", "gui_envs.multi"])
def test_module_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "ClickGrid-v0", "-a", "replay:/no/such.jsonl", "-n", "1"], "replay file '/no/such.jsonl' does not exist"),
        (["train", "grpo", "-c", "BAD_YAML"], "is not valid YAML (line 3, column 1)"),
        (["train", "grpo", "-c", "configs/grpo_tiny_cpu.yaml", "--set", "env_id=ClickGrd-v0"], "Did you mean"),
        (["train", "sft", "-c", "configs/sft_tiny_cpu.yaml", "--set", "data=/no/such"], "data '/no/such' does not exist"),
        (["train", "dpo", "-c", "configs/dpo_tiny_cpu.yaml", "--set", "data=/no/such.jsonl"], "does not exist: make it"),
        (["train", "ipl", "-c", "configs/ipl_tiny_cpu.yaml", "--set", "data=/no/such"], "does not exist: make it"),
        # A value of the wrong type that reaches a range check in __post_init__.
        (["train", "dpo", "-c", "configs/dpo_tiny_cpu.yaml", "--set", "beta=abc"], "DPOConfig: beta must be a float, got 'abc'"),
        # Found once the run starts, before any model loads: one usage error, not a traceback.
        (["train", "core", "-c", "configs/core_tiny.yaml", "--set", "templates=[GuiAndroid-v0:clock.turn_off_alarm]",
          "--set", "output_dir=OUT", "--set", "model=MODEL"], "held-out task templates overlap the training task templates"),
    ],
)
def test_usage_mistakes_are_one_usage_error(args: list[str], needle: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # the configs/ paths as the README writes them
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: x\nenv_id: [unclosed\n")
    swap = {"BAD_YAML": str(bad), "output_dir=OUT": f"output_dir={tmp_path / 'run'}", "model=MODEL": f"model={tmp_path}"}
    result = runner.invoke(app, [swap.get(a, a) for a in args], terminal_width=400)
    assert result.exit_code == 2, result.output
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", result.output).split())  # the usage box's borders cut lines
    assert needle in text and "Traceback" not in result.output
