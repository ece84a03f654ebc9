"""Pseudo-relevance feedback (index/feedback.py): a second keyword round on the best hits' rare terms,
in ``s3 recall`` (CLI_KNOBS) and not in the prompt hook's ``recall()`` (DEFAULT_KNOBS)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import run_s3

from sophia.index import db, feedback, store
from sophia.index.search import CLI_KNOBS, DEFAULT_KNOBS, keyword_scores, recall, search, with_knobs


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


def _it(i: str, text: str) -> dict[str, Any]:
    return {"id": i, "type": "fact", "text": text}


@pytest.fixture
def camping(sophia_home: Path):  # type: ignore[no-untyped-def]
    """'camped' finds one item; the item about the tent in the mountains shares none of the query's words,
    only the best hit's rare words ('tent', 'sleeping'). 60 filler items make those rare."""
    c = db.connect(sophia_home)
    store.upsert_items(c, [
        _it("fact_beach", "Melanie camped at the beach, the tent and sleeping bags got sandy, 2022"),
        _it("fact_mountain", "in the mountains our tent leaked and the sleeping bags stayed wet"),
        _it("fact_bags", "she bought new sleeping bags"),
        *[_it(f"fact_f{i}", f"Melanie talked about work and weather on day {i} with a sandy dog {i % 2}")
          for i in range(60)],
    ])
    yield c
    c.close()


def test_expansion_terms_are_rare_shared_and_not_in_the_query(camping) -> None:  # type: ignore[no-untyped-def]
    from sophia.index.search import _Filters, check_query, parse_as_of

    terms = check_query("Where has Melanie camped?")
    flt = _Filters(None, None, parse_as_of(None)[0], False)
    knobs = with_knobs(feedback_docs=3, feedback_max_df=0.05)
    kw = keyword_scores(camping, terms, flt, knobs)
    got = feedback.expansion_terms(camping, kw, terms, knobs)
    assert "tent" in got and "sleep" in got
    assert "camp" not in got and "melani" not in got  # the query's own terms
    assert "2022" not in got  # numbers say when, not what about
    assert "sandi" not in got  # in every filler item: not rare
    assert "beach" not in got  # only the hit itself has it: finds nothing new
    from sophia.index.search import _df

    some = ["tent", "sleep", "sandi", "melani", "nowher", "tent"]
    assert feedback.doc_freqs(camping, some) == _df(camping, some)  # one IN query = a lookup each


def test_feedback_finds_the_item_sharing_the_best_hits_words(camping) -> None:  # type: ignore[no-untyped-def]
    q = "Where has Melanie camped?"
    plain = [r["id"] for r in search(camping, q, knobs=with_knobs(feedback_docs=0), use_semantic=False)]
    assert "fact_mountain" not in plain
    res = search(camping, q, knobs=with_knobs(feedback_docs=3), use_semantic=False)
    got = [r["id"] for r in res]
    assert got[0] == "fact_beach" and "fact_mountain" in got
    rel = {r["id"]: r["relevance"] for r in res}
    assert rel["fact_mountain"] == 0.0  # found by the second round only: the prompt gate never injects it
    assert res[0]["score"] > res[got.index("fact_mountain")]["score"]


def test_feedback_is_off_in_the_hook_api_and_on_in_the_cli(camping, sophia_home: Path,  # type: ignore[no-untyped-def]
                                                         s3_env: dict[str, str]) -> None:
    assert DEFAULT_KNOBS.feedback_docs == 0 and CLI_KNOBS.feedback_docs > 0
    assert "fact_mountain" not in [r["id"] for r in recall("Where has Melanie camped?", home=sophia_home)]
    r = run_s3(["recall", "Where has Melanie camped?", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    assert "fact_mountain" in [x["id"] for x in json.loads(r.stdout)["results"]]


def test_no_feedback_without_hits_or_rare_terms(sophia_home: Path) -> None:
    c = db.connect(sophia_home)
    store.upsert_items(c, [_it("fact_1", "alpha beta"), _it("fact_2", "gamma delta")])
    res = search(c, "alpha", knobs=with_knobs(feedback_docs=3), use_semantic=False)
    assert [r["id"] for r in res] == ["fact_1"]
    assert search(c, "omega", knobs=with_knobs(feedback_docs=3), use_semantic=False) == []
    c.close()
