"""Tier 3: an ``ask`` on a high-risk rule is also audited by ``s3-guardian`` (``guardian.tier3_enabled``).

The guardian's part is its log: :func:`mark` (stdlib only), called where the deny/ask log is written
(:func:`.log.record`: in the hook's detached child, after the answer is out, so it never slows or
changes a decision), sets ``tier3`` (:data:`MARK`, the family) on an ``ask`` whose rule is in
:data:`.dispatch.HIGH_RISK` while the switch is on. The learning side turns those log lines into audit
jobs (:mod:`sophia.learning.audits`: one per exact call, by ``subject_sha``; the job holds the logged,
redacted call, never the raw command); the guardian never imports it.

The worker runs a job like a digest stage (``audit``: ``prompts/audit.md``, the ``s3-guardian`` contract;
no tools (the seal); ``learning_model``; counted against the learning daily caps) with :func:`audit_input` as
its input, and :func:`apply` passes the answer to :func:`.audit.apply_guardian`: validated, logged to
``logs/guardian_audits.jsonl`` with the call it audited; :func:`audits` reads them back. Advice for the
user: nothing here blocks or changes a hook's answer.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MARK = "tier3"  # the log's field on an ask to audit: its high-risk family
EXCERPT = 120  # characters of the command shown in s3 status


def enabled(sophia_home: str) -> bool:
    from .. import config_defaults

    cfg, _ = config_defaults.load(os.path.join(sophia_home, "config.json"), only="guardian")
    return cfg["guardian"].get("tier3_enabled") is True


def family(rule: str) -> str | None:
    """The high-risk family of ``rule`` (None: its asks are not audited)."""
    from .dispatch import HIGH_RISK

    return HIGH_RISK.get(rule)


def mark(sophia_home: str, entry: dict[str, Any]) -> bool:
    """Mark ``entry`` (a deny/ask about to be logged) for a tier-3 audit: ``entry[MARK]`` is its rule's
    high-risk family when it is an ask with a ``subject_sha`` and the switch is on. Returns whether it is."""
    sha = entry.get("subject_sha")
    if entry.get("decision") != "ask" or not isinstance(sha, str) or not sha:
        return False
    fam = family(str(entry.get("rule") or ""))
    if fam is None or not enabled(sophia_home):
        return False
    entry[MARK] = fam
    return True


def audit_input(job: dict[str, Any]) -> str:
    """The prompt's ``$audit``: the call, what the hook said, where it ran (all redacted at logging)."""
    c = job.get("call") or {}
    fence = "~~~~" if "```" in str(c.get("command")) else "```"
    return "\n".join([
        "## Proposed Action",
        f"Tool: {c.get('tool') or '?'}",
        fence, str(c.get("command") or "(not logged)"), fence,
        "",
        "## Current Goal",
        "Not known: the guardian hook saw only this call, not the conversation around it. Judge the call "
        "itself; name in `concerns` what a goal would have to justify.",
        "",
        "## Context",
        f"- working directory: {c.get('cwd') or '(unknown)'}",
        f"- the guardian hook asked the user about it: rule `{c.get('rule')}` ({c.get('family')}), "
        f"mode {c.get('mode') or 'enforce'}",
        f"- what the hook said: {c.get('reason') or '(nothing)'}",
        f"- task_id: {job.get('id')}",
    ])


def apply(home: Path, job: dict[str, Any], answer: Any) -> dict[str, Any]:
    """Log the model's verdict for ``job`` through :func:`.audit.apply_guardian` (validated; raises
    AuditError naming the bad field). A bare AuditResult is wrapped in the envelope; the task id is the job's."""
    from .audit import AGENT_TYPE, apply_guardian

    if isinstance(answer, dict) and ({"result", "agent_type", "status"} & set(answer)):
        data: Any = dict(answer, task_id=job["id"])
    else:
        data = {"task_id": job["id"], "agent_type": AGENT_TYPE, "status": "complete", "result": answer}
    return apply_guardian(data, home, call=job.get("call") or None)


def _verdict(e: dict[str, Any]) -> dict[str, Any]:
    audit: dict[str, Any] = e["audit"] if isinstance(e.get("audit"), dict) else {}
    call: dict[str, Any] = e["call"] if isinstance(e.get("call"), dict) else {}
    passed = audit.get("passed")
    cmd = " ".join(str(call.get("command") or "").split())
    return {"ts": e.get("ts"), "task_id": e.get("task_id"),
            "verdict": "error" if e.get("status") == "error" else ("pass" if passed else "fail"),
            "risk_level": audit.get("risk_level"), "rule": call.get("rule"),
            "command": cmd if len(cmd) <= EXCERPT else cmd[:EXCERPT - 3] + "...",
            "recommendation": audit.get("recommendation")}


def audits(home: Path) -> list[dict[str, Any]]:
    """Every logged audit (oldest first) as a verdict; a damaged line is skipped."""
    from .. import paths

    try:
        lines = (paths.logs_dir(home) / "guardian_audits.jsonl").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in lines.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict):
            out.append(_verdict(e))
    return out
