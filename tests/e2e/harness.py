"""Run the real ``claude`` client (npm @anthropic-ai/claude-code) against a scripted model.

Usage in a test::

    from tests.e2e.harness import ClaudeRun, claude_binary
    def test_x(e2e):                       # fixture from tests/e2e/conftest.py
        e2e.write_settings({"hooks": {...}})   # ~/.claude/settings.json of the temp HOME
        res = e2e.run("do it", script=[{"tool_use": [{"name": "Bash", "input": {"command": "ls"}}]},
                                       {"text": "done"}])
        assert res.returncode == 0 and res.result["permission_denials"] == []
        assert "memory" in res.request_text(0)   # what the first model request contained

The run uses a temp HOME (so ~/.claude and ~/.sophia are private to the test), a project
directory as cwd, ``--output-format json`` and ``--allowedTools`` (root refuses
``--dangerously-skip-permissions``). ``SOPHIA_HOME`` defaults to ``$HOME/.sophia``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .model_server import ScriptedModel, Step, request_text

REPO = Path(__file__).resolve().parents[2]


def client_binary(name: str) -> str | None:
    """The real client ``name`` (claude, codex): $SOPHIA_TEST_<NAME>, else the one test.sh installed in
    .cache/node, else on PATH."""
    cand = os.environ.get(f"SOPHIA_TEST_{name.upper()}")
    if cand and os.access(cand, os.X_OK):
        return cand
    local = REPO / ".cache" / "node" / "node_modules" / ".bin" / name
    if local.exists():
        return str(local)
    return shutil.which(name)


def claude_binary() -> str | None:
    return client_binary("claude")


@dataclass
class ClaudeResult:
    returncode: int
    stdout: str
    stderr: str
    requests: list[dict[str, Any]]
    main_requests: list[dict[str, Any]]
    result: dict[str, Any] = field(default_factory=dict)

    def request_text(self, i: int = 0) -> str:
        """Text of the i-th main-loop model request (system prompt + messages)."""
        return request_text(self.main_requests[i])


class ClaudeRun:
    def __init__(self, home: Path, project: Path, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.project = project
        self.binary = claude_binary()
        self.extra_env = dict(env or {})
        (home / ".claude").mkdir(parents=True, exist_ok=True)
        project.mkdir(parents=True, exist_ok=True)

    @property
    def settings_path(self) -> Path:
        return self.home / ".claude" / "settings.json"

    def write_settings(self, settings: dict[str, Any]) -> None:
        self.settings_path.write_text(json.dumps(settings, indent=2))

    def env(self, base_url: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
        env.update({
            "HOME": str(self.home),
            "SOPHIA_HOME": str(self.home / ".sophia"),
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-e2e-not-a-real-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "NO_COLOR": "1",
        })
        env.update(self.extra_env)
        return env

    def run(self, prompt: str, script: list[Step], *, allowed_tools: str | None = "Bash,Write,Edit,Read",
            extra_args: list[str] | None = None, timeout: float = 120, model: ScriptedModel | None = None
            ) -> ClaudeResult:
        if not self.binary:
            raise RuntimeError("claude binary not found (set SOPHIA_TEST_CLAUDE)")
        server = model or ScriptedModel(script)
        if model is not None and script:
            server.script.extend(script)
        owns = model is None
        if owns:
            server.start()
        try:
            allow = ["--allowedTools", allowed_tools] if allowed_tools is not None else []  # None: extra_args say
            cmd = [self.binary, "-p", prompt, "--output-format", "json", *allow, "--max-turns", "12", *(extra_args or [])]
            proc = subprocess.run(cmd, cwd=self.project, env=self.env(server.base_url), capture_output=True,
                                  text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        finally:
            if owns:
                server.stop()
        result: dict[str, Any] = {}
        for line in reversed(proc.stdout.strip().splitlines()):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                result = obj
                break
        return ClaudeResult(proc.returncode, proc.stdout, proc.stderr, list(server.requests),
                            list(server.main_requests), result)
