"""Tier-3 audit jobs, pulled from the guardian's deny/ask log. Stdlib only (the hooks call it).

The guardian only writes ``logs/guardian_blocks.jsonl``; an ask it wants audited carries ``tier3`` (the
rule's high-risk family, set only with ``guardian.tier3_enabled``: :func:`.guardian.tier3.mark`). :func:`sync`
reads the log from a cursor (``digests/audits_cursor.json``: the log's inode and the byte offset read so
far, written atomically under ``digests/audits.lock``) and queues one ``guardian`` job per marked ask,
once per exact call: the job id is the call's ``subject_sha``, so the same command asked twice, or a line
read twice (a lost cursor, a crash before it was saved), is audited once. A new log (another inode, or
shorter than the cursor) is read from its start; a line still being written is left for the next read.

It runs soon after an ask without touching the hook's answer: the hook's detached log child execs
``hooks/guardian_audit.py`` when it logged a marked ask; the digest worker syncs when it starts, and the
after-session runner at every session end, so an ask whose child was lost is queued later all the same.
:func:`summary` is what ``s3 status`` shows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..atomic import read_json, write_json_atomic
from ..errors import StateFileError
from ..guardian import stats, tier3
from ..locking import locked
from ..timeutil import iso
from . import queue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KIND = "guardian"  # the queue's kind (queue.STAGES_OF: one stage, ``audit``)
CALL_KEYS = ("tool", "command", "cwd", "rule", "reason", "mode", "session_id", "subject_sha")


def cursor_path(home: Path) -> Path:
    return queue.digests_dir(home) / "audits_cursor.json"


def job_id(subject_sha: str) -> str:
    return f"{KIND}_{subject_sha[:32]}"


def job_of(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The audit job of one logged (redacted) entry: None unless it is an ask the guardian marked."""
    sha, fam = entry.get("subject_sha"), entry.get(tier3.MARK)
    if entry.get("decision") != "ask" or not isinstance(sha, str) or not sha or not isinstance(fam, str):
        return None
    call = {k: entry.get(k) for k in CALL_KEYS}
    return {"id": job_id(sha), "kind": KIND, "session_id": str(entry.get("session_id") or ""), "attempts": 0,
            "next_try_at": 0.0, "created_at": iso(), "stages_done": [], "reason": f"a {fam} ask",
            "call": dict(call, family=fam)}


def _cursor(home: Path, inode: int, size: int) -> int:
    """Where to read from: the saved offset if it is this log's and within it, else its start."""
    try:
        c = read_json(cursor_path(home), default={})
    except StateFileError:
        c = {}
    if not isinstance(c, dict) or c.get("inode") != inode or not isinstance(c.get("offset"), int):
        return 0
    return c["offset"] if 0 <= c["offset"] <= size else 0


def _new_entries(home: Path) -> tuple[list[dict[str, Any]], dict[str, int] | None]:
    """The marked entries after the cursor, and the cursor after them (None: there is no log)."""
    try:
        f = open(stats.log_path(home), "rb")  # noqa: SIM115 - closed below
    except OSError:
        return [], None
    out = []
    with f:
        st = os.fstat(f.fileno())
        offset = _cursor(home, st.st_ino, st.st_size)
        f.seek(offset)
        for line in f:
            if not line.endswith(b"\n"):
                break  # being written: the next read takes it whole
            offset += len(line)
            if b'"' + tier3.MARK.encode() + b'"' not in line:
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict):
                out.append(e)
    return out, {"inode": st.st_ino, "offset": offset}


def sync(home: Path) -> list[str]:
    """Queue the audits of the marked asks logged since the last sync; returns the ids of the new jobs
    (a job already in any state is left as it is). With the switch off now, nothing is queued."""
    new: list[str] = []
    with locked(queue.digests_dir(home) / "audits", timeout=10):
        entries, cursor = _new_entries(home)
        if cursor is None:
            return new
        if entries and tier3.enabled(str(home)):
            for e in entries:
                job = job_of(e)
                if job is not None and queue.add_new(home, job)[1] is job:
                    new.append(job["id"])
        write_json_atomic(cursor_path(home), cursor)
    return new


def summary(home: Path, on: bool, last: int = 5) -> dict[str, Any]:
    """What ``s3 status`` shows: the switch, how many audits were logged and failed, the jobs waiting,
    and the newest ``last`` verdicts (newest first)."""
    vs = tier3.audits(home)
    waiting = [j for j in queue.jobs(home, ("pending", "running", "parked")) if j.get("kind") == KIND]
    return {"enabled": on, "count": len(vs), "failed": sum(v["verdict"] == "fail" for v in vs),
            "queued": sum(j["state"] != "parked" for j in waiting), "parked": sum(j["state"] == "parked" for j in waiting),
            "recent": vs[::-1][:last]}


def summary_lines(s: dict[str, Any]) -> list[str]:
    head = (f"Guardian audits (tier 3): {'on' if s['enabled'] else 'off'}; {s['count']} logged "
            f"({s['failed']} failed), {s['queued']} queued" + (f", {s['parked']} parked" if s["parked"] else ""))
    return [head] + [f"  {v['verdict']} ({v['risk_level'] or '-'}) {v['command'] or v['task_id']}" for v in s["recent"]]
