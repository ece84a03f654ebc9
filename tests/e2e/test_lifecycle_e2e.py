"""Lifecycle hooks end to end: the real claude client, a scripted model on 127.0.0.1.

Session 1 runs tools and ends -> its episode is on disk, indexed and recallable; session 2's
FIRST model request already carries that memory (SessionStart additionalContext); with
``reflection_trigger: on_session_end`` a detached reflection runs once and nothing recurses.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import run_s3

from .harness import REPO, ClaudeRun
from .model_server import ScriptedModel, request_text

pytestmark = pytest.mark.e2e

HOOKS = REPO / "hooks"
WORD = "zebrafish"
PROMPT = f"Please set up the {WORD} aquarium notes for the lab"


def lifecycle_settings() -> dict[str, Any]:
    def cmd(name: str) -> list[dict[str, Any]]:
        return [{"hooks": [{"type": "command", "command": str(HOOKS / name), "timeout": 30}]}]

    return {"hooks": {
        "SessionStart": cmd("session_start.sh"),
        "UserPromptSubmit": cmd("prompt_context.sh"),
        "PostToolUse": cmd("log_action.sh"),
        "PostToolUseFailure": cmd("log_action.sh"),
        "Stop": cmd("session_end.sh"),
        "SessionEnd": cmd("session_end.sh"),
    }}


def session_one_script() -> list[Any]:
    return [
        {"tool_use": [{"name": "Bash", "input": {"command": "mkdir -p notes && ls", "description": "prepare"}}]},
        {"tool_use": [{"name": "Write", "input": {"file_path": "notes/aquarium.md",
                                                  "content": "# Zebrafish aquarium\nTemperature 28 C\n"}}]},
        {"text": "Done: the aquarium notes are written to notes/aquarium.md."},
    ]


@pytest.fixture
def run(e2e: ClaudeRun) -> ClaudeRun:
    e2e.extra_env["SOPHIA_PYTHON"] = sys.executable
    e2e.write_settings(lifecycle_settings())
    code, out, err = _s3(e2e, ["init"])
    assert code == 0, err
    return e2e


def _s3(e2e: ClaudeRun, args: list[str]) -> tuple[int, str, str]:
    import os

    env = dict(os.environ, HOME=str(e2e.home), SOPHIA_HOME=str(e2e.home / ".sophia"), PYTHONPATH=str(REPO / "lib"))
    proc = run_s3(args, env)
    return proc.returncode, proc.stdout, proc.stderr


def sophia(e2e: ClaudeRun) -> Path:
    return e2e.home / ".sophia"


def episodes(e2e: ClaudeRun) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((sophia(e2e) / "episodes").glob("ep_*.json"))]


def test_session_becomes_an_episode_and_comes_back_next_session(run: ClaudeRun) -> None:
    res = run.run(PROMPT, session_one_script())
    assert res.returncode == 0, res.stderr
    assert (run.project / "notes" / "aquarium.md").exists()

    eps = episodes(run)
    assert len(eps) == 1, eps
    ep = eps[0]
    assert ep["goal"] == PROMPT and WORD in ep["keywords"]
    assert ep["tool_call_count"] == 2 and ep["trivial"] is False
    assert ep["outcome"] == "SUCCESS" and ep["end_trigger"] == "session_end"
    assert ep["project"] == str(run.project.resolve())
    assert ep["files_touched"] == [str(run.project / "notes" / "aquarium.md")]
    assert [a["tool"] for a in ep["actions"]] == ["Bash", "Write"]
    assert ep["actions"][0]["summary"] == "mkdir"
    index = json.loads((sophia(run) / "episodes" / "index.json").read_text())
    assert [e["id"] for e in index["entries"]] == [ep["id"]]
    self_model = json.loads((sophia(run) / "self_model.json").read_text())
    assert self_model["total_sessions"] == 1 and self_model["total_episodes"] == 1
    from sophia.models import Episode

    Episode.model_validate(ep)

    # Session 2: its first model request already carries the memory from SessionStart.
    res2 = run.run("Continue with the lab work", [{"text": "Continuing."}])
    assert res2.returncode == 0, res2.stderr
    first = res2.request_text(0)
    assert "Sophia System 3 memory" in first, first[:2000]
    assert ep["id"] in first and WORD in first.lower()
    assert json.loads((sophia(run) / "self_model.json").read_text())["total_sessions"] == 2


def test_s3_recall_finds_the_session_by_a_word_of_its_prompt(run: ClaudeRun) -> None:
    res = run.run(PROMPT, session_one_script())
    assert res.returncode == 0, res.stderr
    ep_id = episodes(run)[0]["id"]
    code, out, err = _s3(run, ["recall", WORD, "--json"])
    assert code == 0, err
    ids = [r["id"] for r in json.loads(out)["results"]]
    assert ep_id in ids, out


def test_reflection_on_session_end_runs_once_and_never_recurses(run: ClaudeRun) -> None:
    cfg_path = sophia(run) / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["reflection_trigger"] = "on_session_end"
    cfg_path.write_text(json.dumps(cfg))
    run.extra_env["SOPHIA_CLAUDE_BIN"] = str(run.binary)
    kit = run.home / "kit-bin"  # the kit's s3: it applies the answer, and the run's `s3 recall` is this one
    kit.mkdir()
    (kit / "s3").write_text(f"#!/bin/sh\nPYTHONPATH={REPO / 'lib'} exec {sys.executable} -m sophia.cli.entry \"$@\"\n")
    (kit / "s3").chmod(0o755)
    run.extra_env["SOPHIA_S3"] = str(kit / "s3")
    rule = "Write lab results to a file before summarising"

    def reflect_answer(body: dict[str, Any]) -> dict[str, Any]:
        """The reflection's run: handed the episode in its prompt, it answers with JSON (it writes no file)."""
        m = re.search(r"^## (ep_\S+) \|", request_text(body), re.M)
        if "detached reflection" not in request_text(body) or not m:
            return {"text": "No reflection asked."}
        return {"text": json.dumps({"episodes_analyzed": [m.group(1)], "heuristics": [{
            "trigger_concept": "Lab notes", "rule_content": rule, "confidence": 0.7, "source_episodes": [m.group(1)]}],
            "capability_updates": [], "knowledge_gaps_identified": []})}

    server = ScriptedModel(session_one_script() + [reflect_answer]).start()
    try:
        res = run.run(PROMPT, [], model=server)
        assert res.returncode == 0, res.stderr
        home = sophia(run)
        deadline = time.monotonic() + 90
        log = home / "logs" / "reflection.log"
        while time.monotonic() < deadline:
            if log.exists() and "reflection: finished" in log.read_text():
                break
            time.sleep(0.2)
        text = log.read_text() if log.exists() else ""
        assert "reflection: finished (applied)" in text, text
        rules = json.loads((home / "semantic_rules.json").read_text())
        assert [r["rule_content"] for r in rules] == [rule]
        time.sleep(1.0)  # anything recursive would show up now
        requests = list(server.main_requests)
    finally:
        server.stop()

    reflection_requests = [r for r in requests if "detached reflection" in request_text(r)]
    assert len(reflection_requests) == 1  # handed what it needs, it answers at once
    assert len(requests) == 3 + len(reflection_requests)  # the session's 3 turns + the reflection, nothing else
    assert text.count("started for") == 1
    results = list((home / "agent_results").glob("reflect_*.json"))
    assert len(results) == 1 and json.loads(results[0].read_text())["agent_type"] == "s3-reflection"
    # No hook ran inside the child: no other session buffer, episode or session count.
    assert len(list((home / "buffers").glob("*.jsonl"))) == 1
    assert len(episodes(run)) == 1
    assert json.loads((home / "self_model.json").read_text())["total_sessions"] == 1
    # The child was sealed: Bash alone (s3 recall / s3 list), in a fresh folder, the episode in its prompt.
    first = reflection_requests[0]
    assert [t["name"] for t in first["tools"]] == ["Bash"]
    assert f"## {episodes(run)[0]['id']} |" in request_text(first) and WORD in request_text(first)
    (where,) = re.findall(r"Primary working directory: (\S+)", request_text(first))
    assert Path(where).name.startswith("sophia-stage-") and not Path(where).exists()
    ep = json.loads((home / "episodes" / f"{episodes(run)[0]['id']}.json").read_text())
    assert ep["reflected"] is True and rule in ep["heuristics"]
