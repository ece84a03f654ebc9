"""Helpers: run the real hook script as a subprocess with a real PreToolUse payload."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "hooks" / "guardian_tier1.sh"
PROJECT = "/home/dev/projects/app"


@dataclass
class HookResult:
    rc: int
    stdout: str
    stderr: str

    @property
    def decision(self) -> str:
        if self.rc == 2:
            return "deny"
        out = self.stdout.strip()
        if not out:
            return "allow"
        obj = json.loads(out)
        return obj.get("hookSpecificOutput", {}).get("permissionDecision", "allow")

    @property
    def reason(self) -> str:
        out = self.stdout.strip()
        return json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"] if out else ""


def payload(tool: str = "Bash", tool_input: dict[str, Any] | None = None, cwd: str = PROJECT,
            command: str | None = None) -> dict[str, Any]:
    if tool_input is None:
        tool_input = {"command": command or "ls", "description": "run"}
    return {"session_id": "sess-1", "transcript_path": "/home/dev/.claude/projects/x/sess-1.jsonl", "cwd": cwd,
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": tool_input, "tool_use_id": "toolu_01"}


def hook_env(sophia_home: Path, home: str = "/home/dev", **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
    env.update(HOME=home, SOPHIA_HOME=str(sophia_home), SOPHIA_PYTHON=os.path.realpath(sys.executable),
               CLAUDE_PROJECT_DIR=PROJECT)
    env.pop("TMPDIR", None)
    env.update(extra)
    return env


def run_hook(data: dict[str, Any] | bytes | str, env: dict[str, str], hook: Path = HOOK) -> HookResult:
    raw = data if isinstance(data, (bytes, str)) else json.dumps(data)
    if isinstance(raw, str):
        raw = raw.encode()
    proc = subprocess.run(["bash", str(hook)], input=raw, capture_output=True, env=env, timeout=60)
    return HookResult(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


@pytest.fixture
def genv(sophia_home: Path) -> dict[str, str]:
    sophia_home.mkdir(parents=True, exist_ok=True)
    return hook_env(sophia_home)


def read_log(path: Path, at_least: int = 1, timeout: float = 10.0) -> list[str]:
    """Lines of a guardian log, waiting for the detached writer (the hook answers first, then logs)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= at_least or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def probe_env_in(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A hook environment whose 'analyzer' only says it was reached: shows what stage 1 flags."""
    fake = tmp_path / "py"
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                     "permissionDecisionReason": "reached"}}
    fake.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{json.dumps(answer)}'\n")
    fake.chmod(0o755)
    (tmp_path / "sh").mkdir()
    return hook_env(tmp_path / "sh", SOPHIA_PYTHON=str(fake), **extra)


@pytest.fixture
def probe_env(tmp_path: Path) -> dict[str, str]:
    return probe_env_in(tmp_path)
