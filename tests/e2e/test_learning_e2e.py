"""The learning loop end to end: the real claude client, the real hooks, the detached worker, one scripted
model on 127.0.0.1 for the sessions and for the worker's headless runs.

Session 0 runs the project's test script with success (learning off: the zero-token learners only).
Session 1 runs it, sees it fail, runs a variant that passes, and ends. Nobody types a command: SessionEnd
queues the digest and starts the worker, which runs stage 1 (extraction) and stage 2 (reflection, which
calls ``s3 recall`` through Bash: the worker put the kit's ``s3`` on the run's PATH). Then the state holds
the facts, the foresight and the heuristic, the episode carries its lesson, and session 2's first model
request carries the heuristic, the error -> fix procedure and the playbook command (a command becomes
the playbook once it has succeeded in two sessions: hence session 0).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import run_s3, wait_for

from .harness import REPO, ClaudeRun
from .model_server import ScriptedModel, has_tools_field, request_text
from .test_lifecycle_e2e import lifecycle_settings

pytestmark = pytest.mark.e2e

TEST_SCRIPT = """#!/bin/sh
case "$*" in
  *--import-mode=importlib*) echo "3 passed in 0.01s"; exit 0 ;;
esac
echo "E   ModuleNotFoundError: No module named 'widgets'" >&2
exit 1
"""
FAILS = "./run_tests.sh"
WORKS = "./run_tests.sh --import-mode=importlib"
HEURISTIC = "When the tests cannot import widgets, run them with --import-mode=importlib"
FACT = "The widgets project runs its tests with ./run_tests.sh"
FORESIGHT = "The widgets test setup will need the importlib import mode until the package is installable"
ANALYSIS = "./run_tests.sh failed with ModuleNotFoundError; the importlib import mode fixed it."
RECALL = "s3 recall 'run_tests ModuleNotFoundError widgets' --json --limit 5"


def bash(cmd: str) -> dict[str, Any]:
    return {"tool_use": [{"name": "Bash", "input": {"command": cmd, "description": "run the tests"}}]}


class Router:
    """One scripted model for everything: the digest's stages are told apart by their prompts, the
    sessions' turns come in order."""

    def __init__(self, sessions: list[dict[str, Any]]) -> None:
        self.sessions = list(sessions)
        self.stage2: list[dict[str, Any]] = []  # the stage-2 requests, in order

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = request_text(body)
        if "Stage 1 of 2" in text:
            return {"text": json.dumps(self.extraction(text))}
        if "Stage 2 of 2" in text:
            self.stage2.append(body)
            if len(self.stage2) == 1:
                return bash(RECALL)
            return {"text": json.dumps(self.reflection(text))}
        return self.sessions.pop(0) if self.sessions else {"text": "Done."}

    @staticmethod
    def episode(text: str) -> str:
        m = re.search(r'"episode_id": "(ep_[^"]+)"', text)
        assert m, "the stage prompt names no episode"
        return m.group(1)

    def extraction(self, text: str) -> dict[str, Any]:
        today = time.strftime("%Y-%m-%d")
        return {"episode_id": self.episode(text), "subject": "Widgets tests", "summary": "Fixed the test imports.",
                "episode": "The tests failed to import widgets until the importlib import mode was used.",
                "atomic_facts": [{"fact": FACT}],
                "foresight": [{"description": FORESIGHT, "evidence": "no packaging yet", "start_time": today,
                               "duration_days": 30, "confidence": 0.6}]}

    def reflection(self, text: str) -> dict[str, Any]:
        eid = re.search(r'"episodes_analyzed": \["(ep_[^"]+)"\]', text)
        assert eid, "the reflect prompt names no episode"
        return {"episodes_analyzed": [eid.group(1)], "error_analysis": ANALYSIS,
                "heuristics": [{"trigger_concept": "widgets tests", "rule_content": HEURISTIC, "confidence": 0.8,
                                "source_episodes": [eid.group(1)]}],
                "knowledge_gaps_identified": [], "capability_updates": []}


def _path_without_s3() -> str:
    """The sessions' PATH without any folder holding an `s3`: the worker must find the kit's own."""
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.access(os.path.join(d, "s3"), os.X_OK))


def _config(home: Path, **kw: Any) -> None:
    p = home / "config.json"
    cfg = json.loads(p.read_text())
    cfg.update(kw)
    p.write_text(json.dumps(cfg))


def _log(home: Path, name: str) -> str:
    p = home / "logs" / name
    return p.read_text() if p.exists() else ""


def _items(home: Path, store: str) -> list[dict[str, Any]]:
    p = home / "memory" / f"{store}.json"
    return json.loads(p.read_text())["items"] if p.exists() else []


@pytest.fixture
def run(e2e: ClaudeRun) -> ClaudeRun:
    e2e.extra_env.update(SOPHIA_PYTHON=sys.executable, SOPHIA_CLAUDE_BIN=str(e2e.binary), PATH=_path_without_s3())
    e2e.write_settings(lifecycle_settings())
    env = dict(os.environ, HOME=str(e2e.home), SOPHIA_HOME=str(e2e.home / ".sophia"), PYTHONPATH=str(REPO / "lib"))
    r = run_s3(["init"], env)
    assert r.returncode == 0, r.stderr
    _config(e2e.home / ".sophia", embedding_provider="none")
    script = e2e.project / "run_tests.sh"
    script.write_text(TEST_SCRIPT)
    script.chmod(0o755)
    return e2e


def test_a_session_is_digested_by_itself_and_the_next_session_starts_with_its_lessons(run: ClaudeRun) -> None:
    home = run.home / ".sophia"
    router = Router([bash(WORKS), bash("mkdir -p build"), {"text": "The tests pass."},  # session 0
                     bash(FAILS), bash(WORKS), {"text": "Fixed: the tests pass in importlib mode."},  # session 1
                     {"text": "Hello again."}])  # session 2
    server = ScriptedModel([router] * 40, main=has_tools_field).start()
    try:
        res = run.run("Run the widgets tests", [], model=server)
        assert res.returncode == 0, res.stderr
        assert wait_for(lambda: _log(home, "learning.log").count("\n") >= 1, 60), _log(home, "learning.log")
        assert "no digest (learning_enabled is false)" in _log(home, "learning.log")

        _config(home, learning_enabled=True)
        res = run.run("Make the widgets tests pass", [], model=server)
        assert res.returncode == 0, res.stderr
        # nothing typed: SessionEnd queued the digest and started the worker, which runs both stages
        assert wait_for(lambda: "digest worker stops" in _log(home, "digest.log"), 180), (
            _log(home, "digest.log") + _log(home, "learning.log"))
        assert wait_for(lambda: not _worker_running(home), 30)
        digest_log = _log(home, "digest.log")
        assert ": done" in digest_log and "parked" not in digest_log, digest_log
        recall_out = _stage_two_recalled(router)
        _lessons_kept(run, str(res.result.get("session_id")), recall_out)

        # session 2 starts with the lessons
        n = len(server.main_requests)
        res = run.run("What next for widgets?", [], model=server)
        assert res.returncode == 0, res.stderr
        context = request_text(server.main_requests[n])
        assert HEURISTIC in context, context[:4000]
        assert f"`{FAILS}`" in context and f"`{WORKS}`" in context and "ModuleNotFoundError" in context, context[:4000]
        assert wait_for(lambda: _log(home, "learning.log").count("\n") >= 3, 60), _log(home, "learning.log")
        assert wait_for(lambda: not _worker_running(home), 60)
    finally:
        server.stop()


def _stage_two_recalled(router: Router) -> str:
    """Stage 2 called `s3 recall` through Bash and its answer came back in the next request: that answer."""
    assert len(router.stage2) == 2, len(router.stage2)
    second = router.stage2[1]
    blocks = [b for m in second["messages"] if isinstance(m["content"], list) for b in m["content"]]
    assert [b["input"]["command"] for b in blocks if b.get("type") == "tool_use"] == [RECALL]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    assert len(results) == 1 and not results[0].get("is_error"), results
    out = json.dumps(results[0]["content"])
    assert '\\"results\\"' in out, out[:2000]
    return out


def _lessons_kept(run: ClaudeRun, session_id: str, recall_out: str) -> None:
    """The state holds the facts, the foresight and the heuristic; the episode carries its lesson."""
    home = run.home / ".sophia"
    episodes = [json.loads(p.read_text()) for p in sorted((home / "episodes").glob("ep_*.json"))]
    (ep,) = [e for e in episodes if e["session_id"] == session_id]
    assert ep["id"] in recall_out  # stage 2's recall found session 1's episode in this home
    assert [(f["text"], f["source_ids"]) for f in _items(home, "facts")] == [(FACT, [ep["id"]])]
    assert [f["text"] for f in _items(home, "foresight")] == [FORESIGHT]
    rules = json.loads((home / "semantic_rules.json").read_text())
    assert [r["rule_content"] for r in rules] == [HEURISTIC]
    assert ep["heuristics"] == [HEURISTIC] and ep["error_analysis"] == ANALYSIS
    assert ep["narrative"].startswith("The tests failed to import widgets")
    env = dict(os.environ, HOME=str(run.home), SOPHIA_HOME=str(home), PYTHONPATH=str(REPO / "lib"))
    r = run_s3(["recall", "importlib", "--json"], env)
    hits = {h["id"]: h for h in json.loads(r.stdout)["results"]}
    assert hits[ep["id"]]["meta"]["heuristics"] == [HEURISTIC], r.stdout[:3000]
    ledger = [json.loads(x) for x in (home / "digests" / "ledger.jsonl").read_text().splitlines()]
    assert [(e["stage"], e["ok"]) for e in ledger] == [("extract", True), ("reflect", True)]


def _worker_running(home: Path) -> bool:
    from sophia.learning import queue

    return queue.worker_running(home)
