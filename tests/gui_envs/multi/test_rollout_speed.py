"""benchmarks/rollout_speed.py --quick: both paths of both shapes run, on the browsers each path promises."""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("playwright")

from benchmarks.rollout_speed import main  # noqa: E402


def test_quick_run_measures_both_paths_of_both_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    out = main(["--quick"])
    assert set(out) == {"ground", "multi"}
    for results in out.values():
        today, group = results["today"], results["group"]
        assert (today.browsers, group.browsers) == (2, 1)  # 2 separate envs; one shared browser for the group
        assert today.rollouts == group.rollouts == 4
        assert min(today.step_s, group.step_s, today.peak_mib, group.peak_mib, today.cpu_s, group.cpu_s) > 0
    printed = capsys.readouterr().out
    assert "GuiWebGround-v0" in printed and "GuiWeb-v0" in printed and "speed-up" in printed
    assert printed.count("CPU-bound floor") == 2
