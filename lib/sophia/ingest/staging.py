"""The new turns of one conversation, held on disk while they are merged with the kept file.

A temporary SQLite file next to the conversation (mode 0600, deleted when done) keyed by turn id: the
merge walks the kept file once, takes each turn's new version from here, then appends the turns the
kept file did not have, in the order they came. Memory stays bounded whatever the conversation's size.
Texts are redacted before they are staged (secrets never reach disk). Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from ..redact import redact
from .formats import Turn

BATCH = 5000


def sweep(folder: Path) -> list[Path]:
    """Delete the staging files an ingest that was killed left in ``folder`` (their process is gone);
    return them. A live process's file, or one whose name does not parse, is left alone."""
    gone = []
    for f in folder.glob(".staging.*.db"):
        try:
            pid = int(f.name.split(".")[2])
            os.kill(pid, 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                f.unlink()
                gone.append(f)
        except (ValueError, IndexError, PermissionError):
            continue
    return gone


class Staging:
    """``add`` the new turns, then ``merged(kept)`` yields the conversation's turns in their final order."""

    def __init__(self, folder: Path) -> None:
        sweep(folder)
        self.path = folder / f".staging.{os.getpid()}.{os.urandom(4).hex()}.db"
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        self.conn = sqlite3.connect(str(self.path), isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "cache_size = -8000", "temp_store = FILE"):
            self.conn.execute(f"PRAGMA {pragma}")
        self.conn.execute("CREATE TABLE turns (sid TEXT PRIMARY KEY, pos INTEGER NOT NULL, data TEXT NOT NULL, "
                          "used INTEGER NOT NULL DEFAULT 0)")

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.conn.close()
        with contextlib.suppress(OSError):
            self.path.unlink()

    def add(self, turns: Iterable[Turn], project: str | None = None,
            staged: Callable[[int], None] | None = None) -> int:
        """Stage ``turns`` (redacted; a repeated id keeps its first place and its last version);
        return how many were read (``staged(k)`` after each batch of k). Raises what the reader raises."""
        n = 0
        batch: list[tuple[str, int, str]] = []
        for t in turns:
            t = {**t, "text": redact(t["text"])}
            if project:
                t["project"] = project
            batch.append((t["sid"], n, json.dumps(t, ensure_ascii=False)))
            n += 1
            if len(batch) >= BATCH:
                self._put(batch, staged)
        self._put(batch, staged)
        return n

    def _put(self, batch: list[tuple[str, int, str]], staged: Callable[[int], None] | None) -> None:
        if not batch:
            return
        self.conn.execute("BEGIN")
        self.conn.executemany("INSERT INTO turns (sid, pos, data) VALUES (?, ?, ?) "
                              "ON CONFLICT(sid) DO UPDATE SET data = excluded.data", batch)
        self.conn.execute("COMMIT")
        if staged:
            staged(len(batch))
        batch.clear()

    def _take(self, sid: str) -> Turn | None:
        r = self.conn.execute("UPDATE turns SET used = 1 WHERE sid = ? RETURNING data", (sid,)).fetchone()
        return json.loads(r[0]) if r else None

    def merged(self, kept: Iterable[dict[str, Any]], stamp: str) -> Iterator[Turn]:
        """The kept turns (as records) in their order, each replaced by its new version when one was
        staged, then the new turns; ``recorded`` (first ingested) is kept, ``stamp`` for new turns.
        The kept turns' text is redacted again (rules may have grown since)."""
        for it in kept:
            old = kept_turn(it)
            new = self._take(old["sid"])
            if new is None:
                yield {**old, "text": redact(old["text"])}
            else:
                new["recorded"] = old.get("recorded") or stamp
                yield new
        cur = self.conn.execute("SELECT data FROM turns WHERE used = 0 ORDER BY pos")
        while rows := cur.fetchmany(1000):
            for (data,) in rows:
                t = json.loads(data)
                t["recorded"] = stamp
                yield t


def kept_turn(it: dict[str, Any]) -> Turn:
    """A kept turn item back to the turn record it was made from."""
    m = it.get("meta") or {}
    sid = str(m.get("sid") or (it.get("source_ids") or [it["id"]])[0])
    extra = {k: m[k] for k in ("blip_caption", "img_url", "query") if m.get(k)}
    return {"sid": sid, "session": m.get("session"), "speaker": m.get("speaker"), "text": it["text"],
            "time": it.get("event_time") or it.get("timestamp"), "extra": extra, "project": it.get("project"),
            "recorded": it.get("timestamp")}
