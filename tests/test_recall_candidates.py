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
