"""Writing items into the index: ``upsert_items`` / ``delete_items``. Standard library only.

Idempotent: an item whose normalised form did not change is not rewritten (``item_hash``);
``content_hash`` is the sha256 of the text, which the embedding service uses to know what
needs (re-)embedding. Links are stored on both ends.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from .. import kinds
from ..timeutil import iso, parse
from .text import analyze

_CHUNK = 400


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _opt_str(item: dict[str, Any], key: str) -> str | None:
    v = item.get(key)
    if v is None or v == "":
        return None
    return str(v)


_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def norm_time(value: Any, *, end_of_day: bool = False) -> str | None:
    """ISO UTC with Z (so times compare as strings); a bare date as the day's start (or end)."""
    if value is None or value == "":
        return None
    s = str(value).strip()
    d = parse(s)
    if d is None:
        return s
    if end_of_day and _DATE_ONLY.match(s):
        d = d.replace(hour=23, minute=59, second=59)
    return iso(d)


def normalize(item: dict[str, Any]) -> dict[str, Any]:
    """Check one item and bring it to the stored shape (raises ValueError naming the problem)."""
    if not isinstance(item, dict):
        raise ValueError(f"an item must be a JSON object, got {type(item).__name__}")
    iid = item.get("id")
    if not isinstance(iid, str) or not iid.strip():
        raise ValueError("an item needs a non-empty string 'id'")
    typ = item.get("type")
    if not isinstance(typ, str) or kinds.get(typ) is None:
        raise ValueError(f"item {iid}: unknown type {typ!r} (one of {', '.join(sorted(kinds.item_types()))})")
    text = item.get("text")
    if not isinstance(text, str):
        raise ValueError(f"item {iid}: 'text' must be a string")
    src = item.get("source_ids") or []
    if not isinstance(src, list):
        raise ValueError(f"item {iid}: 'source_ids' must be a list")
    links = item.get("links") or []
    if not isinstance(links, list):
        raise ValueError(f"item {iid}: 'links' must be a list of {{id, relation}}")
    clean_links = []
    for ln in links:
        if isinstance(ln, str):
            ln = {"id": ln}
        if not isinstance(ln, dict) or not isinstance(ln.get("id"), str) or not ln["id"]:
            raise ValueError(f"item {iid}: each link needs an 'id'")
        clean_links.append({"id": ln["id"], "relation": str(ln.get("relation") or "")})
    meta = item.get("meta") or {}
    if not isinstance(meta, dict):
        raise ValueError(f"item {iid}: 'meta' must be an object")
    temporality = _opt_str(item, "temporality")
    seq = item.get("seq", meta.get("seq"))
    row = {
        "id": iid,
        "type": typ,
        "text": text,
        "project": _opt_str(item, "project"),
        "timestamp": norm_time(item.get("timestamp")),
        "event_time": norm_time(item.get("event_time")),
        "source_ids": [str(s) for s in src],
        "valid_from": norm_time(item.get("valid_from")),
        "valid_until": norm_time(item.get("valid_until"), end_of_day=True),
        "temporality": temporality,
        "scene_id": _opt_str(item, "scene_id"),
        "memcell_id": _opt_str(item, "memcell_id"),
        "links": clean_links,
        "meta": meta,
        "source": _opt_str(item, "source") or (str(meta["source"]) if meta.get("source") else None),
        "seq": int(seq) if isinstance(seq, (int, float)) and not isinstance(seq, bool) else None,
    }
    return row


def _item_hash(row: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)
                          .encode("utf-8")).hexdigest()


def _declared_links(conn: sqlite3.Connection, iid: str) -> dict[str, str]:
    r = conn.execute("SELECT links FROM items WHERE id = ?", (iid,)).fetchone()
    if not r:
        return {}
    try:
        return {ln["id"]: ln.get("relation", "") for ln in json.loads(r[0] or "[]")}
    except (ValueError, TypeError, KeyError):
        return {}


def _unlink(conn: sqlite3.Connection, iid: str, others: Iterable[str]) -> None:
    for other in others:
        if iid in _declared_links(conn, other):
            continue  # the other end still declares the link
        conn.execute("DELETE FROM links WHERE (src = ? AND dst = ?) OR (src = ? AND dst = ?)",
                     (iid, other, other, iid))


def _write(conn: sqlite3.Connection, rows: list[dict[str, Any]], analysed: dict[str, list[str]]) -> int:
    changed = 0
    for i in range(0, len(rows), _CHUNK):
        chunk = rows[i:i + _CHUNK]
        ids = [r["id"] for r in chunk]
        marks = ",".join("?" * len(ids))
        old = {r[0]: (r[1], r[2]) for r in conn.execute(
            f"SELECT id, item_hash, links FROM items WHERE id IN ({marks})", ids)}
        for row in chunk:
            h = _item_hash(row)
            prev = old.get(row["id"])
            if prev and prev[0] == h:
                continue
            terms = analysed.get(row["id"])
            if terms is None:
                terms = analyze(row["text"])
            conn.execute(
                """INSERT INTO items (id, type, text, terms, dl, content_hash, project, timestamp, event_time,
                       source_ids, valid_from, valid_until, temporality, scene_id, memcell_id, links, meta,
                       source, seq, item_hash)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(id) DO UPDATE SET type = excluded.type, text = excluded.text,
                       terms = excluded.terms, dl = excluded.dl, content_hash = excluded.content_hash,
                       project = excluded.project, timestamp = excluded.timestamp,
                       event_time = excluded.event_time, source_ids = excluded.source_ids,
                       valid_from = excluded.valid_from, valid_until = excluded.valid_until,
                       temporality = excluded.temporality, scene_id = excluded.scene_id,
                       memcell_id = excluded.memcell_id, links = excluded.links, meta = excluded.meta,
                       source = excluded.source, seq = excluded.seq, item_hash = excluded.item_hash""",
                (row["id"], row["type"], row["text"], " ".join(terms), len(terms), content_hash(row["text"]),
                 row["project"], row["timestamp"], row["event_time"],
                 json.dumps(row["source_ids"], ensure_ascii=False), row["valid_from"], row["valid_until"],
                 row["temporality"], row["scene_id"], row["memcell_id"],
                 json.dumps(row["links"], ensure_ascii=False), json.dumps(row["meta"], ensure_ascii=False,
                                                                          default=str),
                 row["source"], row["seq"], h))
            new_links = {ln["id"]: ln["relation"] for ln in row["links"]}
            if prev:
                try:
                    old_links = {ln["id"] for ln in json.loads(prev[1] or "[]")}
                except (ValueError, TypeError, KeyError):
                    old_links = set()
                _unlink(conn, row["id"], old_links - set(new_links))
            for other, rel in new_links.items():
                if other == row["id"]:
                    continue
                conn.executemany("INSERT OR REPLACE INTO links (src, dst, relation) VALUES (?, ?, ?)",
                                 [(row["id"], other, rel), (other, row["id"], rel)])
            changed += 1
    return changed


def upsert_items(conn: sqlite3.Connection, items: list[dict[str, Any]], *,
                 analysed: dict[str, list[str]] | None = None) -> int:
    """Insert or update ``items`` in one transaction; return how many were new or changed.

    ``analysed``: item id -> ``text.analyze`` of its text, when the caller already has it (ingest).
    Raises ValueError (nothing written) when an item is malformed."""
    by_id: dict[str, dict[str, Any]] = {}
    for item in items:
        row = normalize(item)
        by_id[row["id"]] = row  # the last one wins within a batch
    if not by_id:
        return 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        n = _write(conn, list(by_id.values()), analysed or {})
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if n:  # a running embedding service embeds the new text within seconds (never starts one)
        from ..embed_client.client import index_written

        index_written(conn)
    return n


def delete_items(conn: sqlite3.Connection, ids: Iterable[str]) -> int:
    """Delete items (and their vectors and the links they declared); return how many existed."""
    id_list = [str(i) for i in ids]
    if not id_list:
        return 0
    n = 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        for iid in id_list:
            declared = _declared_links(conn, iid)
            cur = conn.execute("DELETE FROM items WHERE id = ?", (iid,))
            if cur.rowcount:
                n += 1
                _unlink(conn, iid, declared)
            conn.execute("DELETE FROM vectors WHERE item_id = ?", (iid,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return n


def all_ids(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT id FROM items")}


def delete_source(conn: sqlite3.Connection, source: str, chunk: int = 5000) -> int:
    """Delete every indexed turn of one ingested conversation, ``chunk`` at a time (bounded memory at a
    million turns); return how many."""
    n = 0
    while True:
        ids = [r[0] for r in conn.execute("SELECT id FROM items WHERE type = 'turn' AND source = ? LIMIT ?",
                                          (source, chunk))]
        if not ids:
            return n
        n += delete_items(conn, ids)
