"""Each memory once per session (issue 27): the prompt hook never injects what the session's context
already holds (shown at SessionStart or at an earlier prompt), until a compaction or a new start empties
the record (``sophia.hooks.shown``). Through the real hooks: session_start.sh, prompt_context.sh,
compact.sh, session_end.sh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_s3
from sophia import kinds, paths
from sophia.episode_store import upsert_episode
from sophia.hooks import shown
from sophia.index import db, store
from sophia.state import init_tree

POOL = "how did we tune the postgres connection pool size last time?"
WALRUS = "when is the walrus sanctuary trip we booked?"


@pytest.fixture
def home(sophia_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")
    init_tree(sophia_home)
    return sophia_home


@pytest.fixture
def project(home: Path, tmp_path: Path) -> Path:
    """A project with one episode SessionStart shows (the pool) and one fact it does not (the walrus)."""
    p = tmp_path / "proj"
    p.mkdir()
    ep = {"id": "ep_20250101_pool00000001", "session_id": "s-old", "started_at": "2025-01-01T00:00:00Z",
          "ended_at": "2025-01-01T01:00:00Z", "goal": "Tune the postgres connection pool size",
          "goal_summary": "Tune the postgres connection pool size", "outcome": "SUCCESS", "tool_call_count": 5,
          "trivial": False, "keywords": ["postgres", "connection", "pool"], "project": str(p),
          "result": "Pool size set from max_connections; the load test passes"}
    upsert_episode(ep, home)
    conn = db.connect(home)
    try:
        store.upsert_items(conn, [kinds.episode_item(ep), {
            "id": "fact_walrus", "type": "fact", "project": str(p),
            "text": "We booked the walrus sanctuary trip for the first weekend of June"}])
    finally:
        conn.close()
    return p


def env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home.parent), "SOPHIA_HOME": str(home), "SOPHIA_PYTHON": sys.executable,
            "SOPHIA_RECALL_SEMANTIC": "0"}


def hook(home: Path, script: str, payload: dict[str, Any]) -> str:
    r = subprocess.run(["bash", str(ROOT / "hooks" / script)], input=json.dumps(payload), env=env(home),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    return str(json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]) if r.stdout.strip() else ""


def start(home: Path, cwd: Path, sid: str = "s1", source: str = "startup") -> str:
    return hook(home, "session_start.sh", {"session_id": sid, "cwd": str(cwd), "hook_event_name": "SessionStart",
                                           "source": source})


def prompt(home: Path, cwd: Path, text: str, sid: str = "s1") -> str:
    return hook(home, "prompt_context.sh", {"session_id": sid, "cwd": str(cwd), "hook_event_name": "UserPromptSubmit",
                                            "prompt": text})


def compact(home: Path, cwd: Path, event: str, sid: str = "s1") -> None:
    hook(home, "compact.sh", {"session_id": sid, "cwd": str(cwd), "hook_event_name": event, "trigger": "auto",
                              "compact_summary": "we talked about pools"})


def record(home: Path, sid: str = "s1") -> dict[str, Any]:
    return dict(json.loads(paths.shown_path(home, sid).read_text()))


def test_a_prompt_is_not_given_what_session_start_showed(home: Path, project: Path) -> None:
    # without SessionStart (a session whose context holds nothing of ours) the prompt gets the episode
    assert "ep_20250101_pool00000001" in prompt(home, project, POOL, sid="s-bare")
    text = start(home, project)
    assert "[ep_20250101_pool00000001]" in text
    assert record(home)["ids"] == ["ep_20250101_pool00000001"] and record(home)["origin"] == "SessionStart:startup"
    assert prompt(home, project, POOL) == ""  # its only relevant memory is in the context already


def test_the_second_prompt_about_the_same_thing_gets_nothing_new(home: Path, project: Path) -> None:
    start(home, project)
    first = prompt(home, project, WALRUS)
    assert "[fact_walrus]" in first and "pool" not in first.lower()
    assert prompt(home, project, WALRUS) == ""
    assert prompt(home, project, "the walrus sanctuary booking for June, again?") == ""
    assert record(home)["ids"] == ["ep_20250101_pool00000001", "fact_walrus"]


def test_after_a_compaction_the_memory_comes_back(home: Path, project: Path) -> None:
    start(home, project)
    assert "[fact_walrus]" in prompt(home, project, WALRUS)
    compact(home, project, "PreCompact")  # learning is off: the record is emptied all the same
    assert record(home)["ids"] == []
    assert "[fact_walrus]" in prompt(home, project, WALRUS)
    assert "[ep_20250101_pool00000001]" in prompt(home, project, POOL)
    # SessionStart (source compact) starts the record afresh; a PostCompact after it keeps that
    compact(home, project, "PreCompact")
    assert "[ep_20250101_pool00000001]" in start(home, project, source="compact")
    compact(home, project, "PostCompact")
    assert record(home)["ids"] == ["ep_20250101_pool00000001"]
    assert prompt(home, project, POOL) == "" and "[fact_walrus]" in prompt(home, project, WALRUS)
    # a PostCompact with no SessionStart since empties it
    compact(home, project, "PostCompact")
    assert "[fact_walrus]" in prompt(home, project, WALRUS)


def test_a_new_start_of_the_same_session_forgets_what_came_before(home: Path, project: Path) -> None:
    start(home, project)
    assert "[fact_walrus]" in prompt(home, project, WALRUS)
    for source in ("resume", "clear"):
        start(home, project, source=source)
        assert record(home)["origin"] == f"SessionStart:{source}" and "fact_walrus" not in record(home)["ids"]
        assert "[fact_walrus]" in prompt(home, project, WALRUS)


def test_the_record_is_removed_at_session_end_and_stale_ones_are_swept(home: Path, project: Path) -> None:
    start(home, project)
    start(home, project, sid="s-killed")
    old = time.time() - shown.STALE_S - 60
    os.utime(paths.shown_path(home, "s-killed"), (old, old))
    start(home, project, sid="s-alive")
    hook(home, "session_end.sh", {"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionEnd",
                                  "reason": "other", "transcript_path": ""})
    left = sorted(p.name for p in paths.shown_dir(home).iterdir())
    assert left == ["s-alive.json"]


def test_the_record_stays_bounded(home: Path) -> None:
    shown.start(home, "s1", "SessionStart:startup", ["ep_first"])
    for n in range(0, 1000, 50):
        shown.add(home, "s1", [f"fact_{i:04d}" for i in range(n, n + 50)])
    ids = record(home)["ids"]
    assert len(ids) == shown.MAX_IDS and ids[-1] == "fact_0999" and ids[0] == f"fact_{1000 - shown.MAX_IDS:04d}"
    assert paths.shown_path(home, "s1").stat().st_size < shown.MAX_FILE_BYTES
    assert shown.add(home, "s1", ["fact_0999"]) == 0  # already there: nothing written
    paths.shown_path(home, "s1").write_text("{not json")
    assert shown.load(home, "s1") == set()  # a broken record counts as empty


def test_ids_in_reads_the_renderers_lines() -> None:
    text = ("# title\n## Heuristics\n- [rule_1] do this (when: x)\n- Playbook: test `pytest`\n"
            "episodes, today:\n- [ep_2] did -> done\n  why: because\n- [ep_2] again\n- [turn:chat:D1:3] hi\n")
    assert shown.ids_in(text) == ["rule_1", "ep_2", "turn:chat:D1:3"]


def test_explain_says_a_memory_was_skipped_as_already_shown(s3_env: dict[str, str], home: Path,
                                                           project: Path) -> None:
    start(home, project)
    prompt(home, project, WALRUS)

    def verdict(extra: dict[str, str]) -> dict[str, Any]:
        r = run_s3(["recall", WALRUS, "--explain", "--json", "--project", str(project)],
                   {**s3_env, "SOPHIA_RECALL_SEMANTIC": "0", **extra})
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        return {res["id"]: res["explain"]["hook"] for res in doc["results"]} | {"_injected": doc["hook"]["injected"]}

    outside = verdict({"CLAUDE_CODE_SESSION_ID": ""})
    assert outside["fact_walrus"] == "injected"
    inside = verdict({"CLAUDE_CODE_SESSION_ID": "s1"})
    assert inside["_injected"] == [] and inside["fact_walrus"].startswith("not injected: already shown in session s1")
    text = run_s3(["recall", WALRUS, "--explain", "--project", str(project)],
                  {**s3_env, "SOPHIA_RECALL_SEMANTIC": "0", "CLAUDE_CODE_SESSION_ID": "s1"}).stdout
    assert "2 already shown in session s1" in text and "already shown in session s1" in text


def test_another_projects_rule_is_never_injected_a_rule_without_one_is(home: Path, project: Path,
                                                                       tmp_path: Path) -> None:
    conn = db.connect(home)
    try:
        store.upsert_items(conn, [
            kinds.rule_item({"id": "rule_theirs", "trigger_concept": "gradle daemon", "project": str(tmp_path / "q"),
                             "rule_content": "Stop the gradle daemon before a clean gradle build"}),
            kinds.rule_item({"id": "rule_global", "trigger_concept": "gradle daemon",
                             "rule_content": "Stop the gradle daemon before a clean gradle build, everywhere"})])
    finally:
        conn.close()
    text = prompt(home, project, "how do I stop the gradle daemon before a clean gradle build?")
    assert "[rule_global]" in text and "rule_theirs" not in text


def test_what_the_context_holds_counts_for_the_gate_but_is_not_given_again() -> None:
    """A session is given what a fresh one would be, less what its context already holds."""
    from sophia.hooks.prompt_context import select

    def it(i: str, rel: float) -> dict[str, Any]:
        return {"id": i, "type": "fact", "text": i, "score": rel, "relevance": rel}

    def ids(shown_ids: set[str], items: list[dict[str, Any]], max_items: int = 5) -> list[str]:
        return [x["id"] for x in select(items, "", project=None, session_id=None, min_score=0.42,
                                        max_items=max_items, shown=shown_ids)]

    items = [it("strong", 0.9), it("neighbour", 0.3), it("faint", 0.1)]
    assert ids(set(), items) == ["strong", "neighbour"]
    assert ids({"strong"}, items) == ["neighbour"]  # the strong hit is in context: its neighbour still follows
    assert ids({"strong", "neighbour"}, items) == []
    assert ids(set(), [it("neighbour", 0.3)]) == []  # alone it never passes the gate, repeat or not
    many = [it("strong", 0.9)] + [it(f"n{i}", 0.3 - i / 100) for i in range(5)]
    assert ids({"strong", "n0"}, many, max_items=2) == ["n1", "n2"]  # max_items counts what is given
