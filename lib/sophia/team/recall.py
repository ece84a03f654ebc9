"""Team recall: keyword hits through Postgres full-text search (GIN over a tsvector, keyword.py), semantic hits
through pgvector (HNSW, cosine), fused with :func:`sophia.index.search.fuse` and adjusted with
:func:`sophia.index.search.adjust` exactly as local recall fuses its own tiers; then merged with the
local results (a local item wins over the team's copy of the same id)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

K = 100
# semantic hits asked for when the caller wants at most this many: pgvector's HNSW search yields hnsw.ef_search
# (40 by default) nearest at once; asking for 100 makes its iterative scan walk on (2.5x the index pages,
# 32 ms against 13 median at 1M vectors). A row past the 40th nearest can reach a top 40 only through a
# keyword hit, which still counts: it only loses the semantic share of its score.
SEM_K = 40
_TYPES = {"rule": "rule", "fact": "fact", "procedure": "procedure", "episode": "episode", "guardian": "guardian"}


def keyword_hits(conn: Any, team: str, query: str, k: int = K) -> dict[str, tuple[float, dict[str, Any]]]:
    """The best k rows by Postgres full-text rank (``ts_rank_cd`` of the OR of the query's words: local
    recall is a disjunction scored by BM25, not a conjunction), over bounded candidates (keyword.py)."""
    from . import keyword

    lex = keyword.lexemes(conn, query)
    return {r[0]: (float(r[7]), _row(r)) for r in keyword.ranked(conn, team, lex, k)} if lex else {}


def semantic_hits(conn: Any, team: str, vector: list[float] | None, k: int = K) -> dict[str, tuple[float, dict[str, Any]]]:
    if not vector:
        return {}
    import numpy as np

    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    sql = ("SELECT id, kind, text, project, event_time, edited_at, origin_machine, embedding <=> %s AS d "
           "FROM sophia.memories WHERE team_id = %s AND active AND NOT deleted AND embedding IS NOT NULL "
           "ORDER BY embedding <=> %s LIMIT %s")
    v = np.array(vector, dtype=np.float32)
    return {r[0]: (1.0 - float(r[7]), _row(r)) for r in conn.execute(sql, (v, team, v, k))}


def _row(r: tuple[Any, ...]) -> dict[str, Any]:
    return {"id": r[0], "type": _TYPES.get(r[1], r[1]), "text": r[2], "project": r[3],
            "event_time": r[4].isoformat() if r[4] else None, "timestamp": r[5].isoformat() if r[5] else None,
            "temporality": None, "meta": "{}", "origin_machine": r[6]}


def query_vector(query: str, home: Path | None) -> list[float] | None:
    """The query's embedding from the local service when it is warm (None: keyword only)."""
    try:
        from ..embed_client import client

        vecs = client.embed([query], home=home, timeout=2.0, start=False)
    except Exception:  # noqa: BLE001 - the semantic tier is optional
        return None
    return vecs[0] if vecs else None


def team_results(conn: Any, team: str, query: str, *, limit: int, vector: list[float] | None) -> list[dict[str, Any]]:
    from ..index.search import DEFAULT_KNOBS, adjust, fuse, parse_as_of, semantic_relevance

    kw = keyword_hits(conn, team, query)
    sem = semantic_hits(conn, team, vector, max(SEM_K, limit))
    rows = {iid: row for iid, (_, row) in {**sem, **kw}.items()}
    fused = fuse({i: s for i, (s, _) in kw.items()}, {i: c for i, (c, _) in sem.items()}, DEFAULT_KNOBS)
    at, _ = parse_as_of(None)
    out = []
    for iid, s in fused.items():
        row = rows[iid]
        score = adjust(s, row, at, DEFAULT_KNOBS)
        rel = max(1.0 if iid in kw else 0.0, semantic_relevance(sem[iid][0], DEFAULT_KNOBS) if iid in sem else 0.0)
        out.append({"id": iid, "type": row["type"], "text": row["text"], "score": round(score, 6),
                    "relevance": round(min(rel, 1.0), 4), "source_ids": [], "timestamp": row["timestamp"],
                    "event_time": row["event_time"], "project": row["project"], "team": team,
                    "origin_machine": row["origin_machine"]})
    out.sort(key=lambda r: (-r["score"], r["id"]))
    return out[:limit]


def merge(local: list[dict[str, Any]], team: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    seen = {r["id"] for r in local}
    both = local + [r for r in team if r["id"] not in seen]
    both.sort(key=lambda r: (-r["score"], r["id"]))
    return both[:limit]
