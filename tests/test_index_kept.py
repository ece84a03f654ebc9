"""Index connections a long-lived process keeps open (sophia.index.kept): reused while the file is the one
opened, never a checkpoint at every use, a replaced file opened afresh without touching the new one."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from sophia import paths
from sophia.index import db, kept, rebuild, store


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")
    monkeypatch.setattr(kept, "_KEEP", False)
    monkeypatch.setattr(kept, "_open", {})
    monkeypatch.setattr(kept, "_retired", [])
    yield
    for conn, _ in kept._open.values():
        conn.close()
    for conn in kept._retired:
        conn.close()


def _fact(i: str, text: str) -> dict[str, str]:
    return {"id": i, "type": "fact", "text": text}


def _wal(home: Path) -> Path:
    return Path(f"{paths.index_db_path(home)}-wal")


def test_without_keep_each_use_closes_and_checkpoints(sophia_home: Path) -> None:
    with kept.use(sophia_home) as conn:
        assert conn is not None
        store.upsert_items(conn, [_fact("f1", "the deploy needs a token")])
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")
    assert not _wal(sophia_home).exists()  # the last close checkpointed and removed the WAL
    assert kept._open == {}


def test_kept_connection_is_reused_and_the_wal_is_not_checkpointed_at_each_use(sophia_home: Path) -> None:
    kept.keep()
    with kept.use(sophia_home) as first:
        assert first is not None
        store.upsert_items(first, [_fact("f1", "the deploy needs a token")])
    with kept.use(sophia_home, read=True) as again:
        assert again is first
        assert again.execute("SELECT count(*) FROM items").fetchone()[0] == 1
    assert _wal(sophia_home).stat().st_size > 0  # the commit is still in the WAL: no checkpoint on use
    other = db.connect(sophia_home)  # another process's view
    assert other.execute("SELECT text FROM items WHERE id = 'f1'").fetchone()[0] == "the deploy needs a token"
    other.close()


def test_a_transaction_left_open_is_rolled_back(sophia_home: Path) -> None:
    kept.keep()
    with pytest.raises(RuntimeError), kept.use(sophia_home) as conn:
        assert conn is not None
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE corpus_stats SET n = n + 5 WHERE id = 1")
        raise RuntimeError("the hook failed half way")
    assert not conn.in_transaction
    other = db.connect(sophia_home)
    other.execute("BEGIN IMMEDIATE")  # the write lock is free again
    assert other.execute("SELECT n FROM corpus_stats").fetchone()[0] == 0  # and nothing was written
    other.execute("ROLLBACK")
    other.close()


def test_read_of_a_missing_index_creates_nothing(sophia_home: Path) -> None:
    kept.keep()
    with kept.use(sophia_home, read=True) as conn:
        assert conn is None
    assert not paths.index_db_path(sophia_home).exists()


def test_a_replaced_index_is_opened_afresh_and_its_wal_left_alone(sophia_home: Path) -> None:
    kept.keep()
    with kept.use(sophia_home) as old:
        assert old is not None
        store.upsert_items(old, [_fact("f1", "first text")])
    rebuild.rebuild(sophia_home)  # a new file, renamed over the one the kept connection opened
    with kept.use(sophia_home) as new:
        assert new is not None and new is not old
        store.upsert_items(new, [_fact("f2", "written after the rebuild")])
    assert kept._retired == [old]
    old.execute("SELECT 1")  # held, not closed: its close would delete the new file's WAL by name
    assert _wal(sophia_home).stat().st_size > 0
    other = db.connect(sophia_home)
    assert [r[0] for r in other.execute("SELECT id FROM items ORDER BY id")] == ["f2"]
    other.close()
