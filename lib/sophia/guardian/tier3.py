"""Tier 3: an ``ask`` on a high-risk rule also queues an ``s3-guardian`` audit (``guardian.tier3_enabled``).

Queueing (:func:`on_logged`, stdlib only) runs where the deny/ask log is written (:func:`.log.record`):
in the hook's detached child, after the answer is out, so it never slows or changes a decision; any
other writer of that log (a resident analyzer) queues the same way. Only an ``ask`` whose rule is in
:data:`.dispatch.HIGH_RISK` queues, once per exact call: the job id is the call's ``subject_sha``
(the log's), so the same command asked twice is audited once. The job (``digests/pending/guardian_*``)
holds the logged, redacted call, never the raw command; the digest worker is started for it.

The worker runs it like a digest stage (``audit``: ``prompts/audit.md``, the ``s3-guardian`` contract;
read-only tools; ``learning_model``; counted against the learning daily caps) and :func:`apply` passes
the answer to :func:`.audit.apply_guardian`: validated, logged to ``logs/guardian_audits.jsonl`` with
the call it audited. :func:`summary` is what ``s3 status`` shows. Advice for the user: nothing here
blocks or changes a hook's answer.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

KIND = "guardian"
EXCERPT = 120  # characters of the command shown in s3 status
_CALL_KEYS = ("tool", "command", "cwd", "rule", "reason", "mode", "session_id", "subject_sha")


def enabled(sophia_home: str) -> bool:
    from .. import config_defaults

    cfg, _ = config_defaults.load(os.path.join(sophia_home, "config.json"), only="guardian")
    return cfg["guardian"].get("tier3_enabled") is True


def family(rule: str) -> str | None:
    """The high-risk family of ``rule`` (None: its asks are not audited)."""
    from .dispatch import HIGH_RISK

    return HIGH_RISK.get(rule)


def job_id(subject_sha: str) -> str:
    return f"{KIND}_{subject_sha[:32]}"


def on_logged(sophia_home: str, entry: dict[str, Any]) -> str | None:
    """Queue an audit of the logged (redacted) ``entry`` when it is a high-risk ask and the switch is on,
    and start the worker for a new job. Returns the job id (None: nothing to audit)."""
    sha = entry.get("subject_sha")
    if entry.get("decision") != "ask" or not isinstance(sha, str) or not sha:
        return None
    fam = family(str(entry.get("rule") or ""))
    if fam is None or not enabled(sophia_home):
        return None
    from pathlib import Path

    from ..learning import queue
    from ..timeutil import iso

    home = Path(sophia_home)
    call = {k: entry.get(k) for k in _CALL_KEYS}
    job = {"id": job_id(sha), "kind": KIND, "session_id": str(entry.get("session_id") or ""), "attempts": 0,
           "next_try_at": 0.0, "created_at": iso(), "stages_done": [], "reason": f"a {fam} ask",
           "call": dict(call, family=fam)}
    state, held = queue.add_new(home, job)
    if held is job:
        _start_worker(home)
    return str(held.get("id"))


def _start_worker(home: Path) -> None:
    from ..hooks.after_session import worker_python
    from ..learning import queue

    py = worker_python(home)
    if py is not None:
        queue.start_worker(home, py)


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


def summary(home: Path, on: bool, last: int = 5) -> dict[str, Any]:
    """What ``s3 status`` shows: the switch, how many audits were logged and failed, the jobs waiting,
    and the newest ``last`` verdicts (newest first)."""
    from ..learning import queue

    vs = audits(home)
    waiting = [j for j in queue.jobs(home, ("pending", "running", "parked")) if j.get("kind") == KIND]
    return {"enabled": on, "count": len(vs), "failed": sum(v["verdict"] == "fail" for v in vs),
            "queued": sum(j["state"] != "parked" for j in waiting), "parked": sum(j["state"] == "parked" for j in waiting),
            "recent": vs[::-1][:last]}


def summary_lines(s: dict[str, Any]) -> list[str]:
    head = (f"Guardian audits (tier 3): {'on' if s['enabled'] else 'off'}; {s['count']} logged "
            f"({s['failed']} failed), {s['queued']} queued" + (f", {s['parked']} parked" if s["parked"] else ""))
    return [head] + [f"  {v['verdict']} ({v['risk_level'] or '-'}) {v['command'] or v['task_id']}" for v in s["recent"]]
