"""Pseudo-relevance feedback: a second keyword round on the rare terms of the first pass's best hits.

A question that needs two turns often shares its words with only one of them ("Where has Melanie
camped?" finds "we camped at the beach"; the turn about the mountains says "hike" and "tent"). The best
first-pass hits are probably relevant, so the words they share, and the query lacks, say more about
the topic than the query did. Standard library only (the prompt hook may import it).

1. take the ``feedback_docs`` best first-pass hits, each weighted by its score over the best one;
2. expansion terms: their terms the query lacks, in at least ``feedback_min_docs`` of them, not numbers,
   found in at least two items (one that only the feedback hit holds finds nothing new) and in at most
   ``feedback_max_df`` of all items (rare: they tell items apart), ranked by summed weight x idf;
3. a second BM25 round over the best ``feedback_terms`` of them; its scores, rescaled to the first
   round's best and times ``feedback_weight``, are added to the first round's.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .search import Knobs, _Filters

Scores = dict[str, tuple[float, dict[str, Any]]]


def doc_freqs(conn: sqlite3.Connection, terms: list[str], cache: dict[str, int] | None = None) -> dict[str, int]:
    """Document frequencies of many terms (``items_df``, kept at ingest), one ``IN`` query per 500 (the
    hits' terms: ~100 a query); ``cache``: the query's own, shared with the first round."""
    cache = {} if cache is None else cache
    need = [t for t in dict.fromkeys(terms) if t not in cache]
    table = "items_df"
    for i in range(0, len(need), 500):
        chunk = need[i:i + 500]
        sql = f"SELECT term, doc FROM {{}} WHERE term IN ({','.join('?' * len(chunk))})"
        try:
            found = dict(conn.execute(sql.format(table), chunk).fetchall())
        except sqlite3.OperationalError:  # not migrated yet (a read-only connection): FTS5 counts them
            table = "items_vocab"
            found = dict(conn.execute(sql.format(table), chunk).fetchall())
        for t in chunk:
            cache[t] = int(found.get(t) or 0)
    return {t: cache[t] for t in terms}


def expansion_terms(conn: sqlite3.Connection, kw: Scores, query_terms: list[str], knobs: Knobs,
                    df_cache: dict[str, int] | None = None) -> list[str]:
    """The rare terms the best first-pass hits share and the query lacks, best first."""
    from .search import _idf, _stats

    top = sorted(kw.values(), key=lambda v: -v[0])[: knobs.feedback_docs]
    if not top or top[0][0] <= 0:
        return []
    best = top[0][0]
    query = set(query_terms)
    weight: dict[str, float] = defaultdict(float)
    docs: dict[str, int] = defaultdict(int)
    for s, row in top:
        for t in set((row.get("terms") or "").split()):
            if t not in query and not t.isdigit():
                weight[t] += s / best
                docs[t] += 1
    cands = [t for t in weight if docs[t] >= knobs.feedback_min_docs]
    n, _ = _stats(conn)
    df = doc_freqs(conn, cands, df_cache)
    cap = knobs.feedback_max_df * n
    ranked = sorted(((weight[t] * _idf(n, df[t]), t) for t in cands if 2 <= df[t] <= cap), reverse=True)
    return [t for _, t in ranked[: knobs.feedback_terms]]


def widen(conn: sqlite3.Connection, kw: Scores, query_terms: list[str], flt: _Filters, knobs: Knobs,
          df_cache: dict[str, int] | None = None) -> Scores:
    """First-pass scores plus the feedback round's (rescaled); items only the second round found come
    with no matched query terms, so their keyword relevance for the prompt gate stays 0."""
    from .search import keyword_scores

    if knobs.feedback_docs <= 0 or knobs.feedback_weight <= 0 or not kw:
        return kw
    terms = expansion_terms(conn, kw, query_terms, knobs, df_cache)
    if not terms:
        return kw
    second = keyword_scores(conn, terms, flt, knobs, df_cache)
    if not second:
        return kw
    scale = knobs.feedback_weight * max(v[0] for v in kw.values()) / max(v[0] for v in second.values())
    out = dict(kw)
    for iid, (s, row) in second.items():
        if iid in out:
            first, first_row = out[iid]
            out[iid] = (first + s * scale, first_row)
        else:
            row["matched"] = []
            out[iid] = (s * scale, row)
    return out
