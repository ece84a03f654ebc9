"""``s3 guardian allow-once``: the user lets exactly one denied (or asked) call through, for a short time.

The log (``logs/guardian_blocks.jsonl``) keeps each blocked call's ``subject_sha``: the SHA-256 of the
exact command, path or URL (the logged text itself is redacted, a hash carries no secret). A grant
names that hash and an expiry in ``logs/guardian_grants.json`` (a kit file: no tool call may write
it, and ``s3 guardian allow-once`` run by an agent is denied). While a grant is live, the hook allows
that exact call and logs ``allowed_once``. Stdlib only: the hook reads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from datetime import datetime

GRANTS = "guardian_grants.json"
MAX_MINUTES = 60


def subject_sha(tool: str, subject: str) -> str:
    return hashlib.sha256(f"{tool}\0{subject}".encode("utf-8", "surrogatepass")).hexdigest()


def grants_path(sophia_home: str) -> str:
    return os.path.join(sophia_home, "logs", GRANTS)


def live(sophia_home: str, now: float | None = None) -> list[dict]:
    """Grants that have not expired (a missing or unreadable file: none)."""
    t = time.time() if now is None else now
    try:
        with open(grants_path(sophia_home), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return []
    items = data.get("grants") if isinstance(data, dict) else None
    return [g for g in items or [] if isinstance(g, dict) and float(g.get("until") or 0) > t]


def granted(sophia_home: str, tool: str, subject: str) -> dict | None:
    """The live grant for exactly this call, if any."""
    if not subject or not os.path.exists(grants_path(sophia_home)):
        return None
    sha = subject_sha(tool, subject)
    return next((g for g in live(sophia_home) if g.get("sha") == sha), None)


def grant(sophia_home: str, entry: dict, minutes: float) -> dict:
    """Allow the call of log ``entry`` for ``minutes`` (at most MAX_MINUTES); logged. Returns the grant."""
    from ..atomic import write_json_atomic
    from ..locking import locked
    from ..timeutil import iso
    from .log import record

    if not entry.get("subject_sha"):
        raise ValueError("that log entry carries no subject_sha (it was written by an older kit)")
    until = time.time() + min(float(minutes), MAX_MINUTES) * 60
    g = {"sha": entry["subject_sha"], "until": until, "until_iso": iso(_utc(until)),
         "tool": entry.get("tool"), "command": entry.get("command"), "rule": entry.get("rule")}
    with locked(grants_path(sophia_home)):
        keep = [x for x in live(sophia_home) if x.get("sha") != g["sha"]]
        write_json_atomic(grants_path(sophia_home), {"grants": [*keep, g]})
    record(sophia_home, {"decision": "grant", "tool": g["tool"], "rule": g["rule"], "command": g["command"],
                         "until": g["until_iso"], "subject_sha": g["sha"]})
    return g


def _utc(t: float) -> datetime:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC)


def latest_blocked(entries: list[dict], match: str = "") -> dict | None:
    """The newest deny or ask in the log (whose command holds ``match``, when given)."""
    for e in reversed(entries):
        if e.get("decision") in ("deny", "ask") and match in str(e.get("command") or ""):
            return e
    return None
