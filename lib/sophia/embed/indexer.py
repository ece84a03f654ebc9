"""Write-time embedding: find items whose content hash has no vector, embed them in batches.

``sync`` takes the encoder as a callable (``texts -> rows of floats``) so the service passes
the MiniLM model and the tests can count exactly what gets encoded.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from ..embed_client.protocol import MAX_TEXT_CHARS
from . import vectors

Encoder = Callable[[list[str]], Any]  # returns an (n, dim) array-like of floats


def _pack_rows(mat: Any) -> list[tuple[int, bytes]]:
    try:
        import numpy as np
    except ImportError:
        return [(len(r), vectors.pack(list(r))) for r in mat]
    arr = np.asarray(mat, dtype="<f4")
    return [(int(arr.shape[1]), arr[i].tobytes()) for i in range(arr.shape[0])]


def sync(
    conn: sqlite3.Connection,
    encode: Encoder,
    model: str,
    *,
    batch_size: int = 64,
    stop: Callable[[], bool] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Embed every pending item; returns {"embedded": texts encoded, "copied": vectors reused}.

    Commits after each batch, so an interrupted sync keeps what it did. Each fetched block is
    encoded in order of text length, so a batch pads its texts to similar lengths: on LoCoMo turns
    that makes bulk embedding 1.6x faster than batches in arrival order (docs/benchmarks.md).
    """
    done = {"embedded": 0, "copied": 0}
    fetch = max(batch_size * 32, 1024)
    while not (stop and stop()):
        rows = vectors.pending(conn, model, fetch)
        if not rows:
            break
        known = vectors.by_hash(conn, model, (h for _, _, h in rows))
        copies = [(iid, h, *known[h]) for iid, _, h in rows if h in known]
        if copies:
            vectors.insert(conn, model, copies)
            conn.commit()
            done["copied"] += len(copies)
        # one encode per distinct hash; every item with that hash gets the vector
        by_h: dict[str, list[str]] = {}
        texts: dict[str, str] = {}
        for iid, text, h in rows:
            if h in known:
                continue
            by_h.setdefault(h, []).append(iid)
            texts.setdefault(h, (text or "")[:MAX_TEXT_CHARS])
        hashes = sorted(by_h, key=lambda h: len(texts[h]))
        for i in range(0, len(hashes), batch_size):
            if stop and stop():
                return done
            chunk: Sequence[str] = hashes[i : i + batch_size]
            mat = encode([texts[h] for h in chunk])
            packed = _pack_rows(mat)
            out = [(iid, h, dim, blob) for h, (dim, blob) in zip(chunk, packed, strict=True) for iid in by_h[h]]
            vectors.insert(conn, model, out)
            conn.commit()
            done["embedded"] += len(chunk)
            if on_progress:
                on_progress(len(chunk))
    return done
