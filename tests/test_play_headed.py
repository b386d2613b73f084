"""The headed path of ``render_mode="human"`` and ``guigym play``, under a virtual X display (Xvfb): the browser
runs without ``--headless`` and the typed-action loop plays through it. Skipped where Xvfb is missing
(``./run test`` installs it where it can: ``apt-get install xvfb``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gui_envs  # noqa: F401

pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb (apt-get install xvfb)")


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    number = next(n for n in range(90, 200) if not Path(f"/tmp/.X{n}-lock").exists())
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    socket = Path(f"/tmp/.X11-unix/X{number}")
    deadline = time.monotonic() + 10
    while not socket.exists() and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not socket.exists():
        server.kill()
        pytest.fail(f"Xvfb :{number} did not start")
    yield f":{number}"
    server.terminate()
    server.wait(timeout=10)


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_human_render_mode_opens_a_headed_browser(display: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", display)
    env = gym.make("GuiWeb-v0", render_mode="human")
    try:
        obs, _ = env.reset(seed=0)
        pid = env.unwrapped.browser_pid
        assert pid is not None
        args = _cmdline(pid)
        assert not any(a.startswith("--headless") for a in args), args
        # The page is really drawn in the window: a screenshot of it has content, and an action acts on it.
        assert float(np.std(obs["screenshot"])) > 1.0
        _, _, terminated, truncated, info = env.step('{"type": "scroll", "direction": "down"}')
        assert info["action_error"] is None and not (terminated or truncated)
    finally:
        env.close()


def test_guigym_play_plays_headed_from_typed_lines(display: str, tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    proc = subprocess.run(
        [sys.executable, "-c", "from guigym.cli import main; main()", "play", "GuiWeb-v0", "--seed", "0", "--shots", str(shots)],
        input="scroll down\nstop\nq\n", capture_output=True, text=True, timeout=300,
        env={**os.environ, "DISPLAY": display}, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "instruction:" in proc.stdout and "reward +0.000" in proc.stdout
    assert "episode over" in proc.stdout
    assert sorted(p.name for p in shots.iterdir())[:2] == ["screen_0000.png", "screen_0001.png"]
