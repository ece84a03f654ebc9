"""``logs/guardian_blocks.jsonl``: one redacted JSON line per deny/ask (0600, one O_APPEND write).

Every writer of this log goes through :func:`record`, so a high-risk ask logged here is marked for its
tier-3 audit (:func:`.tier3.mark`: only with ``guardian.tier3_enabled``; never raises); the learning side
queues the marked asks (:mod:`sophia.learning.audits`)."""

from __future__ import annotations

import json
import os
import time

MAX_COMMAND = 2000


def record(sophia_home: str, entry: dict) -> bool:
    """Append ``entry``; the command text passes through :func:`sophia.redact.redact` first. True: it was
    marked for a tier-3 audit."""
    from ..redact import redact, redact_obj

    entry = dict(entry)
    cmd = entry.get("command")
    if isinstance(cmd, str):
        cmd = redact(cmd)
        entry["command"] = cmd if len(cmd) <= MAX_COMMAND else cmd[:MAX_COMMAND] + "...[truncated]"
    entry = redact_obj(entry)
    marked = False
    if entry.get("decision") == "ask":
        try:
            from .tier3 import mark

            marked = mark(sophia_home, entry)
        except Exception:  # noqa: BLE001 - an audit is advice: deciding it never breaks the log
            pass
    entry.setdefault("ts", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    logs = os.path.join(sophia_home, "logs")
    os.makedirs(logs, mode=0o700, exist_ok=True)
    data = (json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(os.path.join(logs, "guardian_blocks.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return marked
