"""Asking the semantic tier without waiting on it. Standard library only.

``Pending`` sends the query to the embedding service (``sophia.embed_client.client``) from a daemon
thread, so the service computes the query embedding while this process does its own work
(imports, keyword scoring); ``get()`` then collects the hits. When the service is not warm, the
client answers None at once and recall is keyword-only. ``SOPHIA_RECALL_SEMANTIC=0`` skips it.
A cold service is started only when the index holds something to embed: a recall on an empty
store spends neither the start attempt nor its cool-down.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

SEMANTIC_K = 100
TIMEOUT = 0.2

Hits = list[tuple[str, float]]


def enabled() -> bool:
    return os.environ.get("SOPHIA_RECALL_SEMANTIC", "1") != "0"


def worth_starting(home: Path | None) -> bool:
    """True when index.db holds at least one item (asked only when no service answered)."""
    import sqlite3

    from .db import read_only

    try:
        conn = read_only(home, timeout=0.2)
        if conn is None:
            return False
        try:
            return conn.execute("SELECT EXISTS (SELECT 1 FROM items)").fetchone()[0] == 1
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def ask(query: str, k: int, home: Path | None, types: list[str] | None) -> Hits | None:
    """The semantic tier's hits, best first, or None (not installed, not warm, too slow)."""
    if not enabled():
        return None
    try:
        from ..embed_client import client
    except Exception:
        return None
    try:
        return client.search(query, k, home=home, types=types, timeout=TIMEOUT,
                             start=lambda: worth_starting(home))
    except Exception:
        return None


class Pending:
    """A semantic search under way."""

    def __init__(self, query: str, k: int, home: Path | None, types: list[str] | None):
        self.result: Hits | None = None
        self._thread = threading.Thread(target=self._run, args=(query, k, home, types), daemon=True)
        self._thread.start()

    def _run(self, query: str, k: int, home: Path | None, types: list[str] | None) -> None:
        self.result = ask(query, k, home, types)

    def get(self) -> Hits | None:
        self._thread.join(TIMEOUT + 0.3)
        return None if self._thread.is_alive() else self.result


def start(query: str, k: int, home: Path | None, types: list[str] | None) -> Pending | None:
    if not enabled() or not isinstance(query, str) or not query.strip():
        return None
    return Pending(query, k, home, types)
