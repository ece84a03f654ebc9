"""Semantic tier without the model: client timeouts, config switch, hash-keyed indexing, backends."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from embed_helpers import put_items
from sophia.embed import indexer, vectors
from sophia.embed.backends import NumpyBackend, SqliteVecBackend, sqlite_vec_available
from sophia.embed_client import client, protocol


def test_client_returns_none_fast_when_nothing_runs(sophia_home: Path) -> None:
    t0 = time.monotonic()
    assert client.search("anything", 5, home=sophia_home, start=False) is None
    assert client.embed(["x"], home=sophia_home, start=False) is None
    assert client.is_warm(sophia_home) is False
    assert client.status(sophia_home) is None
    assert time.monotonic() - t0 < 0.5  # generous: the machine is shared; a wait would be seconds
    assert not protocol.spawn_marker_path(sophia_home).exists()  # start=False spawned nothing


def test_client_never_blocks_past_timeout_on_a_silent_server(sophia_home: Path) -> None:
    """A socket that accepts and never answers (a wedged service) costs the caller its timeout, no more."""
    sp = protocol.sock_path(sophia_home)
    assert protocol.ensure_runtime_dir() is None
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(sp))
    srv.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept_and_hang() -> None:
        srv.settimeout(0.05)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except TimeoutError:
                pass

    th = threading.Thread(target=accept_and_hang, daemon=True)
    th.start()
    try:
        for timeout in (0.05, 0.2):
            t0 = time.monotonic()
            assert client.search("q", 3, home=sophia_home, timeout=timeout) is None
            elapsed = time.monotonic() - t0
            assert timeout * 0.9 <= elapsed < timeout + 0.3, elapsed
        t0 = time.monotonic()
        assert client.is_warm(sophia_home, timeout=0.1) is False
        assert time.monotonic() - t0 < 0.4
        # a slow service is not a dead one: no spawn
        assert not protocol.spawn_marker_path(sophia_home).exists()
    finally:
        stop.set()
        th.join()
        for c in held:
            c.close()
        srv.close()


def test_stale_socket_reads_as_not_warm(sophia_home: Path) -> None:
    sp = protocol.sock_path(sophia_home)
    assert protocol.ensure_runtime_dir() is None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(sp))
    s.close()  # the file stays, nobody listens: what a SIGKILLed service leaves
    protocol.pid_path(sophia_home).parent.mkdir(parents=True)
    protocol.pid_path(sophia_home).write_text("999999\n")
    t0 = time.monotonic()
    assert client.is_warm(sophia_home) is False
    assert client.service_pid(sophia_home) is None
    assert client.search("q", 3, home=sophia_home, start=False) is None
    assert time.monotonic() - t0 < 0.5


def test_provider_none_disables_everything(sophia_home: Path) -> None:
    sophia_home.mkdir(parents=True)
    (sophia_home / "config.json").write_text(json.dumps({"embedding_provider": "none"}))
    assert client.enabled(sophia_home) is False
    assert client.ensure_started(sophia_home, force=True) is None
    assert client.search("q", 3, home=sophia_home) is None
    assert client.request_embed(sophia_home) is False
    assert not protocol.spawn_marker_path(sophia_home).exists()


def test_client_module_is_stdlib_only() -> None:
    """The client is importable with `python -I -S` (no site-packages), as hooks run it."""
    import subprocess
    import sys

    lib = Path(client.__file__).resolve().parents[2]
    code = (f"import sys; sys.path.insert(0, {str(lib)!r}); import sophia.embed_client.client as c; "
            "bad = [m for m in ('numpy', 'torch', 'pydantic', 'apsw') if m in sys.modules]; "
            "print(bad or 'ok', c.search('q', 3, start=False))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30,
                         env={**os.environ, "SOPHIA_HOME": "/nonexistent-sophia-home"})
    assert out.stdout.strip() == "ok None", out.stderr


class CountingEncoder:
    """Deterministic pseudo-embeddings (from the text's hash) that count what they encode."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(384) for t in texts]
        m = np.asarray(rows, dtype=np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_vectors_are_keyed_by_content_hash_and_never_recomputed(sophia_home: Path) -> None:
    conn = vectors.connect(sophia_home)
    put_items(conn, [(f"turn:{i}", "turn", f"message number {i}") for i in range(50)]
              + [("fact_dup", "fact", "message number 7")])  # same text as turn:7
    enc = CountingEncoder()
    done = indexer.sync(conn, enc, "m", batch_size=16)
    assert done == {"embedded": 50, "copied": 0}  # 51 items, 50 distinct texts
    assert sorted(enc.seen) == sorted(f"message number {i}" for i in range(50))
    rows = dict(conn.execute("SELECT item_id, vec FROM vectors").fetchall())
    assert len(rows) == 51 and rows["fact_dup"] == rows["turn:7"]
    assert len(rows["turn:0"]) == 384 * 4
    assert vectors.unpack(rows["turn:0"]) == pytest.approx(enc([ "message number 0"])[0].tolist(), abs=1e-7)
    enc.seen.clear()

    assert indexer.sync(conn, enc, "m") == {"embedded": 0, "copied": 0}
    assert enc.seen == []
    put_items(conn, [("turn:3", "turn", "an edited message"), ("turn:new", "turn", "message number 9")])
    done = indexer.sync(conn, enc, "m")
    assert enc.seen == ["an edited message"]  # turn:new reuses turn:9's vector by hash
    assert done == {"embedded": 1, "copied": 1}
    assert vectors.counts(conn, "m") == {"items": 52, "embedded": 52, "pending": 0}
    # another model name is a different space: everything is pending for it
    assert vectors.counts(conn, "other")["pending"] == 52
    conn.execute("DELETE FROM items WHERE id = 'turn:0'")
    assert vectors.delete_orphans(conn) == 1
    conn.close()


def test_bulk_batches_group_texts_of_similar_length(sophia_home: Path) -> None:
    """Each batch pads to its longest text: pending items are encoded shortest first, so a batch
    never mixes a one-word turn with a paragraph (1.6x faster on LoCoMo, docs/benchmarks.md)."""
    conn = vectors.connect(sophia_home)
    rng = np.random.default_rng(3)
    lengths = [int(x) for x in rng.integers(1, 60, size=100)]
    put_items(conn, [(f"turn:{i}", "turn", " ".join([f"w{i}"] * n)) for i, n in enumerate(lengths)])
    batches: list[list[str]] = []
    enc = CountingEncoder()

    def recording(texts: list[str]) -> np.ndarray:
        batches.append(texts)
        return enc(texts)

    assert indexer.sync(conn, recording, "m", batch_size=8) == {"embedded": 100, "copied": 0}
    sizes = [len(t) for b in batches for t in b]
    assert sizes == sorted(sizes)  # one fetched block (100 < 1,024): globally shortest first
    assert sorted(sum(batches, [])) == sorted(enc.seen) and len(enc.seen) == 100
    conn.close()


def _random_store(home: Path, n: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    mat = rng.standard_normal((n, 384)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    ids = [f"it{i}" for i in range(n)]
    conn = vectors.connect(home)
    put_items(conn, [(iid, "fact" if i % 3 == 0 else "turn", f"text {i}") for i, iid in enumerate(ids)])
    hashes = dict(conn.execute("SELECT id, content_hash FROM items"))
    vectors.insert(conn, "m", [(iid, hashes[iid], 384, mat[i].astype("<f4").tobytes()) for i, iid in enumerate(ids)])
    conn.commit()
    conn.close()
    return mat, ids


@pytest.mark.skipif(sqlite_vec_available() is not None, reason="sqlite-vec does not load here")
def test_both_backends_return_the_same_top_k(sophia_home: Path) -> None:
    mat, ids = _random_store(sophia_home, 600)
    db = sophia_home / "index.db"
    nb, sb = NumpyBackend(db, "m", 384), SqliteVecBackend(db, "m", 384)
    rng = np.random.default_rng(1)
    for qi in range(20):
        q = rng.standard_normal(384).astype(np.float32) if qi % 2 else mat[qi * 7] + 0.1
        q /= np.linalg.norm(q)
        truth = np.argsort(-(mat @ q))[:10]
        for types in (None, ["fact"], ["turn", "fact"]):
            a, b = nb.search(q, 10, types), sb.search(q, 10, types)
            assert [i for i, _ in a] == [i for i, _ in b]
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
            if types is None:
                assert [i for i, _ in a] == [ids[j] for j in truth]
            else:
                assert all(int(i[2:]) % 3 == 0 for i, _ in a) == (types == ["fact"])
    assert nb.search(mat[0], 0) == [] and sb.search(mat[0], 0) == []
    assert nb.search(mat[0], 5, ["nosuchtype"]) == [] and sb.search(mat[0], 5, ["nosuchtype"]) == []
    nb.close()
    sb.close()


def test_numpy_backend_follows_the_table(sophia_home: Path) -> None:
    mat, ids = _random_store(sophia_home, 100)
    nb = NumpyBackend(sophia_home / "index.db", "m", 384)
    assert nb.stats()["vectors"] == 100
    assert nb.search(mat[5], 1)[0][0] == "it5"
    conn = vectors.connect(sophia_home)
    # append: a new item and its vector -> loaded incrementally
    put_items(conn, [("new", "turn", "new text")])
    v = -mat[5]
    h = conn.execute("SELECT content_hash FROM items WHERE id='new'").fetchone()[0]
    vectors.insert(conn, "m", [("new", h, 384, v.astype("<f4").tobytes())])
    conn.commit()
    assert nb.search(v, 1)[0][0] == "new"
    assert nb.stats()["vectors"] == 101
    # an item's text changes: its old vector no longer counts once the table changes
    put_items(conn, [("it5", "turn", "edited")])
    conn.execute("DELETE FROM vectors WHERE item_id = 'it9'")
    conn.commit()
    hits = [i for i, _ in nb.search(mat[5], 101)]
    assert "it5" not in hits and "it9" not in hits and len(hits) == 99
    conn.close()
    nb.close()


def test_embed_text_column_is_embedded_instead_of_text(sophia_home: Path) -> None:
    conn = vectors.connect(sophia_home)
    if "embed_text" not in {r[1] for r in conn.execute("PRAGMA table_info(items)")}:
        conn.execute("ALTER TABLE items ADD COLUMN embed_text TEXT")
    put_items(conn, [("turn:1", "turn", "plain"), ("turn:2", "turn", "other")])
    conn.execute("UPDATE items SET embed_text = 'plain\n(after: previous turn)', content_hash = 'h1' WHERE id = 'turn:1'")
    conn.commit()
    enc = CountingEncoder()
    indexer.sync(conn, enc, "m")
    assert sorted(enc.seen) == ["other", "plain\n(after: previous turn)"]
    conn.close()


def test_thread_tuner_keeps_the_faster_setting_and_reprobes() -> None:
    from sophia.embed.tuning import ThreadTuner

    t = ThreadTuner(2, reprobe=3)
    speed = {1: 100.0, 2: 30.0}  # chars/s: a loaded box, where 2 threads oversubscribe
    seen = []
    for _ in range(12):
        n = t.next()
        seen.append(n)
        t.done(1000, 1000 / speed[n])
    assert seen[:4] == [1, 2, 1, 2] and set(seen[4:7]) == {1} and t.best == 1
    assert seen.count(2) >= 2  # probed again later
    speed = {1: 50.0, 2: 200.0}  # load went away
    for _ in range(12):
        n = t.next()
        t.done(1000, 1000 / speed[n])
    assert t.best == 2
    assert ThreadTuner(1).next() == 1


def test_missing_sentence_transformers_disables_the_tier_with_a_one_line_note(
        sophia_home: Path, s3_env: dict[str, str]) -> None:
    """A service started by a Python without the extra (-S: no site-packages) says what to install."""
    import subprocess
    import sys

    from conftest import run_s3

    r = subprocess.run([sys.executable, "-S", "-m", "sophia.embed.service", "--home", str(sophia_home)],
                       env=s3_env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 3
    note = client.unavailable_reason(sophia_home)
    assert note and "pip install 'sophia-system3[embeddings]'" in note and "\n" not in note
    assert "Traceback" not in r.stderr
    assert not protocol.pid_path(sophia_home).exists() and not protocol.sock_path(sophia_home).exists()
    assert client.ensure_started(sophia_home) is None  # not retried on every recall
    d = json.loads(run_s3(["embed", "status", "--json"], s3_env).stdout)
    assert d["warm"] is False and "sophia-system3[embeddings]" in d["unavailable"]


LONG = "a-rather-long-folder-name-for-a-state-tree-"  # 43 characters


def long_home(root: Path) -> Path:
    """A SOPHIA_HOME of 150 characters (issue 13: its socket path would have been 159 bytes)."""
    h = root / "x"
    while len(str(h)) < 150:
        h = h / LONG
    return Path(str(h)[:150].rstrip("/-") + "z")


def test_socket_path_stays_short_and_private_whatever_the_home(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    home = long_home(tmp_path)
    assert len(str(home)) >= 140
    sp = protocol.sock_path(home)
    assert len(os.fsencode(sp)) <= protocol.SOCK_PATH_MAX, sp
    assert protocol.socket_problem(home) is None  # the service could listen there
    assert protocol.sock_path(home) != protocol.sock_path(tmp_path / "other")  # one socket per home
    assert protocol.sock_path(home) == protocol.sock_path(Path(str(home) + "/"))  # same home, same socket
    assert protocol.pid_path(home) == home / "run" / "embed.pid"  # pidfile and lock stay in the home
    # a usable $XDG_RUNTIME_DIR is preferred; one other users may enter is passed over
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    assert protocol.sock_path(home).parent == xdg / "sophia"
    xdg.chmod(0o755)
    assert protocol.sock_path(home).parent == Path(f"/tmp/sophia-{os.getuid()}")
    # the client never talks to a socket in a folder others may enter
    xdg.chmod(0o700)
    assert protocol.ensure_runtime_dir() is None
    (xdg / "sophia").chmod(0o777)
    assert "open to other users" in (protocol.private_dir_problem(xdg / "sophia") or "")
    assert client.is_warm(home) is False
    assert protocol.ensure_runtime_dir() is None and protocol.private_dir_problem(xdg / "sophia") is None


def test_start_fails_fast_with_one_line_when_the_service_cannot_listen(
        sophia_home: Path, s3_env: dict[str, str], tmp_path: Path) -> None:
    """A service that cannot have its socket says why in one line and exits before loading the model;
    `s3 embed start` notices at once instead of waiting out its timeout (issue 13: it waited 120 s)."""
    from conftest import run_s3

    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    (xdg / "sophia").write_text("not a folder")  # the runtime folder cannot be made
    env = {**s3_env, "XDG_RUNTIME_DIR": str(xdg)}
    t0 = time.monotonic()
    r = run_s3(["embed", "start", "--timeout", "60"], env)
    elapsed = time.monotonic() - t0
    assert r.returncode == 1, r.stdout + r.stderr
    assert elapsed < 20, elapsed  # no model load, no wait for the timeout
    first = r.stderr.splitlines()[0]
    assert first.startswith("s3: error: semantic recall disabled: cannot listen on") and "is not a folder" in first
    assert "Traceback" not in r.stderr + protocol.log_path(sophia_home).read_text()


def test_start_notices_a_service_that_died(sophia_home: Path, s3_env: dict[str, str], tmp_path: Path) -> None:
    """Any early death (here an interpreter that crashes) ends the wait with the log's last line."""
    from conftest import run_s3

    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'embed: Fatal Python error: boom' >&2\nexit 1\n")
    fake.chmod(0o755)
    t0 = time.monotonic()
    r = run_s3(["embed", "start", "--timeout", "60"], {**s3_env, "SOPHIA_EMBED_PYTHON": str(fake)})
    assert r.returncode == 1 and time.monotonic() - t0 < 20
    assert "exited while starting (embed: Fatal Python error: boom)" in r.stderr


def test_recall_on_an_empty_store_does_not_start_the_service(sophia_home: Path, s3_env: dict[str, str]) -> None:
    """Nothing to search: no start attempt (which would also spend the 30 s cool-down). Something to
    search: the first recall starts it."""
    from conftest import run_s3
    from embed_helpers import kill_services, service_pids

    sophia_home.mkdir(parents=True, mode=0o700)
    (sophia_home / "config.json").write_text(json.dumps({"embedding_provider": "local"}))
    try:
        for _ in range(2):  # no index.db yet, then an index.db without items
            r = run_s3(["recall", "anything at all"], s3_env)
            assert r.returncode == 0, r.stderr
            assert not protocol.spawn_marker_path(sophia_home).exists() and not service_pids(sophia_home)
            vectors.connect(sophia_home).close()
        r = run_s3(["learn", "Always pin the base image digest in Dockerfiles", "--domain", "Docker"], s3_env)
        assert r.returncode == 0, r.stderr
        r = run_s3(["recall", "docker base image"], s3_env)
        assert r.returncode == 0 and "pin the base image" in r.stdout, r.stdout + r.stderr
        assert protocol.spawn_marker_path(sophia_home).exists()
        deadline = time.monotonic() + 10
        while not service_pids(sophia_home) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert service_pids(sophia_home)
    finally:
        kill_services(sophia_home)
