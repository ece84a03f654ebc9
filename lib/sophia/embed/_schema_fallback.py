"""TEMPORARY: the two index tables this tier reads and writes, until the recall branch's
``sophia.index.db.connect`` (which owns the schema and its migrations) is merged.
Delete this module after merging ``recall``; nothing else should import it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .. import paths
from ..atomic import ensure_dir

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    item_id TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors_hash ON vectors(content_hash, model);
"""


def connect(home: Path | None = None) -> sqlite3.Connection:
    db = paths.index_db_path(home)
    ensure_dir(db.parent)
    conn = sqlite3.connect(db, timeout=10)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA)
    try:
        db.chmod(0o600)
    except OSError:
        pass
    return conn
