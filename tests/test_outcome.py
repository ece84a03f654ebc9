"""Honest episode outcomes (issues 15 and 27): judged from the evidence, structure first, in any language.

The real sessions: each dev transcript of ../shared/data/transcripts has a label written by reading it
(``tests/fixtures/transcripts/labels``); ``bench/outcomes.py`` replays them the way the Stop and
SessionEnd hooks do and the share judged right must stay above ``FLOOR``. The synthetic cases pin each
rule of ``judge_outcome``: a session cut off, the last test/build/lint run, the last call, the user's
last prompts, and what the messages say (``tests/test_outcome_words.py`` has the words per language)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from shared_data import looked_in, shared_path
from sophia.hooks import episode as ep_mod
from sophia.hooks import outcome as oc
from sophia.hooks import transcript as tr

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = "data/transcripts"
FLOOR = 0.9  # share of the labelled dev sessions judged right (the bar on held-out sessions is 90 %)


def test_the_labelled_real_sessions_are_judged_right() -> None:
    d = shared_path(TRANSCRIPTS)
    if not d.is_dir():
        pytest.skip(looked_in(TRANSCRIPTS))
    sys.path.insert(0, str(ROOT))
    from bench.outcomes import LABELS, accuracy, measure

    rows = measure(LABELS, d)
    assert len(rows) >= 20, "every labelled transcript is replayed"
    wrong = [f"{r['file'][:40]}: {r['label']} judged {r['judged']} ({r['reason']})" for r in rows
             if r["label"] != r["judged"]]
    assert accuracy(rows) >= FLOOR, "\n".join(wrong)
    assert all(r["reason"] for r in rows)


# ------------------------------------------------------------------ synthetic sessions through the reader


def _line(kind: str, content: Any) -> str:
    return json.dumps({"type": kind, "sessionId": "s", "timestamp": "2025-01-01T00:00:00Z",
                       "message": {"role": kind, "content": content}})


def _call(tid: str, cmd: str) -> str:
    return _line("assistant", [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}])


def _result(tid: str, error: bool = False, text: str | None = None) -> str:
    content = text if text is not None else "Exit code 1" if error else "ok"
    return _line("user", [{"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": error}])


def _state(tmp_path: Path, lines: list[str]) -> dict[str, Any]:
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tr.update(None, str(p), final=True)[0]


def _judge(tmp_path: Path, lines: list[str]) -> tuple[str, str]:
    st = _state(tmp_path, lines)
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


# ------------------------------------------------------------------ structure beats words


def _acts(*specs: tuple[str, str] | tuple[str, str, str]) -> list[dict[str, Any]]:
    """Actions from (tool, outcome[, summary]); ids t1, t2, ..."""
    return [{"id": f"t{i}", "tool": sp[0], "outcome": sp[1], **({"summary": sp[2]} if len(sp) > 2 else {})}
            for i, sp in enumerate(specs, 1)]


def _check(call_id: str, outcome: str, proof: list[str] | None = None) -> dict[str, Any]:
    return {"id": call_id, "check": "test", "command": "pytest", "outcome": outcome, "proof": proof or []}


def test_done_after_a_failed_final_test_run_is_not_success() -> None:
    actions = _acts(("Edit", "ok"), ("Bash", "error", "pytest"), ("Edit", "ok"))
    st = {"last_check": _check("t2", "error", ["FAILED tests/test_a.py::test_x - assert 1 == 2", "1 failed, 9 passed"])}
    outcome, why = oc.judge_outcome(actions, "Done: the fix is in and everything works.", st)
    assert outcome == "PARTIAL" and "test run (pytest)" in why and "1 failed, 9 passed" in why
    assert oc.judge_outcome(actions, "完成。", st)[0] == "PARTIAL"


def test_a_passing_final_test_run_backs_the_claim_and_speaks_for_a_silent_end() -> None:
    actions = _acts(("Edit", "ok"), ("Bash", "ok", "pytest"))
    st = {"last_check": _check("t2", "ok", ["10 passed"])}
    assert oc.judge_outcome(actions, "Done.", st) == ("SUCCESS", "reported done; the last check passed ('done')")
    outcome, why = oc.judge_outcome(actions, "Here is how the cache works: ...", st)
    assert outcome == "SUCCESS" and "passed, and nothing was edited after it" in why
    edited = [*actions, {"id": "t3", "tool": "Edit", "outcome": "ok"}]
    assert oc.judge_outcome(edited, "Here is how the cache works: ...", st)[0] == "UNKNOWN"


def test_a_cancelled_or_denied_last_call_is_not_a_failure() -> None:
    actions = _acts(("Bash", "ok", "npm run build"), ("Bash", "skipped", "rm"))
    actions[-1]["verdict"] = "cancelled"
    assert oc.judge_outcome(actions, "The build is done.", {})[0] == "SUCCESS"
    assert oc.judge_outcome(actions, "Here is the diff.", {})[0] == "UNKNOWN"  # and no failure either


def test_a_failed_look_is_no_failure_of_the_task_but_a_failed_command_is() -> None:
    looked = _acts(("Edit", "ok"), ("Bash", "error", "grep"), ("Read", "error"))
    assert oc.judge_outcome(looked, "Updated the config.", {})[0] == "SUCCESS"
    ran = _acts(("Edit", "ok"), ("Bash", "error", "make deploy"), ("Read", "ok"))
    outcome, why = oc.judge_outcome(ran, "Updated the config.", {})
    assert outcome == "PARTIAL" and "last call that did something failed" in why


@pytest.mark.parametrize("message", [
    "Ready to pick back up on the OAuth setup whenever you have the client ID.",
    "已配置好前端。等你拿到 client ID 之后我再继续。",
    "準備ができたら教えてください。続きを実装します。",
    "Avísame cuando tengas la clave y continúo.",
])
def test_waiting_on_the_user_is_not_done(message: str) -> None:
    outcome, why = oc.judge_outcome(_acts(("Write", "ok"), ("Bash", "ok", "npm install")), message, {})
    assert outcome == "PARTIAL" and "waits on the user" in why
    outcome, why = oc.judge_outcome([], message, {})
    assert outcome == "UNKNOWN" and "before anything was done" in why


def test_a_turn_cut_after_a_tool_result_is_unfinished_unless_the_stop_payload_says_it_ended() -> None:
    st = {"tail": "result", "assistant_texts": ["Done, all set."]}
    actions = _acts(("Edit", "ok"))
    outcome, why = oc.judge_outcome(actions, "Done, all set.", st)
    assert outcome == "PARTIAL" and "no closing message" in why
    assert oc.judge_outcome(actions, "Done, all set.", st, turn_ended=True)[0] == "SUCCESS"
    pending = {"tail": "call", "pending_calls": {"t9": {"tool": "Bash", "summary": "npm test"}}}
    assert oc.judge_outcome(actions, "Done, all set.", pending)[0] == "PARTIAL"
    assert oc.judge_outcome(actions, "Done, all set.", pending, turn_ended=True)[0] == "SUCCESS"


def test_a_turn_that_died_on_a_client_error_is_unfinished() -> None:
    outcome, why = oc.judge_outcome(_acts(("Edit", "ok")), "API Error: Request was aborted.", {})
    assert outcome == "PARTIAL" and "client error" in why
    assert oc.judge_outcome(_acts(("Bash", "error")), "API Error: 500 internal", {})[0] == "FAILURE"


def test_an_unanswered_complaint_after_a_claim_leaves_it_unfinished() -> None:
    st = {"tail": "prompt", "recent_prompts": ["add the flag", "it still fails with the same error"]}
    outcome, why = oc.judge_outcome(_acts(("Edit", "ok")), "Added the flag; done.", st)
    assert outcome == "PARTIAL" and "got no answer" in why
    praised = {"tail": "prompt", "recent_prompts": ["add the flag", "perfect, thanks"]}
    assert oc.judge_outcome(_acts(("Edit", "ok")), "Here is the flag.", praised)[0] == "SUCCESS"


def test_an_answer_at_the_end_defers_to_the_latest_message_that_judged_the_work() -> None:
    st = {"assistant_texts": ["Let me look.", "Done: the build is fixed and the page loads.",
                              "The recurring logic needs two payments at least a week apart."]}
    outcome, why = oc.judge_outcome(_acts(("Edit", "ok")), st["assistant_texts"][-1], st)
    assert outcome == "SUCCESS" and "an earlier message reported it done" in why
    st["assistant_texts"][1] = "The deploy failed: the token expired."
    assert oc.judge_outcome(_acts(("Edit", "ok")), st["assistant_texts"][-1], st)[0] == "PARTIAL"
    st["assistant_texts"][1] = "Shall I proceed?"  # a question the user already answered is no verdict
    assert oc.judge_outcome(_acts(("Edit", "ok")), st["assistant_texts"][-1], st)[0] == "UNKNOWN"


def test_a_chinese_session_that_ends_done_through_the_reader(tmp_path: Path) -> None:
    lines = [_line("user", "把两个 skill 的配置统一一下"), _call("t1", "cp a.json b.json"), _result("t1"),
             _line("assistant", "已统一配置，更新了两个 skill。"), _line("user", "好的"),
             _line("assistant", "完成。")]
    assert _judge(tmp_path, lines)[0] == "SUCCESS"


# ------------------------------------------------------------------ the reader keeps the last check run


@pytest.mark.parametrize(("command", "expected"), [
    ("cd app && npm test 2>&1 | tail -5", ("test", "npm test")),
    ("uv run pytest -q tests/test_a.py", ("test", "uv run pytest")),
    ("ruff check lib", ("lint", "ruff check")),
    ("cargo build --release", ("build", "cargo build")),
    ("python manage.py runserver", None),
    ("ls -la", None),
    ("", None),
    (None, None),
])
def test_check_run(command: str | None, expected: tuple[str, str] | None) -> None:
    assert tr.check_run(command) == expected


def test_the_reader_keeps_the_last_check_run_redacted(tmp_path: Path) -> None:
    failing = "FAILED tests/test_a.py::test_key - AKIAIOSFODNN7EXAMPLE not accepted\n1 failed, 3 passed"
    lines = [_line("user", "fix the key check"), _call("t1", "pytest -q 2>&1 | tail -3"), _result("t1", text=failing)]
    st = _state(tmp_path, lines)
    check = st["last_check"]
    assert check["id"] == "t1" and check["check"] == "test" and check["outcome"] == "error"
    assert check["proof"] and "AKIAIOSFODNN7EXAMPLE" not in json.dumps(check)
    lines += [_call("t2", "pytest -q"), _result("t2", text="Permission to use Bash has been denied.", error=True)]
    assert _state(tmp_path, lines)["last_check"]["id"] == "t1", "a run that never happened replaces nothing"
    lines += [_call("t3", "pytest -q"), _result("t3", text="4 passed in 0.1s"), _call("t4", "ls"), _result("t4")]
    check = _state(tmp_path, lines)["last_check"]
    assert (check["id"], check["outcome"]) == ("t3", "ok")


def test_a_stop_payload_message_means_the_turn_ended(tmp_path: Path) -> None:
    """The Stop hook gets the turn's last message before the transcript may show it: no cut-off."""
    lines = [_line("user", "deploy"), _call("t1", "npm run deploy"), _result("t1", text="deployed to prod")]
    st = _state(tmp_path, lines)
    ep = ep_mod.build_episode(session_id="s", episode_id="ep_x", buffer=[], transcript=st, now="2025-01-01T00:00:00Z",
                              end_trigger="stop_hook", last_message="Deployed; all done.", project="/p",
                              git_branch=None, git_commit=None)
    assert ep["outcome"] == "SUCCESS", ep["outcome_reason"]
    ep = ep_mod.build_episode(session_id="s", episode_id="ep_x", buffer=[], transcript=st, now="2025-01-01T00:00:00Z",
                              end_trigger="session_end", last_message=None, project="/p", git_branch=None,
                              git_commit=None)
    assert ep["outcome"] == "PARTIAL" and "no closing message" in ep["outcome_reason"]
