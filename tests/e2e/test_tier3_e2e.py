"""Tier 3 end to end: the real claude client, one scripted model, the guardian hook in settings.json.

The model asks for a force-push of a shared branch; the hook asks (a high-risk rule) and, with
``guardian.tier3_enabled``, its detached log child (become hooks/guardian_audit.py) queues an audit and starts the digest worker, which runs the
real client headless on the audit prompt (the same scripted model answers it as the s3-guardian would).
The verdict is logged and ``s3 status --json`` shows it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import run_s3, wait_for

from .harness import REPO, ClaudeRun
from .model_server import ScriptedModel, has_tools_field, request_text

pytestmark = pytest.mark.e2e

HOOK = REPO / "hooks" / "guardian_tier1.sh"
PUSH = "git push --force origin feature/payments"
VERDICT = {"passed": False, "reason": "rewrites the history of a branch other people pull", "risk_level": "high",
           "concerns": ["no sign the user asked for a force-push"], "creed_violations": [],
           "recommendation": "git push --force-with-lease origin feature/payments"}


class Router:
    """The session's turns in order; an audit prompt (told apart by its text) gets the verdict."""

    def __init__(self, session: list[dict[str, Any]]) -> None:
        self.session = list(session)
        self.audits: list[str] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = request_text(body)
        if "Tier-3 audit" in text:
            self.audits.append(text)
            return {"text": json.dumps(VERDICT)}
        return self.session.pop(0) if self.session else {"text": "Done."}


def test_a_force_push_asked_in_a_real_session_is_audited_in_the_background(e2e: ClaudeRun,
                                                                         isolated_home: Path) -> None:
    home = isolated_home / ".sophia"
    env = dict(os.environ, HOME=str(isolated_home), SOPHIA_HOME=str(home), PYTHONPATH=str(REPO / "lib"))
    assert run_s3(["init"], env).returncode == 0
    cfg = json.loads((home / "config.json").read_text())
    cfg["embedding_provider"] = "none"
    cfg["guardian"]["tier3_enabled"] = True
    (home / "config.json").write_text(json.dumps(cfg))
    e2e.extra_env.update(SOPHIA_PYTHON=os.path.realpath(sys.executable), SOPHIA_CLAUDE_BIN=str(e2e.binary))
    e2e.write_settings({"hooks": {"PreToolUse": [{
        "matcher": "Bash", "hooks": [{"type": "command", "command": str(HOOK), "timeout": 20}]}]}})
    router = Router([{"tool_use": [{"name": "Bash", "input": {"command": PUSH, "description": "force-push"}}]},
                     {"text": "I did not force-push."}])
    server = ScriptedModel([router] * 10, main=has_tools_field).start()
    digest_log = home / "logs" / "digest.log"
    try:
        res = e2e.run("Force-push my rebased payments branch", [], model=server)
        assert res.returncode == 0, res.stderr
        blocks = home / "logs" / "guardian_blocks.jsonl"
        assert wait_for(blocks.exists, 30)
        (block,) = [json.loads(x) for x in blocks.read_text().splitlines()]
        assert block["decision"] == "ask" and block["command"] == PUSH
        audits = home / "logs" / "guardian_audits.jsonl"
        assert wait_for(audits.exists, 180), digest_log.read_text() if digest_log.exists() else "no worker ran"
        assert wait_for(lambda: "digest worker stops" in digest_log.read_text(), 60)
    finally:
        server.stop()
    (audit_text,) = router.audits
    assert PUSH in audit_text and "Terminal creed" in audit_text and str(e2e.project) in audit_text
    (entry,) = [json.loads(x) for x in audits.read_text().splitlines()]
    assert entry["audit"] == VERDICT and entry["call"]["command"] == PUSH
    r = run_s3(["status", "--json"], env)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)["guardian_audits"]
    assert s["count"] == 1 and s["failed"] == 1 and s["queued"] == 0
    assert s["recent"][0] | {"ts": None} == {"ts": None, "task_id": entry["task_id"], "verdict": "fail",
                                              "risk_level": "high", "rule": "git_destructive", "command": PUSH,
                                              "recommendation": VERDICT["recommendation"]}
