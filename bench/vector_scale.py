"""The semantic tier's vector search at 100k and 1M vectors: exact numpy (the service's default backend)
against an inverted-file index (IVF: k-means lists, ``nprobe`` of them searched), in process.

    PYTHONPATH=lib .venv/bin/python bench/vector_scale.py [--sizes 100000,1000000] [--queries 40]

Vectors: dim 384 float32 unit vectors drawn around 10,000 random centres (noise as large as the centre) (embeddings cluster; uniform
random vectors would be the worst case for any index), queries drawn the same way. Reported per size:
the matrix's memory, exact search median / p95 (``mat @ q`` then ``argpartition``, as
``sophia.embed.backends.NumpyBackend.search``), the IVF's build time and its median and recall@10
against the exact top 10 for a few ``nprobe``. sqlite-vec (scanning the ``vectors`` table) is measured by
``bench/vector_search.py``: 270 ms at 100k, linear in n.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np

DIM = 384


def vectors(n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, DIM), dtype=np.float32)
    for i in range(0, n, 100_000):
        m = min(100_000, n - i)
        v = centres[rng.integers(0, len(centres), m)] + 1.0 * rng.standard_normal((m, DIM)).astype(np.float32) / np.sqrt(DIM)
        out[i:i + m] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def exact(mat: np.ndarray, q: np.ndarray, k: int = 10) -> np.ndarray:
    s = mat @ q
    top = np.argpartition(-s, k - 1)[:k]
    return top[np.argsort(-s[top])]


def build_ivf(mat: np.ndarray, nlist: int, rng: np.random.Generator, iters: int = 6) -> tuple[np.ndarray, list[np.ndarray]]:
    """k-means on a sample (spherical: centroids renormalised), then every vector to its nearest list."""
    sample = mat[rng.choice(len(mat), min(len(mat), 40 * nlist), replace=False)]
    cent = sample[rng.choice(len(sample), nlist, replace=False)].copy()
    for _ in range(iters):
        assign = np.argmax(sample @ cent.T, axis=1)
        for c in range(nlist):
            members = sample[assign == c]
            if len(members):
                v = members.sum(axis=0)
                cent[c] = v / np.linalg.norm(v)
    lists_of = np.empty(len(mat), dtype=np.int32)
    for i in range(0, len(mat), 50_000):
        lists_of[i:i + 50_000] = np.argmax(mat[i:i + 50_000] @ cent.T, axis=1)
    order = np.argsort(lists_of, kind="stable")
    bounds = np.searchsorted(lists_of[order], np.arange(nlist + 1))
    return cent, [order[bounds[c]:bounds[c + 1]] for c in range(nlist)]


def ivf_search(mat: np.ndarray, cent: np.ndarray, lists: list[np.ndarray], q: np.ndarray, nprobe: int,
               k: int = 10) -> np.ndarray:
    probe = np.argpartition(-(cent @ q), nprobe - 1)[:nprobe]
    cand = np.concatenate([lists[c] for c in probe])
    s = mat[cand] @ q
    kk = min(k, len(cand))
    top = np.argpartition(-s, kk - 1)[:kk]
    return cand[top[np.argsort(-s[top])]]


def ms(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return round(statistics.median(xs) * 1000, 2), round(xs[int(0.95 * (len(xs) - 1))] * 1000, 2)


def measure(n: int, queries: int, rng: np.random.Generator) -> dict[str, Any]:
    centres = rng.standard_normal((10_000, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    mat = vectors(n, rng, centres)
    qs = vectors(queries, rng, centres)
    times, truth = [], []
    for q in qs:
        t0 = time.perf_counter()
        truth.append(exact(mat, q))
        times.append(time.perf_counter() - t0)
    out: dict[str, Any] = {"n": n, "matrix_mb": round(mat.nbytes / 2**20), "exact_median_ms": ms(times)[0],
                           "exact_p95_ms": ms(times)[1]}
    nlist = int(np.sqrt(n))
    t0 = time.perf_counter()
    cent, lists = build_ivf(mat, nlist, rng)
    out["ivf_nlist"], out["ivf_build_s"] = nlist, round(time.perf_counter() - t0, 1)
    for nprobe in (8, 32, 64):
        times, hit = [], 0
        for q, t in zip(qs, truth, strict=True):
            t0 = time.perf_counter()
            got = ivf_search(mat, cent, lists, q, nprobe)
            times.append(time.perf_counter() - t0)
            hit += len(set(got.tolist()) & set(t.tolist()))
        out[f"ivf{nprobe}_median_ms"] = ms(times)[0]
        out[f"ivf{nprobe}_recall10"] = round(hit / (10 * len(qs)), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--queries", type=int, default=40)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    for n in (int(x) for x in args.sizes.split(",")):
        print(json.dumps(measure(n, args.queries, rng)), flush=True)


if __name__ == "__main__":
    main()
