"""Helpers for the semantic-tier tests: items in a real index.db, finding service processes."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sqlite3
import time
from pathlib import Path

import procs


def chash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def put_items(conn: sqlite3.Connection, items: list[tuple[str, str, str]]) -> None:
    """(id, type, text) rows into the index's items table (what sophia.index.store would do)."""
    conn.executemany(
        "INSERT INTO items(id, type, text, content_hash) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET type = excluded.type, text = excluded.text, "
        "content_hash = excluded.content_hash",
        [(i, t, x, chash(x)) for i, t, x in items],
    )
    conn.commit()


def service_pids(home: Path) -> list[int]:
    """Every live embedding-service process serving ``home`` (scans /proc)."""
    return [p for p in procs.live_pids() if procs.is_embed_service(p) and os.fsencode(str(home)) in procs.argv(p)]


def kill_services(home: Path) -> None:
    for pid in service_pids(home):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while service_pids(home) and time.monotonic() < deadline:
        time.sleep(0.05)
