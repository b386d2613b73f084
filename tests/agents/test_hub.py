"""Hub ids, one policy on every path (agents.hub.resolve_model).

With the network cut (``HF_ENDPOINT`` at a closed local port, or ``HF_HUB_OFFLINE=1``) every command that would
download a model fails in one ``error:`` line within 10 seconds, naming the id and how to use a local folder
(``from_pretrained`` alone retried each file for minutes). Where a hub answers (a stub on 127.0.0.1 serving the
model-info API), a hub id is handed to ``from_pretrained`` as it is, and an id the hub does not have is one line too.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from agents.hub import HubUnavailableError, ModelPathError, looks_local, resolve_model

ROOT = Path(__file__).resolve().parents[2]
HUB_ID = "Qwen/Qwen2.5-0.5B"
LIMIT_S = 10.0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


def _run(args: list[str], tmp_path: Path, **extra_env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HOME": str(tmp_path / "hf-home"),
           **extra_env}  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    return proc, time.perf_counter() - start


GUIGYM = [sys.executable, "-m", "guigym.cli"]
PATHS = {
    "grpo": [*GUIGYM, "train", "grpo", "--config", "configs/grpo_tiny_cpu.yaml", "--set", f"model={HUB_ID}"],
    "agent": [*GUIGYM, "run", "ClickGrid-v0", "--agent", f"hf:{HUB_ID}", "-n", "1"],
    "trl": [sys.executable, "-m", "trainers.trl", "--config", "configs/trl/grpo_tiny_clickgrid_cpu.yaml",
            "--set", f"model={HUB_ID}"],  # fmt: skip
    "python": [sys.executable, "-c", f"from agents.hf_agent import HFAgent; HFAgent({HUB_ID!r})"],
}


@pytest.mark.parametrize("cut", ["closed_endpoint", "hf_hub_offline"])
@pytest.mark.parametrize("path", sorted(PATHS))
def test_offline_hub_id_is_one_line_within_ten_seconds(path: str, cut: str, tmp_path: Path) -> None:
    if path == "trl":
        pytest.importorskip("trl")
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"} if cut == "closed_endpoint" else {"HF_HUB_OFFLINE": "1"}
    proc, seconds = _run(PATHS[path], tmp_path, **env)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0, text
    assert seconds < LIMIT_S, f"{path}: {seconds:.1f} s\n{text}"
    if path == "python":  # a library call raises the named error; the CLIs print it
        assert "HubUnavailableError" in text and HUB_ID in text
        return
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in text, text
    assert HUB_ID in errors[0] and "save_pretrained" in errors[0] and "--local-dir" in errors[0], errors[0]


class _StubHub(BaseHTTPRequestHandler):
    """The model-info API of a hub that holds one model, ``org/served``."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/api/models/org/served"):
            body, status, headers = json.dumps({"id": "org/served", "sha": "0" * 40}).encode(), 200, {}
        else:
            body, status = b'{"error": "Repository not found"}', 404
            headers = {"X-Error-Code": "RepoNotFound"}  # what the hub sends; huggingface_hub maps it
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stub_hub() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _StubHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_reachable_hub_hands_the_id_to_from_pretrained(stub_hub: str, tmp_path: Path) -> None:
    code = ("from agents.hub import resolve_model, ModelPathError\n"
            "print(resolve_model('org/served'))\n"
            "try:\n    resolve_model('org/missing')\nexcept ModelPathError as exc:\n    print('refused:', exc)\n")  # fmt: skip
    proc, _ = _run([sys.executable, "-c", code], tmp_path, HF_ENDPOINT=stub_hub)
    assert proc.returncode == 0, proc.stderr
    served, refused = proc.stdout.splitlines()
    assert served == "org/served"
    assert refused.startswith("refused: model 'org/missing' is neither a local folder nor a model on " + stub_hub)


def test_a_cached_snapshot_is_used_when_the_hub_is_out_of_reach(tmp_path: Path) -> None:
    # The layout huggingface_hub writes: refs/main names the snapshot that holds the files.
    repo = tmp_path / "hf-home" / "hub" / "models--org--cached"
    snapshot = repo / "snapshots" / ("1" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("1" * 40)
    code = "from agents.hub import resolve_model; print(resolve_model('org/cached'))"
    proc, _ = _run([sys.executable, "-c", code], tmp_path, HF_HUB_OFFLINE="1")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == snapshot


def test_local_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "model").mkdir(parents=True)
    assert resolve_model("runs/model") == "runs/model"  # an existing folder never touches the hub
    for name in ("./gone", "/no/such/model", "runs/gone", "a/b/c"):
        assert looks_local(name)
        with pytest.raises(ModelPathError, match="does not exist"):
            resolve_model(name)
    assert not looks_local("Qwen/Qwen2.5-0.5B") and not looks_local("gpt2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    with pytest.raises(HubUnavailableError, match="HF_HUB_OFFLINE is set"):
        resolve_model("gpt2")
