"""Index connections a long-lived process keeps open between requests (the resident hook runner).

Closing the last connection to a WAL database makes SQLite checkpoint it: copy the WAL into the file,
fsync it and delete the WAL. A hook that opens the index, writes one episode and closes paid that on
every Stop (18 ms of its 27 ms in the index on the dev machine, more on a busy one), and the prompt hook
reopened the file and read its schema on every prompt. A process that calls :func:`keep` (the resident,
once it serves) instead keeps one connection per index file: the WAL is checkpointed by SQLite's own
autocheckpoint (every 1,000 pages, in a commit) and whoever closes last. Everyone else (one-shot hooks,
the CLI) opens and closes as before: :func:`use` without :func:`keep` is ``db.connect`` and ``close``.

A kept connection is used again only while the path still names the file it opened (device and inode):
``s3 index rebuild`` replaces the file. A connection to a replaced file is never closed, only dropped
from use and held until the process ends, which never closes it (the resident leaves with ``os._exit``):
closing it would checkpoint into the old file and then delete the WAL by name, the new file's.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from .. import paths
from . import db

_KEEP = False
_open: dict[str, tuple[sqlite3.Connection, tuple[int, int]]] = {}
_retired: list[sqlite3.Connection] = []  # connections to a replaced file: held, never closed


def keep(on: bool = True) -> None:
    """From now on (``on``), :func:`use` keeps its connections open in this process."""
    global _KEEP
    _KEEP = on


def _kept(p: Path) -> sqlite3.Connection | None:
    """This process's open connection to the file ``p`` names now, if it has one."""
    entry = _open.get(str(p))
    if entry is None:
        return None
    conn, ident = entry
    if db.file_identity(p) == ident:
        return conn
    del _open[str(p)]
    _retired.append(conn)
    return None


@contextlib.contextmanager
def use(home: Path | None = None, *, read: bool = False) -> Iterator[sqlite3.Connection | None]:
    """A connection to the index of ``home``: ``read``: None when there is no index yet (nothing is
    created), else created and migrated as ``db.connect``. Closed afterwards unless :func:`keep` is on;
    a kept one is left outside any transaction."""
    p = paths.index_db_path(home)
    conn = _kept(p) if _KEEP else None
    if conn is None:
        if read and not p.exists():
            yield None
            return
        conn = db.connect(home) if not read else db.connect_for_read(home)
        if conn is None:
            yield None
            return
        ident = db.file_identity(p) if _KEEP else None
        if ident is None:
            try:
                yield conn
            finally:
                conn.close()
            return
        _open[str(p)] = (conn, ident)
    try:
        yield conn
    finally:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
