"""Tier 3: validate an ``s3-guardian`` audit and log it (CLI side; uses pydantic).

``apply_guardian(data)`` takes the parsed JSON the subagent produced: either a bare
AuditResult (``passed``, ``reason``, ``risk_level``, ``concerns``, ``creed_violations``,
``recommendation``) or the AgentResult envelope (``task_id``, ``agent_type``: ``s3-guardian``,
``status``, ``timestamp``, ``result``: the AuditResult, ``error``). It validates with the models
in :mod:`sophia.models`, raises :class:`AuditError` naming the bad field, and appends one redacted
line to ``logs/guardian_audits.jsonl``. Idempotent: the same task_id with the same content is
logged once (a bare AuditResult's task_id is derived from its content).

``s3 guardian apply FILE|-`` is the CLI over it; ``s3 apply guardian`` can call
:func:`apply_guardian_source` with the same argument.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import SophiaError

AGENT_TYPE = "s3-guardian"


class AuditError(SophiaError):
    """The audit JSON is not a valid AuditResult / AgentResult."""


def _explain(exc: Exception, prefix: str = "") -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in (prefix, *err["loc"]) if x != "")
        return f"{loc or '(top level)'}: {err['msg']}"
    return str(exc)


def validate(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(envelope fields, audit) as plain JSON-ready dicts; raises AuditError."""
    from pydantic import ValidationError

    from ..models import AgentResult, AuditResult

    if not isinstance(data, dict):
        raise AuditError(f"(top level): expected a JSON object, got {type(data).__name__}")
    if "task_id" in data or "agent_type" in data or "result" in data:
        try:
            env = AgentResult.model_validate(data)
        except ValidationError as exc:
            raise AuditError(_explain(exc)) from exc
        if env.agent_type != AGENT_TYPE:
            raise AuditError(f"agent_type: expected {AGENT_TYPE!r}, got {env.agent_type!r}")
        if env.status == "error":
            if not env.error:
                raise AuditError("error: status is 'error' but no error message is given")
            audit: dict[str, Any] = {}
        else:
            try:
                audit = AuditResult.model_validate(env.result).model_dump(mode="json")
            except ValidationError as exc:
                raise AuditError(_explain(exc, "result")) from exc
        meta = {"task_id": env.task_id, "agent_type": env.agent_type, "status": env.status,
                "timestamp": env.timestamp.isoformat().replace("+00:00", "Z"), "error": env.error}
        return meta, audit
    try:
        audit = AuditResult.model_validate(data).model_dump(mode="json")
    except ValidationError as exc:
        raise AuditError(_explain(exc)) from exc
    digest = hashlib.sha256(json.dumps(audit, sort_keys=True).encode()).hexdigest()[:16]
    return {"task_id": f"audit-{digest}", "agent_type": AGENT_TYPE, "status": "complete", "timestamp": None,
            "error": None}, audit


def apply_guardian(data: Any, home: Path | None = None, call: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validate ``data`` and log it once. Returns what happened (``logged`` False on a repeat). ``call``:
    what was audited (a tier-3 job's tool, command excerpt, rule), logged beside the verdict, redacted."""
    from .. import paths
    from ..atomic import append_line
    from ..locking import locked
    from ..redact import redact_obj
    from ..timeutil import iso, now

    meta, audit = validate(data)
    body = json.dumps({"meta": {k: v for k, v in meta.items() if k != "timestamp"}, "audit": audit}, sort_keys=True)
    key = hashlib.sha256(body.encode()).hexdigest()[:24]
    log = paths.logs_dir(home) / "guardian_audits.jsonl"
    out = {"task_id": meta["task_id"], "status": meta["status"], "passed": audit.get("passed"),
           "risk_level": audit.get("risk_level"), "log": str(log), "logged": False, "duplicate": False}
    with locked(log):
        if log.exists():
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    if json.loads(line).get("key") == key:
                        out["duplicate"] = True
                        return out
                except ValueError:
                    continue
        entry = redact_obj({"ts": iso(now()), "key": key, **meta, "audit": audit, **({"call": call} if call else {})})
        append_line(log, json.dumps(entry, ensure_ascii=False, sort_keys=True))
    out["logged"] = True
    return out


def load_source(source: str) -> Any:
    """Parse JSON from FILE or ``-`` (stdin); AuditError with a one-line reason otherwise."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise AuditError(f"cannot read {source}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise AuditError(f"{source}: not valid JSON ({exc})") from exc


def apply_guardian_source(source: str, home: Path | None = None) -> dict[str, Any]:
    return apply_guardian(load_source(source), home)
