"""Codex's session files (rollouts) through the kit's readers: the hooks' episode, the digest's condensed
input, the zero-token learners and ``s3 backfill --agent codex``.

Inputs: the three real rollouts in ../shared/data/transcripts/codex (codex 0.58 and 0.118: skipped with one
line when absent) and tests/fixtures/codex/rollout-0.171.0.jsonl, written here by the real codex 0.171.0
against a scripted model (a shell call, a patch adding b.txt, `false` failing, "Finished.").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_s3, set_config
from shared_data import looked_in, shared_path
from sophia import codex_rollout as cr
from sophia.hooks import backfill as bf
from sophia.hooks import session_end, transcript
from sophia.learning import commands, condense, learners
from sophia.state import init_tree

FIXTURE = ROOT / "tests" / "fixtures" / "codex" / "rollout-0.171.0.jsonl"
SID = "01a219c0-48f2-7561-89c8-eb0a49298c7e"
REAL = shared_path("data/transcripts/codex")


def real_rollouts() -> list[Path]:
    if not REAL.is_dir():
        pytest.skip(looked_in("data/transcripts/codex"))
    return sorted(REAL.glob("*.jsonl"))


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree()
    set_config(sophia_home, embedding_provider="none")
    return sophia_home


def rollout_at(tmp_path: Path, src: Path = FIXTURE) -> Path:
    """The rollout under a temp ~/.codex/sessions/YYYY/MM/DD/, as Codex keeps it."""
    day = tmp_path / ".codex" / "sessions" / "2026" / "11" / "26"
    day.mkdir(parents=True, exist_ok=True)
    name = src.name if src.name.startswith("rollout-") else "rollout-" + src.name.split("rollout-", 1)[-1]
    if src == FIXTURE:
        name = f"rollout-2026-11-26T21-26-01-{SID}.jsonl"
    dest = day / name
    shutil.copy(src, dest)
    return dest


# ---------------------------------------------------------------- the line adapter


def test_outputs_of_each_version_give_text_exit_code_and_block() -> None:
    v171 = "Chunk ID: 4ae037\nWall time: 0.0000 seconds\nProcess exited with code 2\nOriginal token count: 1\nOutput:\nboom\n"
    assert cr.output_result(v171) == ("boom\n", 2, False)
    v058 = json.dumps({"output": "Success. Updated the following files:\nM a.py\n", "metadata": {"exit_code": 0}})
    assert cr.output_result(v058) == ("Success. Updated the following files:\nM a.py\n", 0, False)
    patch = "Exit code: 1\nWall time: 0 seconds\nOutput:\nerror: no such file\n"
    assert cr.output_result(patch) == ("error: no such file\n", 1, False)
    blocked = "Command blocked by PreToolUse hook: Sophia guardian: nope. Command: rm -rf ~"
    assert cr.output_result(blocked)[2] is True


def test_prompts_are_the_users_words_not_codexs_wrappers() -> None:
    assert cr.prompt_text("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>") is None
    assert cr.prompt_text("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>\nbe nice\n</INSTRUCTIONS>") is None
    ide = "# Context from my IDE setup:\n\n## Active file: README.md\n\n## My request for Codex:\nfix the login\n"
    assert cr.prompt_text(ide) == "fix the login"
    assert cr.prompt_text("make files") == "make files"


def test_patch_sections_name_every_file_and_what_it_adds() -> None:
    text = ("*** Begin Patch\n*** Add File: a.md\n+hello\n*** Update File: src/b.py\n*** Move to: src/c.py\n@@\n-x\n+y\n"
            "*** Delete File: old.txt\n*** End Patch\n")
    assert cr.patch_sections(text) == [("Add", "a.md", "hello"), ("Update", "src/b.py", "y"), ("Add", "src/c.py", "y"),
                                       ("Delete", "old.txt", "")]


def test_lines_become_claude_code_entries() -> None:
    call = {"timestamp": "t", "type": "response_item", "payload": {
        "type": "function_call", "namespace": "mcp__sophia-memory", "name": "search", "call_id": "c1",
        "arguments": "{\"query\": \"deploy\"}"}}
    [e] = cr.entries(call)
    assert e["message"]["content"][0] == {"type": "tool_use", "id": "c1", "name": "mcp__sophia-memory__search",
                                          "input": {"query": "deploy"}}
    shell = {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c2",
                                                  "arguments": "{\"command\": [\"bash\", \"-lc\", \"make test\"]}"}}
    assert cr.entries(shell)[0]["message"]["content"][0]["input"] == {"command": "make test"}
    dev = {"type": "response_item", "payload": {"type": "message", "role": "developer",
                                                "content": [{"type": "input_text", "text": "Sophia memory: ..."}]}}
    assert cr.entries(dev) == []  # the hooks' own context is never read back as a prompt


# ---------------------------------------------------------------- the readers


def test_the_hooks_reader_takes_a_real_0171_rollout() -> None:
    st, prompts = transcript.update(None, str(FIXTURE), final=True)
    assert st["client"] == "codex" and st["cwd"] == "/tmp/cx/proj" and prompts == ["make files"]
    assert [(a["tool"], a["outcome"]) for a in st["actions"]] == [("Bash", "ok"), ("Write", "ok"), ("Bash", "error")]
    assert st["actions"][1]["file"] == "b.txt" and st["bad_lines"] == 0 and st["unknown_types"] == 0


def test_every_real_rollout_reads_whole() -> None:
    for path in real_rollouts():
        st, prompts = transcript.update(None, str(path), final=True)
        assert st["client"] == "codex" and st["bad_lines"] == 0, path.name
        assert prompts and st["actions_total"] >= 19 and st["cwd"], path.name
        assert not any(p.startswith(("<environment_context>", "# AGENTS.md")) for p in prompts)
        cmds, cwd = commands.commands_from_transcript(path)
        assert cwd == st["cwd"] and len([c for c in cmds if c.raw]) >= 19
        text = condense.condense(path, 1500)
        assert "| client codex " in text and "USER: " in text and "Bash " in text and len(text) <= 1500 * 4


def test_the_condensed_input_shows_the_failed_call() -> None:
    text = condense.condense(FIXTURE)
    assert "USER: make files" in text and "Bash false -> ERROR: Exit code 1" in text and "Write b.txt -> ok" in text


def test_stop_and_session_end_build_the_episode_from_the_session_file(home: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("S3_AGENT", "codex")
    path = rollout_at(tmp_path)
    buf = home / "buffers" / f"{SID}.jsonl"  # what log_action.sh wrote: no exit codes (Codex gives none)
    buf.parent.mkdir(parents=True, exist_ok=True)
    buf.write_text("".join(json.dumps({"ts": "2026-11-26T21:26:02.000Z", "session": SID, "tool": "Bash",
                                       "event": "PostToolUse", "outcome": "ok", "exit": 0, "id": f"call_000{i}"}) + "\n"
                           for i in (1, 5)))
    base = {"session_id": SID, "transcript_path": str(path), "cwd": "/tmp/cx/proj", "model": "gpt-5.5"}
    r1 = session_end.process({**base, "hook_event_name": "Stop", "turn_id": "t", "stop_hook_active": False,
                              "last_assistant_message": "Finished."}, home)
    assert r1.get("episode")
    r2 = session_end.process({**base, "hook_event_name": "SessionEnd", "reason": "other"}, home)
    ep = json.loads((home / "episodes" / f"{r2['episode']}.json").read_text())
    assert ep["agent"] == "codex" and ep["session_id"] == SID and ep["project"] == "/tmp/cx/proj"
    assert [(a["tool"], a["outcome"]) for a in ep["actions"]] == [("Bash", "ok"), ("Write", "ok"), ("Bash", "error")]
    assert ep["tool_call_count"] == 3 and "b.txt" in ep["files_touched"][0] and ep["goal"] == "make files"
    assert r1["episode"] == r2["episode"]


def test_a_claude_code_session_records_its_agent(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("S3_AGENT", raising=False)
    t = tmp_path / "s.jsonl"
    t.write_text(json.dumps({"type": "user", "cwd": str(tmp_path), "sessionId": "s1", "timestamp": "2026-11-20T10:00:00Z",
                             "message": {"role": "user", "content": "write the notes"}}) + "\n")
    r = session_end.process({"hook_event_name": "SessionEnd", "session_id": "s1", "transcript_path": str(t),
                             "cwd": str(tmp_path)}, home)
    assert json.loads((home / "episodes" / f"{r['episode']}.json").read_text())["agent"] == "claude_code"


def test_the_learners_read_a_codex_session(home: Path) -> None:
    out = learners.learn_transcript(home, SID, FIXTURE, project="/tmp/cx/proj")
    assert isinstance(out, dict)
    cmds, cwd = commands.commands_from_transcript(FIXTURE)
    assert cwd == "/tmp/cx/proj"
    assert [(c.raw, c.ok, c.failed) for c in cmds if c.raw] == [("echo hi > a.txt && cat a.txt", True, False),
                                                                  ("false", False, True)]
    assert [c.edit for c in cmds if c.edit] == ["b.txt"]


def test_backfill_agent_codex_reads_the_sessions_folder(home: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, s3_env: dict[str, str]) -> None:
    paths = [rollout_at(tmp_path)] + ([rollout_at(tmp_path, p) for p in real_rollouts()] if REAL.is_dir() else [])
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / ".codex"))
    assert bf.codex_sessions_dir() == tmp_path / ".codex" / "sessions"
    r = run_s3(["backfill", "--agent", "codex", "--no-digest", "--json"], {**s3_env, "CODEX_HOME": str(tmp_path / ".codex")})
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["found"] == len(paths) and rep["episodes"] == len(paths) and rep["failed"] == []
    eps = [json.loads(p.read_text()) for p in (home / "episodes").glob("ep_*.json")]
    assert len(eps) == len(paths) and {e["agent"] for e in eps} == {"codex"}
    again = json.loads(run_s3(["backfill", "--agent", "codex", "--no-digest", "--json"],
                              {**s3_env, "CODEX_HOME": str(tmp_path / ".codex")}).stdout)
    assert again["unchanged"] == len(paths) and again["processed"] == 0
    bad = run_s3(["backfill", "--agent", "gemini"], s3_env)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0


def _actions(ep: dict[str, Any]) -> list[str]:
    return [a["tool"] for a in ep["actions"]]
