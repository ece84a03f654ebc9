"""Team recall's keyword tier: Postgres full-text ranking over a bounded set of candidates.

``ts_rank_cd`` reads each row it ranks from the table (its tsvector), so ranking every row any query term
matches costs one row fetch per match: at a million rows a query's terms match tens of thousands (152 of the
181 ms team recall took at 1M rows, docs/benchmarks.md). The GIN index says *which* rows hold a combination
of terms from its posting lists alone, so the candidates come from the strictest combination first:

1. the rows holding all n terms, then those holding at least n-1 of them, ... at least 2 (a level only
   while its tsquery stays small: C(n, m) * m terms at most ``MAX_OPERANDS``);
2. then the rows holding any term.

The next level runs only while the levels before it found fewer than k rows. A level ranks at most
``BUDGET`` rows (the first ones the scan meets), by ``ts_rank_cd`` against the OR of all the terms (the
score local recall's fusion receives, as before). So a row holding more of the query's terms is never
dropped for one holding fewer while its level fits in the budget. Once every row holding two or more terms
is in (the "at least 2" level ran, or the query has one term), the any-term level adds rows holding one,
which ``ts_rank_cd`` tells apart only by how often they repeat it: it ranks ``ONE_TERM_BUDGET`` of them.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

BUDGET = 1000  # rows one level may rank (a row fetch each: 15-20 us from the OS cache at 1M rows)
ONE_TERM_BUDGET = 250  # rows the any-term level ranks when only rows holding one term are left
MAX_OPERANDS = 64  # terms in one level's tsquery (GIN evaluates it for every row a rarer term holds)
MAX_WORDS = 64

_COLS = "id, kind, text, project, event_time, edited_at, origin_machine"
_LEVEL_SQL = (f"SELECT {_COLS}, ts_rank_cd(tsv, %(any)s::tsquery) AS r FROM ("
              f"SELECT {_COLS}, tsv FROM sophia.memories WHERE team_id = %(team)s AND active AND NOT deleted "
              "AND tsv @@ %(level)s::tsquery LIMIT %(budget)s) c ORDER BY r DESC, id LIMIT %(k)s")


def lexemes(conn: Any, query: str) -> list[str]:
    """The query's words as Postgres indexes them ('english': stemmed, stop words dropped), sorted."""
    words = sorted({w.lower() for w in re.findall(r"\w+", query) if len(w) > 1})[:MAX_WORDS]
    if not words:
        return []
    row = conn.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", (" ".join(words),)).fetchone()
    return list(row[0] or []) if row else []


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def levels(lex: list[str]) -> list[str]:
    """The tsqueries of the candidate levels, strictest first: at least m of the n terms for m = n..2
    (those small enough), then any term."""
    n = len(lex)
    out = []
    for m in range(n, 1, -1):
        if math.comb(n, m) * m <= MAX_OPERANDS:
            out.append(" | ".join("(" + " & ".join(map(_quote, c)) + ")" for c in itertools.combinations(lex, m)))
    if lex:
        out.append(" | ".join(map(_quote, lex)))
    return out


def ranked(conn: Any, team: str, lex: list[str], k: int) -> list[tuple[Any, ...]]:
    """The best k candidates' rows (``_COLS`` then the rank), best first."""
    qs = levels(lex)
    one_term_left = len(lex) == 1 or math.comb(len(lex), 2) * 2 <= MAX_OPERANDS  # the "at least 2" level is in qs
    hits: dict[str, tuple[Any, ...]] = {}
    for level in qs:
        budget = ONE_TERM_BUDGET if level is qs[-1] and one_term_left else BUDGET
        params = {"any": qs[-1], "team": team, "level": level, "budget": budget, "k": k}
        # never prepared: a plan for one tsquery (a seq scan stopping at the budget for a common word, the
        # GIN bitmap for a rare one), not psycopg's prepared generic plan after five runs (175 ms for 'build')
        for r in conn.execute(_LEVEL_SQL, params, prepare=False):
            hits.setdefault(r[0], r)
        if len(hits) >= k:
            break
    return sorted(hits.values(), key=lambda r: (-r[7], r[0]))[:k]
