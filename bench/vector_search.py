"""Vector search backends at 10k and 100k items: query latency, load time, memory.

    PYTHONPATH=lib /tmp/devvenv/bin/python bench/vector_search.py [--sizes 10000 100000] [--queries 60]

Builds a real index.db (items + vectors, random unit float32 vectors of dim 384) per size,
then measures, each backend in its own fresh process (so memory is its own):
- load: constructing the backend (numpy: reading every vector into the matrix; sqlite-vec:
  opening the db and loading the extension), seconds;
- query latency: median / p95 over N queries of top-10, without and with a type filter;
- memory: RSS growth of the process caused by the backend (MB);
- ``vec0``: for reference only, sqlite-vec's own ``vec0`` virtual table holding a copy of the
  vectors in memory (the service does not use it: it would duplicate the table).
Latencies are also given as a ratio to ``python -c pass`` of the same venv measured in the
same run (the machine is shared and noisy).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT / "bench"))

from baseline import python_pass_ms  # noqa: E402

DIM = 384
MODEL = "all-MiniLM-L6-v2"
TYPES = ("turn", "fact", "episode", "rule")


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def build_db(path: Path, n: int) -> None:
    import numpy as np

    from sophia.index import db as schema

    os.environ["SOPHIA_HOME"] = str(path.parent)
    conn = schema.connect(path.parent)
    rng = np.random.default_rng(n)
    batch = 5000
    for start in range(0, n, batch):
        m = rng.standard_normal((min(batch, n - start), DIM)).astype(np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        rows, vecs = [], []
        for j in range(m.shape[0]):
            i = start + j
            text = f"item {i}"
            h = hashlib.sha256(text.encode()).hexdigest()
            rows.append((f"it{i}", TYPES[i % 4], text, h))
            vecs.append((f"it{i}", h, MODEL, DIM, m[j].astype("<f4").tobytes()))
        conn.executemany("INSERT INTO items(id, type, text, content_hash) VALUES (?,?,?,?)", rows)
        conn.executemany("INSERT INTO vectors(item_id, content_hash, model, dim, vec) VALUES (?,?,?,?,?)", vecs)
        conn.commit()
    conn.close()


def worker(backend: str, db: Path, queries: int) -> dict:
    import numpy as np

    base = rss_mb()
    t0 = time.perf_counter()
    if backend == "vec0":
        import apsw
        import sqlite_vec

        conn = apsw.Connection(":memory:")
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.execute(f"ATTACH DATABASE '{db}' AS idx")
        conn.execute(f"CREATE VIRTUAL TABLE vv USING vec0(item_id TEXT PRIMARY KEY, type TEXT, "
                     f"embedding float[{DIM}] distance_metric=cosine)")
        conn.execute("BEGIN")
        conn.execute("INSERT INTO vv(item_id, type, embedding) SELECT v.item_id, i.type, v.vec FROM idx.vectors v "
                     "JOIN idx.items i ON i.id = v.item_id")
        conn.execute("COMMIT")

        def search(q, k, types):  # type: ignore[no-untyped-def]
            sql = "SELECT item_id, distance FROM vv WHERE embedding MATCH ? AND k = ?"
            args = [q.astype("<f4").tobytes(), k]
            if types:
                sql += " AND type = ?"
                args.append(types[0])
            return list(conn.execute(sql, args))
    else:
        from sophia.embed.backends import make_backend

        b = make_backend(backend, db, MODEL, DIM)
        search = b.search
    load = time.perf_counter() - t0
    mem = rss_mb() - base
    rng = np.random.default_rng(7)
    qs = rng.standard_normal((queries, DIM)).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    search(qs[0], 10, None)  # warm caches
    out = {"backend": backend, "load_s": load, "mem_mb": mem}
    for label, types in (("all", None), ("typed", ["fact"])):
        lat = []
        for q in qs:
            t = time.perf_counter()
            res = search(q, 10, types)
            lat.append(time.perf_counter() - t)
            assert len(res) == 10
        lat.sort()
        out[f"{label}_median_ms"] = statistics.median(lat) * 1000
        out[f"{label}_p95_ms"] = lat[int(0.95 * (len(lat) - 1))] * 1000
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--backends", nargs="+", default=["numpy", "sqlite-vec", "vec0"])
    ap.add_argument("--worker", nargs=2, metavar=("BACKEND", "DB"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]), args.queries)))
        return
    out_dir = ROOT / "bench" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    base = python_pass_ms()
    print(f"baseline: `python -c pass` median {base:.1f} ms (same venv, same run)")
    print(f"{'n':>7} {'backend':<11} {'load s':>7} {'mem MB':>7} {'median ms':>10} {'p95 ms':>8} "
          f"{'typed med':>10} {'typed p95':>10} {'median/pass':>12}")
    results = []
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        for n in args.sizes:
            db = Path(tmp) / str(n) / "index.db"
            db.parent.mkdir()
            t = time.perf_counter()
            build_db(db, n)
            print(f"# built {n} items in {time.perf_counter() - t:.1f}s ({db.stat().st_size / 1e6:.0f} MB db)")
            for backend in args.backends:
                r = subprocess.run([sys.executable, __file__, "--worker", backend, str(db), "--queries",
                                    str(args.queries)], capture_output=True, text=True, check=True)
                res = json.loads(r.stdout)
                res["n"] = n
                results.append(res)
                print(f"{n:>7} {backend:<11} {res['load_s']:>7.2f} {res['mem_mb']:>7.0f} "
                      f"{res['all_median_ms']:>10.2f} {res['all_p95_ms']:>8.2f} {res['typed_median_ms']:>10.2f} "
                      f"{res['typed_p95_ms']:>10.2f} {res['all_median_ms'] / base:>12.3f}")
    (out_dir / "vector_search.json").write_text(json.dumps({"python_pass_ms": base, "results": results}, indent=2))


if __name__ == "__main__":
    main()
