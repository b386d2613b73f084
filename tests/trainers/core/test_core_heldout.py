"""CORE's held-out evaluation and the policy that learns from its own kept trajectories.

* overlapping held-out splits (seeds, templates) are refused before anything is written;
* the element-letter format expresses every oracle step of the benchmark's phone tasks (the oracle replayed
  through the format's answers succeeds), so demonstrations and the policy's samples are one kind of data;
* the benchmark's quick run (``benchmarks/core_iterations.py --quick``, fixed run seed 0): from iteration 1 on
  the policy's own verified trajectories are kept, every iteration is evaluated on held-out seeds, and held-out
  success after the last iteration is above behaviour cloning's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.prompts.element import ElementFormat
from trainers.config_io import ConfigError
from trainers.core.config import CoreConfig
from trainers.core.loop import train_core
from trainers.heldout import SplitOverlapError

ROOT = Path(__file__).resolve().parents[3]
PHONE = "GuiAndroid-v0"


def _config(tmp_path: Path, **kw: object) -> CoreConfig:
    base = {"model": str(tmp_path / "no-model-needed"), "envs": [PHONE], "output_dir": str(tmp_path / "run"),
            "templates": [f"{PHONE}:clock.turn_off_alarm", f"{PHONE}:expenses.open_account"],
            "seeds_per_template": 4, "seed_base": 100, "test_fraction": 0.0, "device": "cpu"}  # fmt: skip
    return CoreConfig(**{**base, **kw})


def test_eval_seeds_overlapping_the_training_seeds_are_refused_before_any_work(tmp_path: Path) -> None:
    cfg = _config(tmp_path, eval_seeds={"start": 102, "count": 5})  # training seeds are 100..103
    with pytest.raises(
        SplitOverlapError,
        match=r"GuiAndroid-v0\|clock.turn_off_alarm\|102.*eval_seeds=\{start: 104, count: 5\}",
    ):
        train_core(cfg)
    assert not (tmp_path / "run").exists()  # refused at start: no folder, no model loaded, no env started


def test_test_templates_that_are_training_templates_are_refused(tmp_path: Path) -> None:
    cfg = _config(tmp_path, test_templates=[f"{PHONE}:expenses.open_account"], eval_seeds=[500])
    with pytest.raises(
        SplitOverlapError, match="held-out task templates overlap the training task templates"
    ):
        train_core(cfg)
    assert not (tmp_path / "run").exists()


def test_every_template_means_every_one_not_held_out(tmp_path: Path) -> None:
    # README's GPU command sets templates=[] on core_tiny.yaml, which names test_templates: the run trains on the
    # rest (it was refused as an overlap at start).
    from trainers.core.loop import split_tasks, template_names

    held = [f"{PHONE}:clock.turn_off_alarm", f"{PHONE}:settings.adaptive_brightness"]
    cfg = _config(tmp_path, templates=[], test_templates=held)
    train, test, _ = split_tasks(cfg, template_names(cfg))
    trained = {f"{t.env_id}:{t.template}" for t in train}
    assert {f"{t.env_id}:{t.template}" for t in test} == set(held)
    assert not trained & set(held) and len(trained) == 48 - len(held)


def test_heldout_config_is_checked() -> None:
    for bad in ({"eval_seeds": {"start": 1}}, {"eval_seeds": [3, 3]}, {"eval_samples": -1},
                {"test_templates": ["clock.delete_alarm"]}, {"bc_epochs": -2}, {"iterations": -1}):  # fmt: skip
        with pytest.raises(ConfigError):
            CoreConfig(model="m", **bad)


@pytest.mark.parametrize("template", ["clock.turn_off_alarm", "notes.delete_note"])
def test_element_format_expresses_every_oracle_step(template: str) -> None:
    """Each step of a recorded oracle demonstration, rendered as the format's letter from the elements recorded
    before it (what SFT trains on) and parsed back, replays to success on the same task: the policy's action space
    holds the demonstrations' routes (an app launch becomes a tap on its home-screen icon)."""
    import gymnasium as gym

    import gui_envs  # noqa: F401
    from agents.oracle import record_oracle

    fmt = ElementFormat()
    env = gym.make(PHONE, screenshots=False)
    try:
        for seed in (1000, 1001):
            demo = record_oracle(env.unwrapped, template, seed)
            assert demo.success
            recorded = [{"elements": s.privileged["verifier_record"]["elements"]} for s in demo.steps]
            letters = [fmt.answer_text(s.action, obs) for s, obs in zip(demo.steps, recorded, strict=True)]
            obs, _ = env.reset(options={"task": template, "seed": seed})
            for i, letter in enumerate(letters):
                action, error = fmt.parse(letter, obs)
                assert error is None
                obs, _, terminated, truncated, info = env.step(action)
                assert terminated == (i == len(letters) - 1), (template, seed, letters, i)
            assert info.get("success"), (template, seed, letters)
    finally:
        env.close()


@pytest.mark.slow
@pytest.mark.timeout(1500)  # about 2 minutes on an idle core; the suite's 300 s limit would cut it under load
def test_quick_run_trains_the_policy_on_its_own_kept_trajectories(tmp_path: Path) -> None:
    """The benchmark's cut-down run from run seed 0: from iteration 1 on, the verifiers keep trajectories the policy
    sampled itself (env-verified ones, not only relabelled failures) and nothing scripted; every iteration,
    behaviour cloning included, reports held-out greedy success, and the last iteration's is above behaviour
    cloning's (iteration 0, trained on the oracle demonstrations alone). The behaviour-cloning control (the same
    demonstrations for as many SFT steps as the whole run) is reported beside it."""
    script = ROOT / "benchmarks" / "core_iterations.py"
    proc = subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=1200, cwd=ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| iteration | kept oracle | kept policy |" in proc.stdout
    assert "| last iteration - BC control |" in proc.stdout
    assert (tmp_path / "core_iterations_quick.png").stat().st_size > 0
    result = json.loads((tmp_path / "core_iterations_quick.json").read_text())
    (run,) = result["runs"]
    assert [m["iteration"] for m in run] == [0, 1, 2, 3]
    assert run[0]["kept_oracle"] > 0 and run[0]["kept_policy"] == 0
    assert all(m["kept_policy"] > 0 and m["kept_scripted"] == 0 and m["kept_oracle"] == 0 for m in run[1:]), (
        run
    )
    assert all(0.0 <= m["heldout_greedy"] <= 1.0 for m in run)
    assert run[-1]["heldout_greedy"] > run[0]["heldout_greedy"], [m["heldout_greedy_by_template"] for m in run]
    (control,) = result["bc_control"]
    # The control is behaviour cloning alone, trained as long as the whole CORE run.
    assert control["iteration"] == 0 and control["kept_policy"] == 0
    # (within one behaviour cloning's length: the control trains whole epochs of the demonstrations)
    assert abs(control["sft_steps"] - sum(m["sft_steps"] for m in run)) < run[0]["sft_steps"]
    assert result["acceptance"]["policy_kept_from_iteration_1"]
    assert result["acceptance"]["heldout_last_above_iteration_0"]
