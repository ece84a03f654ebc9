"""The index database: migrations, upsert/delete, links, rebuild equivalence, doctor."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from sophia import paths
from sophia.atomic import write_json_atomic
from sophia.episode_store import upsert_episode
from sophia.index import db, rebuild, store


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword tier only: no test here starts an embedding service (fusion is tested with given hits)."""
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


def _item(i: str, text: str, **kw):  # type: ignore[no-untyped-def]
    return {"id": i, "type": kw.pop("type", "fact"), "text": text, **kw}


def test_connect_creates_migrated_private_wal_db(sophia_home: Path) -> None:
    conn = db.connect(sophia_home)
    names = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == [fn.__name__ for fn in db.MIGRATIONS]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    cols = {r[1] for r in conn.execute("PRAGMA table_info(vectors)")}
    assert cols == {"item_id", "content_hash", "model", "dim", "vec"}
    conn.close()
    mode = stat.S_IMODE(os.stat(paths.index_db_path(sophia_home)).st_mode)
    assert mode == 0o600
    # reconnecting applies nothing new
    conn = db.connect(sophia_home)
    assert db.migrate(conn) == []
    conn.close()


def test_migration_failure_rolls_back(sophia_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = db.connect(sophia_home)

    def m999_broken(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    monkeypatch.setattr(db, "MIGRATIONS", [*db.MIGRATIONS, m999_broken])
    with pytest.raises(RuntimeError):
        db.migrate(conn)
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'half_done'").fetchone()
    assert not conn.execute("SELECT 1 FROM _migrations WHERE name = 'm999_broken'").fetchone()


def test_upsert_is_idempotent_and_tracks_content_hash(sophia_home: Path) -> None:
    conn = db.connect(sophia_home)
    assert store.upsert_items(conn, [_item("fact_1", "Alice likes hiking"), _item("fact_2", "Bob cooks")]) == 2
    assert store.upsert_items(conn, [_item("fact_1", "Alice likes hiking")]) == 0
    h1 = conn.execute("SELECT content_hash FROM items WHERE id = 'fact_1'").fetchone()[0]
    assert h1 == store.content_hash("Alice likes hiking")
    assert store.upsert_items(conn, [_item("fact_1", "Alice likes climbing")]) == 1
    h2 = conn.execute("SELECT content_hash FROM items WHERE id = 'fact_1'").fetchone()[0]
    assert h2 != h1
    # the FTS index follows the update: old words gone, new words found
    def match(term: str) -> int:
        return conn.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH ?", (term,)).fetchone()[0]
    assert match("hike") == 0 and match("climb") == 1
    n, total = conn.execute("SELECT n, total_dl FROM corpus_stats").fetchone()
    assert n == 2 and total == sum(r[0] for r in conn.execute("SELECT dl FROM items"))
    assert store.delete_items(conn, ["fact_1", "nope"]) == 1
    assert match("climb") == 0
    assert conn.execute("SELECT n FROM corpus_stats").fetchone()[0] == 1


def test_bad_items_write_nothing(sophia_home: Path) -> None:
    conn = db.connect(sophia_home)
    for bad in ({"type": "fact", "text": "x"}, {"id": "a", "type": "nonsense", "text": "x"},
                {"id": "a", "type": "fact", "text": 3}, {"id": "a", "type": "fact", "text": "x", "links": [{}]}):
        with pytest.raises(ValueError):
            store.upsert_items(conn, [_item("ok", "fine"), bad])
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 0


def test_links_are_stored_on_both_ends(sophia_home: Path) -> None:
    conn = db.connect(sophia_home)
    store.upsert_items(conn, [_item("fact_a", "works at Google", links=[{"id": "fact_b", "relation": "elaborates"}]),
                              _item("fact_b", "leads the Search team")])
    rows = set(conn.execute("SELECT src, dst, relation FROM links"))
    assert rows == {("fact_a", "fact_b", "elaborates"), ("fact_b", "fact_a", "elaborates")}
    store.upsert_items(conn, [_item("fact_a", "works at Google", links=[])])
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 0
    store.upsert_items(conn, [_item("fact_a", "works at Google", links=[{"id": "fact_b"}]),
                              _item("fact_b", "leads the Search team", links=[{"id": "fact_a"}])])
    store.upsert_items(conn, [_item("fact_a", "works at Google", links=[])])
    # b still declares the link, so both directions remain
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 2


def _populate_files(home: Path) -> list[dict]:  # type: ignore[type-arg]
    from sophia.ingest.core import ingest_file

    upsert_episode({"id": "ep_1", "session_id": "s1", "started_at": "2024-01-01T10:00:00Z",
                    "ended_at": "2024-01-01T11:00:00Z", "goal_summary": "Fix the flaky pytest fixture",
                    "outcome": "SUCCESS", "heuristics": ["pin the seed"], "keywords": ["pytest"]}, home)
    write_json_atomic(paths.rules_path(home), [{"id": "rule_1", "trigger_concept": "migrations",
                                                "rule_content": "run them in one transaction",
                                                "source_episodes": ["ep_1"]}])
    facts = [_item("fact_1", "The user prefers tabs", links=[{"id": "fact_2", "relation": "same topic"}]),
             _item("fact_2", "The user uses vim"),
             _item("fs_1", "Deliver the report", type="foresight", valid_from="2024-03-10",
                   valid_until="2024-03-17")]
    write_json_atomic(paths.memory_dir(home) / "fact.json", {"items": facts[:2]})
    write_json_atomic(paths.memory_dir(home) / "foresight.json", {"items": facts[2:]})
    conv = home.parent / "c.jsonl"
    conv.write_text("".join(json.dumps({"id": f"m{i}", "session": "1", "speaker": "U", "text": f"message {i} about tea",
                                        "timestamp": f"2024-01-01T10:{i:02d}:00Z"}) + "\n" for i in range(5)))
    ingest_file(conv, "jsonl", home=home, nudge=False)
    return facts


def _dump(conn: sqlite3.Connection) -> dict:  # type: ignore[type-arg]
    items = conn.execute("SELECT id, type, text, terms, dl, content_hash, project, timestamp, event_time, "
                         "source_ids, valid_from, valid_until, temporality, scene_id, memcell_id, links, meta, "
                         "source, seq, item_hash FROM items ORDER BY id").fetchall()
    return {"items": items, "links": sorted(conn.execute("SELECT * FROM links")),
            "stats": conn.execute("SELECT n, total_dl FROM corpus_stats").fetchall(),
            "vocab": sorted(conn.execute("SELECT term, doc, cnt FROM items_vocab")),
            "df": sorted(conn.execute("SELECT term, doc FROM items_df"))}


def test_rebuild_equals_incremental(sophia_home: Path) -> None:
    from sophia.kinds import episode_item, rule_item

    facts = _populate_files(sophia_home)
    conn = db.connect(sophia_home)
    # the incremental path: writers upsert what they wrote (the ingest already did for turns)
    from sophia.atomic import read_json
    store.upsert_items(conn, [episode_item(read_json(paths.episodes_dir(sophia_home) / "ep_1.json"))])
    store.upsert_items(conn, [rule_item(r) for r in read_json(paths.rules_path(sophia_home))])
    store.upsert_items(conn, facts)
    conn.execute("INSERT INTO vectors VALUES ('fact_2', ?, 'm', 2, ?)",
                 (store.content_hash("The user uses vim"), b"\0" * 8))
    conn.execute("INSERT INTO vectors VALUES ('fact_1', 'stale', 'm', 2, ?)", (b"\0" * 8,))
    incremental = _dump(conn)
    conn.close()
    seen: list[tuple[int, int, str]] = []
    res = rebuild.rebuild(sophia_home, progress=lambda d, t, label: seen.append((d, t, label)))
    assert res["vectors_kept"] == 1  # the stale vector is not carried over
    conn = db.connect(sophia_home)
    assert _dump(conn) == incremental
    assert res["by_type"] == {"episode": 1, "rule": 1, "fact": 2, "foresight": 1, "turn": 5}
    assert seen and seen[-1][0] == seen[-1][1]
    assert conn.execute("SELECT item_id FROM vectors").fetchall() == [("fact_2",)]


def test_rebuild_skips_bad_items_and_files(sophia_home: Path) -> None:
    paths.memory_dir(sophia_home).mkdir(parents=True)
    write_json_atomic(paths.memory_dir(sophia_home) / "fact.json",
                      {"items": [_item("fact_1", "ok"), {"id": "fact_2", "type": "fact"}]})
    (paths.memory_dir(sophia_home) / "profile.json").write_text("{not json")
    res = rebuild.rebuild(sophia_home)
    assert res["items"] == 1
    assert any("fact_2" in s for s in res["skipped"]) and any("profile.json" in s for s in res["skipped"])


def test_doctor_quarantines_and_rebuilds_a_corrupt_index(sophia_home: Path) -> None:
    from sophia.index.doctor import check_index
    from sophia.state import init_tree

    init_tree(sophia_home)
    _populate_files(sophia_home)
    assert check_index(sophia_home, False) == []
    p = paths.index_db_path(sophia_home)
    p.write_bytes(b"this is not a database" * 100)
    for side in (Path(f"{p}-wal"), Path(f"{p}-shm")):
        side.unlink(missing_ok=True)
    probs = check_index(sophia_home, False)
    assert len(probs) == 1 and probs[0].path == p
    fixed = check_index(sophia_home, True)
    assert "moved to" in fixed[0].action and "rebuilt" in fixed[0].action
    assert list(paths.quarantine_dir(sophia_home).glob("*index.db"))
    assert check_index(sophia_home, False) == []
    conn = db.connect(sophia_home)
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 10
    # a missing index with files to index is reported too
    conn.close()
    p.unlink()
    assert "missing" in check_index(sophia_home, False)[0].reason


def test_doctor_cli_reports_the_index(s3_env: dict[str, str], sophia_home: Path) -> None:
    from tests.conftest import run_s3

    assert run_s3(["init"], s3_env).returncode == 0
    _populate_files(sophia_home)
    paths.index_db_path(sophia_home).write_bytes(b"garbage" * 1000)
    r = run_s3(["doctor", "--json"], s3_env)
    assert r.returncode == 1 and "index.db" in r.stdout, r.stdout + r.stderr
    r = run_s3(["doctor", "--repair", "--json"], s3_env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_s3(["recall", "tea", "--json"], s3_env)
    assert len(json.loads(r.stdout)["results"]) == 5


def test_index_api_runs_without_site_packages(sophia_home: Path) -> None:
    """Hooks call the index with ``python -I -S``: standard library only."""
    import subprocess
    import sys

    lib = Path(__file__).resolve().parents[1] / "lib"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from pathlib import Path\n"
        "from sophia.index import db, store, search, rebuild\n"
        "from sophia.ingest import core\n"
        "h = Path(sys.argv[2])\n"
        "c = db.connect(h)\n"
        "store.upsert_items(c, [{'id': 'fact_1', 'type': 'fact', 'text': 'hooks use the standard library'}])\n"
        "print([r['id'] for r in search.recall('standard library', home=h)])\n"
        "print(sorted(m for m in ('typer', 'rich', 'pydantic', 'numpy', 'torch') if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(lib), str(sophia_home)],
                       capture_output=True, text=True, timeout=60, env={"SOPHIA_RECALL_SEMANTIC": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["['fact_1']", "[]"]


def _df_pairs(conn: sqlite3.Connection) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(items_df, FTS5's own count of every term in items_vocab)."""
    return (sorted(conn.execute("SELECT term, doc FROM items_df")),
            sorted(conn.execute("SELECT term, doc FROM items_vocab")))


def test_items_df_follows_every_write_as_fts5_counts(sophia_home: Path) -> None:
    conn = db.connect(sophia_home)
    store.upsert_items(conn, [_item("a", "tea tea and cake"), _item("b", "tea with 'quotes' \\ and \"marks\""),
                              _item("c", "Kaffee und Kuchen, café crème"), _item("d", "日本語のテキスト tea")])
    df, fts = _df_pairs(conn)
    assert df == fts and ("tea", 3) in df  # a term twice in one item counts once
    store.upsert_items(conn, [_item("a", "coffee and cake"), _item("e", "tea again")])  # a's text changed
    df, fts = _df_pairs(conn)
    assert df == fts and ("tea", 3) in df and ("coffe", 1) in df
    store.delete_items(conn, ["b", "d", "e"])
    df, fts = _df_pairs(conn)
    assert df == fts and not any(t == "tea" for t, _ in df)  # a term no item holds is gone
    conn.close()


def test_m006_fills_items_df_from_an_index_made_before_it(sophia_home: Path) -> None:
    c = db.open_db(sophia_home / "old.db")
    old = db.MIGRATIONS
    try:
        db.MIGRATIONS = old[:5]
        db.migrate(c)
        store.upsert_items(c, [_item(f"f{i}", f"fact {i} about tea and cake") for i in range(20)])
    finally:
        db.MIGRATIONS = old
    assert db.migrate(c) == ["m006_items_df"]
    df, fts = _df_pairs(c)
    assert df == fts and ("tea", 20) in df
    c.close()
