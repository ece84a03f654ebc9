"""Ingest conversations: keep the raw turns as files (redacted), index them as ``turn`` items.

The file ``memory/conversations/<source>.jsonl`` holds one turn item per line (the item shape of
the memory index contract, with speaker/session/dia_id in ``meta``); it is the source of truth,
so ``sophia.index.rebuild`` reads it back verbatim. Re-ingesting a source merges by turn id
(idempotent). Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import ensure_dir, write_bytes_atomic
from ..index.conversations import conversation_path, read_conversation, safe_source
from ..locking import locked
from ..redact import redact
from ..timeutil import iso, parse
from .formats import IngestError, IngestInterrupted, Turn
from .memcell import Boundaries, segment

Progress = Callable[[int, int, str], None]


def _write_conversation(path: Path, items: list[dict[str, Any]]) -> None:
    data = "".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items).encode("utf-8")
    write_bytes_atomic(path, data)


def drop_turns(source: str, drop: Callable[[dict[str, Any]], bool], home: Path | None = None) -> list[dict[str, Any]]:
    """Remove the turns ``drop`` selects from a kept conversation (under its lock); return them.
    The last turn gone removes the file."""
    path = conversation_path(source, home)
    if not path.exists():
        return []
    with locked(path):
        items = read_conversation(path)
        gone = [it for it in items if drop(it)]
        if gone:
            kept = [it for it in items if not drop(it)]
            if kept:
                _write_conversation(path, kept)
            else:
                path.unlink(missing_ok=True)
    return gone


def turn_items(source: str, turns: list[Turn], cfg: Boundaries = Boundaries()) -> list[dict[str, Any]]:
    """Turn records (in conversation order) -> turn items with seq and MemCell ids."""
    from ..index.text import analyze

    src = safe_source(source)
    texts = [redact(t["text"]) for t in turns]
    cells = segment([t.get("session") for t in turns], [parse(t.get("time")) for t in turns],
                    [analyze(x) for x in texts], cfg)
    items = []
    for seq, (t, text, cell) in enumerate(zip(turns, texts, cells, strict=True)):
        meta: dict[str, Any] = {"speaker": t.get("speaker"), "session": t.get("session"), "seq": seq,
                                "source": src, "sid": t["sid"]}
        meta.update(t.get("extra") or {})
        items.append({
            "id": f"turn:{src}:{t['sid']}",
            "type": "turn",
            "text": text,
            "project": t.get("project"),
            "timestamp": t.get("recorded") or t.get("time"),  # record time: when first ingested
            "event_time": t.get("time"),
            "source_ids": [t["sid"]],
            "valid_from": None, "valid_until": None, "temporality": None, "scene_id": None,
            "memcell_id": f"mc:{src}:{cell}",
            "links": [],
            "meta": meta,
        })
    return items


def _merge(existing: list[dict[str, Any]], new: list[Turn]) -> list[Turn]:
    """Existing turns (as records) updated/extended by the new ones, order kept."""
    order: list[str] = []
    by_sid: dict[str, Turn] = {}
    for it in existing:
        m = it.get("meta") or {}
        sid = str(m.get("sid") or (it.get("source_ids") or [it["id"]])[0])
        extra = {k: m[k] for k in ("blip_caption", "img_url", "query") if m.get(k)}
        by_sid[sid] = {"sid": sid, "session": m.get("session"), "speaker": m.get("speaker"),
                       "text": it["text"], "time": it.get("event_time") or it.get("timestamp"),
                       "extra": extra, "project": it.get("project"), "recorded": it.get("timestamp")}
        order.append(sid)
    stamp = iso()
    for t in new:
        if t["sid"] not in by_sid:
            order.append(t["sid"])
        prev = by_sid.get(t["sid"])
        t["recorded"] = (prev or {}).get("recorded") or stamp
        by_sid[t["sid"]] = t
    return [by_sid[s] for s in order]


def ingest_conversations(convs: Iterable[tuple[str, list[Turn]]], *, home: Path | None = None,
                         progress: Progress | None = None, project: str | None = None,
                         nudge: bool = True) -> dict[str, Any]:
    """Keep and index each conversation; return counts. Raises IngestError on bad input and
    IngestInterrupted (a KeyboardInterrupt) on Ctrl-C, saying how many conversations were done."""
    from ..index.db import connect
    from ..index.store import upsert_items

    h = home or paths.sophia_home()
    convs = list(convs)
    total = sum(len(t) for _, t in convs)
    done = 0
    summary: dict[str, Any] = {"conversations": [], "turns": 0, "indexed": 0, "memcells": 0}
    conn = connect(h)
    try:
        for source, turns in convs:
            if not turns:
                continue
            if project:
                for t in turns:
                    t["project"] = project
            path = conversation_path(source, h)
            ensure_dir(path.parent)
            with locked(path):
                merged = _merge(read_conversation(path), turns)
                items = turn_items(source, merged)
                _write_conversation(path, items)
            changed = 0
            for i in range(0, len(items), 500):
                changed += upsert_items(conn, items[i:i + 500])
                if progress:
                    progress(done + len(turns) * min(i + 500, len(items)) // len(items), total,
                             safe_source(source))
            done += len(turns)
            summary["conversations"].append({"source": safe_source(source), "turns": len(items),
                                             "file": str(path)})
            summary["turns"] += len(items)
            summary["indexed"] += changed
            summary["memcells"] += len({it["memcell_id"] for it in items})
    except KeyboardInterrupt:
        raise IngestInterrupted(len(summary["conversations"]), sum(1 for _, t in convs if t),
                                summary["turns"]) from None
    finally:
        conn.close()
    if progress:
        progress(total, total, "done")
    if nudge:
        summary["embedding"] = request_embed(h)
    return summary


def request_embed(home: Path | None = None) -> bool:
    """Ask the embedding service to embed what is new (starting it if none runs); True only when it took
    the request (False with the semantic tier off or no service answering). Never fails."""
    from ..embed_client import client

    try:
        return bool(client.request_embed(home=home))
    except Exception:  # noqa: BLE001 - a failed nudge never fails an ingest
        return False


def ingest_file(path: Path, fmt: str | None = None, *, home: Path | None = None, progress: Progress | None = None,
                source: str | None = None, project: str | None = None, nudge: bool = True) -> dict[str, Any]:
    """Ingest one file; ``fmt`` None = detected from the file (``formats.detect_format``)."""
    from .formats import detect_format, read_jsonl, read_locomo

    detected = fmt is None
    fmt = fmt or detect_format(path)
    if fmt == "locomo":
        convs = list(read_locomo(path))
    elif fmt == "jsonl":
        convs = list(read_jsonl(path, source))
    else:
        raise IngestError(f"unknown format {fmt!r} (locomo or jsonl)")
    if not any(t for _, t in convs):
        raise IngestError(f"{path}: no turns found")
    summary = ingest_conversations(convs, home=home, progress=progress, project=project, nudge=nudge)
    summary["format"] = fmt
    summary["format_detected"] = detected
    return summary
