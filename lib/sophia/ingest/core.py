"""Ingest conversations: keep the raw turns as files (redacted), index them as ``turn`` items.

The file ``memory/conversations/<source>.jsonl`` holds one turn item per line (the item shape of
the memory index contract, with speaker/session/dia_id in ``meta``); it is the source of truth,
so ``sophia.index.rebuild`` reads it back verbatim. Re-ingesting a source merges by turn id
(idempotent). Standard library only.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sized
from pathlib import Path
from types import TracebackType
from typing import Any

from .. import paths
from ..atomic import ensure_dir, write_bytes_atomic
from ..index.conversations import conversation_path, iter_conversation, safe_source
from ..locking import locked
from ..redact import redact
from ..timeutil import iso, parse
from .formats import IngestError, IngestInterrupted, Turn
from .memcell import Boundaries, Cue, segment_stream
from .staging import Staging

BATCH = 2000  # turns per index transaction

Progress = Callable[[int, int, str], None]


def _write_conversation(path: Path, items: list[dict[str, Any]]) -> None:
    data = "".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items).encode("utf-8")
    write_bytes_atomic(path, data)


def drop_turns(source: str, drop: Callable[[dict[str, Any]], bool], home: Path | None = None) -> list[dict[str, Any]]:
    """Remove the turns ``drop`` selects from a kept conversation (under its lock, streaming the ones
    kept); return the removed. The last turn gone removes the file."""
    path = conversation_path(source, home)
    if not path.exists():
        return []
    gone: list[dict[str, Any]] = []
    kept = 0
    with locked(path):
        with _Lines(path) as fh:
            for it in iter_conversation(path):
                if drop(it):
                    gone.append(it)
                else:
                    fh.write(it)
                    kept += 1
            if not gone:
                fh.discard()
        if gone and not kept:
            path.unlink(missing_ok=True)
    return gone


def remove_conversation(source: str, home: Path | None = None) -> int:
    """Delete a kept conversation's file under its lock; return how many turns it held (counted while
    streaming, never all in memory: a source can hold a million)."""
    path = conversation_path(source, home)
    if not path.exists():
        return 0
    with locked(path):
        n = sum(1 for _ in iter_conversation(path))
        path.unlink(missing_ok=True)
    return n


def _turn_item(src: str, seq: int, t: Turn, cell: int) -> dict[str, Any]:
    meta: dict[str, Any] = {"speaker": t.get("speaker"), "session": t.get("session"), "seq": seq,
                            "source": src, "sid": t["sid"]}
    meta.update(t.get("extra") or {})
    return {
        "id": f"turn:{src}:{t['sid']}",
        "type": "turn",
        "text": t["text"],
        "project": t.get("project"),
        "timestamp": t.get("recorded") or t.get("time"),  # record time: when first ingested
        "event_time": t.get("time"),
        "source_ids": [t["sid"]],
        "valid_from": None, "valid_until": None, "temporality": None, "scene_id": None,
        "memcell_id": f"mc:{src}:{cell}",
        "links": [],
        "meta": meta,
    }


def _items(src: str, turns: Iterable[Turn], cfg: Boundaries = Boundaries()) -> Iterator[tuple[dict[str, Any], list[str], int]]:
    """(turn item, its analysed terms, its MemCell number) for turns whose text is already redacted, in
    order; the segmenter reads a few turns ahead, so only those few are held."""
    from ..index.text import analyze

    pending: deque[tuple[Turn, list[str]]] = deque()

    def cues() -> Iterator[Cue]:
        for t in turns:
            terms = analyze(t["text"])
            pending.append((t, terms))
            yield t.get("session"), parse(t.get("time")), terms

    for seq, cell in enumerate(segment_stream(cues(), cfg)):
        t, terms = pending.popleft()
        yield _turn_item(src, seq, t, cell), terms, cell


def turn_items(source: str, turns: list[Turn], cfg: Boundaries = Boundaries()) -> list[dict[str, Any]]:
    """Turn records (in conversation order) -> turn items with seq and MemCell ids."""
    red = ({**t, "text": redact(t["text"])} for t in turns)
    return [item for item, _, _ in _items(safe_source(source), red, cfg)]


class _Lines:
    """A conversation file rewritten line by line: a temp file beside it, fsynced and renamed over it
    on a clean exit (readers see the old file or the new one), removed on an error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmp = path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        self.keep = True
        self.fh = open(os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w",  # noqa: SIM115
                       encoding="utf-8", buffering=1 << 20)

    def write(self, item: dict[str, Any]) -> None:
        self.fh.write(json.dumps(item, ensure_ascii=False) + "\n")

    def discard(self) -> None:
        """Leave the file as it was."""
        self.keep = False

    def __enter__(self) -> _Lines:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        done = et is None and self.keep
        try:
            if done:
                self.fh.flush()
                os.fsync(self.fh.fileno())
        finally:
            self.fh.close()
        if done:
            os.replace(self.tmp, self.path)
            fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        else:
            self.tmp.unlink(missing_ok=True)


class _Ticker:
    """Progress over all the conversations of one ingest: turns read, then turns written to the index."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def __call__(self, n: int, label: str) -> None:
        self.done += n
        if self.progress:
            self.progress(min(self.done, self.total), self.total, label)


def _ingest_one(conn: sqlite3.Connection, source: str, turns: Iterable[Turn], h: Path, project: str | None,
                tick: _Ticker) -> dict[str, Any] | None:
    """Merge one conversation into its kept file and the index, streaming; None when it had no turns."""
    from ..index.store import upsert_items

    path = conversation_path(source, h)
    ensure_dir(path.parent)
    src = safe_source(source)
    out: dict[str, Any] = {"source": src, "turns": 0, "file": str(path), "indexed": 0, "memcells": 0}
    with locked(path), Staging(path.parent) as st:
        if not st.add(turns, project, lambda k: tick(k, f"{src}: reading")):
            return None
        batch: list[tuple[dict[str, Any], list[str]]] = []

        def flush() -> None:
            out["indexed"] += upsert_items(conn, [it for it, _ in batch], analysed={it["id"]: w for it, w in batch})
            tick(len(batch), f"{src}: indexing")
            batch.clear()

        with _Lines(path) as fh:
            for item, terms, cell in _items(src, st.merged(iter_conversation(path), iso())):
                fh.write(item)
                batch.append((item, terms))
                out["turns"] += 1
                out["memcells"] = cell + 1
                if len(batch) >= BATCH:
                    flush()
            if batch:
                flush()
    return out


def ingest_conversations(convs: Iterable[tuple[str, Iterable[Turn]]], *, home: Path | None = None,
                         progress: Progress | None = None, project: str | None = None,
                         nudge: bool = True) -> dict[str, Any]:
    """Keep and index each conversation, streaming (memory stays bounded at any size); return counts.
    Raises IngestError on bad input (before anything of that conversation is written) and
    IngestInterrupted (a KeyboardInterrupt) on Ctrl-C, saying how many conversations were done."""
    from ..index.db import connect

    h = home or paths.sophia_home()
    convs = list(convs)
    # progress steps: each new turn read (staged), then each turn of the merged conversation indexed
    total = sum(2 * len(t) + _count_lines(conversation_path(s, h)) for s, t in convs if isinstance(t, Sized))
    tick = _Ticker(progress, total)
    summary: dict[str, Any] = {"conversations": [], "turns": 0, "indexed": 0, "memcells": 0}
    conn = connect(h)
    try:
        for source, turns in convs:
            one = _ingest_one(conn, source, turns, h, project, tick)
            if one is None:
                continue
            summary["conversations"].append({k: one[k] for k in ("source", "turns", "file")})
            for k in ("turns", "indexed", "memcells"):
                summary[k] += one[k]
    except KeyboardInterrupt:
        raise IngestInterrupted(len(summary["conversations"]),
                                sum(1 for _, t in convs if not isinstance(t, Sized) or len(t)),
                                summary["turns"]) from None
    finally:
        conn.close()
    if progress:
        progress(total, total, "done")
    if nudge:
        summary["embedding"] = request_embed(h)
    return summary


def _count_lines(path: Path) -> int:
    """Non-empty lines of a file (0 when there is none), read in blocks: a progress total, cheaply."""
    try:
        with path.open("rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0


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
    convs: list[tuple[str, Iterable[Turn]]]
    if fmt == "locomo":
        convs = list(read_locomo(path))
    elif fmt == "jsonl":
        convs = list(read_jsonl(path, source))
    else:
        raise IngestError(f"unknown format {fmt!r} (locomo or jsonl)")
    if not any(len(t) for _, t in convs if isinstance(t, Sized)):
        raise IngestError(f"{path}: no turns found")
    summary = ingest_conversations(convs, home=home, progress=progress, project=project, nudge=nudge)
    summary["format"] = fmt
    summary["format_detected"] = detected
    return summary
