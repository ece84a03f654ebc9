"""The harness itself: the real claude client runs scripted tools and fires real hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .harness import ClaudeRun

pytestmark = pytest.mark.e2e


def test_scripted_tool_call_runs_and_hooks_fire(e2e: ClaudeRun, tmp_path: Path) -> None:
    seen = tmp_path / "events.jsonl"
    hook = tmp_path / "record.sh"
    hook.write_text(f"#!/usr/bin/env bash\ncat >> {seen}\necho >> {seen}\nexit 0\n")
    hook.chmod(0o755)
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
    e2e.write_settings({"hooks": {ev: [{"hooks": [{"type": "command", "command": str(hook)}]}] for ev in events}})
    res = e2e.run("create the marker file", [
        {"tool_use": [{"name": "Bash", "input": {"command": "echo hi > marker.txt", "description": "write"}}]},
        {"text": "Created marker.txt."},
    ])
    assert res.returncode == 0, res.stderr
    assert (e2e.project / "marker.txt").read_text().strip() == "hi"
    assert res.result.get("result") == "Created marker.txt."
    fired = [json.loads(line)["hook_event_name"] for line in seen.read_text().splitlines() if line.strip()]
    for ev in events:
        assert ev in fired, (ev, fired)
    assert "create the marker file" in res.request_text(0)
