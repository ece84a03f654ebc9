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
    from sophia.embed_client import protocol

    protocol.sock_path(home).unlink(missing_ok=True)  # a SIGKILLed service leaves its socket behind


def stop_payload(home: Path, tmp: Path) -> str:
    """The Stop payload of the recorded session in tests/fixtures/lifecycle, with its transcript and
    the action buffer log_action would have written: what the real session_end.sh hook reads."""
    import json

    fix = Path(__file__).parent / "fixtures" / "lifecycle"
    project = tmp / "proj"
    project.mkdir(exist_ok=True)
    transcript = tmp / "t.jsonl"
    transcript.write_text((fix / "transcript_basic.jsonl").read_text().replace("@PROJECT@", str(project)))
    text = (fix / "payloads.jsonl").read_text().replace("@PROJECT@", str(project))
    stop = next(p for p in map(json.loads, text.replace("@TRANSCRIPT@", str(transcript)).splitlines())
                if p["hook_event_name"] == "Stop")
    buf = home / "buffers" / f"{stop['session_id']}.jsonl"
    buf.parent.mkdir(parents=True, exist_ok=True)
    buf.write_text(json.dumps({"ts": "2025-03-01T10:00:01.000Z", "session": stop["session_id"], "tool": "Bash",
                               "event": "PostToolUse", "outcome": "ok", "id": "toolu_0000", "exit": 0,
                               "summary": "echo hello", "args_hash": "1"}) + "\n")
    return json.dumps(stop)
