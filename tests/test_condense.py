"""The digest's condensed input (lib/sophia/learning/condense.py): within its budget on every real
transcript, errors and the final message kept, secrets redacted, the same text every time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from secret_scan import load_corpus, needles
from shared_data import looked_in
from sophia.learning import condense as cd
from test_lifecycle_episode import (
    assistant,
    fixture_transcript,
    shared_transcripts,
    tool_result,
    tool_use,
    user,
    write_lines,
)

BUDGETS = (500, 2000, cd.BUDGET_TOKENS)


def test_budget_is_respected_on_every_real_transcript() -> None:
    files = shared_transcripts()
    if not files:
        pytest.skip(looked_in("data/transcripts"))
    for p in files:
        for budget in BUDGETS:
            text = cd.condense(p, budget)
            assert len(text) <= budget * cd.CHARS_PER_TOKEN, (p.name, budget, len(text))
            assert cd.estimate_tokens(len(text)) <= budget
            assert "## Timeline\nUSER: " in text, p.name  # the first prompt is always there
        full = cd.condense(p)  # the default budget bounds it, whatever the session's size or density
        assert len(full) <= min(p.stat().st_size, cd.BUDGET_TOKENS * cd.CHARS_PER_TOKEN), p.name


def test_real_transcripts_keep_their_errors_when_they_fit() -> None:
    files = shared_transcripts()
    if not files:
        pytest.skip(looked_in("data/transcripts"))
    for p in files:
        s = cd.read_session(p)
        shown = cd.condense(p).count("-> ERROR: ")
        assert shown == s.counts["errors"] or shown >= 20, (p.name, shown, s.counts["errors"])


def test_fixture_keeps_calls_errors_files_and_final_message(tmp_path: Path) -> None:
    text = cd.condense(fixture_transcript(tmp_path))
    assert "USER: Please write my notes file about fishing" in text
    assert "  Bash echo hello && ls / -> ok" in text
    assert "  Bash false -> ERROR: Exit code 1" in text
    assert f"  Read {tmp_path}/missing.txt -> ERROR: File does not exist." in text
    assert f"- {tmp_path}/notes.txt (Write 1)" in text
    assert text.endswith("## Final message\nAll done: wrote notes.txt successfully.")
    assert "prompts 1 | tool calls 4 (2 failed)" in text


def long_session(tmp_path: Path, calls: int = 400, errors_at: tuple[int, ...] = (150, 200, 260)) -> Path:
    lines: list[Any] = [user("Make the build green again")]
    for i in range(calls):
        lines.append(assistant([{"type": "text", "text": f"Step {i}: checking module {i} next."},
                                tool_use(f"c{i}", "Bash", {"command": f"make -C module{i} check --verbose"})]))
        failed = i in errors_at
        out = f"Exit code 2\nmodule{i}/x.c:3: error: boom {i}\nmore" if failed else "all fine\n" * 50
        lines.append(user([tool_result(f"c{i}", out, is_error=failed)]))
    lines.append(assistant([{"type": "text", "text": "The build is green: three modules fixed."}]))
    return write_lines(tmp_path / "long.jsonl", lines)


def test_a_cut_keeps_start_end_and_errors_and_says_what_it_left_out(tmp_path: Path) -> None:
    p = long_session(tmp_path)
    text = cd.condense(p, 1500)
    assert len(text) <= 1500 * cd.CHARS_PER_TOKEN
    assert "USER: Make the build green again" in text
    for i in (150, 200, 260):
        assert f"make -C module{i} check --verbose -> ERROR: Exit code 2 | module{i}/x.c:3: error: boom {i}" in text
    assert "make -C module0 check" in text and "make -C module399 check" in text
    assert "prompts and tool calls left out ...]" in text
    assert text.endswith("The build is green: three modules fixed.")
    kept = text.count("-> ok") + text.count("-> ERROR") + text.count("\nUSER: ")
    left = sum(int(x.split("[... ")[1].split(" ")[0]) for x in text.splitlines() if "left out ...]" in x)
    assert kept + left == 401  # 400 calls and the one prompt, each either shown or counted


def test_compact_summary_is_kept(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "t.jsonl", [
        user("first part of the work"),
        {"type": "system", "subtype": "compact_boundary", "timestamp": "2025-03-01T11:00:00Z"},
        user("This session is being continued from a previous conversation. Summary: we fixed the parser.",
             isCompactSummary=True),
        user("now the tests"),
    ])
    text = cd.condense(p)
    assert "## Compact summary\nThis session is being continued" in text and "we fixed the parser" in text
    assert "compactions 1" in text and "USER: now the tests" in text
    assert "Summary from the hook" in cd.condense(p, compact="Summary from the hook")


def test_deterministic(tmp_path: Path) -> None:
    p = long_session(tmp_path)
    assert cd.condense(p, 1500) == cd.condense(p, 1500)
    for real in shared_transcripts():
        assert cd.condense(real) == cd.condense(real)


def test_secrets_are_redacted(tmp_path: Path) -> None:
    """Every fake secret of tests/fixtures/secrets.jsonl, planted as a prompt, a command, an error, a file
    path, an assistant note, a final message and a compact summary: no 16-char piece of it comes out."""
    corpus = load_corpus()
    lines: list[Any] = []
    for i, e in enumerate(corpus):
        t = e["text"]
        lines += [user(t), assistant([{"type": "text", "text": t}, tool_use(f"b{i}", "Bash", {"command": t}),
                                      tool_use(f"w{i}", "Write", {"file_path": f"/r/{t}", "content": t})]),
                  user([tool_result(f"b{i}", t, is_error=True), tool_result(f"w{i}", t, is_error=True)])]
    lines.append(user("Summary: " + " ".join(e["text"] for e in corpus[:20]), isCompactSummary=True))
    lines.append(assistant([{"type": "text", "text": "\n".join(e["text"] for e in corpus[-10:])}]))
    p = write_lines(tmp_path / "s.jsonl", lines)
    for budget in (cd.BUDGET_TOKENS, 200_000):
        out = cd.condense(p, budget).encode("utf-8")
        leaks = [e["id"] for e in corpus for s in e["secrets"] for n in needles(s) if n in out]
        assert leaks == [], leaks
    assert b"[REDACTED]" in out and out.count(b"-> ERROR") == 2 * len(corpus)


def test_odd_lines_do_not_break_it(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "t.jsonl", ["not json", "[1, 2]", {"type": "weird"}, user(None),
                                           assistant("plain string content"), {"type": "user", "message": 5}],
                    tail='{"type": "user", "mess')
    text = cd.condense(p)
    assert "prompts 0 | tool calls 0 (0 failed)" in text and "plain string content" in text
    assert json.dumps(text)  # plain text, serialisable
