"""The guardian under Codex (``S3_AGENT=codex``, what ``install.sh --codex`` writes into Codex's hooks):
the same rules on Codex's payloads (``Bash``, ``apply_patch`` with its patch text, ``mcp__*``), and an
answer in Codex's protocol, where an "ask" lets the call run: every ask is a deny there. Claude Code's
answers stay as they were. Payloads as codex 0.171 sends them (seen with the real client, see
/work/shared/docs/codex-protocol.md; tests/e2e/test_codex_e2e.py runs the client itself)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import PROJECT, hook_env, run_hook

GREY = "git push origin main --force-with-lease"  # an ask for Claude Code


def codex_payload(tool: str, tool_input: dict[str, Any], cwd: str = PROJECT) -> dict[str, Any]:
    return {"session_id": "01a218e9-68d6-71d1-9003-bfcf292f0b4a", "turn_id": "01a218e9-68f5-7c31-b326-cea9942991be",
            "transcript_path": "/home/dev/.codex/sessions/2026/11/26/rollout-x.jsonl", "cwd": cwd,
            "hook_event_name": "PreToolUse", "model": "gpt-5.5", "permission_mode": "bypassPermissions",
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": "call_0000"}


def patch(*lines: str) -> dict[str, str]:
    return {"command": "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"}


@pytest.fixture(params=["one-shot", "resident"])
def cenv(request: pytest.FixtureRequest, sophia_home: Path) -> dict[str, str]:
    sophia_home.mkdir(parents=True, exist_ok=True)
    extra = {"SOPHIA_GUARDIAN_RESIDENT": "0"} if request.param == "one-shot" else {}
    return hook_env(sophia_home, S3_AGENT="codex", **extra)


def test_a_destructive_shell_command_is_denied(cenv: dict[str, str]) -> None:
    res = run_hook(codex_payload("Bash", {"command": "rm -rf ~"}), cenv)
    assert res.rc == 0 and res.decision == "deny" and "home directory" in res.reason


def test_an_ask_is_a_deny_under_codex_and_stays_an_ask_for_claude(cenv: dict[str, str], sophia_home: Path) -> None:
    res = run_hook(codex_payload("Bash", {"command": GREY}), cenv)
    assert res.rc == 0 and res.decision == "deny", res
    assert "Codex cannot ask" in res.reason and "force" in res.reason
    claude = {k: v for k, v in cenv.items() if k != "S3_AGENT"}
    assert run_hook(codex_payload("Bash", {"command": GREY}), claude).decision == "ask"


def test_an_analyzer_failure_denies_under_codex(sophia_home: Path) -> None:
    sophia_home.mkdir(parents=True, exist_ok=True)
    env = hook_env(sophia_home, S3_AGENT="codex", SOPHIA_GUARDIAN_RESIDENT="0", SOPHIA_GUARDIAN_TESTING="1",
                   SOPHIA_GUARDIAN_FAULT="crash")
    res = run_hook(codex_payload("Bash", {"command": "rm -rf build"}), env)
    assert res.rc == 0 and res.decision == "deny" and "not checked" in res.reason


def test_ordinary_calls_pass_silently(cenv: dict[str, str]) -> None:
    for tool, tin in (("Bash", {"command": "ls -la"}), ("Bash", {"command": "pytest -x"}),
                      ("apply_patch", patch("*** Add File: notes/a.md", "+hello")),
                      ("apply_patch", patch("*** Update File: src/app.py", "@@", "-a = 1", "+a = 2"))):
        res = run_hook(codex_payload(tool, tin), cenv)
        assert res.rc == 0 and res.stdout == "", (tool, tin, res)


@pytest.mark.parametrize(("lines", "word"), [
    (("*** Update File: /etc/hosts", "+1.2.3.4 bank.example"), "/etc/hosts"),
    (("*** Add File: notes.md", "+ok", "*** Update File: /home/dev/.ssh/authorized_keys", "+ssh-ed25519 AAAA x"),
     "authorized_keys"),
    (("*** Delete File: /home/dev/.bashrc",), ".bashrc"),
    (("*** Update File: a.py", "*** Move to: /etc/cron.d/backup", "+x"), "/etc/cron.d"),
])
def test_every_file_a_patch_names_is_judged(cenv: dict[str, str], lines: tuple[str, ...], word: str) -> None:
    res = run_hook(codex_payload("apply_patch", patch(*lines)), cenv)
    assert res.decision == "deny", res
    assert word in res.reason


def test_a_patch_that_switches_the_guardian_off_is_denied(cenv: dict[str, str]) -> None:
    hooks = "/home/dev/.codex/hooks.json"
    res = run_hook(codex_payload("apply_patch", patch(f"*** Update File: {hooks}", "+{}")), cenv)
    assert res.decision == "deny", res


def test_mcp_calls_are_judged(cenv: dict[str, str], sophia_home: Path) -> None:
    (sophia_home / "config.json").write_text('{"guardian": {"mcp_deny": ["mcp__prod_db__*"]}}')
    res = run_hook(codex_payload("mcp__prod_db__query", {"sql": "select 1"}), cenv)
    assert res.decision == "deny" and "mcp__prod_db__query" in res.reason
    ours = run_hook(codex_payload("mcp__sophia-memory__search", {"query": "deploy"}), cenv)
    assert ours.rc == 0 and ours.decision == "allow"


def test_the_claude_path_gains_no_work(sophia_home: Path, tmp_path: Path) -> None:
    """Claude Code never sends apply_patch; its ordinary calls still never start Python."""
    sophia_home.mkdir(parents=True, exist_ok=True)
    fake = tmp_path / "python3"
    marker = tmp_path / "started"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    env = hook_env(sophia_home, SOPHIA_GUARDIAN_RESIDENT="0", SOPHIA_PYTHON=str(fake))
    for tin in ({"command": "ls -la"}, {"command": "pytest -x tests"}, {"command": "git status"}):
        res = run_hook(codex_payload("Bash", tin), env)
        assert res.rc == 0 and res.stdout == ""
    assert not marker.exists()
