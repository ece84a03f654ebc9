"""The first minute (issue 30): while the embedding service loads its model (and embeds the backlog it
found at start), the prompt hook never waits on it. The service says what it is doing in its state file
(``protocol.state_path``: loading, indexing, ready); a client sends no search to a live service that is
not ready, so the hook costs what it costs with embeddings off. Through the real bash hook, against a
service that is loading (a stand-in that takes connections and never answers: the worst a busy service
can do)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, run_s3, wait_for
from sophia.embed_client import client, protocol

PROMPT = "how did we fix the flaky postgres migration test with the advisory lock?"

# argv: home, socket path, connection log. Its command line names sophia.embed.service, as the real one's
# does (client.service_pid checks it); it holds the pid file and the socket and answers nothing.
STANDIN = """
import os, socket, sys, time
home, sp, log = sys.argv[2], sys.argv[3], sys.argv[4]
run = os.path.join(home, "run")
os.makedirs(run, exist_ok=True)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sp)
srv.listen(32)
with open(os.path.join(run, "embed.pid"), "w") as fh:
    fh.write(f"{os.getpid()}\\n")
open(log, "w").close()
held = []
while True:
    conn, _ = srv.accept()
    held.append(conn)
    with open(log, "a") as fh:
        fh.write("x\\n")
"""


@pytest.fixture
def home(sophia_home: Path, s3_env: dict[str, str]) -> Path:
    assert run_s3(["init"], s3_env).returncode == 0
    r = run_s3(["learn", "Flaky postgres migration tests: take an advisory lock before migrating",
                "--domain", "postgres"], s3_env)
    assert r.returncode == 0, r.stderr
    cfg = json.loads((sophia_home / "config.json").read_text())
    assert cfg["embedding_provider"] == "local"  # embeddings on: the hook asks the semantic tier
    return sophia_home


@pytest.fixture
def service(home: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    assert protocol.ensure_runtime_dir() is None
    sp = protocol.sock_path(home)
    sp.unlink(missing_ok=True)
    log = tmp_path / "connections"
    proc = subprocess.Popen([sys.executable, "-c", STANDIN, "sophia.embed.service", str(home), str(sp), str(log)])
    assert wait_for(lambda: log.exists() and client.service_pid(home) == proc.pid, 30)
    yield proc, log
    proc.kill()
    proc.wait()
    sp.unlink(missing_ok=True)


def set_phase(home: Path, phase: str, pid: int) -> None:
    protocol.state_path(home).write_text(f"{phase} {pid}\n")


def hook(home: Path, sid: str, **extra: str) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
    env.update(HOME=str(home.parent), SOPHIA_HOME=str(home), SOPHIA_PYTHON=os.path.realpath(sys.executable), **extra)
    data = json.dumps({"session_id": sid, "cwd": str(home.parent), "hook_event_name": "UserPromptSubmit",
                       "prompt": PROMPT})
    t = time.monotonic()
    r = subprocess.run(["bash", str(ROOT / "hooks" / "prompt_context.sh")], input=data, capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return time.monotonic() - t, r.stdout


def test_a_loading_service_is_never_asked_and_costs_nothing(home: Path, service: tuple) -> None:
    proc, log = service
    set_phase(home, "loading", proc.pid)
    on, off = [], []
    for i in range(5):  # interleaved: the machine's noise hits both alike
        dt, out = hook(home, f"on-{i}")
        on.append(dt)
        assert "advisory lock" in out  # the keyword tier answers
        off.append(hook(home, f"off-{i}", SOPHIA_RECALL_SEMANTIC="0")[0])
    assert log.read_text() == ""  # no search was sent to it: nothing can wait on it
    # a hook that waited on the service's 0.2 s timeout would cost that much more every time
    assert statistics.median(on) < statistics.median(off) + 0.12, (on, off)
    set_phase(home, "indexing", proc.pid)  # a backlog being embedded: the same
    hook(home, "indexing")
    assert log.read_text() == ""


def test_a_ready_service_is_asked_and_a_dead_ones_state_is_ignored(home: Path, service: tuple) -> None:
    proc, log = service
    set_phase(home, "ready", proc.pid)
    hook(home, "ready")
    assert log.read_text().count("x") == 1  # asked (it never answers: the hook took the keyword tier)
    set_phase(home, "loading", 999_999)  # left by a service that died: not this live one's word
    assert client.busy(home) is False
    hook(home, "stale")
    assert log.read_text().count("x") == 2


def test_what_the_service_says_it_is_doing(home: Path) -> None:
    """The real service's phases, without its model: its phase file, and the cleanup on exit."""
    from sophia.embed import service

    set_phase(home, "ready", os.getpid())
    assert client.busy(home) is False  # this process is no embedding service
    service.set_phase(home, "loading")
    assert protocol.state_path(home).read_text() == f"loading {os.getpid()}\n"
    service._cleanup(home, None)
    assert not protocol.state_path(home).exists()
