"""The real claude client runs the /s3-learn skill (scripted model) and the rule lands in memory."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from conftest import LIB, run_s3

from .harness import ClaudeRun

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def _install(e2e: ClaudeRun, s3_env: dict[str, str], skills: list[str]) -> None:
    bindir = e2e.home / "bin"
    bindir.mkdir(exist_ok=True)
    wrapper = bindir / "s3"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={LIB} exec {sys.executable} -m sophia.cli.entry "$@"\n')
    wrapper.chmod(0o755)
    e2e.extra_env["PATH"] = f"{bindir}:{s3_env['PATH']}"
    for name in skills:
        shutil.copytree(REPO / "skills" / name, e2e.home / ".claude" / "skills" / name)
    assert run_s3(["init"], s3_env).returncode == 0


def test_user_typed_s3_learn_runs_preapproved(e2e: ClaudeRun, s3_env: dict[str, str]) -> None:
    """`/s3-learn ...` expands the skill (with $ARGUMENTS); the scripted model runs the command the
    skill names; the skill's `allowed-tools: Bash(s3 learn:*)` is the only thing approving it
    (--allowedTools grants just Read); the rule is in `s3 list rules --json`."""
    _install(e2e, s3_env, ["s3-learn"])
    insight = "Always pin Docker base images to a digest"
    res = e2e.run(f'/s3-learn "{insight}" --domain Docker', [
        {"tool_use": [{"name": "Bash", "input": {"command": f"s3 learn '{insight}' --domain 'Docker'",
                                                 "description": "save the insight"}}]},
        {"text": "Saved the insight."},
    ], allowed_tools="Read")
    assert res.returncode == 0, res.stderr + res.stdout
    assert res.result.get("permission_denials") == [], res.result.get("permission_denials")
    first = res.request_text(0)
    assert "# Learn Insight" in first and f'Arguments: `"{insight}" --domain Docker`' in first
    assert "## Insight Captured" in res.request_text(1)  # the seed-format output went back to the model
    rules = json.loads(run_s3(["list", "rules", "--json"], s3_env).stdout)
    assert [(r["trigger_concept"], r["rule_content"], r["source"]) for r in rules] == [("Docker", insight, "manual")]


def test_model_invoked_skill_tool(e2e: ClaudeRun, s3_env: dict[str, str]) -> None:
    """The model picks the skill itself (Skill tool) and follows it. In claude 2.1.197 a skill's
    allowed-tools did not pre-approve Bash on this path, so the permission comes from the
    settings (as install.sh writes them): `Bash(s3 learn:*)`."""
    _install(e2e, s3_env, ["s3-learn"])
    insight = "Run database migrations inside a transaction"
    res = e2e.run("Remember: run database migrations inside a transaction.", [
        {"tool_use": [{"name": "Skill", "input": {"skill": "s3-learn", "args": f'"{insight}" --domain Database'}}]},
        {"tool_use": [{"name": "Bash", "input": {"command": f"s3 learn '{insight}' --domain 'Database'",
                                                 "description": "save the insight"}}]},
        {"text": "Saved."},
    ], allowed_tools="Skill,Bash(s3 learn:*)")
    assert res.returncode == 0, res.stderr + res.stdout
    assert res.result.get("permission_denials") == [], res.result.get("permission_denials")
    assert "s3-learn" in res.request_text(0)  # offered to the model by its description
    assert "# Learn Insight" in res.request_text(1) and "--domain Database" in res.request_text(1)
    rules = json.loads(run_s3(["list", "rules", "--json"], s3_env).stdout)
    assert [(r["trigger_concept"], r["rule_content"]) for r in rules] == [("Database", insight)]


def test_skill_does_not_preapprove_other_commands(e2e: ClaudeRun, s3_env: dict[str, str]) -> None:
    """allowed-tools is exact: under /s3-learn, `s3 forget` is not pre-approved."""
    _install(e2e, s3_env, ["s3-learn"])
    rid = json.loads(run_s3(["learn", "Keep me", "--json"], s3_env).stdout)["rule"]["id"]
    res = e2e.run("/s3-learn something", [
        {"tool_use": [{"name": "Bash", "input": {"command": f"s3 forget {rid}", "description": "forget"}}]},
        {"text": "ok"},
    ], allowed_tools="Read")
    assert res.returncode == 0, res.stderr
    assert [d["tool_input"]["command"] for d in res.result.get("permission_denials") or []] == [f"s3 forget {rid}"]
    assert len(json.loads(run_s3(["list", "rules", "--json"], s3_env).stdout)) == 1
