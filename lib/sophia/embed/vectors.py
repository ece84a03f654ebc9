"""The ``vectors`` table of index.db: float32 little-endian BLOBs keyed by item id and content hash.

Standard library only. A vector is valid for an item while its ``content_hash`` equals the
item's; an item whose hash has a vector under this model (on itself or on another item with
the same text) is never embedded again (the hash is copied instead).

Schema (owned by the recall engineer's migrations in ``sophia.index``):
``items(id, type, text, content_hash, [embed_text], ...)`` and
``vectors(item_id TEXT PRIMARY KEY, content_hash TEXT NOT NULL, model TEXT NOT NULL,
dim INTEGER NOT NULL, vec BLOB NOT NULL)``. If ``items`` has an ``embed_text`` column, a
non-null value there is embedded instead of ``text``; ``content_hash`` must then cover it.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path


def connect(home: Path | None = None) -> sqlite3.Connection:
    """Open index.db through the index package (which creates and migrates it)."""
    from ..index.db import connect as index_connect

    return index_connect(home)


def pack(vec: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vec)}f", *vec)


def unpack(blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


def _text_expr(conn: sqlite3.Connection) -> str:
    """What gets embedded: ``items.embed_text`` when the index has that column and it is set
    (e.g. a turn with its neighbours as context), else ``items.text``."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(items)")}
    return "coalesce(i.embed_text, i.text)" if "embed_text" in cols else "i.text"


def pending(conn: sqlite3.Connection, model: str, limit: int) -> list[tuple[str, str, str]]:
    """Items with no vector for their current content hash under ``model``: (id, text, hash)."""
    return conn.execute(
        f"SELECT i.id, {_text_expr(conn)}, i.content_hash FROM items i "
        "LEFT JOIN vectors v ON v.item_id = i.id AND v.content_hash = i.content_hash AND v.model = ? "
        "WHERE v.item_id IS NULL ORDER BY i.rowid LIMIT ?",
        (model, limit),
    ).fetchall()


def by_hash(conn: sqlite3.Connection, model: str, hashes: Iterable[str]) -> dict[str, tuple[int, bytes]]:
    """Existing vectors for these content hashes (any item), as hash -> (dim, blob)."""
    out: dict[str, tuple[int, bytes]] = {}
    hs = list(dict.fromkeys(hashes))
    for i in range(0, len(hs), 500):
        chunk = hs[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for h, dim, blob in conn.execute(
            f"SELECT content_hash, dim, vec FROM vectors WHERE model = ? AND content_hash IN ({marks})",
            (model, *chunk),
        ):
            out.setdefault(h, (dim, blob))
    return out


def insert(conn: sqlite3.Connection, model: str, rows: Iterable[tuple[str, str, int, bytes]]) -> int:
    """Insert or replace (item_id, content_hash, dim, blob) rows; the caller commits."""
    cur = conn.executemany(
        "INSERT OR REPLACE INTO vectors(item_id, content_hash, model, dim, vec) VALUES (?, ?, ?, ?, ?)",
        [(iid, h, model, dim, blob) for iid, h, dim, blob in rows],
    )
    return cur.rowcount


def delete_orphans(conn: sqlite3.Connection) -> int:
    """Drop vectors whose item is gone (the index's delete_items may leave them)."""
    cur = conn.execute("DELETE FROM vectors WHERE item_id NOT IN (SELECT id FROM items)")
    return cur.rowcount


def counts(conn: sqlite3.Connection, model: str) -> dict[str, int]:
    items = conn.execute("SELECT count(*) FROM items").fetchone()[0]
    embedded = conn.execute(
        "SELECT count(*) FROM items i JOIN vectors v ON v.item_id = i.id "
        "AND v.content_hash = i.content_hash AND v.model = ?",
        (model,),
    ).fetchone()[0]
    return {"items": int(items), "embedded": int(embedded), "pending": int(items) - int(embedded)}
