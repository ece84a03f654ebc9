"""The bridge to the derived SQLite index: every write of ``sophia.memory`` reaches it through
:func:`write` (the one writer; :func:`upsert` and :func:`delete` use it).

Files are the truth: when the index fails, the write still stands and the caller reports that
the index was not updated (``s3 index --rebuild`` re-derives it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..index import db, store
from ..kinds import episode_item, index_view, rule_item

__all__ = ["write", "upsert", "delete", "episode_item", "rule_item"]


def write(change: Callable[[Any], object], home: Path | None) -> bool:
    """Run ``change(conn)`` on the index; False when the index could not take it."""
    try:
        conn = db.connect(home)
        try:
            change(conn)
        finally:
            conn.close()
    except Exception:  # noqa: BLE001 - the index is derived; a rebuild repairs it
        return False
    return True


def upsert(items: list[dict[str, Any]], home: Path | None = None) -> bool:
    if not items:
        return True
    return write(lambda conn: store.upsert_items(conn, [index_view(i) for i in items]), home)


def delete(ids: list[str], home: Path | None = None) -> bool:
    if not ids:
        return True
    return write(lambda conn: store.delete_items(conn, ids), home)
