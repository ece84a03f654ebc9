"""PreCompact / PostCompact (hooks/compact.sh fed the payloads Claude Code 2.1.197 sends: ``trigger`` and
``custom_instructions``; ``trigger`` and ``compact_summary``): with learning on, the session's one digest
job is queued or updated with the redacted summary and held until SessionEnd makes it due."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import set_config
from sophia.learning import queue, worker
from sophia.state import init_tree
from test_digest_queue import fake_claude
from test_learning_hooks import hook_env, project_dir, run_hook


@pytest.fixture
def home(sophia_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    init_tree()
    set_config(sophia_home, embedding_provider="none")
    fake_claude(tmp_path, monkeypatch)
    return sophia_home


SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def payload(event: str, sid: str, project: Path, **kw: Any) -> dict[str, Any]:
    base = {"session_id": sid, "transcript_path": str(project / f"{sid}.jsonl"), "cwd": str(project),
            "hook_event_name": event, "trigger": "auto"}
    return {**base, **kw}


def compacted(home: Path, sid: str, project: Path, summary: str = "") -> None:
    run_hook("compact.sh", payload("PreCompact", sid, project, custom_instructions=None), home)
    run_hook("compact.sh", payload("PostCompact", sid, project, compact_summary=summary), home)


def test_learning_off_queues_nothing(home: Path, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    compacted(home, "s-off", project, "we fixed the parser")
    assert queue.jobs(home) == []


def test_compaction_queues_a_held_job_with_the_redacted_summary(home: Path, tmp_path: Path) -> None:
    set_config(home, learning_enabled=True)
    project = project_dir(tmp_path)
    run_hook("compact.sh", payload("PreCompact", "s-long", project, custom_instructions="keep the plan"), home)
    [job] = queue.jobs(home)
    assert job["state"] == "pending" and job["held"] and job["reason"] == "PreCompact (auto)"
    assert job["next_try_at"] > time.time() + 5 * 3600 and not job.get("summary")
    summary = f"The user asked to fix the lexer; the token {SECRET} was used to push; the tests pass now."
    run_hook("compact.sh", payload("PostCompact", "s-long", project, compact_summary=summary), home)
    [job] = queue.jobs(home)
    assert job["id"] == "session_s-long" and job["reason"] == "PostCompact (auto)"
    assert "fix the lexer" in job["summary"] and "tests pass now" in job["summary"]
    raw = (home / "digests" / "pending" / "session_s-long.json").read_text()
    assert SECRET not in raw and SECRET[:12] not in raw, raw
    assert queue.claim(home) is None  # held: a running worker leaves the live session alone
    prompt = worker.stage_prompt(worker.Settings(home, prompt_dir=home.parents[1] / "prompts"),
                                 dict(job), worker.Stage("extract", "extraction", ""))
    assert "STAGE=extract session s-long" in prompt


def test_session_end_makes_the_held_job_due_and_keeps_the_summary(home: Path, tmp_path: Path) -> None:
    from sophia.hooks import after_session

    set_config(home, learning_enabled=True)
    project = project_dir(tmp_path)
    compacted(home, "s-end", project, "Summary: migrated the billing tables.")
    job = {"session": "s-end", "transcript": str(project / "s-end.jsonl"), "project": str(project),
           "cwd": str(project), "episode": None, "trivial": False}
    line = after_session.digest(home, {"learning_enabled": True, "consolidation_min_episodes": 5}, job, None)
    assert line.startswith("digest session_s-end pending"), line
    [j] = queue.jobs(home)
    assert not j.get("held") and j["next_try_at"] == 0.0 and j["reason"] == "session_end"
    assert j["summary"] == "Summary: migrated the billing tables."
    claimed = queue.claim(home)
    assert claimed and claimed["id"] == "session_s-end"


def test_a_compaction_after_the_digest_ran_changes_nothing(home: Path, tmp_path: Path) -> None:
    set_config(home, learning_enabled=True)
    project = project_dir(tmp_path)
    _, job = queue.enqueue(home, "s-done")
    queue.move(home, job, "done")
    compacted(home, "s-done", project, "late summary")
    [j] = queue.jobs(home)
    assert j["state"] == "done" and not j.get("summary")


def test_an_opted_out_project_is_never_queued(home: Path, tmp_path: Path) -> None:
    set_config(home, learning_enabled=True)
    project = project_dir(tmp_path)
    (project / ".sophia-no-learning").write_text("")
    compacted(home, "s-out", project, "private work")
    assert queue.jobs(home) == []


@pytest.mark.parametrize("body", ["", "garbage{", "[]", json.dumps({"hook_event_name": "PostCompact"}),
                                  json.dumps({"hook_event_name": "PostCompact", "session_id": 7,
                                              "compact_summary": ["x"]})])
def test_bad_payloads_exit_quietly(home: Path, body: str) -> None:
    import subprocess

    from conftest import ROOT

    set_config(home, learning_enabled=True)
    r = subprocess.run(["bash", str(ROOT / "hooks" / "compact.sh")], input=body, env=hook_env(home),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "" and r.stdout == ""
    assert queue.jobs(home) == []
