"""Team recall's keyword tier (sophia/team/keyword.py) on the real PostgreSQL: candidates from the
strictest combination of terms first, each level bounded, ranked as every match used to be."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from sophia.team import keyword, recall, schema

# the keyword tier before issue 30: ts_rank_cd over every row any term matches
EVERY_MATCH = ("SELECT id, ts_rank_cd(tsv, q) AS r FROM sophia.memories, to_tsquery('english', %s) q "
               "WHERE team_id = %s AND active AND NOT deleted AND tsv @@ q ORDER BY r DESC, id LIMIT %s")


@pytest.fixture
def pg(team_db: str) -> Iterator[Any]:
    import psycopg
    from pgvector.psycopg import register_vector

    from .pg import ADMIN_PASSWORD

    with psycopg.connect(team_db, password=ADMIN_PASSWORD, autocommit=True) as conn:
        schema.migrate(conn)
        schema.add_member(conn, "alpha", "postgres")
        register_vector(conn)
        yield conn


def _add(conn: Any, texts: list[str], prefix: str = "m", team: str = "alpha") -> None:
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO sophia.memories (team_id, id, version, kind, text, body, origin_machine, "
                        "origin_user, edited_at, active) VALUES (%s, %s, 'v1', 'fact', %s, '{}', 'a', 'a', now(), true)",
                        [(team, f"{prefix}{i:04d}", t) for i, t in enumerate(texts)])


def _operands(tsquery: str) -> int:
    return len(re.findall(r"'(?:[^']|'')*'", tsquery))


def test_levels_go_from_every_term_to_any_term_and_stay_small() -> None:
    assert keyword.levels(["a", "b", "c"]) == ["('a' & 'b' & 'c')", "('a' & 'b') | ('a' & 'c') | ('b' & 'c')",
                                               "'a' | 'b' | 'c'"]
    assert keyword.levels(["a"]) == ["'a'"] and keyword.levels([]) == []
    many = keyword.levels([f"t{i}" for i in range(12)])
    assert many[0].count("&") == 11 and many[-1].count("|") == 11
    assert all(_operands(q) <= keyword.MAX_OPERANDS for q in many) and len(many) < 12


def test_a_lexeme_with_a_quote_or_a_backslash_stays_one_term(pg: Any) -> None:
    q = keyword.levels(["o'k", "a\\b"])[-1]
    assert pg.execute("SELECT %s::tsquery = tsquery('o''k') || tsquery('a\\\\b')", (q,)).fetchone()[0]


def test_when_k_and_the_budget_hold_every_match_the_ranking_is_every_matchs(pg: Any) -> None:
    """(with fewer matches than k every level runs, the last one ranks them all: 200 rows, within either budget)"""
    import random

    rng = random.Random(5)
    vocab = ["deploy", "cache", "config", "error", "build", "server", "schema", "token", "queue", "retry"]
    _add(pg, [" ".join(rng.choice(vocab) for _ in range(6)) for _ in range(200)])
    for query in ("deploy cache", "config error build", "server schema token queue retry", "cache"):
        words = " | ".join(sorted(set(query.split())))
        want = [(i, round(r, 6)) for i, r in pg.execute(EVERY_MATCH, (words, "alpha", 400))]
        got = sorted(recall.keyword_hits(pg, "alpha", query, k=400).items(), key=lambda kv: (-kv[1][0], kv[0]))
        assert [(i, round(s, 6)) for i, (s, _) in got] == want and len(want) > 40, query


def test_rows_holding_more_of_the_terms_are_candidates_before_a_term_repeated(pg: Any) -> None:
    """ts_rank_cd counts occurrences: 'deploy deploy deploy' outscores 'deploy cache'; the levels gather the
    rows holding both words first (as BM25 would rank them: a repeated term saturates), and stop at k."""
    _add(pg, ["deploy deploy deploy now", "deploy the cache", "cache and deploy", "nothing here"])
    assert set(recall.keyword_hits(pg, "alpha", "deploy cache", k=2)) == {"m0001", "m0002"}
    assert list(recall.keyword_hits(pg, "alpha", "deploy cache", k=3))[:1] == ["m0000"]


def test_rows_holding_every_term_come_first_and_a_level_ranks_at_most_its_budget(
        pg: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword, "BUDGET", 5)
    monkeypatch.setattr(keyword, "ONE_TERM_BUDGET", 3)
    _add(pg, [f"alpha filler number {i}" for i in range(40)], prefix="a")
    _add(pg, ["alpha beta gamma migration", "gamma beta alpha rollback", "beta alpha gamma lock"], prefix="z")
    hits = recall.keyword_hits(pg, "alpha", "alpha beta gamma", k=10)
    best = sorted(hits, key=lambda i: -hits[i][0])
    assert set(best[:3]) == {"z0000", "z0001", "z0002"}  # written last: a plain LIMIT would not reach them
    # every row holding two terms is in: the any-term level ranks three of the 40 holding one
    assert len(hits) == 3 + 3
    assert len(recall.keyword_hits(pg, "alpha", "alpha", k=10)) == 3
    # nine terms: no "at least 2" level (72 operands), so the any-term level ranks the full budget
    nine = "alpha beta gamma delta epsilon zeta theta kappa lambda"
    assert len(keyword.levels(keyword.lexemes(pg, nine))) == 2
    assert len(recall.keyword_hits(pg, "alpha", nine, k=10)) == 5


def test_stop_words_only_or_no_word_finds_nothing_without_an_error(pg: Any) -> None:
    _add(pg, ["the and of a deploy"])
    assert recall.keyword_hits(pg, "alpha", "the and of") == {}
    assert recall.keyword_hits(pg, "alpha", "?! -") == {}


def test_another_teams_rows_are_not_candidates(pg: Any) -> None:
    schema.add_member(pg, "beta", "postgres")
    _add(pg, ["deploy cache"], prefix="b", team="beta")
    _add(pg, ["deploy"], prefix="a")
    assert set(recall.keyword_hits(pg, "alpha", "deploy cache")) == {"a0000"}


def test_team_recall_asks_for_as_many_nearest_as_the_limit_beyond_forty(pg: Any) -> None:
    """Fewer semantic hits are asked for a short list (recall.SEM_K), never fewer than the limit."""
    dim = schema.EMBED_DIM
    rows = []
    for i in range(60):
        v = [0.0] * dim
        v[0], v[1 + i] = 1.0, 0.01 * (i + 1)  # the i-th nearest to e0 is row i
        rows.append(("alpha", f"v{i:04d}", f"unrelated text {i}", "[" + ",".join(map(str, v)) + "]"))
    with pg.cursor() as cur:
        cur.executemany("INSERT INTO sophia.memories (team_id, id, version, kind, text, body, origin_machine, "
                        "origin_user, edited_at, active, embedding) VALUES (%s, %s, 'v1', 'fact', %s, '{}', 'a', "
                        "'a', now(), true, %s::vector)", rows)
    e0 = [1.0] + [0.0] * (dim - 1)
    assert [h["id"] for h in recall.team_results(pg, "alpha", "nothing", limit=5, vector=e0)] == [
        f"v{i:04d}" for i in range(5)]
    assert len(recall.team_results(pg, "alpha", "nothing", limit=55, vector=e0)) == 55


def test_the_level_queries_are_never_prepared(pg: Any) -> None:
    """A prepared statement's generic plan (psycopg prepares after five runs) would not know whether a level's
    terms are common (a scan stopping at the budget) or rare (the GIN bitmap): every run plans its own."""
    _add(pg, ["deploy cache config", "deploy error"])
    for _ in range(8):
        recall.keyword_hits(pg, "alpha", "deploy cache")
    assert pg.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%ts_rank_cd%'").fetchone()[0] == 0
