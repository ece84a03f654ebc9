"""Codex CLI beside Claude Code, end to end: the real ``codex`` 0.171.0 (and the real ``claude``) against
scripted models on 127.0.0.1, with the kit's hooks as ``install.sh --codex`` registers them (trusted by
hash: no ``--dangerously-bypass-hook-trust``) and its MCP server.

- the guardian denies ``rm -rf ~`` in Codex's protocol: the model reads the hook's block message;
- a Codex session becomes an episode built from Codex's own session file (``agent: codex``, the failed
  call failed), and a call of the MCP server's ``search`` comes back with the memory's lines;
- memory crosses agents: the error -> fix a Claude Code session learned in a project (zero-token
  learners) is in the first request of a Codex session there, and the other way round.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import run_s3, wait_for

from .codex_harness import CodexRun
from .harness import REPO, ClaudeRun
from .test_learning_e2e import FAILS, TEST_SCRIPT, WORKS
from .test_lifecycle_e2e import lifecycle_settings

pytestmark = pytest.mark.e2e


def _s3(home: Path, args: list[str]) -> Any:
    env = dict(os.environ, HOME=str(home), SOPHIA_HOME=str(home / ".sophia"), PYTHONPATH=str(REPO / "lib"))
    return run_s3(args, env)


def _init(home: Path) -> None:
    r = _s3(home, ["init"])
    assert r.returncode == 0, r.stderr
    cfg = home / ".sophia" / "config.json"
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "embedding_provider": "none"}))


def _episodes(home: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((home / ".sophia" / "episodes").glob("ep_*.json"))]


def _learned(home: Path, n: int) -> bool:
    log = home / ".sophia" / "logs" / "learning.log"
    return log.exists() and log.read_text().count("\n") >= n


def _script(project: Path) -> None:
    s = project / "run_tests.sh"
    s.write_text(TEST_SCRIPT)
    s.chmod(0o755)


def test_the_guardian_denies_a_destructive_command_in_codex(codex_e2e: CodexRun) -> None:
    _init(codex_e2e.home)
    keep = codex_e2e.home / "precious.txt"
    keep.write_text("mine")
    res = codex_e2e.run("clean up the home folder", [{"shell": "rm -rf ~"}, {"text": "I could not do that."}])
    assert res.returncode == 0, res.stderr[-3000:]
    after = res.request_text(1)
    assert "Command blocked by PreToolUse hook: Sophia guardian:" in after, after[-2000:]
    assert "home directory" in after and keep.read_text() == "mine"
    blocks = (codex_e2e.home / ".sophia" / "logs" / "guardian_blocks.jsonl")
    assert wait_for(blocks.exists, 10) and '"decision": "deny"' in blocks.read_text()


def test_a_codex_session_becomes_an_episode_and_mcp_search_answers(codex_e2e: CodexRun) -> None:
    _init(codex_e2e.home)
    assert _s3(codex_e2e.home, ["learn", "Kelp tanks need the pump cleaned weekly"]).returncode == 0
    script = [{"shell": "mkdir -p notes && echo kelp > notes/tank.md"}, {"shell": "false"},
              {"patch": "*** Begin Patch\n*** Add File: notes/pump.md\n+weekly\n*** End Patch\n"},
              {"mcp": ["sophia-memory", "search", {"query": "kelp pump"}]},
              {"text": "Done: the kelp tank notes are in notes/."}]
    res = codex_e2e.run("Write the kelp tank notes", script)
    assert res.returncode == 0, res.stderr[-3000:]
    sid = res.session_id
    assert (codex_e2e.project / "notes" / "pump.md").read_text() == "weekly\n"
    # the MCP call: Codex ran the tool, its answer (compact lines) came back to the model
    mcp_out = res.request_text(4)
    assert "rule_" in mcp_out and "Kelp tanks need the pump cleaned weekly" in mcp_out, mcp_out[-2000:]
    assert wait_for(lambda: any(e["session_id"] == sid and e.get("end_trigger") == "session_end"
                                for e in _episodes(codex_e2e.home)), 30)
    (ep,) = [e for e in _episodes(codex_e2e.home) if e["session_id"] == sid]
    assert ep["agent"] == "codex" and ep["project"] == str(codex_e2e.project.resolve())
    tools = [(a["tool"], a["outcome"]) for a in ep["actions"]]
    assert tools[:3] == [("Bash", "ok"), ("Bash", "error"), ("Write", "ok")], tools
    assert tools[3][0] == "mcp__sophia-memory__search" and ep["goal"] == "Write the kelp tank notes"
    r = _s3(codex_e2e.home, ["recall", "kelp tank notes", "--json"])
    assert ep["id"] in [h["id"] for h in json.loads(r.stdout)["results"]]
    # the shell and patch calls were logged by the PostToolUse hook too
    buf = codex_e2e.home / ".sophia" / "buffers" / f"{sid}.jsonl"
    logged = [json.loads(x)["tool"] for x in buf.read_text().splitlines()]
    assert logged[:3] == ["Bash", "Bash", "apply_patch"], logged


def test_a_lesson_from_claude_code_reaches_codex_and_back(e2e: ClaudeRun, tmp_path: Path) -> None:
    home = e2e.home
    e2e.extra_env["SOPHIA_PYTHON"] = sys.executable
    e2e.write_settings(lifecycle_settings())
    _init(home)
    if not CodexRun(home, tmp_path / "x").binary:
        pytest.skip("the codex client is not installed (./test.sh installs it into .cache/node)")
    # 1. Claude Code in project A: the tests fail, the importlib variant passes; the learners keep the fix
    _script(e2e.project)
    res = e2e.run("Make the widgets tests pass",
                  [{"tool_use": [{"name": "Bash", "input": {"command": FAILS, "description": "tests"}}]},
                   {"tool_use": [{"name": "Bash", "input": {"command": WORKS, "description": "tests"}}]},
                   {"text": "Fixed: the tests pass in importlib mode."}])
    assert res.returncode == 0, res.stderr
    assert wait_for(lambda: _learned(home, 1), 60)
    # 2. Codex in the same project: its first request carries the fix
    codex = CodexRun(home, e2e.project)
    out = codex.run("What next for the widgets tests?", [{"text": "Run them in importlib mode."}])
    assert out.returncode == 0, out.stderr[-3000:]
    first = out.request_text(0)
    assert f"`{WORKS}`" in first and "ModuleNotFoundError" in first, first[-4000:]
    # 3. the other way: Codex in project B learns the fix; Claude Code's first request there carries it
    other = tmp_path / "gadgets"
    other.mkdir()
    _script(other)
    codex_b = CodexRun(home, other)
    out = codex_b.run("Make the gadgets tests pass", [{"shell": FAILS}, {"shell": WORKS},
                                                      {"text": "Fixed: the tests pass in importlib mode."}])
    assert out.returncode == 0, out.stderr[-3000:]
    assert wait_for(lambda: _learned(home, 2), 60)
    claude_b = ClaudeRun(home, other, env=e2e.extra_env)
    res = claude_b.run("What next for the gadgets tests?", [{"text": "Run them in importlib mode."}])
    assert res.returncode == 0, res.stderr
    first = res.request_text(0)
    assert f"`{WORKS}`" in first and "ModuleNotFoundError" in first, first[-4000:]
    a, b = str(e2e.project.resolve()), str(other.resolve())
    assert {(e["project"], e["agent"]) for e in _episodes(home)} == {(a, "claude_code"), (a, "codex"),
                                                                      (b, "codex"), (b, "claude_code")}
