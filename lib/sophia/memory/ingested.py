"""Ingested conversations (``s3 ingest``) as memories: list their sources and MemCells, forget a
turn (``turn:SOURCE:ID``), a MemCell (``mc:SOURCE:N``) or a whole source.

The kept files (``memory/conversations/<source>.jsonl``, :mod:`sophia.ingest.core`) are the truth;
each removal also deletes the matching index rows (and their vectors).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..index.conversations import conversation_files, conversation_path, read_conversation, safe_source
from ..ingest.core import drop_turns, remove_conversation
from . import indexing

Removed = tuple[dict[str, Any], str]


def _split(mid: str) -> tuple[str, str, str] | None:
    """``turn:SOURCE:REST`` / ``mc:SOURCE:REST`` -> (prefix, source, rest); sources hold no ':'."""
    for prefix in ("turn:", "mc:"):
        if mid.startswith(prefix):
            source, sep, rest = mid[len(prefix):].partition(":")
            if source and sep and rest and safe_source(source) == source:
                return prefix, source, rest
    return None


def remove(mid: str, home: Path) -> Removed | None:
    """Forget one ingested turn or every turn of one ingested MemCell (files and index)."""
    parts = _split(mid)
    if parts is None:
        return None
    prefix, source, _ = parts
    key = "id" if prefix == "turn:" else "memcell_id"
    gone = drop_turns(source, lambda it: it.get(key) == mid, home)
    if not gone:
        return None
    indexing.delete([str(it["id"]) for it in gone], home)
    where = f"memory/conversations/{source}.jsonl"
    if prefix == "turn:":
        return gone[0], where
    return {"text": f"{len(gone)} turns: " + " / ".join(str(it.get("text") or "") for it in gone[:3])}, where


def forget_source(name: str, home: Path) -> dict[str, Any] | None:
    """Forget a whole ingested conversation: its file and every index row of its turns."""
    source = safe_source(name)
    turns = remove_conversation(source, home)
    removed: list[int] = []

    def change(conn: Any) -> None:
        from ..index import store

        removed.append(store.delete_source(conn, source))

    indexing.write(change, home)
    if not turns and not sum(removed):
        return None
    return {"source": source, "file": str(conversation_path(source, home)), "turns_removed": turns,
            "index_rows_removed": sum(removed)}


def _summary(path: Path) -> dict[str, Any]:
    turns = read_conversation(path)
    times = sorted(str(t.get("event_time") or t.get("timestamp")) for t in turns
                   if t.get("event_time") or t.get("timestamp"))
    projects = sorted({str(t["project"]) for t in turns if t.get("project")})
    return {"source": path.stem, "file": str(path), "turns": len(turns),
            "memcells": len({t.get("memcell_id") for t in turns if t.get("memcell_id")}),
            "first": times[0] if times else None, "last": times[-1] if times else None,
            "projects": projects,
            "speakers": sorted({str((t.get("meta") or {}).get("speaker")) for t in turns
                                if (t.get("meta") or {}).get("speaker")})}


def sources(home: Path) -> list[dict[str, Any]]:
    """One summary per kept conversation (``s3 list sources``)."""
    return [_summary(p) for p in conversation_files(home)]


def memcells(home: Path) -> list[dict[str, Any]]:
    """The MemCells ``s3 ingest`` segmented, each as the memcell item of its turns."""
    out: list[dict[str, Any]] = []
    for path in conversation_files(home):
        cells: dict[str, list[dict[str, Any]]] = {}
        for t in read_conversation(path):
            if t.get("memcell_id"):
                cells.setdefault(str(t["memcell_id"]), []).append(t)
        for mc_id, turns in cells.items():
            first = turns[0]
            out.append({
                "id": mc_id, "type": "memcell", "text": "\n".join(str(t.get("text") or "") for t in turns),
                "project": first.get("project"), "timestamp": first.get("timestamp"),
                "event_time": first.get("event_time"), "source_ids": [str(t["id"]) for t in turns],
                "meta": {"source": path.stem, "turns": len(turns)},
            })
    return out
