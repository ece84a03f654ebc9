"""PreCompact and PostCompact: a long session's digest job, with the compact summary. Stdlib only.
``python -I -S launch.py compact``.

Claude Code compacts a long conversation (``trigger``: manual or auto); PreCompact carries
``custom_instructions``, PostCompact the ``compact_summary`` it produced. When ``learning_enabled`` is
true and the project has not opted out, both queue (or update) the session's one digest job
(:func:`learning.queue.enqueue`), PostCompact with the summary (redacted, capped): the worker reads it
as ``$summary``, so the part of the session the summary replaced is not lost to the digest.

The job is *held* (:data:`HOLD`): digesting a session still running would leave its end out, so it
waits for SessionEnd, which makes it due and starts the worker. A session that never ends (killed
terminal) is digested once the hold runs out. Nothing here starts a worker or waits on anything.

Whatever the learning settings, both also empty the session's record of the memories its context holds
(:func:`sophia.hooks.shown.after_compaction`): what was injected before the compaction may be gone from
the context, so the prompt hook may bring it back.
"""

from __future__ import annotations

from pathlib import Path

from sophia import paths
from sophia.hooks import shown
from sophia.hooks.runtime import load_config, log, read_payload, run, safe_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENTS = ("PreCompact", "PostCompact")
HOLD = 6 * 3600.0  # a compacted session's job waits this long for its SessionEnd
MAX_SUMMARY_CHARS = 20000


def _text(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def skip_reason(payload: dict[str, Any], cfg: dict[str, Any], sid: str | None) -> str | None:
    """Why this compaction queues nothing (None: it queues)."""
    from sophia.hooks.after_session import opted_out
    from sophia.hooks.project import project_of

    if payload.get("hook_event_name") not in EVENTS:
        return f"event {payload.get('hook_event_name')!r}"
    if not sid:
        return "no session_id"
    if not cfg.get("learning_enabled"):
        return "learning_enabled is false"
    return opted_out(project_of(_text(payload, "cwd") or None), cfg)


def process(payload: dict[str, Any], home: Path | None = None) -> dict[str, Any]:
    """Queue or update the session's held digest job. Returns a small report (for tests and logs)."""
    h = home or paths.sophia_home()
    sid = safe_session(payload.get("session_id"))
    event = payload.get("hook_event_name")
    record = shown.after_compaction(h, sid, event) if event in EVENTS else ""
    skipped = skip_reason(payload, load_config(h), sid)
    if skipped or not sid:
        return {"skipped": skipped, "shown": record}
    from sophia.learning import queue
    from sophia.redact import redact

    trigger = _text(payload, "trigger") or "?"
    summary = redact(_text(payload, "compact_summary").strip())[:MAX_SUMMARY_CHARS]
    state, job = queue.enqueue(h, sid, transcript=_text(payload, "transcript_path"), cwd=_text(payload, "cwd"),
                               reason=f"{event} ({trigger})", summary=summary, hold=HOLD)
    return {"session": sid, "event": event, "job": job["id"], "state": state, "summary_chars": len(summary),
            "shown": record}


def main() -> None:
    payload = read_payload()
    if not payload:
        return
    report = process(payload)
    if report.get("job"):
        log(f"compact: {report['event']} -> digest {report['job']} {report['state']}"
            f" (summary {report['summary_chars']} chars)")


def cli() -> None:
    run("compact", main)


if __name__ == "__main__":
    cli()
