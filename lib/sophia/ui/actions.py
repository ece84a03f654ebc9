"""The viewer's writes: the library functions the CLI calls, under their locks (no second write path).

- forget a memory: ``memory.manage.forget`` (``s3 forget ID``);
- retry or drop a digest job: ``learning.queue.retry`` / ``drop`` (``s3 digest retry|drop``);
- edit a learned procedure's line (a playbook's command) or status: ``learning.procedures.edit`` (under
  the procedures store's lock, redacted, re-indexed; its confidence stays what its runs say);
- edit a rule's text or confidence: ``memory.rules.update_rules`` (the lock and atomic write every
  rule writer takes) and ``memory.indexing.upsert`` (how ``s3 learn`` indexes a rule); the text is
  capped and redacted as ``s3 learn`` does. The new confidence is the rule's base for decay from now.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import BadInput


def forget(home: Path, mid: str) -> dict[str, Any]:
    from ..memory.manage import forget as do_forget

    return do_forget(mid, home)


def retry_job(home: Path, jid: str) -> bool:
    from ..learning import queue

    return queue.retry(home, jid)


def drop_job(home: Path, jid: str) -> str | None:
    """The state the job was in (None: no such job); a running job is left alone."""
    from ..learning import queue

    return queue.drop(home, jid)


def parse_confidence(raw: str) -> float:
    try:
        c = float(raw)
    except ValueError:
        raise BadInput(f"confidence must be a number between 0 and 1, not {raw[:40]!r}") from None
    if not 0.0 <= c <= 1.0:
        raise BadInput(f"confidence must be between 0 and 1, not {c}")
    return round(c, 4)


def edit_rule(home: Path, rid: str, text: str, confidence: float) -> dict[str, Any]:
    from ..memory import indexing, rules
    from ..redact import redact
    from ..timeutil import iso

    clean = redact(text.strip())
    if not clean:
        raise BadInput("the rule's text is empty")
    with rules.update_rules(home) as rs:
        rule = next((r for r in rs if r.get("id") == rid), None)
        if rule is None:
            raise BadInput(f"no rule {rid!r}")
        rules.check_rule_text(clean, str(rule.get("trigger_concept") or ""))
        rule.update(rule_content=clean, confidence=confidence, base_confidence=confidence,
                    last_validated=iso(), edited_at=iso())
        out = dict(rule)
    indexing.upsert([indexing.rule_item(out)], home)
    return out


def edit_procedure(home: Path, pid: str, text: str, status: str) -> dict[str, Any]:
    from ..learning import procedures

    return procedures.edit(home, pid, text, status)
