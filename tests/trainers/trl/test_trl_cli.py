"""One CLI for the TRL path: ``guigym train trl`` and ``python -m trainers.trl`` take the same ``--config`` and
``--set KEY=VALUE`` (guigym's override syntax, a dotted key for a section's field), and each mistake is one line
with the closest names, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("trl")

from typer.testing import CliRunner  # noqa: E402

from guigym.cli import app  # noqa: E402
from trainers.config_io import ConfigError  # noqa: E402
from trainers.trl.train import load_run, main  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CONFIG = "configs/trl/grpo_tiny_clickgrid_cpu.yaml"

#: (the mistake's arguments, what the line must say): a missing config, a bad top-level key, a bad field in each
#: section, an override without its section, a value TRL or guigym refuses, a malformed override.
MISTAKES = [
    (["--config", "configs/trl/grpo_tiny_clickgrd_cpu.yaml"],
     "does not exist. Did you mean 'configs/trl/grpo_tiny_clickgrid_cpu.yaml'"),
    (["--config", CONFIG, "--set", "modle=MODEL"], "no run-file key 'modle'; keys are model, guigym.FIELD and trl.FIELD. Did you mean 'model'?"),
    (["--config", CONFIG, "--set", "trl.max_step=3"], "GRPOConfig has no field 'max_step' (trl.max_step). Did you mean 'max_steps'"),
    (["--config", CONFIG, "--set", "guigym.estimatr=sca"], "GuiGymTRLConfig has no field 'estimatr' (guigym.estimatr). Did you mean 'estimator'?"),
    (["--config", CONFIG, "--set", "max_steps=3"], "--set max_steps=... needs its section: did you mean --set trl.max_steps=...?"),
    (["--config", CONFIG, "--set", "trn.max_steps=3"], "no section 'trn' in --set trn.max_steps; the sections are guigym and trl. Did you mean 'trl'?"),
    (["--config", CONFIG, "--set", "trl.num_generations=7"], "must be divisible by num_generations (7)"),
    (["--config", CONFIG, "--set", "guigym.estimator=ppo"], "estimator='ppo'; use 'grpo' (TRL's) or 'sca'"),
    (["--config", CONFIG, "--set", "trl.max_steps"], "must be KEY=VALUE"),
    (["--config", CONFIG, "--set", "model=/no/such/model"], "model '/no/such/model' does not exist"),
]  # fmt: skip


@pytest.fixture
def model_dir(tmp_path: Path) -> str:
    (tmp_path / "model").mkdir()
    return str(tmp_path / "model")  # a folder is all load_run checks; nothing loads it


def _args(args: list[str], model: str) -> list[str]:
    return [a.replace("MODEL", model) for a in args] + ["--set", f"model={model}"] * ("model=" not in " ".join(args))


@pytest.mark.parametrize(("args", "needle"), MISTAKES)
def test_python_m_trainers_trl_prints_one_line(args: list[str], needle: str, model_dir: str, capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as exit_info:
        main(_args(args, model_dir))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in err, err


@pytest.mark.parametrize(("args", "needle"), MISTAKES)
def test_guigym_train_trl_prints_one_usage_error(args: list[str], needle: str, model_dir: str, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, ["train", "trl", *_args(args, model_dir)], terminal_width=400)
    assert result.exit_code in (1, 2), result.output
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", result.output).split())  # the usage box's borders cut lines
    assert needle in text and "Traceback" not in result.output, result.output


def test_overrides_reach_both_sections_and_trl_parses_its_own(model_dir: str, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    model, guigym, args = load_run(CONFIG, [f"model={model_dir}", "trl.max_steps=3", "trl.learning_rate=1e-5",
                                            "guigym.estimator=sca", "guigym.seeds=[10, 20]"])  # fmt: skip
    assert model == model_dir and args.max_steps == 3 and args.learning_rate == pytest.approx(1e-5)
    assert guigym.estimator == "sca" and guigym.seeds == [10, 20]
    assert args.num_generations == 8  # the file's value where nothing overrides it
    with pytest.raises(ConfigError, match="needs its section"):
        load_run(CONFIG, ["learning_rate=1e-5"])
