"""session_end / session_start / prompt_context modules and the reflection launcher, on a real
SOPHIA_HOME (real files, locks, subprocesses)."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_for
from sophia import paths
from sophia.hooks import reflection, session_end, stats
from sophia.hooks.prompt_context import fallback_recall, select
from sophia.hooks.runtime import load_config
from sophia.hooks.session_start import build_context

FIX = Path(__file__).parent / "fixtures" / "lifecycle"
SID = "b60c9b2f-790f-4a53-81eb-ca4204d1f601"


@pytest.fixture
def home(sophia_home: Path) -> Path:
    from sophia.state import init_tree

    init_tree()
    return sophia_home


def payloads(project: Path, transcript: Path) -> list[dict[str, Any]]:
    text = (FIX / "payloads.jsonl").read_text(encoding="utf-8")
    text = text.replace("@PROJECT@", str(project)).replace("@TRANSCRIPT@", str(transcript))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def event(ps: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(dict(p) for p in ps if p["hook_event_name"] == name)


@pytest.fixture
def session(home: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """The real payloads and transcript of a recorded session; the buffer as log_action writes it."""
    project = tmp_path / "proj"
    project.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text((FIX / "transcript_basic.jsonl").read_text().replace("@PROJECT@", str(project)))
    ps = payloads(project, transcript)
    buf = paths.buffers_dir(home) / f"{SID}.jsonl"
    buf.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {"ts": "2025-03-01T10:00:01.000Z", "session": SID, "tool": "Bash", "event": "PostToolUse",
         "outcome": "ok", "id": "toolu_0000", "exit": 0, "summary": "echo hello", "args_hash": "1"},
        {"ts": "2025-03-01T10:00:02.000Z", "session": SID, "tool": "Bash", "event": "PostToolUseFailure",
         "outcome": "error", "id": "toolu_0001", "exit": 1, "summary": "false", "args_hash": "2"},
        {"ts": "2025-03-01T10:00:03.000Z", "session": SID, "tool": "Write", "event": "PostToolUse",
         "outcome": "ok", "id": "toolu_0002", "file": f"{project}/notes.txt", "args_hash": "3"},
    ]
    buf.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return ps


def read(p: Path) -> Any:
    return json.loads(p.read_text(encoding="utf-8"))


def test_stop_upserts_one_episode_idempotently(home: Path, session: list[dict[str, Any]]) -> None:
    from sophia.models import Episode, EpisodeIndex, SelfModel, UserModel

    stop = event(session, "Stop")
    r1 = session_end.process(stop, home)
    first = read(paths.episodes_dir(home) / f"{r1['episode']}.json")
    index_mtime = paths.episode_index_path(home).stat().st_mtime_ns
    r2 = session_end.process(stop, home)
    assert r1["episode"] == r2["episode"] == "ep_20250301_b60c9b2f790f"
    assert r1["written"] is True and r2["written"] is False  # nothing new: nothing rewritten
    assert paths.episode_index_path(home).stat().st_mtime_ns == index_mtime
    second = read(paths.episodes_dir(home) / f"{r2['episode']}.json")
    volatile = ("ended_at", "timestamp")
    assert {k: v for k, v in first.items() if k not in volatile} == {
        k: v for k, v in second.items() if k not in volatile}
    ep = Episode.model_validate(second)
    assert ep.goal == "Please write my notes file about fishing" and ep.tool_call_count == 3
    assert ep.errors == ["Bash false: Exit code 1"] and ep.end_trigger == "stop_hook"
    index = EpisodeIndex.model_validate(read(paths.episode_index_path(home)))
    assert [e.id for e in index.entries] == [ep.id] and index.total_episodes == 1
    sm = SelfModel.model_validate(read(paths.self_model_path(home)))
    assert sm.total_sessions == 1 and sm.total_episodes == 1 and sm.last_session is not None
    # A new tool call: the episode file changes at the next Stop; the index entry's count at SessionEnd.
    with open(paths.buffers_dir(home) / f"{SID}.jsonl", "a") as fh:
        fh.write(json.dumps({"ts": "2025-03-01T10:00:09Z", "tool": "Read", "outcome": "ok", "file": "/x/a.py"}) + "\n")
    r3 = session_end.process(stop, home)
    assert r3["written"] is True
    assert read(paths.episodes_dir(home) / f"{ep.id}.json")["tool_call_count"] == 4
    assert read(paths.episode_index_path(home))["entries"][0]["tool_call_count"] == 3
    session_end.process(event(session, "SessionEnd"), home)
    assert read(paths.episode_index_path(home))["entries"][0]["tool_call_count"] == 4
    um = UserModel.model_validate(read(paths.user_model_path("default", home)))
    assert um.interaction_count == 1 and "fishing" in um.topics_discussed
    mode = stat.S_IMODE((paths.episodes_dir(home) / f"{ep.id}.json").stat().st_mode)
    assert mode == 0o600


def test_stop_hook_active_and_other_events_are_skipped(home: Path, session: list[dict[str, Any]]) -> None:
    stop = event(session, "Stop")
    stop["stop_hook_active"] = True
    assert session_end.process(stop, home) == {"skipped": "stop_hook_active"}
    assert session_end.process(event(session, "PostToolUse"), home)["skipped"].startswith("event")
    assert session_end.process({"hook_event_name": "Stop"}, home) == {"skipped": "no session_id"}
    assert not list(paths.episodes_dir(home).glob("ep_*.json"))


def test_session_end_finalises_and_keeps_counts(home: Path, session: list[dict[str, Any]]) -> None:
    from sophia.models import Episode, SelfModel

    session_end.process(event(session, "Stop"), home)
    r = session_end.process(event(session, "SessionEnd"), home)
    ep = Episode.model_validate(read(paths.episodes_dir(home) / f"{r['episode']}.json"))
    assert ep.end_trigger == "session_end" and ep.model_extra and ep.model_extra["end_reason"] == "other"
    assert ep.model_extra["transcript_path"] == event(session, "Stop")["transcript_path"]  # the viewer links it
    session_end.process(event(session, "Stop"), home)  # a late Stop does not undo the end
    assert read(paths.episodes_dir(home) / f"{r['episode']}.json")["end_trigger"] == "session_end"
    sm = SelfModel.model_validate(read(paths.self_model_path(home)))
    assert sm.total_sessions == 1 and sm.total_episodes == 1


def test_self_model_other_keys_are_preserved(home: Path, session: list[dict[str, Any]]) -> None:
    p = paths.self_model_path(home)
    data = read(p)
    data["capabilities"] = {"python": {"proficiency": 0.7, "experience_count": 3, "success_rate": 0.9,
                                       "last_refined": "2025-01-01T00:00:00Z"}}
    data["knowledge_gaps"] = ["kubernetes networking"]
    data["future_key"] = {"kept": True}
    p.write_text(json.dumps(data))
    session_end.process(event(session, "Stop"), home)
    after = read(p)
    assert after["capabilities"] == data["capabilities"] and after["future_key"] == {"kept": True}
    assert after["knowledge_gaps"] == ["kubernetes networking"] and after["total_sessions"] == 1


def test_nothing_said_nor_done_no_episode_but_a_session(home: Path, session: list[dict[str, Any]]) -> None:
    """No buffer and a transcript with no prompt nor tool call. (No buffer alone: see test_lifecycle_episode.)"""
    (paths.buffers_dir(home) / f"{SID}.jsonl").unlink()
    stop = event(session, "Stop")
    Path(stop["transcript_path"]).write_text("")
    r = session_end.process(stop, home)
    assert "episode" not in r
    assert read(paths.self_model_path(home))["total_sessions"] == 1


def test_rotated_state_carries_the_earlier_episode(home: Path, session: list[dict[str, Any]]) -> None:
    r = session_end.process(event(session, "SessionEnd"), home)
    buf = paths.buffers_dir(home) / f"{SID}.jsonl"
    os.utime(buf, (0, 0))
    os.utime(session_end.state_file(home, SID), (0, 0))
    assert session_end.rotate_buffers(home) >= 2 and not buf.exists()
    buf.write_text(json.dumps({"ts": "2025-03-05T09:00:00Z", "tool": "Edit", "outcome": "ok",
                               "file": "/x/later.py"}) + "\n")
    r2 = session_end.process(event(session, "Stop"), home)
    assert r2["episode"] == r["episode"]
    ep = read(paths.episodes_dir(home) / f"{r['episode']}.json")
    assert ep["tool_call_count"] == 4 and ep["files_touched"][-1] == "/x/later.py"


def test_corrupt_state_file_is_rebuilt(home: Path, session: list[dict[str, Any]]) -> None:
    sp = session_end.state_file(home, SID)
    sp.parent.mkdir(parents=True, exist_ok=True)
    sp.write_text("{not json")
    r = session_end.process(event(session, "Stop"), home)
    assert r["episode"] and read(sp)["episode_id"] == r["episode"]


def test_indexing_is_skipped_cleanly_without_the_index_package(home: Path, session: list[dict[str, Any]]) -> None:
    r = session_end.process(event(session, "Stop"), home)
    try:
        import sophia.index.store  # noqa: F401
    except ImportError:
        assert r["index"] == "index not installed"
    else:
        assert r["index"] == "indexed"


def test_user_model_affect_heuristic() -> None:
    affect: dict[str, Any] = {"valence": 0.0, "stress_indicator": 0.0}
    stats.apply_affect(affect, "I'm so frustrated, this is stuck")
    assert affect == {"valence": -0.3, "stress_indicator": 0.2}
    stats.apply_affect(affect, "great, thanks!")
    assert affect == {"valence": -0.1, "stress_indicator": 0.1}
    assert stats.safe_user_id({"current_user": "../evil"}) == "default"


# ------------------------------------------------------------------ bringing memory back


def make_episode(home: Path, i: int, project: str, goal: str, keywords: list[str], **kw: Any) -> dict[str, Any]:
    from sophia.episode_store import upsert_episode

    ep = {"id": f"ep_2025010{i % 9 + 1}_s{i:06d}", "session_id": f"s{i}", "started_at": "2025-01-01T00:00:00Z",
          "ended_at": f"2025-01-0{i % 9 + 1}T00:00:{i % 60:02d}Z", "goal": goal, "goal_summary": goal,
          "outcome": "SUCCESS", "tool_call_count": 5, "trivial": False, "keywords": keywords, "project": project,
          **kw}
    upsert_episode(ep, home)
    return ep


def test_session_start_context_sections_scope_and_cap(home: Path, tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    mine = make_episode(home, 1, str(here), "Tune the postgres connection pool", ["postgres", "pool"],
                        result="Pool size set from max_connections; load test passes")  # says something
    other = make_episode(home, 2, str(there), "Secret project of another repo", ["secret"])
    paths.rules_path(home).write_text(json.dumps([
        {"id": "rule_a", "trigger_concept": "css", "rule_content": "Prefer flexbox over floats", "confidence": 0.9},
        {"id": "rule_b", "trigger_concept": "postgres", "rule_content": "Set pool size from max_connections",
         "confidence": 0.6},
        {"id": "rule_here", "trigger_concept": "css", "rule_content": "Use the design tokens", "project": str(here)},
        {"id": "rule_there", "trigger_concept": "postgres", "rule_content": "Their pool is 5", "project": str(there)},
    ]))
    (home / "memory").mkdir(exist_ok=True)
    (home / "memory" / "foresight.json").write_text(json.dumps({"items": [
        {"id": "fs_now", "type": "foresight", "text": "Release freeze this week", "valid_from": "2020-01-01",
         "valid_until": "2999-01-01", "project": str(here)},
        {"id": "fs_old", "type": "foresight", "text": "Expired plan", "valid_until": "2020-01-02", "project": str(here)},
        # no project of its own: the project of the episode it was drawn from
        {"id": "fs_drawn", "type": "foresight", "text": "Pool resize next sprint", "source_ids": [mine["id"]]},
        {"id": "fs_theirs", "type": "foresight", "text": "Their launch", "source_ids": [other["id"]]},
        {"id": "fs_nowhere", "type": "foresight", "text": "Somebody's plan"},
        {"id": "fs_there", "type": "foresight", "text": "Their freeze", "project": str(there)},
    ]}))
    from sophia import gaps

    sm = read(paths.self_model_path(home))
    sm["knowledge_gaps"] = [
        gaps.record("pgbouncer transaction mode", project=str(here)),
        gaps.record("their flaky deploy", project=str(there)),
        gaps.record("how git rebase --onto works", is_global=True),
        dict(gaps.record("a gap closed since", project=str(here)), closed_at="2026-01-01T00:00:00Z"),
        "an old gap of no known project",
    ]
    paths.self_model_path(home).write_text(json.dumps(sm))
    text = build_context(home, load_config(home), str(here))
    assert "Terminal creed" in text and "Prioritize user data safety" in text
    assert mine["id"] in text and other["id"] not in text and "Secret project" not in text
    assert text.index("rule_b") < text.index("rule_a")  # the project-relevant heuristic first
    # a rule without a project is global; one with a project is that project's only
    assert "rule_here" in text and "rule_there" not in text and "Their pool" not in text
    assert "fs_now" in text and "fs_drawn" in text
    assert not any(f in text for f in ("fs_old", "fs_theirs", "fs_nowhere", "fs_there", "Their freeze"))
    assert "pgbouncer transaction mode" in text and "how git rebase --onto works" in text
    assert not any(g in text for g in ("their flaky deploy", "a gap closed since", "an old gap of no known project"))
    # with no project known, nothing of any project: the global rules and gaps only
    nowhere = build_context(home, load_config(home), None)
    assert "rule_a" in nowhere and "how git rebase --onto works" in nowhere
    assert not any(x in nowhere for x in ("rule_here", "rule_there", "fs_", "pgbouncer", mine["id"]))
    cfg = load_config(home)
    cfg["context"]["session_start_max_tokens"] = 100
    small = build_context(home, cfg, str(here))
    assert len(small) <= 400 and "Identity goal" in small


def test_prompt_context_fallback_select_and_scope(home: Path, tmp_path: Path) -> None:
    here, there = str(tmp_path / "here"), str(tmp_path / "there")
    mine = make_episode(home, 1, here, "Migrate the billing service to postgres", ["billing", "postgres"])
    make_episode(home, 2, there, "Billing export for another client", ["billing", "export"])
    query = "how did we migrate billing to postgres last time?"
    for i in range(3, 40):  # other projects' episodes must not crowd this project's out
        make_episode(home, i, there, f"Migrate billing to postgres, variant {i}", ["billing", "postgres"])
    items = fallback_recall(home, query, 10, here)
    chosen = select(items, query, project=here, session_id=None, min_score=0.35, max_items=3)
    assert [c["id"] for c in chosen] == [mine["id"]]
    assert select(items, query, project=here, session_id="s1", min_score=0.35, max_items=3) == []
    # any kind: a rule of another project is never chosen, a rule without one is global
    rules = [{"id": f"rule_{n}", "type": "rule", "text": "migrate billing to postgres", "score": 1.0,
              "relevance": 1.0, **({"project": p} if p else {})} for n, p in (("there", there), ("any", None))]
    assert [c["id"] for c in select(rules, query, project=here, session_id=None, min_score=0.35, max_items=3)] == \
        ["rule_any"]
    assert [c["id"] for c in select(rules, query, project=None, session_id=None, min_score=0.35, max_items=3)] == \
        ["rule_any"]
    nothing = fallback_recall(home, "draw a unicorn in ascii art", 10)
    assert select(nothing, "draw a unicorn in ascii art", project=here, session_id=None, min_score=0.35,
                  max_items=3) == []


# ------------------------------------------------------------------ reflection


FAKE_CLAUDE = """#!/usr/bin/env bash
# Test double for `claude -p`: records argv and the guard, answers with a reflection's JSON.
printf '%s\\n' "$@" > "$SOPHIA_HOME/fake_claude.args"
echo "guard=${SOPHIA_HOOK_GUARD:-unset}" > "$SOPHIA_HOME/fake_claude.env"
sleep "${FAKE_CLAUDE_SLEEP:-0}"
echo '{"type":"result","result":"{\\"heuristics\\": [], \\"capability_updates\\": []}"}'
"""


def test_reflection_trigger_selection(home: Path) -> None:
    ep = {"id": "ep_20250101_abc", "trivial": False}
    assert reflection.episodes_to_reflect(home, {"reflection_trigger": "manual"}, ep) == []
    assert reflection.episodes_to_reflect(home, {}, ep) == []
    assert reflection.episodes_to_reflect(home, {"reflection_trigger": "on_session_end"}, ep) == [ep["id"]]
    assert reflection.episodes_to_reflect(home, {"reflection_trigger": "on_session_end"},
                                          {"id": "ep_x", "trivial": True}) == []
    cfg = {"reflection_trigger": "after_n_episodes", "reflection_every_n_episodes": 3}
    got = [reflection.episodes_to_reflect(home, cfg, {"id": f"ep_2025_{i}", "trivial": False}) for i in range(4)]
    assert got[:2] == [[], []] and got[2] == ["ep_2025_0", "ep_2025_1", "ep_2025_2"] and got[3] == []
    assert reflection.episodes_to_reflect(home, cfg, {"id": "ep_2025_3", "trivial": False}) == []  # no double count


def test_reflection_runner_is_detached_guarded_and_single(home: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "claude"
    fake.write_text(FAKE_CLAUDE)
    fake.chmod(0o755)
    monkeypatch.setenv("SOPHIA_CLAUDE_BIN", str(fake))
    monkeypatch.setenv("SOPHIA_S3", str(tmp_path / "no-s3"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("FAKE_CLAUDE_SLEEP", "1.5")
    from sophia.episode_store import upsert_episode

    upsert_episode({"id": "ep_20250101_abc", "session_id": "s1", "goal": "Tidy the aquarium notes"}, home)
    t0 = time.monotonic()
    pid = reflection.launch(home, ["ep_20250101_abc"], python=sys.executable)
    assert pid and time.monotonic() - t0 < 1.0  # launching never waits for the run
    assert wait_for(lambda: reflection.running(home), 10)
    assert reflection.launch(home, ["ep_20250101_abc"], python=sys.executable) is None  # one at a time
    assert wait_for(lambda: not reflection.running(home) and (home / "fake_claude.args").exists(), 30)
    args = (home / "fake_claude.args").read_text().splitlines()
    assert args[0] == "-p" and "## ep_20250101_abc |" in "\n".join(args) and "Tidy the aquarium notes" in "\n".join(args)
    for flag in ("--no-session-persistence", "--max-turns", "--output-format", "--strict-mcp-config"):
        assert flag in args
    assert args[args.index("--tools") + 1] == "Bash" and args[args.index("--setting-sources") + 1] == ""
    hooks = json.loads(args[args.index("--settings") + 1])["hooks"]  # the seal's gate, none of the user's
    assert [h["matcher"] for h in hooks["PreToolUse"]] == ["*"] and set(hooks) == {"PreToolUse"}
    assert (home / "fake_claude.env").read_text().strip() == "guard=1"
    results = list(paths.agent_results_dir(home).glob("reflect_*.json"))
    assert len(results) == 1 and read(results[0])["agent_type"] == "s3-reflection"
    log = (paths.logs_dir(home) / "reflection.log").read_text()
    assert "finished (result left unapplied)" in log and "Traceback" not in log
    assert not (paths.run_dir(home) / "reflection.pid").exists()


def test_a_later_stop_keeps_what_a_digest_taught_the_episode(home: Path, session: list[dict[str, Any]]) -> None:
    """A reflection attached lessons to the episode; a late or resumed Stop rebuilds it from the buffer and
    transcript, but keeps the heuristics, error analysis, narrative and links (the digest never runs again)."""
    r = session_end.process(event(session, "SessionEnd"), home)
    p = home / "episodes" / f"{r['episode']}.json"
    ep = read(p)
    learned = {"heuristics": ["Run pytest with --import-mode=importlib in this repo"], "error_analysis": "conftest clash",
               "narrative": "The user fixed the test run.", "memcell_id": "mc_1", "reflected": True,
               "reflected_at": "2026-11-23T10:00:00Z", "links": [{"id": "rule_1", "relation": "elaborates"}]}
    ep.update(learned)
    p.write_text(json.dumps(ep))
    session_end.process(event(session, "Stop"), home)
    after = read(p)
    for k, v in learned.items():
        assert after.get(k) == v, k
