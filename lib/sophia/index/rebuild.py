"""Rebuild the index from the files (the source of truth). Standard library only.

Reads ``episodes/*.json``, ``semantic_rules.json``, ``memory/<kind>.json`` (``{"items": [...]}``)
and ``memory/conversations/*.jsonl``, builds a fresh database next to the old one and swaps it
in atomically. Vectors whose item text is unchanged are carried over from the old database
(so a rebuild never re-embeds), when the old database is readable.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import read_json
from ..errors import StateFileError
from ..kinds import episode_item, rule_item
from ..locking import locked
from .conversations import conversation_files, iter_conversation

Progress = Callable[[int, int, str], None]


def _episode_files(home: Path) -> list[Path]:
    ed = paths.episodes_dir(home)
    if not ed.is_dir():
        return []
    return sorted(p for p in ed.glob("*.json")
                  if p.name != "index.json" and not p.name.startswith("index_archive_"))


def _memory_files(home: Path) -> list[Path]:
    md = paths.memory_dir(home)
    return sorted(md.glob("*.json")) if md.is_dir() else []


def iter_items(home: Path, skipped: list[str]) -> Iterator[tuple[str, Iterable[dict[str, Any]]]]:
    """(label, items) per source file; unreadable files are named in ``skipped``, never fatal."""
    for p in _episode_files(home):
        try:
            ep = read_json(p)
            if isinstance(ep, dict) and ep.get("id"):
                yield p.name, [episode_item(ep)]
        except (StateFileError, KeyError, TypeError, ValueError) as exc:
            skipped.append(f"{p}: {exc}")
    rp = paths.rules_path(home)
    try:
        rules = read_json(rp, default=[])
        if isinstance(rules, list):
            yield rp.name, [rule_item(r) for r in rules if isinstance(r, dict) and r.get("id")]
    except (StateFileError, KeyError, TypeError, ValueError) as exc:
        skipped.append(f"{rp}: {exc}")
    for p in _memory_files(home):
        try:
            data = read_json(p)
            items = data.get("items") if isinstance(data, dict) else None
            if isinstance(items, list):
                yield f"memory/{p.name}", [it for it in items if isinstance(it, dict)]
        except StateFileError as exc:
            skipped.append(f"{p}: {exc}")
    for p in conversation_files(home):
        yield f"conversations/{p.name}", iter_conversation(p)  # streamed: a conversation may hold millions


def count_sources(home: Path) -> int:
    return len(_episode_files(home)) + 1 + len(_memory_files(home)) + len(conversation_files(home))


def _carry_vectors(old: Path, conn: sqlite3.Connection) -> int:
    if not old.exists():
        return 0
    try:
        conn.execute("ATTACH DATABASE ? AS old", (f"file:{old}?mode=ro",))
    except sqlite3.Error:
        return 0
    try:
        cur = conn.execute("""INSERT OR REPLACE INTO vectors (item_id, content_hash, model, dim, vec)
                              SELECT v.item_id, v.content_hash, v.model, v.dim, v.vec FROM old.vectors v
                              JOIN items i ON i.id = v.item_id AND i.content_hash = v.content_hash""")
        return cur.rowcount or 0
    except sqlite3.Error:
        return 0
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("DETACH DATABASE old")


def _remove_db(p: Path) -> None:
    for f in (p, Path(f"{p}-wal"), Path(f"{p}-shm")):
        with contextlib.suppress(FileNotFoundError):
            f.unlink()


def rebuild(home: Path | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Rebuild index.db from the files; return counts (items, by type, skipped files, vectors kept).

    Invalid items are skipped (and named), never fatal."""
    from .db import connect
    from .store import normalize, upsert_items

    h = home or paths.sophia_home()
    target = paths.index_db_path(h)
    tmp = target.with_name(target.name + ".rebuild")
    skipped: list[str] = []
    total = count_sources(h)
    target.parent.mkdir(parents=True, exist_ok=True)
    with locked(target, timeout=60):
        _remove_db(tmp)
        conn = connect(h, path=tmp)
        try:
            for done, (label, items) in enumerate(iter_items(h, skipped), 1):
                good = []
                for it in items:
                    try:
                        normalize(it)
                        good.append(it)
                    except ValueError as exc:
                        skipped.append(f"{label}: {exc}")
                    if len(good) >= 1000:
                        upsert_items(conn, good)
                        good = []
                if good:
                    upsert_items(conn, good)
                if progress:
                    progress(min(done, total), total, label)
            kept = _carry_vectors(target, conn)
            by_type = dict(conn.execute("SELECT type, count(*) FROM items GROUP BY type").fetchall())
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        _remove_db(Path(f"{target}-wal"))
        _remove_db(Path(f"{target}-shm"))
        os.replace(tmp, target)
        with contextlib.suppress(FileNotFoundError):
            Path(f"{tmp}-wal").unlink()
        with contextlib.suppress(FileNotFoundError):
            Path(f"{tmp}-shm").unlink()
        os.chmod(target, 0o600)
    if progress:
        progress(total, total, "done")
    return {"items": sum(by_type.values()), "by_type": by_type, "skipped": skipped, "vectors_kept": kept,
            "db": str(target)}


def stats(home: Path | None = None) -> dict[str, Any]:
    """What the index holds (for ``s3 index``)."""
    from .db import connect

    h = home or paths.sophia_home()
    p = paths.index_db_path(h)
    conn = connect(h)
    try:
        by_type = dict(conn.execute("SELECT type, count(*) FROM items GROUP BY type").fetchall())
        vecs = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
        stale = conn.execute("SELECT count(*) FROM items i LEFT JOIN vectors v ON v.item_id = i.id "
                             "WHERE v.item_id IS NULL OR v.content_hash != i.content_hash").fetchone()[0]
        links = conn.execute("SELECT count(*) FROM links").fetchone()[0]
        migrations = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    finally:
        conn.close()
    size = sum(f.stat().st_size for f in (p, Path(f"{p}-wal")) if f.exists())
    return {"db": str(p), "items": sum(by_type.values()), "by_type": by_type, "vectors": vecs,
            "needs_embedding": stale, "links": links, "bytes": size, "migrations": migrations,
            "conversations": len(conversation_files(h))}


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)
