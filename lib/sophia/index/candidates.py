"""Which FTS5 matches the keyword tier rescores: a cost bounded by a postings budget, not by the store.

FTS5's own ``rank`` (bm25) reads every matching row's size before ``ORDER BY rank LIMIT k`` keeps the best
k, so a query's cost grows with the number of rows its terms match: at a million items a query of common
words matches hundreds of thousands. So, once the terms that generate candidates would match more than
``BUDGET`` rows in a store larger than ``BUDGET``:

1. the rarest terms generate the candidates, as many as fit in the budget together (the most telling
   ones: a common term still scores every candidate in the exact BM25 that follows, it only stops
   generating them);
2. when even the rarest term alone matches more than the budget: the rows holding every query term (FTS5
   intersects the doclists; ranked when they fit in the budget, else the most recent), topped up with
   the rarest term's most recent matches (FTS5 walks its rowids backwards and stops at the limit).

A store of at most ``BUDGET`` items (every LoCoMo conversation, most users) is never shaped: the same
candidates as before, to the row. Standard library only (hooks import it).
"""

from __future__ import annotations

import sqlite3
from typing import Any

BUDGET = 10_000  # FTS5 rows one query may rank (~3-5 us a row on an idle core)

Step = tuple[str, bool]  # (an FTS5 MATCH expression, ranked: by FTS5's bm25, else the most recent first)


def plan(conn: sqlite3.Connection, present: list[str], df: dict[str, int], n: int, cap: float,
         fts: str = "items_fts") -> list[Step]:
    """The MATCH steps that gather a query's candidates, in order (the next one only tops up).

    Every term within ``cap`` (the rarest one when none is), ranked; on a big store whose terms match more
    than the budget: the rarest that fit in it; when even the rarest does not, the rows holding every
    term (ranked when they fit in the budget, else the most recent), then the rarest term's most recent.
    ``fts``: the FTS5 table the steps will match (``df`` counted in it)."""
    rare = [t for t in present if df[t] <= cap]
    gen = rare or sorted(present, key=lambda t: df[t])[:1]
    if n <= BUDGET or sum(df[t] for t in gen) <= BUDGET:
        return [(_any(gen), True)]
    by_df = sorted(gen, key=lambda t: (df[t], t))
    kept: list[str] = []
    for t in by_df:
        if sum(df[k] for k in kept) + df[t] > BUDGET:
            break
        kept.append(t)
    if kept:
        return [(_any(kept), True)]
    steps: list[Step] = []
    if len(by_df) > 1:
        every = " AND ".join(f'"{t}"' for t in by_df)
        # counted only as far as the budget: whether any row holds them all, and whether they fit
        both = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT ?)",
                            (every, BUDGET + 1)).fetchone()[0]
        if both:
            steps.append((every, both <= BUDGET))
    return [*steps, (_any(by_df[:1]), False)]


def _any(terms: list[str]) -> str:
    return " OR ".join(f'"{t}"' for t in terms)


def fetch(conn: sqlite3.Connection, steps: list[Step], cols: str, where: str, params: list[Any],
          limit: int, fts: str = "items_fts") -> list[tuple[Any, ...]]:
    """The candidate rows (``cols`` of ``items i``, its ``rowid`` first) of each step in turn, each row
    once, at most ``limit``; ``where`` filters in SQL (before the limit)."""
    rows: list[tuple[Any, ...]] = []
    seen: set[int] = set()
    for match, ranked in steps:
        order = f"{fts}.rank" if ranked else f"{fts}.rowid DESC"
        sql = (f"SELECT {cols} FROM {fts} JOIN items i ON i.rowid = {fts}.rowid "
               f"WHERE {fts} MATCH ? AND {where} ORDER BY {order} LIMIT ?")
        for r in conn.execute(sql, [match, *params, limit]):
            if r[0] not in seen and len(rows) < limit:
                seen.add(r[0])
                rows.append(r)
        if len(rows) >= limit:
            break
    return rows
