"""Honest episode outcomes (issue 15): derived from the evidence, UNKNOWN when it cannot be told.

The real transcripts in ../shared/data/transcripts were each read by hand; the expected outcome and the
one-line reason for it are in REAL below. The synthetic cases pin each rule of ``judge_outcome``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared_data import looked_in, shared_path
from sophia.hooks import episode as ep_mod
from sophia.hooks import transcript as tr

TRANSCRIPTS = "data/transcripts"

# file prefix -> (expected outcome, why: judged by reading the whole session)
REAL = {
    "SWORDIntel__claude-backups__fb4f7a6e": (
        "PARTIAL", "asked to document, clean up and git push; it stops on a `git add -u` call that never got a "
                   "result, the push never ran (24 of 146 calls failed, 7 interruptions on the way)"),
    "SWORDIntel__claude-backups__9ef4f65f": (
        "UNKNOWN", "ends on a wired-network fix: the user said the first 'fixed' was false ('Activation failed "
                   "again'), the second 'Completed' is unchecked ('To verify the fix worked: run ...')"),
    "SantiagoCoronado__pragma-web-design-test": (
        "SUCCESS", "new block types then a seed quote; ends 'All 39 tests pass. Done' after a build check"),
    "njdamstra__claude-code-config": (
        "SUCCESS", "worktree refactor; the user: 'great i like this new system! good work!', then the last "
                   "cleanup is reported complete"),
}


def _real(prefix: str) -> Path:
    d = shared_path(TRANSCRIPTS)
    found = sorted(d.glob(prefix + "*.jsonl")) if d.is_dir() else []
    if not found:
        pytest.skip(looked_in(TRANSCRIPTS))
    return found[0]


def _episode_of(path: Path) -> dict[str, Any]:
    st, _ = tr.update(None, str(path), final=True)
    return ep_mod.build_episode(session_id="s", episode_id="ep_x", buffer=[], transcript=st, now="2025-01-01T00:00:00Z",
                                end_trigger="session_end", last_message=None, project="/p", git_branch=None,
                                git_commit=None)


@pytest.mark.parametrize("prefix", sorted(REAL))
def test_real_session_outcome(prefix: str) -> None:
    expected, why = REAL[prefix]
    ep = _episode_of(_real(prefix))
    assert ep["outcome"] == expected, f"{prefix}: {why} (got {ep['outcome']}: {ep['outcome_reason']})"
    assert ep["outcome_reason"]


# ------------------------------------------------------------------ synthetic sessions through the reader


def _line(kind: str, content: Any) -> str:
    return json.dumps({"type": kind, "sessionId": "s", "timestamp": "2025-01-01T00:00:00Z",
                       "message": {"role": kind, "content": content}})


def _call(tid: str, cmd: str) -> str:
    return _line("assistant", [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}])


def _result(tid: str, error: bool = False) -> str:
    return _line("user", [{"type": "tool_result", "tool_use_id": tid, "content": "Exit code 1" if error else "ok",
                           "is_error": error}])


def _judge(tmp_path: Path, lines: list[str]) -> tuple[str, str]:
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    st, _ = tr.update(None, str(p), final=True)
    last = st["assistant_texts"][-1] if st["assistant_texts"] else None
    return ep_mod.judge_outcome(ep_mod.transcript_actions(st), last, st)


def test_a_pending_call_at_the_end_is_unfinished(tmp_path: Path) -> None:
    lines = [_line("user", "deploy the site"), _call("t1", "npm run build"), _result("t1"),
             _line("assistant", "Build done. Now let me deploy."), _call("t2", "npm run deploy")]
    outcome, why = _judge(tmp_path, lines)
    assert outcome == "PARTIAL" and "pending" in why and "npm run deploy" in why


def test_a_pending_call_after_nothing_worked_is_unknown(tmp_path: Path) -> None:
    assert _judge(tmp_path, [_line("user", "deploy the site"), _call("t1", "npm run deploy")])[0] == "UNKNOWN"


def test_an_interruption_at_the_end_is_unfinished(tmp_path: Path) -> None:
    lines = [_line("user", "migrate the db"), _call("t1", "make migrate"), _result("t1"),
             _line("assistant", "Migrated. All done."), _line("user", "[Request interrupted by user]")]
    outcome, why = _judge(tmp_path, lines)
    assert outcome == "PARTIAL" and "interrupted" in why


def test_an_interruption_followed_by_more_work_does_not_count_as_the_end(tmp_path: Path) -> None:
    lines = [_line("user", "migrate the db"), _line("user", "[Request interrupted by user]"),
             _line("user", "continue please"), _call("t1", "make migrate"), _result("t1"),
             _line("assistant", "Migration complete, tests pass.")]
    assert _judge(tmp_path, lines)[0] == "SUCCESS"


def test_an_unchecked_claim_after_a_complaint_is_unknown(tmp_path: Path) -> None:
    lines = [_line("user", "the wifi drops"), _call("t1", "nmcli restart"), _result("t1"),
             _line("assistant", "Fixed! The connection is stable."),
             _line("user", "it failed again, same problem"), _call("t2", "nmcli reset"), _result("t2"),
             _line("assistant", "Reset complete. The connection should now stay up; to verify, run ping.")]
    outcome, why = _judge(tmp_path, lines)
    assert outcome == "UNKNOWN" and "not working" in why


def test_a_checked_fix_after_a_complaint_is_success(tmp_path: Path) -> None:
    lines = [_line("user", "the test still fails"), _call("t1", "pytest"), _result("t1"),
             _line("assistant", "Fixed the fixture; all 12 tests pass.")]
    assert _judge(tmp_path, lines)[0] == "SUCCESS"


@pytest.mark.parametrize(("outcomes", "last", "prompts", "expected"), [
    # a fixed error is no failure; code and conditional advice are not the verdict
    (["error", "ok"], "Fixed the import error; the build is green and done.", [], "SUCCESS"),
    (["ok"], "Done.\n```\nError: this is sample output\n```", [], "SUCCESS"),
    (["ok"], "Implemented the parser. If it fails on Windows, try the slash fix.", [], "SUCCESS"),
    # a claim against the evidence
    (["ok", "error"], "Done, all set.", [], "PARTIAL"),
    (["error"] * 6 + ["ok"] * 5, "Everything is implemented.", [], "PARTIAL"),
    # no verdict in words: the user's words, else UNKNOWN
    (["ok", "ok"], "Here is the diff.", ["thanks, great work"], "SUCCESS"),
    (["ok", "ok"], "Here is the diff.", ["that's not what i asked, it is wrong"], "UNKNOWN"),
    (["ok", "ok"], "Here is the diff.", [], "UNKNOWN"),
    (["error", "error"], "Here is the diff.", [], "FAILURE"),
])
def test_judge_outcome(outcomes: list[str], last: str, prompts: list[str], expected: str) -> None:
    actions = [{"tool": "Bash", "outcome": o} for o in outcomes]
    outcome, why = ep_mod.judge_outcome(actions, last, {"recent_prompts": prompts})
    assert outcome == expected, why
