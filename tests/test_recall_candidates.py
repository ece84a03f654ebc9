"""Candidate generation under a postings budget (``sophia.index.candidates``): a small store is never
shaped, a big one (here: a budget made small) ranks the rarest terms, then every term together, then the
most recent, with the filters still applied before the limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sophia.index import candidates, db, store
from sophia.index.search import search, with_knobs


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


@pytest.fixture
def conn(sophia_home: Path):  # type: ignore[no-untyped-def]
    c = db.connect(sophia_home)
    # 200 notes: "common" in all, "usual" in the odd ones, "half" in the first 100, "rare" in 10, "lone" in 1
    items: list[dict[str, Any]] = []
    for i in range(200):
        words = ["common", f"w{i}"] + (["usual"] if i % 2 else []) + (["rare"] if i % 20 == 0 else [])
        words += ["half"] if i < 100 else []
        items.append({"id": f"fact_{i:03d}", "type": "fact", "text": " ".join(words)})
    items[40]["text"] += " lone"
    items.append({"id": "rule_1", "type": "rule", "text": "common usual rule"})
    store.upsert_items(c, items)
    yield c
    c.close()


def _plan(conn, terms: list[str]) -> list[tuple[str, bool]]:  # type: ignore[no-untyped-def]
    df = {t: conn.execute("SELECT doc FROM items_vocab WHERE term = ?", (t,)).fetchone()[0] for t in terms}
    return candidates.plan(conn, terms, df, 201, cap=1e9)


def test_a_store_within_the_budget_is_never_shaped(conn) -> None:  # type: ignore[no-untyped-def]
    assert candidates.BUDGET >= 10_000
    assert _plan(conn, ["common", "usual", "rare"]) == [('"common" OR "usual" OR "rare"', True)]


def test_the_rarest_terms_that_fit_generate(conn, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(candidates, "BUDGET", 120)
    assert _plan(conn, ["common", "usual", "rare"]) == [('"rare" OR "usual"', True)]
    # the dropped term still scores: a note with every term outranks one with only the rare ones
    hits = search(conn, "common usual rare", limit=3, knobs=with_knobs(neighbours=0, link_max=0))
    assert all("rare" in h["text"] for h in hits)


def test_over_budget_every_term_together_then_the_most_recent(conn, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(candidates, "BUDGET", 50)
    steps = _plan(conn, ["common", "usual"])
    assert steps == [('"usual" AND "common"', False), ('"usual"', False)]  # 101 hold both: over 50
    monkeypatch.setattr(candidates, "BUDGET", 60)
    assert _plan(conn, ["half", "usual"]) == [('"half" AND "usual"', True), ('"half"', False)]  # 50 hold both
    cols = "i.rowid, i.id"
    rows = candidates.fetch(conn, [('"common"', False)], cols, "1", [], 5)
    assert [r[1] for r in rows] == ["rule_1", "fact_199", "fact_198", "fact_197", "fact_196"]  # newest first
    rows = candidates.fetch(conn, [('"common" AND "lone"', True), ('"common"', False)], cols, "1", [], 3)
    assert [r[1] for r in rows] == ["fact_040", "rule_1", "fact_199"]  # topped up, each once


def test_filters_apply_before_the_limit_when_shaped(conn, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(candidates, "BUDGET", 50)
    hits = search(conn, "common usual", types=["rule"], knobs=with_knobs(candidates=5))
    assert [h["id"] for h in hits] == ["rule_1"]
    hits = search(conn, "common lone", knobs=with_knobs(candidates=5, neighbours=0, link_max=0))
    assert hits[0]["id"] == "fact_040"


# -- a recall limited to kinds that never come in bulk plans over notes_fts ------------------------------

def _notes(conn) -> set[str]:  # type: ignore[no-untyped-def]
    """The ids notes_fts finds for "common" (every item holds it)."""
    return {r[0] for r in conn.execute("SELECT i.id FROM notes_fts JOIN items i ON i.rowid = notes_fts.rowid "
                                       "WHERE notes_fts MATCH 'common'")}


def _turns(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"id": f"turn:chat:{i}", "type": "turn", "text": f"common usual chatter t{i}"}
            for i in range(start, start + n)]


def test_notes_fts_holds_every_item_but_the_turns_and_follows_writes(conn) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, _turns(30))
    assert _notes(conn) == {f"fact_{i:03d}" for i in range(200)} | {"rule_1"}
    store.upsert_items(conn, [{"id": "fact_000", "type": "fact", "text": "zebra words only"},
                              {"id": "turn:chat:1", "type": "turn", "text": "common again"}])
    store.delete_items(conn, ["fact_001", "turn:chat:2"])
    assert _notes(conn) == {f"fact_{i:03d}" for i in range(2, 200)} | {"rule_1"}
    assert conn.execute("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH 'zebra'").fetchone()[0] == 1
    # the external-content index agrees with what it was fed (FTS5's own check)
    conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('integrity-check', 0)")
    conn.execute("INSERT INTO items_fts(items_fts, rank) VALUES ('integrity-check', 0)")


def test_m005_backfills_an_index_made_before_it(sophia_home: Path) -> None:
    path = sophia_home / "old.db"
    c = db.open_db(path)
    old = db.MIGRATIONS
    try:
        db.MIGRATIONS = old[:4]
        db.migrate(c)
        store.upsert_items(c, [{"id": "fact_a", "type": "fact", "text": "common fact"}, *_turns(3)])
    finally:
        db.MIGRATIONS = old
    assert db.migrate(c) == ["m005_notes_fts", "m006_items_df"]
    assert _notes(c) == {"fact_a"}
    c.close()


def test_a_type_filtered_recall_past_the_budget_plans_over_the_notes(conn, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, _turns(400))
    knobs = with_knobs(neighbours=0, link_max=0, candidates=50)
    before = search(conn, "common usual rare", types=["fact", "rule"], limit=10, knobs=knobs)
    monkeypatch.setattr(candidates, "BUDGET", 150)  # 601 items: past it; "common" alone matches all
    seen: list[str] = []
    real = candidates.fetch
    monkeypatch.setattr(candidates, "fetch", lambda *a, **k: seen.append(a[-1] if len(a) > 6 else k.get("fts", ""))
                        or real(*a, **k))
    after = search(conn, "common usual rare", types=["fact", "rule"], limit=10, knobs=knobs)
    assert seen == ["notes_fts"]
    # the 10 notes with every term rank first either way: the turns never crowded them out
    assert [h["id"] for h in after] == [h["id"] for h in before]
    assert all(h["type"] in ("fact", "rule") for h in after)
    # with the turns asked for, the whole index is planned over, and turns come back
    seen.clear()
    hits = search(conn, "chatter", types=["turn"], limit=3, knobs=knobs)
    assert seen == ["items_fts"] and hits and hits[0]["type"] == "turn"
