"""Recall on a real SQLite index: ranking, filters, time awareness, expansion, bad queries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sophia.index import db, store
from sophia.index.search import QueryError, recall, search, with_knobs


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword tier only: no test here starts an embedding service (fusion is tested with given hits)."""
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


def _it(i: str, text: str, **kw: Any) -> dict[str, Any]:
    return {"id": i, "type": kw.pop("type", "fact"), "text": text, **kw}


@pytest.fixture
def conn(sophia_home: Path):  # type: ignore[no-untyped-def]
    c = db.connect(sophia_home)
    yield c
    c.close()


def ids(results: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in results]


def test_bm25_ranks_the_specific_match_first(conn, sophia_home: Path) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [
        _it("fact_1", "Melanie paints sunsets by the lake with watercolors"),
        _it("fact_2", "Melanie went to the lake"),
        _it("fact_3", "Caroline joined a support group for transgender people"),
        *[_it(f"fact_f{i}", f"filler sentence number {i} about the lake") for i in range(20)],
    ])
    res = recall("Which watercolors did Melanie paint?", home=sophia_home)
    assert ids(res)[0] == "fact_1"
    assert "fact_3" not in ids(res)
    assert res[0]["score"] >= res[-1]["score"]
    # stemming: 'painted' finds 'paints'; stopwords only -> nothing
    assert ids(recall("painted", home=sophia_home)) == ["fact_1"]
    assert recall("what did they", home=sophia_home) == []


def test_bad_queries_never_raise_from_the_api(conn, sophia_home: Path) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [_it("fact_1", "AND OR NOT near quotes")])
    for q in ['"', "*", "AND(", 'NEAR("a" "b")', "", "   ", "a" * 10_000, "x" * 100 + ":" + "^*", None, 3]:
        assert isinstance(recall(q, home=sophia_home), list)  # type: ignore[arg-type]
    assert ids(recall('near" *quotes*', home=sophia_home)) == ["fact_1"]
    with pytest.raises(QueryError):
        search(conn, "a" * 10_000)
    with pytest.raises(QueryError):
        search(conn, "fine", as_of="not a date")
    assert recall("fine", as_of="not a date", home=sophia_home) == []


def test_no_index_yet_returns_nothing(sophia_home: Path) -> None:
    assert recall("anything", home=sophia_home) == []


def test_type_and_project_filters(conn, sophia_home: Path) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [
        _it("fact_g", "deploy with docker compose"),
        _it("fact_a", "deploy with docker swarm", project="alpha"),
        _it("fact_b", "deploy with docker kubernetes", project="beta"),
        _it("rule_1", "deploy docker images only after tests pass", type="rule"),
    ])
    assert set(ids(recall("docker deploy", home=sophia_home))) == {"fact_g", "fact_a", "fact_b", "rule_1"}
    assert set(ids(recall("docker deploy", project="alpha", home=sophia_home))) == {"fact_g", "fact_a", "rule_1"}
    assert ids(recall("docker deploy", types=["rule"], home=sophia_home)) == ["rule_1"]
    assert set(ids(recall("docker", types=["fact"], project="beta", home=sophia_home))) == {"fact_g", "fact_b"}


def test_foresight_only_inside_its_validity_window(conn, sophia_home: Path) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [
        _it("fs_1", "deliver the project report", type="foresight", valid_from="2024-03-10",
            valid_until="2024-03-17", timestamp="2024-03-09T00:00:00Z"),
        _it("prof_1", "currently travelling in Japan for the report", type="profile",
            valid_until="2024-03-12T00:00:00Z", timestamp="2024-03-01T00:00:00Z"),
    ])
    assert ids(recall("project report", as_of="2024-03-09", home=sophia_home)) == ["prof_1"]
    assert set(ids(recall("project report", as_of="2024-03-11", home=sophia_home))) == {"fs_1", "prof_1"}
    assert ids(recall("project report", as_of="2024-03-17", home=sophia_home)) == ["fs_1"]  # whole last day
    assert recall("project report", as_of="2024-03-18", home=sophia_home) == []
    assert recall("project report", home=sophia_home) == []  # default: now


def test_known_at_leaves_out_later_recorded_items(conn, sophia_home: Path) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [_it("fact_old", "the build uses make", timestamp="2023-01-01T00:00:00Z"),
                              _it("fact_new", "the build uses bazel now", timestamp="2024-06-01T00:00:00Z")])
    assert ids(recall("build", known_at="2023-12-31", home=sophia_home)) == ["fact_old"]
    assert set(ids(recall("build", known_at="2024-06-01T00:00:00Z", home=sophia_home))) == {"fact_old", "fact_new"}
    # --as-of is the event timeline: record time alone does not hide an item (issue 12)
    assert set(ids(recall("build", as_of="2023-12-31", home=sophia_home))) == {"fact_old", "fact_new"}


def test_prospective_items_whose_time_passed_get_half(conn, sophia_home: Path) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [
        _it("fact_p", "take the AWS certification exam", temporality="prospective", event_time="2025-01-01"),
        _it("fact_h", "take the AWS certification exam", temporality="historical", event_time="2020-01-01"),
    ])
    before = {r["id"]: r["score"] for r in recall("AWS certification", as_of="2024-06-01", home=sophia_home)}
    after = {r["id"]: r["score"] for r in recall("AWS certification", as_of="2025-06-01", home=sophia_home)}
    assert before["fact_p"] == pytest.approx(before["fact_h"])
    assert after["fact_p"] == pytest.approx(0.5 * after["fact_h"])


def _episode(i: str, **meta: Any) -> dict[str, Any]:
    return _it(i, "fix the flaky database migration test", type="episode",
               timestamp=meta.pop("timestamp", "2020-01-01T00:00:00Z"), event_time=meta.pop("event_time", None),
               meta=meta)


def test_seed_retrieval_score_for_episodes(conn, sophia_home: Path) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [
        _episode("ep_fail", outcome="FAILURE"),
        _episode("ep_ok", outcome="SUCCESS"),
        _episode("ep_heur", outcome="FAILURE", heuristics=["a", "b"]),
        _episode("ep_cons", outcome="SUCCESS", consolidated=True),
        _episode("ep_triv", outcome="SUCCESS", trivial=True),
    ])
    s = {r["id"]: r["score"] for r in recall("database migration", as_of="2024-01-01", home=sophia_home)}
    assert s["ep_ok"] == pytest.approx(1.2 * s["ep_fail"])
    assert s["ep_heur"] == pytest.approx(s["ep_fail"] + 0.2)
    assert s["ep_cons"] == pytest.approx(0.8 * s["ep_ok"])
    assert s["ep_triv"] < s["ep_ok"]
    assert ids(recall("database migration", as_of="2024-01-01", home=sophia_home))[0] == "ep_heur"


def test_recency_uses_event_time_before_record_time(conn, sophia_home: Path) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [
        _episode("ep_a", outcome="SUCCESS", timestamp="2024-05-30T00:00:00Z", event_time="2023-01-01T00:00:00Z"),
        _episode("ep_b", outcome="SUCCESS", timestamp="2023-01-01T00:00:00Z", event_time="2024-05-29T00:00:00Z"),
        _episode("ep_c", outcome="SUCCESS", timestamp="2023-01-01T00:00:00Z", event_time="2024-05-10T00:00:00Z"),
    ])
    s = {r["id"]: r["score"] for r in recall("database migration", as_of="2024-06-01", home=sophia_home)}
    assert s["ep_b"] == pytest.approx(s["ep_a"] + 0.1)
    assert s["ep_c"] == pytest.approx(s["ep_a"] + 0.05)


def _conversation(conn) -> None:  # type: ignore[no-untyped-def]
    turns = ["we should plan the trip", "where to go though", "Lisbon has great food and pastel de nata",
             "then book flights to Portugal", "ok I will", "unrelated: the cat is sick", "poor cat"]
    store.upsert_items(conn, [
        _it(f"turn:c:{n}", t, type="turn", source_ids=[f"D1:{n}"], memcell_id="mc:c:0" if n < 5 else "mc:c:1",
            seq=n, meta={"source": "c"}) for n, t in enumerate(turns)])


def test_neighbour_expansion_stays_in_the_memcell(conn) -> None:  # type: ignore[no-untyped-def]
    _conversation(conn)
    plain = search(conn, "Lisbon pastel", knobs=with_knobs(neighbours=0))
    assert ids(plain) == ["turn:c:2"]
    wide = search(conn, "Lisbon pastel", knobs=with_knobs(neighbours=2, neighbour_hits=1))
    assert ids(wide)[0] == "turn:c:2"
    assert set(ids(wide)) == {"turn:c:0", "turn:c:1", "turn:c:2", "turn:c:3", "turn:c:4"}
    assert all(r["score"] < wide[0]["score"] for r in wide[1:])
    edge = search(conn, "book flights Portugal", knobs=with_knobs(neighbours=2, neighbour_hits=1))
    assert "turn:c:5" not in ids(edge)  # next MemCell


def test_link_and_scene_expansion(conn) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [
        _it("fact_1", "works at Google", links=[{"id": "fact_2", "relation": "elaborates"}]),
        _it("fact_2", "leads the Search team"),
        *[_it(f"fact_x{i}", f"unrelated {i}", links=[{"id": "fact_1"}]) for i in range(5)],
        _it("scene_1", "a scene about moving to Berlin", type="scene", scene_id="sc1"),
        _it("fact_b1", "apartment hunting in Kreuzberg", scene_id="sc1"),
    ])
    res = search(conn, "Google", knobs=with_knobs(link_max=3))
    assert ids(res)[0] == "fact_1"
    assert "fact_2" in ids(res) and len(res) == 4  # 1 hit + at most 3 linked
    assert search(conn, "Google", knobs=with_knobs(link_max=0)) == res[:1]
    linked = {r["id"]: r["score"] for r in res}
    assert linked["fact_2"] == pytest.approx(0.5 * linked["fact_1"] + 0.03)
    assert set(ids(search(conn, "Berlin", knobs=with_knobs(scene_hits=3)))) == {"scene_1", "fact_b1"}
    assert ids(search(conn, "Berlin", knobs=with_knobs(scene_hits=0))) == ["scene_1"]


def test_semantic_hits_are_fused(conn) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [_it("fact_1", "the sofa is blue"), _it("fact_2", "a couch in azure colour"),
                              _it("fact_3", "the sofa was cheap")])
    kw_only = search(conn, "blue sofa", use_semantic=False)
    assert ids(kw_only)[0] == "fact_1" and "fact_2" not in ids(kw_only)
    fused = search(conn, "blue sofa", semantic_hits=[("fact_2", 0.9), ("fact_1", 0.8), ("nope", 0.7)],
                   knobs=with_knobs(semantic_weight=0.5))
    assert "fact_2" in ids(fused) and "nope" not in ids(fused)
    assert ids(fused)[0] == "fact_1"


def test_cosines_all_below_the_floor_add_nothing(conn) -> None:  # type: ignore[no-untyped-def]
    """`s3 recall zebra` on a store with nothing about zebras: every cosine below the floor. The span
    max - floor went negative and ranked the least similar item first; nothing may be listed."""
    store.upsert_items(conn, [_it("fact_1", "the sofa is blue"), _it("fact_2", "we moved to Lisbon in May"),
                              _it("fact_3", "the cat sleeps on the sofa", source="chat", seq=1, memcell_id="m1"),
                              _it("fact_4", "a cushion for the cat", source="chat", seq=2, memcell_id="m1")])
    below = [("fact_1", 0.15), ("fact_3", 0.02), ("fact_2", -0.048)]
    assert search(conn, "zebra", semantic_hits=below) == []  # not by recency (all are new), not by expansion
    kw_only = search(conn, "sofa", use_semantic=False)
    with_sem = search(conn, "sofa", semantic_hits=below)
    assert [(r["id"], r["score"]) for r in with_sem] == [(r["id"], r["score"]) for r in kw_only]
    assert "fact_2" not in ids(with_sem)


def test_more_similar_never_ranks_lower() -> None:
    """fuse(): for the same keyword score, a higher cosine never gets a lower fused score; at or below the
    floor it adds nothing (random cosines, some sets wholly below the floor)."""
    import random

    from sophia.index.search import DEFAULT_KNOBS, fuse

    rnd = random.Random(7)
    floor = DEFAULT_KNOBS.semantic_floor
    for _ in range(300):
        n = rnd.randint(1, 12)
        sem = {f"i{k}": rnd.uniform(-0.3, 0.9 if rnd.random() < 0.7 else floor) for k in range(n)}
        kw = {f"i{k}": 1.0 for k in range(n) if rnd.random() < 0.3}
        out = fuse(kw, sem, DEFAULT_KNOBS)
        for a in sem:
            assert (a in out) == (a in kw or sem[a] > floor)
            if sem[a] <= floor:
                assert out.get(a, 0.0) == kw.get(a, 0.0)
            for b in sem:
                if kw.get(a) == kw.get(b) and sem[a] > sem[b]:
                    assert out.get(a, 0.0) >= out.get(b, 0.0)


def test_semantic_only_hits_rank_by_similarity(conn) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [_it(f"fact_{k}", f"note number {k} about nothing") for k in range(6)])
    hits = [("fact_3", 0.31), ("fact_0", 0.62), ("fact_5", 0.05), ("fact_1", 0.44), ("fact_4", -0.2)]
    assert ids(search(conn, "zebra crossing", semantic_hits=hits)) == ["fact_0", "fact_1", "fact_3"]


def test_limit_and_bounded_candidates(conn) -> None:  # type: ignore[no-untyped-def]
    store.upsert_items(conn, [_it(f"fact_{i}", f"common word here {i} rare{i % 7}") for i in range(300)])
    knobs = with_knobs(max_df_floor=0)
    assert len(search(conn, "common word", limit=5)) == 5
    res = search(conn, "common rare3", limit=50, knobs=knobs)
    # 'common' is in every item: candidates come from 'rare3' only
    assert {r["id"] for r in res} == {f"fact_{i}" for i in range(300) if i % 7 == 3}


def test_neighbours_that_matched_weakly_are_raised(conn) -> None:  # type: ignore[no-untyped-def]
    _conversation(conn)
    hit, weak = "turn:c:2", "turn:c:4"  # 'ok I will' ... make 4 match weakly
    store.upsert_items(conn, [_it(weak, "ok I will eat food later", type="turn", source_ids=["D1:4"],
                                  memcell_id="mc:c:0", seq=4, meta={"source": "c"})])
    res = {r["id"]: r["score"] for r in search(conn, "Lisbon food pastel", knobs=with_knobs(neighbours=2))}
    assert max(res, key=lambda k: res[k]) == hit
    assert res[weak] == pytest.approx(0.6 * res[hit])  # raised from its own (lower) score
    low = {r["id"]: r["score"] for r in search(conn, "Lisbon food pastel",
                                               knobs=with_knobs(neighbours=2, neighbour_raise=0))}
    assert low[weak] < 0.6 * low[hit]


def test_semantic_tier_can_be_switched_off(conn, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]

    from sophia.embed_client import client

    calls: list[str] = []
    monkeypatch.setattr(client, "search", lambda q, k, **kw: calls.append(q) or [("fact_2", 0.9)])
    store.upsert_items(conn, [_it("fact_1", "the sofa is blue"), _it("fact_2", "a couch in azure")])
    assert ids(search(conn, "blue sofa")) == ["fact_1"] and calls == []  # SOPHIA_RECALL_SEMANTIC=0
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "1")
    assert set(ids(search(conn, "blue sofa"))) == {"fact_1", "fact_2"} and calls == ["blue sofa"]
    monkeypatch.setattr(client, "search", lambda q, k, **kw: None)  # not warm: keyword tier at once
    assert ids(search(conn, "blue sofa")) == ["fact_1"]


def test_a_slow_semantic_tier_is_not_waited_for(conn, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import time

    def slow(q: str, k: int, **kw: Any) -> list[tuple[str, float]] | None:
        time.sleep(kw.get("timeout", 0.2) + 2)  # a client that ignores its own deadline
        return [("fact_2", 0.9)]

    from sophia.embed_client import client

    monkeypatch.setattr(client, "search", slow)
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "1")
    store.upsert_items(conn, [_it("fact_1", "the sofa is blue"), _it("fact_2", "a couch in azure")])
    t0 = time.monotonic()
    assert ids(search(conn, "blue sofa")) == ["fact_1"]
    assert time.monotonic() - t0 < 1.5
