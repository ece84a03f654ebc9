"""Helpers for the semantic-tier tests: items in a real index.db, finding service processes."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sqlite3
import time
from pathlib import Path


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
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            stat = (d / "stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            continue  # zombie: exited, waiting to be reaped
        if b"sophia.embed.service" in argv and os.fsencode(str(home)) in argv:
            out.append(int(d.name))
    return out


def kill_services(home: Path) -> None:
    for pid in service_pids(home):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while service_pids(home) and time.monotonic() < deadline:
        time.sleep(0.05)
