"""The derived SQLite index (``~/.sophia/index.db``): connection and ordered migrations.

Standard library only (hooks import it). Files under ``~/.sophia`` are the source of truth;
this database can always be rebuilt from them (``sophia.index.rebuild``).

Migrations are plain functions ``mNNN_name(conn)`` listed in ``MIGRATIONS`` in order; each runs
in one transaction and is recorded in ``_migrations`` (the simonw/llm pattern). Never edit a
released migration: append a new one.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from .. import paths

BUSY_TIMEOUT_MS = 5000


def m001_items(conn: sqlite3.Connection) -> None:
    conn.execute("""
        CREATE TABLE items (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            type TEXT NOT NULL,
            text TEXT NOT NULL,
            terms TEXT NOT NULL DEFAULT '',
            dl INTEGER NOT NULL DEFAULT 0,
            content_hash TEXT NOT NULL,
            project TEXT,
            timestamp TEXT,
            event_time TEXT,
            source_ids TEXT NOT NULL DEFAULT '[]',
            valid_from TEXT,
            valid_until TEXT,
            temporality TEXT,
            scene_id TEXT,
            memcell_id TEXT,
            links TEXT NOT NULL DEFAULT '[]',
            meta TEXT NOT NULL DEFAULT '{}',
            source TEXT,
            seq INTEGER,
            item_hash TEXT NOT NULL DEFAULT ''
        )""")
    conn.execute("CREATE INDEX items_type ON items(type)")
    conn.execute("CREATE INDEX items_memcell ON items(memcell_id, seq)")
    conn.execute("CREATE INDEX items_scene ON items(scene_id)")
    conn.execute("CREATE INDEX items_source_seq ON items(source, seq)")
    # Pre-stemmed terms (sophia.index.text.analyze), external content = items.terms.
    conn.execute("""
        CREATE VIRTUAL TABLE items_fts USING fts5(
            terms, content='items', content_rowid='rowid', tokenize='unicode61 remove_diacritics 0'
        )""")
    conn.execute("CREATE VIRTUAL TABLE items_vocab USING fts5vocab(items_fts, 'row')")
    conn.execute("CREATE TABLE corpus_stats (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL, "
                 "total_dl INTEGER NOT NULL)")
    conn.execute("INSERT INTO corpus_stats (id, n, total_dl) VALUES (1, 0, 0)")
    # one statement per execute(): executescript() would commit the migration's transaction
    for trigger in _TRIGGERS:
        conn.execute(trigger)


_TRIGGERS = (
    """CREATE TRIGGER items_ai AFTER INSERT ON items BEGIN
            INSERT INTO items_fts(rowid, terms) VALUES (new.rowid, new.terms);
            UPDATE corpus_stats SET n = n + 1, total_dl = total_dl + new.dl WHERE id = 1;
        END""",
    """CREATE TRIGGER items_ad AFTER DELETE ON items BEGIN
            INSERT INTO items_fts(items_fts, rowid, terms) VALUES ('delete', old.rowid, old.terms);
            UPDATE corpus_stats SET n = n - 1, total_dl = total_dl - old.dl WHERE id = 1;
        END""",
    """CREATE TRIGGER items_au AFTER UPDATE OF terms, dl ON items BEGIN
            INSERT INTO items_fts(items_fts, rowid, terms) VALUES ('delete', old.rowid, old.terms);
            INSERT INTO items_fts(rowid, terms) VALUES (new.rowid, new.terms);
            UPDATE corpus_stats SET total_dl = total_dl - old.dl + new.dl WHERE id = 1;
        END""",
)


def m002_links(conn: sqlite3.Connection) -> None:
    # Stored on both ends (P2-1): a link a->b is also kept as b->a.
    conn.execute("""
        CREATE TABLE links (
            src TEXT NOT NULL,
            dst TEXT NOT NULL,
            relation TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (src, dst)
        ) WITHOUT ROWID""")


def m003_vectors(conn: sqlite3.Connection) -> None:
    # Filled by the embedding service (sophia.embed); float32 little-endian.
    conn.execute("""
        CREATE TABLE vectors (
            item_id TEXT PRIMARY KEY,
            content_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL
        )""")
    conn.execute("CREATE INDEX vectors_hash ON vectors(content_hash, model)")


def m004_cjk_bigrams(conn: sqlite3.Connection) -> None:
    # text.ANALYZER_VERSION 2: scripts without spaces became character bigrams. Re-analyse the items
    # whose text is not ASCII (the triggers refresh FTS5 and the corpus stats); the others are unchanged.
    from .text import analyze

    for rowid, text, terms in conn.execute("SELECT rowid, text, terms FROM items").fetchall():
        if not text or text.isascii():
            continue
        new = analyze(text)
        if " ".join(new) != terms:
            conn.execute("UPDATE items SET terms = ?, dl = ? WHERE rowid = ?", (" ".join(new), len(new), rowid))


def m005_notes_fts(conn: sqlite3.Connection) -> None:
    # A second FTS5 index (same external content, items.terms) over every item that is not of a bulk kind
    # (kinds.bulk_types(): ingested conversation turns, as of this migration). A recall limited to other
    # kinds draws its candidates here instead of filtering a million turns' matches one by one
    # (search.keyword_scores). A later bulk kind needs a new migration that rebuilds these triggers.
    from ..kinds import bulk_types

    not_bulk = "NOT IN (" + ", ".join("'" + t.replace("'", "''") + "'" for t in bulk_types()) + ")"
    conn.execute("""
        CREATE VIRTUAL TABLE notes_fts USING fts5(
            terms, content='items', content_rowid='rowid', tokenize='unicode61 remove_diacritics 0'
        )""")
    conn.execute("CREATE VIRTUAL TABLE notes_vocab USING fts5vocab(notes_fts, 'row')")
    conn.execute(f"INSERT INTO notes_fts(rowid, terms) SELECT rowid, terms FROM items WHERE type {not_bulk}")
    conn.execute(f"""CREATE TRIGGER notes_ai AFTER INSERT ON items WHEN new.type {not_bulk} BEGIN
            INSERT INTO notes_fts(rowid, terms) VALUES (new.rowid, new.terms);
        END""")
    conn.execute(f"""CREATE TRIGGER notes_ad AFTER DELETE ON items WHEN old.type {not_bulk} BEGIN
            INSERT INTO notes_fts(notes_fts, rowid, terms) VALUES ('delete', old.rowid, old.terms);
        END""")
    conn.execute(f"""CREATE TRIGGER notes_au AFTER UPDATE OF terms, type ON items BEGIN
            INSERT INTO notes_fts(notes_fts, rowid, terms) SELECT 'delete', old.rowid, old.terms
                WHERE old.type {not_bulk};
            INSERT INTO notes_fts(rowid, terms) SELECT new.rowid, new.terms WHERE new.type {not_bulk};
        END""")


def _terms_json(col: str) -> str:
    """SQL making ``col`` (analysed terms, letters and digits, joined by spaces) a JSON array of its terms
    for ``json_each``; a quote or backslash is escaped and tabs or line breaks split all the same."""
    esc = f"replace(replace({col}, '\\', '\\\\'), '\"', '\\\"')"
    for ws in ("char(9)", "char(10)", "char(13)"):
        esc = f"replace({esc}, {ws}, ' ')"
    return f"json_each('[\"' || replace({esc}, ' ', '\",\"') || '\"]')"


def m006_items_df(conn: sqlite3.Connection) -> None:
    # The document frequency of every term of items_fts, kept by triggers as items change. items_vocab
    # (fts5vocab) counts a term by walking its whole doclist on every lookup: at a million turns the
    # ~100 terms of a feedback round cost ~200 ms (issue 30). Filled from items_vocab, so it starts equal
    # to FTS5's own count; the triggers count an item's distinct terms once, as FTS5 does.
    conn.execute("CREATE TABLE items_df (term TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID")
    conn.execute("INSERT INTO items_df (term, doc) SELECT term, doc FROM items_vocab")
    add = (f"INSERT INTO items_df (term, doc) SELECT DISTINCT value, 1 FROM {_terms_json('new.terms')} "
           "WHERE value <> '' ON CONFLICT (term) DO UPDATE SET doc = doc + 1;")
    sub = (f"UPDATE items_df SET doc = doc - 1 WHERE term IN (SELECT value FROM {_terms_json('old.terms')});"
           f" DELETE FROM items_df WHERE doc <= 0 AND term IN (SELECT value FROM {_terms_json('old.terms')});")
    conn.execute(f"CREATE TRIGGER items_df_ai AFTER INSERT ON items BEGIN {add} END")
    conn.execute(f"CREATE TRIGGER items_df_ad AFTER DELETE ON items BEGIN {sub} END")
    conn.execute(f"CREATE TRIGGER items_df_au AFTER UPDATE OF terms ON items WHEN old.terms IS NOT new.terms "
                 f"BEGIN {sub} {add} END")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [m001_items, m002_links, m003_vectors, m004_cjk_bigrams,
                                                         m005_notes_fts, m006_items_df]


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, None when there is none: what tells an index file that
    ``s3 index rebuild`` put in its place from the one a long-lived process opened."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _secure(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(OSError):
            if p.exists():
                os.chmod(p, 0o600)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order; return the names applied."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
    applied = []
    for fn in MIGRATIONS:
        name = fn.__name__
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # another process may have applied it while we waited for the write lock
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                conn.execute("COMMIT")
                continue
            fn(conn)
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, datetime('now'))", (name,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


def open_db(path: Path, *, readonly: bool = False, busy_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """Open the index file (WAL, busy timeout, 0600) without migrating."""
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None,
                               timeout=busy_ms / 1000, check_same_thread=False)
    else:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        old = os.umask(0o077)
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                   check_same_thread=False)
        finally:
            os.umask(old)
    conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
    if not readonly:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def connect(home: Path | None = None, *, path: Path | None = None) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the index db of ``home``.

    The connection is in autocommit mode (``isolation_level=None``): writers wrap their
    batches in explicit ``BEGIN IMMEDIATE`` / ``COMMIT`` (see ``sophia.index.store``).
    """
    p = path or paths.index_db_path(home)
    conn = open_db(p)
    try:
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    _secure(p)
    return conn


def is_current(conn: sqlite3.Connection) -> bool:
    try:
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
    except sqlite3.Error:
        return False
    return all(fn.__name__ in done for fn in MIGRATIONS)


def read_only(home: Path | None, timeout: float) -> sqlite3.Connection | None:
    """A read-only connection that never creates, migrates or waits long: None when there is no index.
    For looks that must not disturb a writer (is there anything to embed, how many are embedded)."""
    p = paths.index_db_path(home)
    return open_db(p, readonly=True, busy_ms=int(timeout * 1000)) if p.exists() else None


def connect_for_read(home: Path | None = None) -> sqlite3.Connection | None:
    """A connection for queries: None when there is no index yet (nothing to search).

    Migrates when the schema is behind (needs write access)."""
    p = paths.index_db_path(home)
    if not p.exists():
        return None
    conn = open_db(p)
    if not is_current(conn):
        migrate(conn)
    return conn
