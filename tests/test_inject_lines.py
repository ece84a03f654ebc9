"""What the context hooks inject (issue 15, "say something useful"): an episode as what was done, what came
of it, the lesson, files and commands, how long ago; lessons before raw sessions; each once; a budget that
grows with relevance. On real-shaped episodes built from the real transcripts (../shared/data/transcripts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from shared_data import looked_in, shared_path
from sophia import kinds
from sophia.hooks import context
from sophia.hooks import episode as ep_mod
from sophia.hooks import transcript as tr

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2025, 8, 17, 12, 0, tzinfo=UTC)
TITLE = "Sophia memory:"


def _real(prefix: str) -> Path:
    d = shared_path("data/transcripts")
    found = sorted(d.glob(prefix + "*.jsonl")) if d.is_dir() else []
    if not found:
        pytest.skip(looked_in("data/transcripts"))
    return found[0]


def _episode(prefix: str, ended: str = "2025-08-14T12:31:45Z") -> dict[str, Any]:
    st, _ = tr.update(None, str(_real(prefix)), final=True)
    return ep_mod.build_episode(session_id="s-" + prefix[-8:], episode_id="ep_20250814_" + prefix[-8:], buffer=[],
                                transcript=st, now=ended, end_trigger="session_end", last_message=None,
                                project="/p", git_branch=None, git_commit=None)


def _item(ep: dict[str, Any], score: float) -> dict[str, Any]:
    return {**kinds.episode_item(ep), "score": score}


def _render(items: list[dict[str, Any]], floor: float = 0.3) -> str:
    return context.render_items(items, floor=floor, title=TITLE, now=NOW)


# ------------------------------------------------------------------ one episode


def test_a_strong_match_says_what_was_done_its_outcome_files_and_when() -> None:
    ep = _episode("SWORDIntel__claude-backups__fb4f7a6e")
    text = _render([_item(ep, 1.0)])
    lines = text.splitlines()[1:]
    assert lines[0].startswith(f"- [{ep['id']}] episode, 2 days ago, PARTIAL: ")
    assert "Continue Phase 1 agent integration" in lines[0]
    assert "was about to: add all relevant files and create a comprehensive commit" in lines[0]
    assert any(ln.startswith("  why: ended with a Bash git add call still pending") for ln in lines)
    # the commands that worked, most run first (git add ties with others: their order is not the point)
    assert any("files: " in ln and "commands: " in ln and "git add" in ln.split("commands: ")[1] for ln in lines)
    assert 2 <= len(lines) <= 4 and len(text) <= context.MAX_INJECT_CHARS


def test_a_weak_match_gets_one_short_line() -> None:
    ep = _episode("SWORDIntel__claude-backups__fb4f7a6e")
    text = _render([_item(ep, 0.31)])
    lines = text.splitlines()
    head = f"- [{ep['id']}] episode, 2 days ago, PARTIAL: "
    assert len(lines) == 2 and lines[1].startswith(head)
    assert len(lines[1]) <= len(head) + context.POINTER_CHARS + 4, lines[1]


def _turn(i: int, rel: float, text: str) -> dict[str, Any]:
    return {"id": f"turn:chat:D1:{i}", "type": "turn", "text": text, "relevance": rel, "score": rel,
            "event_time": "2025-08-10T12:00:00Z"}


LONG = "Caroline: we drove to the walrus sanctuary on the coast and stayed until the feeding at dusk, " * 3


def test_items_that_share_kind_and_age_get_one_header() -> None:
    text = _render([_turn(1, 0.9, LONG), _turn(2, 0.5, "Melanie: how was the trip?"),
                    {"id": "rule_1", "type": "rule", "text": "Check the tide table before a coastal trip.",
                     "relevance": 0.6}], floor=0.42)
    lines = text.splitlines()
    assert lines[1] == "- [rule_1] rule: Check the tide table before a coastal trip."  # lessons first
    assert lines[2] == "turns, 7 days ago:"  # said once, not on every line
    assert lines[3].startswith("- [turn:chat:D1:1]: Caroline: we drove") and lines[4].startswith("- [turn:chat:D1:2]: ")
    assert text.count("7 days ago") == 1


def test_the_whole_budget_follows_the_best_match() -> None:
    """Five items that all barely pass the gate share half the budget; one strong match among them
    lets the text grow (and the strong line says more than a weak one)."""
    weak = [_turn(i, 0.45, f"{i}. {LONG}") for i in range(1, 6)]
    text = _render(weak, floor=0.42)
    assert text.count("- [turn:") >= 3 and len(text) <= context.MAX_INJECT_CHARS * context.MIN_BUDGET_SHARE
    strong = _render([_turn(0, 1.0, LONG), *weak], floor=0.42)
    assert _render([*weak, _turn(9, 0.45, f"1. {LONG}")], floor=0.42).count("- [turn:") == 5  # said once
    assert len(strong) > len(text) and strong.count("- [turn:") == 6
    first = [ln for ln in strong.splitlines() if ln.startswith("- [turn:chat:D1:0]")][0]
    assert len(first) > len([ln for ln in strong.splitlines() if ln.startswith("- [turn:chat:D1:1]")][0]) + 100


def test_the_budget_grows_with_the_score() -> None:
    eps = [_episode(p) for p in ("SWORDIntel__claude-backups__fb4f7a6e", "SWORDIntel__claude-backups__9ef4f65f",
                                 "njdamstra__claude-code-config")]
    sizes = [len(_render([_item(e, s) for e in eps])) for s in (0.32, 0.6, 0.95)]
    assert sizes[0] < sizes[1] < sizes[2] <= context.MAX_INJECT_CHARS, sizes


def test_the_task_not_a_bare_first_prompt_is_what_was_done() -> None:
    """The session opened with 'load claude.md'; its task came next (this failed before: the summary was
    the first prompt)."""
    ep = _episode("SWORDIntel__claude-backups__9ef4f65f")
    assert ep["goal"] == "load claude.md"
    assert ep["goal_summary"].startswith("Agent registration module appears to be malfunctioning")
    assert ep["result"] == "Advanced Network Fix Completed"
    line = _render([_item(ep, 0.5)]).splitlines()[1]
    assert "load claude.md" not in line and "-> Advanced Network Fix Completed" in line


def test_the_result_headline_of_a_last_message() -> None:
    assert ep_mod.headline("Perfect! All 39 tests pass. Done — the quote is added as `Q` in the seed route.\n\n"
                           "More text follows here.") == (
        "All 39 tests pass. Done — the quote is added as Q in the seed route. More text follows here.")
    assert ep_mod.headline("## ✅ **Migration Backup Cleanup - Complete!**\n\nRemoved 3 dirs.") == (
        "Migration Backup Cleanup - Complete!")
    assert ep_mod.headline("Now let me run the deploy script.") == "was about to: run the deploy script."
    assert ep_mod.headline("```\nonly code\n```") == "" and ep_mod.headline(None) == ""


def test_a_lesson_comes_before_the_files() -> None:
    ep = {**_episode("SantiagoCoronado__pragma-web-design-test"),
          "heuristics": ["Run tsc with a timeout: it hangs in this repo"], "error_analysis": "tsc hung"}
    lines = _render([_item(ep, 0.6)]).splitlines()[1:]
    assert len(lines) == 2 and lines[1] == "  lesson: Run tsc with a timeout: it hangs in this repo"
    assert "All 39 tests pass" in lines[0] and "SUCCESS" in lines[0]


def test_refusals_and_colours_are_no_pitfall() -> None:
    card = kinds.episode_card({"errors": ["Bash npx tsc: The user doesn't want to proceed with this tool use.",
                                          "Bash make: \x1b[0;34m━━━━━━\x1b[0m build failed",
                                          "Bash make: \x1b[0;34m━━━━━━\x1b[0m build failed"],
                               "actions": [{"tool": "Bash", "summary": "python3", "outcome": "ok"},
                                           {"tool": "Bash", "summary": "ls", "outcome": "ok"},
                                           {"tool": "Bash", "summary": "make test", "outcome": "ok"}]})
    assert card["pitfall"] == "Bash make: build failed (x2)" and card["commands"] == ["make test"]


# ------------------------------------------------------------------ several items


def _rule(rid: str, text: str, score: float) -> dict[str, Any]:
    return {"id": rid, "type": "rule", "text": text, "score": score, "meta": {}}


def test_rules_first_each_memory_once() -> None:
    ep = _episode("njdamstra__claude-code-config")
    items = [_item(ep, 1.0), _rule("rule_a", "worktree: run the migration with the dev servers stopped", 0.4),
             _rule("rule_b", "worktree: run the migration with the dev servers stopped", 0.35),
             _item(ep, 0.9), {"id": "fact_1", "type": "fact", "text": "The repo uses pnpm", "score": 0.5}]
    lines = [ln for ln in _render(items).splitlines()[1:] if ln.startswith("- ")]
    assert [ln.split("]")[0] for ln in lines] == ["- [rule_a", "- [fact_1", f"- [{ep['id']}"]


def test_nothing_to_say_is_silence() -> None:
    assert _render([]) == "" and _render([{"type": "rule"}]) == ""


@pytest.mark.parametrize(("delta", "said"), [
    (timedelta(hours=3), "today"), (timedelta(days=1, hours=2), "yesterday"), (timedelta(days=3), "3 days ago"),
    (timedelta(days=16), "2 weeks ago"), (timedelta(days=150), "5 months ago"), (timedelta(days=800), "2 years ago"),
])
def test_how_long_ago(delta: timedelta, said: str) -> None:
    assert context.ago((NOW - delta).isoformat(), NOW) == said
    assert context.ago("not a date", NOW) == ""


# ------------------------------------------------------------------ through the real hooks


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home.parent), "SOPHIA_HOME": str(home), "SOPHIA_PYTHON": sys.executable,
            "SOPHIA_RECALL_SEMANTIC": "0"}


def test_the_prompt_hook_injects_the_card(sophia_home: Path, tmp_path: Path) -> None:
    """A real session ends (Stop, through the real module), then the real UserPromptSubmit hook, fed the
    JSON Claude Code sends, injects what the session did rather than its first prompt."""
    from sophia.hooks import session_end
    from sophia.state import init_tree

    init_tree()
    project = tmp_path / "proj"
    project.mkdir()
    report = session_end.process({"session_id": "s-old", "hook_event_name": "Stop", "cwd": str(project),
                                  "transcript_path": str(_real("SWORDIntel__claude-backups__9ef4f65f"))},
                                 sophia_home)
    assert report["outcome"] == "UNKNOWN" and report["index"] == "indexed"
    payload = {"session_id": "s-new", "hook_event_name": "UserPromptSubmit", "cwd": str(project),
               "prompt": "the agent registration module register-custom-agents.py is malfunctioning again"}
    r = subprocess.run(["bash", str(ROOT / "hooks" / "prompt_context.sh")], input=json.dumps(payload),
                       env=_env(sophia_home), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert report["episode"] in text and "-> Advanced Network Fix Completed" in text
    assert "load claude.md" not in text and "episode, today, UNKNOWN" in text, text
    assert "  why: reported done without a check" in text


def test_session_start_shows_episodes_that_say_something(sophia_home: Path, tmp_path: Path) -> None:
    from sophia.episode_store import upsert_episode
    from sophia.hooks.runtime import load_config
    from sophia.hooks.session_start import build_context
    from sophia.state import init_tree

    init_tree()
    here, there = str(tmp_path / "here"), str(tmp_path / "there")
    base = {"started_at": "2025-08-10T00:00:00Z", "outcome": "SUCCESS", "tool_call_count": 9, "trivial": False}
    eps = [
        {**base, "id": "ep_bare", "session_id": "a", "ended_at": "2025-08-16T00:00:00Z", "goal": "load claude.md",
         "goal_summary": "load claude.md", "project": here},
        {**base, "id": "ep_triv", "session_id": "b", "ended_at": "2025-08-15T00:00:00Z", "goal_summary": "hi",
         "trivial": True, "result": "Hello", "project": here},
        {**base, "id": "ep_real", "session_id": "c", "ended_at": "2025-08-14T00:00:00Z", "project": here,
         "goal_summary": "Make the pool size follow max_connections", "result": "Pool sized; load test passes",
         "heuristics": ["Read max_connections before sizing the pool"]},
        {**base, "id": "ep_other", "session_id": "d", "ended_at": "2025-08-16T00:00:00Z", "project": there,
         "goal_summary": "Another repo's work", "result": "Done there"},
    ]
    for ep in eps:
        upsert_episode({**ep, "timestamp": ep["ended_at"]}, sophia_home)
    text = build_context(sophia_home, load_config(sophia_home), here, now=NOW)
    assert "ep_real] 3 days ago, SUCCESS: Make the pool size follow max_connections -> Pool sized" in text
    assert "  lesson: Read max_connections before sizing the pool" in text
    assert "ep_bare" not in text and "ep_triv" not in text and "ep_other" not in text


def test_the_error_hit_most_only_when_nothing_better_is_known() -> None:
    card = {"did": "Build the kernel module", "pitfall": "Bash make: missing headers (x3)"}
    assert context.episode_lines(card, "- [ep_a] today", 3)[1] == "  hit: Bash make: missing headers (x3)"
    lines = context.episode_lines({**card, "files": ["mod.c"]}, "- [ep_a] today", 3)
    assert lines[1:] == ["  files: mod.c"]


def test_a_weak_lesson_keeps_both_halves_a_weak_turn_is_a_pointer() -> None:
    """A procedure that barely passes says its trigger and its fix; a conversation turn just as weak is
    a short pointer (seen on real sessions: '... fails with `Err…' said nothing of the fix)."""
    proc = {"id": "proc_1", "type": "procedure", "relevance": 0.43, "event_time": "2025-08-17T10:00:00Z",
            "text": "when `claude config get agents` fails with `Error: unknown key`: run `claude agents list`"}
    turn = _turn(1, 0.43, LONG)
    lines = _render([proc, turn], floor=0.42).splitlines()
    assert lines[1].endswith("run `claude agents list`"), lines[1]
    assert len(lines[2]) <= len("- [turn:chat:D1:1] turn, 7 days ago: ") + context.RAW_POINTER_CHARS["turn"] + 2


def test_a_long_lesson_is_squeezed_in_its_quoted_parts_not_cut_before_its_fix() -> None:
    text = ("when `cd agents/binary-communications-system && gcc -O2 -std=c11 -D_GNU_SOURCE -o ultra ultra.c` "
            "fails with `Error: 'agents' is not a valid config key`, `make -C agents/binary` worked")
    proc = {"id": "proc_2", "type": "procedure", "relevance": 0.43, "text": text, "event_time": "2025-08-17T10:00:00Z"}
    line = _render([proc], floor=0.42).splitlines()[1]
    assert line.endswith("`make -C agents/binary` worked"), line
    assert "`cd agent" in line and "fails with `Error" in line and len(line) <= 150
    assert context.squeeze("when `a` fails, `b` worked", 10) == "when `a` fails, `b` worked"  # nothing to squeeze


@pytest.mark.timeout(20)
def test_squeeze_always_ends() -> None:
    """A quoted part of nine characters cannot get shorter by one with its ellipsis: the loop stops
    (it spun forever in the prompt hook on a real session's procedure)."""
    text = "when `abcdefghi` fails with `xyzxyzxyz`, `fix` worked " + "x" * 200
    for room in range(10, 120, 7):
        assert len(context.squeeze(text, room)) >= 10


def test_a_squeezed_lesson_keeps_its_steps_while_they_fit() -> None:
    """The steps between a failure and its fix ("(after `git add ...`)") are often the lesson: the quoted
    command and error give way first; the steps go only when nothing else is left to shorten."""
    text = ("when `nix flake check` fails with `error: Path 'flake.nix' in the repository \"/home/u/conf\" is not "
            "tracked by Git.`, `nix flake check` worked (after `git add flake.nix systems/nixos/default.nix`)")
    short = context.squeeze(text, 150)
    assert short.endswith("`nix flake check` worked (after `git add flake.nix systems/nixos/default.nix`)"), short
    assert len(short) <= 150 and "fails with `error: Pat" in short
    tiny = context.squeeze(text, 60)
    assert "(after" not in tiny and tiny.endswith("`nix flake check` worked"), tiny
