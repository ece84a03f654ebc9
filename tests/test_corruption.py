"""State files corrupted by hand: `s3 status` names the file (exit 1, no traceback); `s3 doctor --repair`
keeps the corrupt bytes in quarantine/ and restores a working file; the index is rebuilt from the files."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import copy_home, made_home, run_s3, stop_embedding_services

STATE_FILES = ["self_model.json", "config.json", "user_models/default.json", "episodes/index.json",
               "semantic_rules.json"]


def _truncated(raw: bytes) -> bytes:
    return raw[: len(raw) // 2]


CORRUPTIONS = {
    "truncated": _truncated,
    "garbage": lambda raw: raw[:20] + b"\x00\xff garbage }{][" + raw[40:],
    "wrong_schema": lambda raw: json.dumps({"entries": "lots", "total_sessions": "many", "agent_id": 7}).encode()
    if raw.lstrip().startswith(b"{") else b'{"not": "a list"}',
    "binary": lambda raw: bytes(range(256)) * 4,
    "empty": lambda raw: b"",
    "deep_nesting": lambda raw: b"[" * 200_000 + b"]" * 200_000,
    "not_utf8": lambda raw: raw.replace(b"{", b"{\xc3\x28", 1),
    "json_null": lambda raw: b"null",
}

# Every corruption on the self-model (the named case); each other file gets one, rotating.
CASES = [("self_model.json", kind) for kind in CORRUPTIONS]
CASES += [(f, k) for f, k in zip(STATE_FILES[1:], ["json_null", "truncated", "wrong_schema", "binary"], strict=True)]


def _assert_one_line_error(r, name: str) -> None:  # type: ignore[no-untyped-def]
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("s3: error:") and name in lines[0], r.stderr
    assert len(lines) <= 2, r.stderr  # the error, and at most the hint naming the fix


@pytest.mark.parametrize(("rel", "kind"), CASES, ids=[f"{f}-{k}" for f, k in CASES])
@pytest.mark.usefixtures("inited")
def test_corrupt_file_is_named_quarantined_and_restored(rel: str, kind: str, s3_env: dict[str, str],
                                                        sophia_home: Path) -> None:
    target = sophia_home / rel
    bad = CORRUPTIONS[kind](target.read_bytes())
    target.write_bytes(bad)

    r = run_s3(["status"], s3_env)
    _assert_one_line_error(r, rel.split("/")[-1])
    assert "doctor --repair" in r.stderr

    r = run_s3(["doctor", "--repair"], s3_env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    quarantined = [p for p in (sophia_home / "quarantine").iterdir() if p.name.endswith(rel.replace("/", "__"))]
    assert len(quarantined) == 1 and quarantined[0].read_bytes() == bad, "the corrupt copy is kept byte for byte"
    json.loads(target.read_text("utf-8"))
    r = run_s3(["status", "--json"], s3_env)
    assert r.returncode == 0, r.stderr


def test_directory_in_place_of_a_state_file(s3_env: dict[str, str], sophia_home: Path) -> None:
    run_s3(["init"], s3_env)
    target = sophia_home / "self_model.json"
    target.unlink()
    target.mkdir()
    r = run_s3(["status"], s3_env)
    _assert_one_line_error(r, "self_model.json")


def test_corrupt_episode_file_is_quarantined(s3_env: dict[str, str], sophia_home: Path) -> None:
    run_s3(["init"], s3_env)
    from sophia.episode_store import upsert_episode

    ep = {"id": "ep_1", "session_id": "s", "started_at": "2025-01-01T00:00:00Z", "ended_at": "2025-01-01T00:01:00Z"}
    upsert_episode(ep)
    p = sophia_home / "episodes" / "ep_1.json"
    p.write_bytes(p.read_bytes()[:30])
    r = run_s3(["doctor"], s3_env)
    assert r.returncode == 1 and "ep_1.json" in r.stdout
    r = run_s3(["doctor", "--repair"], s3_env)
    assert "Traceback" not in r.stdout + r.stderr
    assert any(q.name.endswith("ep_1.json") for q in (sophia_home / "quarantine").iterdir())


def test_unexpected_error_is_one_line(s3_env: dict[str, str], sophia_home: Path) -> None:
    """Even an error nobody foresaw (here: SOPHIA_HOME is a file) gives one line, not a traceback."""
    sophia_home.parent.mkdir(parents=True, exist_ok=True)
    sophia_home.write_text("i am a file")
    for args in (["init"], ["status"], ["doctor"], ["doctor", "--repair"]):
        r = run_s3(args, s3_env)
        assert r.returncode != 0, args
        assert "Traceback" not in r.stderr + r.stdout, (args, r.stderr)
        assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) <= 2, (args, r.stderr)
    os.unlink(sophia_home)


RULES = [f"rule number {i}: prefer {w}" for i, w in enumerate(["tabs", "pins", "locks", "tests", "logs"])]


@pytest.fixture(scope="module")
def learned_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A home where ``s3 init`` and ``s3 learn`` of RULES ran (once for this file; each test copies it)."""
    root = tmp_path_factory.mktemp("learned")
    yield made_home(root, *[["learn", r] for r in RULES])
    stop_embedding_services(root)


@pytest.mark.parametrize("damage", ["deleted", "truncated", "garbage", "empty", "wrong_schema"])
def test_lost_or_broken_index_is_rebuilt_with_nothing_missing(damage: str, s3_env: dict[str, str],
                                                              sophia_home: Path, learned_home: Path) -> None:
    """index.db is derived: whatever happens to it, `s3 doctor --repair` rebuilds it from the files."""
    import sqlite3
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.stress import index_ids

    from sophia.episode_store import upsert_episode
    from sophia.index.rebuild import rebuild

    copy_home(learned_home, s3_env)
    for i in range(5):
        upsert_episode({"id": f"ep_{i}", "session_id": f"s{i}", "started_at": "2025-01-01T00:00:00Z",
                        "ended_at": "2025-01-01T00:10:00Z", "goal_summary": f"task {i} about caching"})
    rebuild()
    db = sophia_home / "index.db"
    want = index_ids(db)
    assert len(want) >= 10, want
    for side in (db.with_name("index.db-wal"), db.with_name("index.db-shm")):
        side.unlink(missing_ok=True)
    if damage == "deleted":
        db.unlink()
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:1000])
    elif damage == "garbage":
        raw = bytearray(db.read_bytes())
        raw[100:4000] = os.urandom(3900)
        db.write_bytes(bytes(raw))
    elif damage == "empty":
        db.write_bytes(b"")
    else:
        db.unlink()
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE items (something_else TEXT)")
        con.commit()
        con.close()
    r = run_s3(["doctor", "--repair"], s3_env)
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    assert index_ids(db) == want
    r = run_s3(["status"], s3_env)
    assert r.returncode == 0, r.stderr
