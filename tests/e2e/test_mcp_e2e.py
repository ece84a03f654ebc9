"""The real Claude Code client starts `s3 mcp` from an MCP config, goes through the handshake (which the
server answers before the SDK loads) and calls the memory's tools the model asks for: `remember`, then
`search` finds what was remembered and a rule `s3 learn` wrote."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from conftest import LIB, run_s3

from .harness import ClaudeRun

pytestmark = pytest.mark.e2e

RULE = "Kelp tank pumps are cleaned every Monday before feeding"
FACT = "The reef aquarium's heater is set to 25.5 degrees"


def _results(body: dict[str, Any]) -> dict[str, str]:
    """{tool name: its result's text} of the calls the request's history holds."""
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    calls = {b["id"]: b["name"] for b in blocks if b.get("type") == "tool_use"}
    return {calls[b["tool_use_id"]]: json.dumps(b.get("content")) for b in blocks if b.get("type") == "tool_result"}


def test_claude_code_calls_the_memory_tools_over_mcp(e2e: ClaudeRun) -> None:
    env = e2e.env("http://127.0.0.1:9")
    assert run_s3(["init"], env).returncode == 0
    assert run_s3(["learn", RULE], env).returncode == 0
    server = {"type": "stdio", "command": sys.executable, "args": ["-m", "sophia.cli.entry", "mcp"],
              "env": {"PYTHONPATH": str(LIB), "SOPHIA_HOME": env["SOPHIA_HOME"], "HOME": env["HOME"]}}
    mcp = json.dumps({"mcpServers": {"sophia-memory": server}})
    res = e2e.run("what do we know about the tank?", [
        {"tool_use": [{"name": "mcp__sophia-memory__remember", "input": {"text": FACT, "project": "global"}}]},
        {"tool_use": [{"name": "mcp__sophia-memory__search", "input": {"query": "kelp tank pump heater"}}]},
        {"text": "done"},
    ], allowed_tools="mcp__sophia-memory", extra_args=["--mcp-config", mcp, "--strict-mcp-config"])
    assert res.returncode == 0, res.stderr + res.stdout
    offered = {t["name"] for t in res.main_requests[0]["tools"]}
    assert {f"mcp__sophia-memory__{t}" for t in ("search", "get", "timeline", "remember", "forget")} <= offered
    got = _results(res.main_requests[-1])
    assert "is_error" not in got.get("mcp__sophia-memory__remember", "is_error"), got
    found = got["mcp__sophia-memory__search"]
    assert "Kelp tank pumps are cleaned" in found and "heater is set to 25.5" in found, found
