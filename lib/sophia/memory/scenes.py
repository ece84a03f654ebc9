"""Scenes (EverMemOS MemScene): online clustering of new memories, batch DBSCAN for consolidation.

Online: a memory joins the scene whose centroid it is closest to when the similarity is at
least 0.70 (embeddings; 0.35 on keyword TF vectors when embeddings are off) and the scene grew
at most 7 days before the memory's time; otherwise it starts a new scene. At most 100 scenes:
past that, a memory joins its nearest scene whatever the score.

Embeddings come from the stdlib client ``sophia.embed_client.client.embed(texts)`` when it returns
vectors; otherwise the keyword fallback is used (standard library only).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..timeutil import iso, parse
from .files import make_item
from .text import content_id, term_counts, tf_cosine, vec_cosine

EMBED_THRESHOLD = 0.70
KEYWORD_THRESHOLD = 0.35
MAX_GAP = timedelta(days=7)
MAX_SCENES = 100
MAX_TERMS = 60
DBSCAN_EPS = 0.3
DBSCAN_MIN_SAMPLES = 3
KEYWORD_EPS = 0.7  # keyword cosine distance for DBSCAN when embeddings are off


def embed(texts: list[str], home: Path | None = None) -> list[list[float]] | None:
    """Vectors from the embedding client, or None (off, missing, not warm, failing).

    Never starts the embedding service (recall and the session hooks do) and never waits long:
    applying a result must not hang on a model load."""
    if os.environ.get("SOPHIA_EMBEDDINGS", "").lower() in ("0", "off", "none", "false"):
        return None
    from ..embed_client.client import embed as client_embed

    try:
        vecs = client_embed(texts, home=home, timeout=5.0, start=False)
    except Exception:  # noqa: BLE001 - no vectors: the keyword fallback clusters instead
        return None
    if not vecs or len(vecs) != len(texts):
        return None
    try:
        return [[float(x) for x in v] for v in vecs]
    except (TypeError, ValueError):
        return None


def _similarity(scene: dict[str, Any], vec: list[float] | None, terms: Counter[str]) -> tuple[float, float]:
    centroid = scene.get("centroid")
    if vec is not None and isinstance(centroid, list) and len(centroid) == len(vec):
        return vec_cosine(vec, centroid), EMBED_THRESHOLD
    return tf_cosine(terms, scene.get("terms") or {}), KEYWORD_THRESHOLD


def _theme(terms: dict[str, float]) -> str:
    top = sorted(terms.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return ", ".join(t for t, _ in top) or "misc"


def assign(scenes: list[dict[str, Any]], member_id: str, text: str, at: datetime,
           vec: list[float] | None = None) -> dict[str, Any]:
    """Put ``member_id`` into a scene (mutating ``scenes``); returns the scene. Idempotent per member."""
    for s in scenes:
        if member_id in (s.get("meta", {}).get("member_ids") or []):
            return s
    terms = term_counts(text)
    best, best_sim = None, -1.0
    nearest, nearest_sim = None, -1.0
    for s in scenes:
        sim, threshold = _similarity(s, vec, terms)
        if sim > nearest_sim:
            nearest, nearest_sim = s, sim
        grew = parse(s.get("meta", {}).get("last_grew")) or at
        if sim >= threshold and abs(at - grew) <= MAX_GAP and sim > best_sim:
            best, best_sim = s, sim
    if best is None and len(scenes) >= MAX_SCENES:
        best = nearest
    if best is None:
        best = make_item(content_id("scene_", member_id, iso(at)), "scene", "", timestamp=iso(at),
                         meta={"member_ids": [], "member_count": 0, "last_grew": iso(at), "mode": None})
        best["centroid"] = None
        best["terms"] = {}
        scenes.append(best)
    meta = best["meta"]
    n = int(meta.get("member_count") or 0)
    if vec is not None:
        c = best.get("centroid")
        if isinstance(c, list) and len(c) == len(vec):
            best["centroid"] = [(a * n + b) / (n + 1) for a, b in zip(c, vec, strict=True)]
        elif n == 0 or not c:
            best["centroid"] = list(vec)
        meta["mode"] = "embedding"
    else:
        meta["mode"] = meta.get("mode") or "keyword"
    merged: Counter[str] = Counter(best.get("terms") or {})
    merged.update(terms)
    best["terms"] = dict(sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_TERMS])
    meta["member_ids"] = list(meta.get("member_ids") or []) + [member_id]
    meta["member_count"] = n + 1
    last = parse(meta.get("last_grew"))
    meta["last_grew"] = iso(max(last, at) if last else at)
    meta["theme"] = _theme(best["terms"])
    best["text"] = f"Scene: {meta['theme']}"
    return best


# ---------------------------------------------------------------- batch DBSCAN


def dbscan(n: int, dist: Callable[[int, int], float], eps: float, min_samples: int) -> list[int]:
    """Classic DBSCAN over ``n`` points; returns labels (-1 = noise). ``min_samples`` counts the point."""
    labels = [-2] * n  # -2 unvisited
    neigh = [[j for j in range(n) if dist(i, j) <= eps] for i in range(n)]
    cluster = -1
    for i in range(n):
        if labels[i] != -2:
            continue
        if len(neigh[i]) < min_samples:
            labels[i] = -1
            continue
        cluster += 1
        labels[i] = cluster
        queue = [j for j in neigh[i] if j != i]
        while queue:
            j = queue.pop()
            if labels[j] == -1:
                labels[j] = cluster
            if labels[j] != -2:
                continue
            labels[j] = cluster
            if len(neigh[j]) >= min_samples:
                queue.extend(k for k in neigh[j] if labels[k] in (-2, -1))
    return labels


def cluster_texts(texts: Sequence[str], home: Path | None = None) -> dict[str, Any]:
    """DBSCAN over embeddings (cosine distance, eps 0.3, min_samples 3) or, without them, over
    keyword TF vectors (eps 0.7). Returns {method, eps, min_samples, labels}."""
    vecs = embed(list(texts), home) if texts else None
    if vecs is not None:
        try:
            import numpy as np

            m = np.asarray(vecs, dtype="float32")
            norms = np.linalg.norm(m, axis=1, keepdims=True)
            m = m / np.where(norms == 0, 1, norms)
            d = 1.0 - m @ m.T
            labels = dbscan(len(texts), lambda i, j: float(d[i, j]), DBSCAN_EPS, DBSCAN_MIN_SAMPLES)
        except ImportError:
            labels = dbscan(len(texts), lambda i, j: 1.0 - vec_cosine(vecs[i], vecs[j]), DBSCAN_EPS,
                            DBSCAN_MIN_SAMPLES)
        return {"method": "dbscan-embeddings", "eps": DBSCAN_EPS, "min_samples": DBSCAN_MIN_SAMPLES,
                "labels": labels}
    tcs = [term_counts(t) for t in texts]
    labels = dbscan(len(texts), lambda i, j: 1.0 - tf_cosine(tcs[i], tcs[j]), KEYWORD_EPS, DBSCAN_MIN_SAMPLES)
    return {"method": "dbscan-keywords", "eps": KEYWORD_EPS, "min_samples": DBSCAN_MIN_SAMPLES, "labels": labels}
