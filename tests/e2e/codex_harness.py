"""Run the real ``codex`` client (npm @openai/codex, pinned in test.sh) against a scripted model.

The Codex twin of ``harness.py``: a temp HOME whose ``~/.codex`` holds a custom model provider pointing at
:class:`~tests.e2e.codex_server.ScriptedResponses` on 127.0.0.1 and what ``install.sh --codex`` writes
there (:func:`sophia.install.codex.install`: the kit's hooks from this checkout, trusted by hash, never
by ``--dangerously-bypass-hook-trust``; the MCP server). ``codex exec --json`` runs one session in the
project folder; the result holds the JSONL events and every request the model server saw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .codex_server import MODEL, ScriptedResponses, Step, request_text
from .harness import client_binary

REPO = Path(__file__).resolve().parents[2]
CODEX_VERSION = "0.171.0"


def codex_binary() -> str | None:
    return client_binary("codex")


@dataclass
class CodexResult:
    returncode: int
    stdout: str
    stderr: str
    requests: list[dict[str, Any]]
    main_requests: list[dict[str, Any]]

    @property
    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.stdout.splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
        return out

    @property
    def session_id(self) -> str:
        return next(str(e["thread_id"]) for e in self.events if e.get("type") == "thread.started")

    def request_text(self, i: int = 0) -> str:
        return request_text(self.main_requests[i])


class CodexRun:
    def __init__(self, home: Path, project: Path, env: dict[str, str] | None = None) -> None:
        self.home, self.project = home, project
        self.binary = codex_binary()
        self.extra_env = dict(env or {})
        self.codex_home = home / ".codex"
        self.codex_home.mkdir(parents=True, exist_ok=True)
        project.mkdir(parents=True, exist_ok=True)

    def mcp_launcher(self) -> Path:
        """The MCP server's command as the install names it, for this checkout's code and the test's Python."""
        p = self.home / "s3-mcp.sh"
        p.write_text(f"#!/bin/sh\nPYTHONPATH={REPO / 'lib'} exec {sys.executable} -m sophia.cli.entry mcp\n")
        p.chmod(0o755)
        return p

    def install(self, base_url: str) -> dict[str, Any]:
        """config.toml with the scripted provider, then what ``install.sh --codex`` adds."""
        from sophia.install import codex

        (self.codex_home / "config.toml").write_text(
            f'model = "{MODEL}"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
            f'base_url = "{base_url}"\nwire_api = "responses"\nenv_key = "FAKE_API_KEY"\n')
        table = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
        return codex.install(self.codex_home, str(REPO), table, str(self.mcp_launcher()))

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPENAI_", "CODEX_", "ANTHROPIC_", "CLAUDE", "SOPHIA_"))}
        env.update({"HOME": str(self.home), "SOPHIA_HOME": str(self.home / ".sophia"), "FAKE_API_KEY": "x",
                    "SOPHIA_PYTHON": sys.executable, "NO_COLOR": "1", "RUST_LOG": "error"})
        env.update(self.extra_env)
        return env

    def run(self, prompt: str, script: list[Step] | None = None, *, model: ScriptedResponses | None = None,
            timeout: float = 180) -> CodexResult:
        if not self.binary:
            raise RuntimeError("codex binary not found (set SOPHIA_TEST_CODEX)")
        server = model or ScriptedResponses(script)
        if model is not None and script:
            server.script.extend(script)
        owns = model is None
        if owns:
            server.start()
            self.install(server.base_url)
        try:
            cmd = [self.binary, "exec", "--json", "--dangerously-bypass-approvals-and-sandbox",
                   "--skip-git-repo-check", prompt]
            proc = subprocess.run(cmd, cwd=self.project, env=self.env(), capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        finally:
            if owns:
                server.stop()
        return CodexResult(proc.returncode, proc.stdout, proc.stderr, list(server.requests), list(server.main_requests))
