"""Recall: keyword tier (FTS5 candidates + our own BM25), the seed's retrieval score, time
awareness, expansion (MemCell neighbours, scenes, links) and fusion with the semantic tier
when the embedding service is warm.

Standard library only, and never imports numpy/torch: hooks and the fast CLI path use it.

Pipeline for one query:
1. analyse the query like the documents (tokens, stopwords, Snowball stems);
2. candidate generation: FTS5 ``MATCH`` over the rarer query terms (terms in more than
   ``max_df`` of the items are left out of candidate generation when rarer ones exist, which
   bounds the cost on very common words), filters (type, project, the two timelines below)
   applied in SQL, at most ``candidates`` rows by FTS5's own rank (on a store past
   ``candidates.BUDGET`` items, the rarest terms within a postings budget: ``candidates.py``);
3. exact BM25 (k1, b tuned) over the candidates with every query term, normalised to 0..1;
   with ``feedback_docs`` (``s3 recall``'s CLI_KNOBS, not the prompt hook's DEFAULT_KNOBS), a second
   round on the rare terms the best hits share (``feedback.py``) is added at ``feedback_weight``;
4. fusion with the semantic hits (weighted scores; a cosine at or below ``semantic_floor`` adds
   nothing), item-level adjustments (seed 12.4 for episodes, prospective penalty, recency), expansion
   of what matched, sort, cut at ``limit``. An item that matched neither by keyword nor above the
   floor by meaning is never listed, whatever boost or expansion it could get.

Two timelines, filtered independently:
- ``as_of`` (event / validity time, default now): what was true or valid then. Items are
  returned only inside their ``valid_from..valid_until`` window; with an explicit ``as_of``,
  items whose ``event_time`` is later are left out (it had not happened yet), except
  prospective ones (a plan is about the future). Recency and the prospective penalty are
  judged at ``as_of``.
- ``known_at`` (record time, default: no limit): what had been recorded by then (items whose
  ``timestamp`` is later are left out). Combine both for "what would recall have answered then".
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from ..kinds import bulk_types
from ..timeutil import iso, now, parse
from . import candidates as _cand
from . import semantic as _sem
from .text import FILLER, analyze, topical

MAX_QUERY_CHARS = 4000
MAX_QUERY_TERMS = 64


class QueryError(ValueError):
    """A query that cannot be answered (empty, too long, bad date): the CLI prints the message."""


class Knobs:
    """Tunable parameters of recall (defaults tuned on the LoCoMo dev split; see docs/benchmarks.md).

    A plain class rather than a dataclass: importing ``dataclasses`` costs ~10 ms of every
    ``s3 recall`` process. ``Knobs(k1=1.2)`` overrides defaults; unknown names raise TypeError."""

    k1: float = 0.9
    b: float = 0.4
    max_df: float = 0.25  # terms in more than this fraction of items don't generate candidates
    max_df_floor: int = 1000  # ... unless they are in fewer items than this (small stores: use all)
    candidates: int = 400  # FTS5 candidates rescored per query
    # expansion
    neighbours: int = 2  # turns on each side of a hit, same MemCell
    neighbour_hits: int = 20  # how many top hits get neighbours
    neighbour_decay: float = 0.6
    neighbour_raise: int = 1  # 1: a neighbour that matched on its own is raised to parent * decay too
    neighbour_step: float = 1.0  # further factor per extra turn of distance
    scene_hits: int = 3
    scene_max: int = 3
    scene_decay: float = 0.4
    link_max: int = 3  # P2-1: 1 hop, at most 3 linked items, +0.03
    link_bonus: float = 0.03
    link_decay: float = 0.5
    # pseudo-relevance feedback (index/feedback.py): second keyword round on the best hits' rare terms
    feedback_docs: int = 0  # how many first-pass hits lend terms (0: off)
    feedback_terms: int = 10
    feedback_min_docs: int = 1
    feedback_max_df: float = 0.05
    feedback_weight: float = 0.3
    # fusion with the semantic tier
    semantic_weight: float = 0.5
    semantic_k: int = _sem.SEMANTIC_K
    semantic_floor: float = 0.2
    # item adjustments
    prospective_penalty: float = 0.5
    trivial_factor: float = 0.5
    # absolute relevance (the prompt hook's gate; not the ranking): raw cosine floor..full -> 0..1
    relevance_cos_floor: float = 0.3
    relevance_cos_full: float = 0.7
    relevance_idf_floor: float = 4.0  # with context.prompt_context_min_score: bench/locomo_gate_loo.py

    def __init__(self, **changes: Any) -> None:
        for k, v in changes.items():
            if k.startswith("_") or not hasattr(type(self), k) or callable(getattr(type(self), k)):
                raise TypeError(f"unknown recall knob {k!r}")
            setattr(self, k, type(getattr(type(self), k))(v))

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in type(self).__annotations__}


DEFAULT_KNOBS = Knobs()  # the prompt hook's (``recall()``): no feedback round, within the hook's budget
# ``s3 recall`` (one query, batch, --explain) and ``s3 bench locomo``: plus the feedback round
CLI_KNOBS = Knobs(feedback_docs=3)

_COLS = ("rowid, id, type, text, terms, dl, project, timestamp, event_time, source_ids, valid_from, "
         "valid_until, temporality, scene_id, memcell_id, links, meta, source, seq")


def _row_dict(r: tuple[Any, ...]) -> dict[str, Any]:
    return {
        "rowid": r[0], "id": r[1], "type": r[2], "text": r[3], "terms": r[4], "dl": r[5], "project": r[6],
        "timestamp": r[7], "event_time": r[8], "source_ids": r[9], "valid_from": r[10], "valid_until": r[11],
        "temporality": r[12], "scene_id": r[13], "memcell_id": r[14], "links": r[15], "meta": r[16],
        "source": r[17], "seq": r[18],
    }


def parse_as_of(value: str | datetime | None, option: str = "--as-of") -> tuple[datetime, bool]:
    """(time, explicit). A bare date means the end of that day. Raises QueryError on nonsense."""
    if value is None or value == "":
        return now(), False
    if isinstance(value, datetime):
        d = parse(value)
        assert d is not None
        return d, True
    s = str(value).strip()
    d = parse(s)
    if d is None:
        raise QueryError(f"{option}: cannot read {value!r} as a date (use YYYY-MM-DD or an ISO date-time)")
    if len(s) == 10:
        d = d.replace(hour=23, minute=59, second=59)
    return d, True


def check_query(query: Any) -> list[str]:
    """Return the analysed terms of a query, raising QueryError when it cannot be answered."""
    if not isinstance(query, str) or not query.strip():
        raise QueryError("empty query: give some words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"query too long ({len(query)} characters; at most {MAX_QUERY_CHARS})")
    return analyze(query)[: MAX_QUERY_TERMS * 4]


class _Filters:
    """The SQL filters of one query (see the module docstring for the two timelines)."""

    def __init__(self, types: list[str] | None, project: str | None, as_of: datetime, explicit: bool,
                 known_at: datetime | None = None):
        clauses = []
        params: list[Any] = []
        # only kinds that never come in bulk: candidates may come from their own FTS5 index (notes_fts)
        self.notes_only = bool(types and not set(types) & set(bulk_types()))
        if types:
            clauses.append(f"i.type IN ({','.join('?' * len(types))})")
            params.extend(types)
        if project:
            clauses.append("(i.project IS NULL OR i.project = ?)")
            params.append(project)
        at = iso(as_of)
        # foresight / transient profile facts: only inside their validity window (EverMemOS 3.4)
        clauses.append("(i.valid_from IS NULL OR i.valid_from <= ?)")
        clauses.append("(i.valid_until IS NULL OR i.valid_until >= ?)")
        params.extend([at, at])
        if explicit:
            # as of a past date: what had happened by then (a plan is about the future: kept)
            clauses.append("(i.event_time IS NULL OR i.event_time <= ? OR i.temporality = 'prospective')")
            params.append(at)
        if known_at is not None:
            # the record timeline: what had been recorded by then
            clauses.append("(i.timestamp IS NULL OR i.timestamp <= ?)")
            params.append(iso(known_at))
        self.sql = " AND ".join(clauses)
        self.params = params


def _df(conn: sqlite3.Connection, terms: list[str], cache: dict[str, int] | None = None,
        vocab: str = "items_df") -> dict[str, int]:
    """Document frequencies: ``items_df`` (the whole index's, kept at ingest: a lookup each) or an
    fts5vocab table (``notes_vocab``: counted on each lookup); ``cache`` (one query's) saves the second
    lookup. An index not migrated yet (a read-only connection) is counted by ``items_vocab``."""
    out = {}
    for t in terms:
        if cache is not None and t in cache:
            out[t] = cache[t]
            continue
        try:
            r = conn.execute(f"SELECT doc FROM {vocab} WHERE term = ?", (t,)).fetchone()
        except sqlite3.OperationalError:
            if vocab != "items_df":
                raise
            vocab = "items_vocab"
            r = conn.execute("SELECT doc FROM items_vocab WHERE term = ?", (t,)).fetchone()
        out[t] = int(r[0]) if r else 0
        if cache is not None:
            cache[t] = out[t]
    return out


def _stats(conn: sqlite3.Connection) -> tuple[int, float]:
    r = conn.execute("SELECT n, total_dl FROM corpus_stats WHERE id = 1").fetchone()
    n = int(r[0]) if r else 0
    avgdl = (float(r[1]) / n) if r and n else 1.0
    return n, max(avgdl, 1.0)


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def term_weights(conn: sqlite3.Connection, terms: list[str], knobs: Knobs = DEFAULT_KNOBS,
                 df_cache: dict[str, int] | None = None) -> dict[str, float]:
    """Each distinct query term's weight for the gate: its idf in the store, but

    - a term the store never saw weighs as one seen once (add-one smoothing: as rare as the rarest,
      no rarer), so a prompt about something memory never mentions is mostly unmatched;
    - no term weighs less than ``relevance_idf_floor`` (4.0: the idf of a term in about one item of
      55): a word all of memory shares (a speaker's name, the project's topic) does not tell the
      items apart, but it still says what the prompt is about. On a store of under ~80 items no
      term's idf reaches the floor, and every term weighs the same."""
    uniq = list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]
    n, _ = _stats(conn)
    if not uniq or n == 0:
        return {}
    df = _df(conn, uniq, df_cache)
    return {t: max(_idf(n, max(df[t], 1)), knobs.relevance_idf_floor) for t in uniq}


def coverage(matched: list[str], weights: dict[str, float]) -> float:
    """Absolute keyword relevance in 0..1: the idf mass of the query terms an item matched over the
    idf mass of all the query's terms (unseen ones included). Independent of the other hits.

    A number (a date, a count, a version) and a prompt's filler words (``text.FILLER``: "last time",
    "please help") count when matched, never against an item that lacks them: they say when, how many
    or how to, not what about (LoCoMo dev: numbers +2.3 points of hits, abstention unchanged).

    An item that matches no topic word (only filler and ``text.GENERIC`` words: "fix", "fail", "build")
    scores 0, whatever those words weigh in this store: they count beside a topic word, never alone."""
    have = set(matched)
    if not any(topical(t) for t in have):
        return 0.0
    total = sum(w for t, w in weights.items() if t in have or not (t.isdigit() or t in FILLER))
    return sum(weights.get(t, 0.0) for t in have) / total if total > 0 else 0.0


def keyword_scores(conn: sqlite3.Connection, terms: list[str], flt: _Filters, knobs: Knobs,
                   df_cache: dict[str, int] | None = None) -> dict[str, tuple[float, dict[str, Any]]]:
    """BM25 over FTS5 candidates: {item id: (raw bm25, row)}; ``row["matched"]``: the query terms it has."""
    uniq = list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]
    n, avgdl = _stats(conn)
    if not uniq or n == 0:
        return {}
    df = _df(conn, uniq, df_cache)
    present = [t for t in uniq if df[t] > 0]
    if not present:
        return {}
    steps, fts = _candidate_steps(conn, present, df, n, flt, knobs)
    rows = _cand.fetch(conn, steps, ", ".join("i." + c.strip() for c in _COLS.split(",")), flt.sql,
                       flt.params, knobs.candidates, fts)
    idf = {t: _idf(n, df[t]) for t in present}
    k1, b = knobs.k1, knobs.b
    out: dict[str, tuple[float, dict[str, Any]]] = {}
    for r in rows:
        row = _row_dict(r)
        tf = Counter(row["terms"].split())
        norm = k1 * (1.0 - b + b * (row["dl"] or 0) / avgdl)
        s = 0.0
        matched = []
        for t in present:
            f = tf.get(t, 0)
            if f:
                s += idf[t] * f * (k1 + 1.0) / (f + norm)
                matched.append(t)
        if s > 0:
            row["matched"] = matched
            out[row["id"]] = (s, row)
    return out


def _candidate_steps(conn: sqlite3.Connection, present: list[str], df: dict[str, int], n: int, flt: _Filters,
                     knobs: Knobs) -> tuple[list[_cand.Step], str]:
    """The candidate plan and the FTS5 table it matches. A recall limited to kinds that never come in
    bulk, on a store past the candidate budget (a million ingested turns), plans over ``notes_fts``,
    which holds only those kinds: common words then match thousands of notes, not a million turns that
    the type filter would drop one by one. Scoring keeps the whole store's statistics either way; a
    store within the budget is planned as before, to the row."""
    cap = max(knobs.max_df * n, knobs.max_df_floor)
    if flt.notes_only and n > _cand.BUDGET:
        try:
            ndf = _df(conn, present, vocab="notes_vocab")
        except sqlite3.OperationalError:  # an index a read-only connection could not migrate
            return _cand.plan(conn, present, df, n, cap), "items_fts"
        inside = [t for t in present if ndf[t] > 0]
        return (_cand.plan(conn, inside, ndf, n, cap, "notes_fts") if inside else []), "notes_fts"
    return _cand.plan(conn, present, df, n, cap), "items_fts"


def _fetch(conn: sqlite3.Connection, ids: list[str], flt: _Filters) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for i in range(0, len(ids), 400):
        chunk = ids[i:i + 400]
        sql = (f"SELECT {', '.join('i.' + c.strip() for c in _COLS.split(','))} FROM items i "
               f"WHERE i.id IN ({','.join('?' * len(chunk))}) AND {flt.sql}")
        for r in conn.execute(sql, [*chunk, *flt.params]):
            row = _row_dict(r)
            out[row["id"]] = row
    return out


def _meta(row: dict[str, Any]) -> dict[str, Any]:
    m = row.get("meta")
    if isinstance(m, dict):
        return m
    try:
        v = json.loads(m or "{}")
    except (ValueError, TypeError):
        v = {}
    row["meta"] = v if isinstance(v, dict) else {}
    return row["meta"]


def _days_old(row: dict[str, Any], as_of: datetime) -> float | None:
    t = parse(row.get("event_time") or row.get("timestamp"))
    if t is None:
        return None
    return (as_of - t).total_seconds() / 86400.0


def adjust(score: float, row: dict[str, Any], as_of: datetime, knobs: Knobs) -> float:
    """Item-level adjustments: seed 12.4 for episodes, P2-5 prospective penalty, recency."""
    if row["type"] == "episode":
        meta = _meta(row)
        if str(meta.get("outcome") or "").upper() == "SUCCESS":
            score *= 1.2
        h = meta.get("heuristics_count")
        if h is None:
            h = len(meta.get("heuristics") or [])
        score += 0.1 * min(int(h or 0), 3)
        if meta.get("consolidated"):
            score *= 0.8
        if meta.get("trivial"):
            score *= knobs.trivial_factor
    if row.get("temporality") == "prospective" and row.get("event_time"):
        t = parse(row["event_time"])
        if t is not None and t < as_of:
            score *= knobs.prospective_penalty
    days = _days_old(row, as_of)
    if days is not None and 0 <= days < 7:
        score += 0.1
    elif days is not None and 0 <= days < 30:
        score += 0.05
    return score


def fuse(kw: dict[str, float], sem: dict[str, float], knobs: Knobs) -> dict[str, float]:
    """Weighted score fusion: keyword scores / max + w * rescaled cosine (floor..max -> 0..1).

    Only what matched is fused: an item with a keyword score, or a cosine above ``semantic_floor``. A
    cosine at or below the floor adds nothing (and does not list the item), so when every cosine is
    below it the semantic tier adds nothing at all; above it, a more similar item never gets less."""
    out: dict[str, float] = {}
    kmax = max(kw.values(), default=0.0) or 1.0
    for iid, s in kw.items():
        out[iid] = s / kmax
    floor = knobs.semantic_floor
    span = max(sem.values(), default=floor) - floor
    if span > 0:
        for iid, c in sem.items():
            if c > floor:
                out[iid] = out.get(iid, 0.0) + knobs.semantic_weight * (c - floor) / span
    return out


Want = tuple[str, float, str, float]  # (item id, score, the hit it came from, factor of that hit's relevance)


def _expand(conn: sqlite3.Connection, ranked: list[tuple[str, float]], rows: dict[str, dict[str, Any]],
            flt: _Filters, knobs: Knobs) -> dict[str, tuple[float, str, float]]:
    """Items pulled in by expansion: {id: (score, the hit it came from, factor)}. MemCell neighbours of
    the best hits, members of their scenes, then their links (not already in ``rows``); a neighbour
    already ranked may be raised."""
    base = set(rows)
    want: list[Want] = []
    raised: dict[str, Want] = {}
    if knobs.neighbours > 0:
        want += _neighbour_wants(conn, ranked, rows, base, knobs, raised)
    if knobs.scene_hits > 0:
        want += _scene_wants(conn, ranked, rows, knobs)
    if knobs.link_max > 0 and ranked:
        want += _link_wants(conn, ranked, base, want, knobs)
    current = dict(ranked)
    extra = {nid: w[1:] for nid, w in raised.items() if w[1] > current.get(nid, 0.0)}
    want = [w for w in want if w[0] not in base]
    if not want:
        return extra
    fetched = _fetch(conn, list({w[0] for w in want}), flt)
    for nid, v, parent, factor in want:
        if nid in fetched:
            rows.setdefault(nid, fetched[nid])
            if nid not in extra or v > extra[nid][0]:
                extra[nid] = (v, parent, factor)
    return extra


def _neighbour_wants(conn: sqlite3.Connection, ranked: list[tuple[str, float]], rows: dict[str, dict[str, Any]],
                     base: set[str], knobs: Knobs, raised: dict[str, Want]) -> list[Want]:
    """The turns around each best hit in its own MemCell, decaying with distance; ranked ones go to ``raised``."""
    want: list[Want] = []
    for iid, s in ranked[: knobs.neighbour_hits]:
        r = rows[iid]
        if r.get("seq") is None or not r.get("source"):
            continue
        lo, hi = r["seq"] - knobs.neighbours, r["seq"] + knobs.neighbours
        for nid, mc, seq in conn.execute(
                "SELECT id, memcell_id, seq FROM items WHERE source = ? AND seq BETWEEN ? AND ? AND id != ?",
                (r["source"], lo, hi, iid)):
            if mc == r.get("memcell_id"):
                f = knobs.neighbour_decay * knobs.neighbour_step ** (abs(seq - r["seq"]) - 1)
                w = (nid, s * f, iid, f)
                if nid in base and knobs.neighbour_raise and (nid not in raised or w[1] > raised[nid][1]):
                    raised[nid] = w
                want.append(w)
    return want


def _scene_wants(conn: sqlite3.Connection, ranked: list[tuple[str, float]], rows: dict[str, dict[str, Any]],
                 knobs: Knobs) -> list[Want]:
    """Up to ``scene_max`` other members of each best hit's scene (each scene once)."""
    want: list[Want] = []
    scenes_seen: set[str] = set()
    for iid, s in ranked[: knobs.scene_hits]:
        sc = rows[iid].get("scene_id")
        if not sc or sc in scenes_seen:
            continue
        scenes_seen.add(sc)
        for (nid,) in conn.execute("SELECT id FROM items WHERE scene_id = ? AND id != ? LIMIT ?",
                                   (sc, iid, knobs.scene_max)):
            want.append((nid, s * knobs.scene_decay, iid, knobs.scene_decay))
    return want


def _link_wants(conn: sqlite3.Connection, ranked: list[tuple[str, float]], base: set[str],
                earlier: list[Want], knobs: Knobs) -> list[Want]:
    """At most ``link_max`` items the best hits link to, not already ranked or wanted."""
    want: list[Want] = []
    for iid, s in ranked[: max(knobs.link_max, 5)]:
        for (dst,) in conn.execute("SELECT dst FROM links WHERE src = ? ORDER BY dst", (iid,)):
            if dst in base or any(dst == w[0] for w in earlier) or any(dst == w[0] for w in want):
                continue
            want.append((dst, s * knobs.link_decay + knobs.link_bonus, iid, knobs.link_decay))
            if len(want) >= knobs.link_max:
                return want
    return want


def semantic_relevance(cos: float | None, knobs: Knobs) -> float:
    """Absolute semantic relevance in 0..1 from the raw cosine (not rescaled by the best hit)."""
    if cos is None:
        return 0.0
    lo, hi = knobs.relevance_cos_floor, knobs.relevance_cos_full
    return max(0.0, min(1.0, (cos - lo) / ((hi - lo) or 1.0)))


def _public(row: dict[str, Any], score: float, relevance: float, why: dict[str, Any] | None) -> dict[str, Any]:
    def js(v: Any, default: Any) -> Any:
        if isinstance(v, (list, dict)):
            return v
        try:
            return json.loads(v) if v else default
        except (ValueError, TypeError):
            return default

    out = {
        "id": row["id"], "type": row["type"], "text": row["text"], "score": round(score, 6),
        "relevance": round(relevance, 4),
        "source_ids": js(row.get("source_ids"), []), "timestamp": row.get("timestamp"),
        "event_time": row.get("event_time"), "project": row.get("project"),
        "valid_from": row.get("valid_from"), "valid_until": row.get("valid_until"),
        "temporality": row.get("temporality"), "scene_id": row.get("scene_id"),
        "memcell_id": row.get("memcell_id"), "links": js(row.get("links"), []), "meta": _meta(row),
    }
    if why is not None:
        out["explain"] = why
    return out


class _Scoring:
    """One query's scores: ranking score, absolute relevance and (with ``explain``) why."""

    def __init__(self, weights: dict[str, float], kw: dict[str, float], sem: dict[str, float], knobs: Knobs,
                 explain: bool) -> None:
        self.weights, self.kw, self.sem, self.knobs, self.explain = weights, kw, sem, knobs, explain
        self.kmax = max(kw.values(), default=0.0) or 1.0
        self.rel: dict[str, float] = {}
        self.why: dict[str, dict[str, Any]] = {}

    def direct(self, iid: str, row: dict[str, Any], fused: float, adjusted: float) -> None:
        """An item found by a tier: relevance = the better of keyword coverage and semantic relevance."""
        matched = row.get("matched") or []
        kw_rel = coverage(matched, self.weights)
        sem_rel = semantic_relevance(self.sem.get(iid), self.knobs)
        self.rel[iid] = max(kw_rel, sem_rel)
        if self.explain:
            kpart = self.kw.get(iid, 0.0) / self.kmax
            self.why[iid] = {
                "matched": {t: round(self.weights.get(t, 0.0), 3) for t in matched},
                "keyword_bm25": round(self.kw.get(iid, 0.0), 4), "keyword_part": round(kpart, 4),
                "keyword_relevance": round(kw_rel, 4),
                "semantic_cosine": round(self.sem[iid], 4) if iid in self.sem else None,
                "semantic_part": round(fused - kpart, 4), "semantic_relevance": round(sem_rel, 4),
                "boosts": round(adjusted - fused, 4),
            }

    def expanded(self, iid: str, parent: str, factor: float, score: float) -> None:
        """An item pulled in by expansion: its parent's relevance times the expansion's factor."""
        via = self.rel.get(parent, 0.0) * factor
        if via > self.rel.get(iid, 0.0):
            self.rel[iid] = via
            if self.explain:
                self.why.setdefault(iid, {})["expanded_from"] = {"id": parent, "factor": round(factor, 4),
                                                                 "score": round(score, 4)}


def search(conn: sqlite3.Connection, query: str, *, limit: int = 10, types: list[str] | None = None,
           project: str | None = None, as_of: str | datetime | None = None, home: Path | None = None,
           knobs: Knobs = DEFAULT_KNOBS, semantic_hits: list[tuple[str, float]] | _sem.Pending | None = None,
           use_semantic: bool = True, known_at: str | datetime | None = None,
           explain: bool = False) -> list[dict[str, Any]]:
    """Recall over an open connection. Raises QueryError for unanswerable queries.

    Each result has ``score`` (the ranking, relative to this query's hits) and ``relevance`` (absolute,
    0..1: what the prompt hook's gate judges); with ``explain``, an ``explain`` dict says why.
    ``semantic_hits``: given hits, or a ``semantic.Pending`` started earlier; when None (and
    ``use_semantic``), the semantic tier is asked here, in parallel with the keyword scoring."""
    terms = check_query(query)
    at, explicit = parse_as_of(as_of)
    known, known_explicit = parse_as_of(known_at, "--known-at")
    limit = max(1, min(int(limit), 1000))
    flt = _Filters(list(types) if types else None, project, at, explicit, known if known_explicit else None)
    if semantic_hits is None and use_semantic and knobs.semantic_weight > 0 and terms:
        semantic_hits = _sem.start(query, max(knobs.semantic_k, limit), home, list(types) if types else None)
    df_cache: dict[str, int] = {}
    kw = keyword_scores(conn, terms, flt, knobs, df_cache)
    if knobs.feedback_docs > 0:
        from .feedback import widen  # not imported on the hook's path (its knobs have no feedback round)

        kw = widen(conn, kw, terms, flt, knobs, df_cache)
    rows = {iid: row for iid, (_, row) in kw.items()}
    sem: dict[str, float] = {}
    if isinstance(semantic_hits, _sem.Pending):
        semantic_hits = semantic_hits.get() if knobs.semantic_weight > 0 else None
    if semantic_hits:
        missing = [iid for iid, c in semantic_hits if iid not in rows and c > knobs.semantic_floor]
        if missing:
            rows.update(_fetch(conn, missing, flt))
        sem = {iid: float(c) for iid, c in semantic_hits if iid in rows}
    kw_raw = {k: v[0] for k, v in kw.items()}
    fused = fuse(kw_raw, sem, knobs)
    sc = _Scoring(term_weights(conn, terms, knobs, df_cache), kw_raw, sem, knobs, explain)
    scored: dict[str, float] = {}
    for iid, s in fused.items():
        scored[iid] = adjust(s, rows[iid], at, knobs)
        sc.direct(iid, rows[iid], s, scored[iid])
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    for iid, (s, parent, factor) in _expand(conn, ranked, rows, flt, knobs).items():
        scored[iid] = adjust(s, rows[iid], at, knobs) if iid not in fused else max(scored[iid], s)
        sc.expanded(iid, parent, factor, s)
    final = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [_public(rows[iid], s, sc.rel.get(iid, 0.0), sc.why.get(iid, {}) if explain else None)
            for iid, s in final]


def recall(query: str, *, limit: int = 10, types: list[str] | None = None, project: str | None = None,
           as_of: str | datetime | None = None, home: Path | None = None,
           knobs: Knobs | None = None, known_at: str | datetime | None = None) -> list[dict[str, Any]]:
    """The contract API: never raises on odd queries (returns [] instead)."""
    from .kept import use

    try:
        with use(home, read=True) as conn:
            if conn is None:
                return []
            return search(conn, query, limit=limit, types=types, project=project, as_of=as_of, home=home,
                          knobs=knobs or DEFAULT_KNOBS, known_at=known_at)
    except (QueryError, sqlite3.Error, ValueError, TypeError):
        return []


def with_knobs(**changes: Any) -> Knobs:
    return Knobs(**{**DEFAULT_KNOBS.as_dict(), **changes})
