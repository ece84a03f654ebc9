"""s3 refresh-identity: golden CLAUDE.md, the user's own content kept, staleness."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import run_s3
from sophia.identity_md import BEGIN, END, splice

FIX = Path(__file__).parent / "fixtures" / "identity"


def _prepare(s3_env: dict[str, str], sophia_home: Path) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    shutil.copy(FIX / "self_model.json", sophia_home / "self_model.json")
    shutil.copy(FIX / "semantic_rules.json", sophia_home / "semantic_rules.json")


def test_golden_claude_md(s3_env: dict[str, str], sophia_home: Path, isolated_home: Path) -> None:
    _prepare(s3_env, sophia_home)
    target = isolated_home / ".claude" / "CLAUDE.md"
    target.parent.mkdir()
    shutil.copy(FIX / "user_claude.md", target)
    r = run_s3(["refresh-identity", "--json"], s3_env)  # default target: ~/.claude/CLAUDE.md
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert target.read_text() == (FIX / "CLAUDE.md.golden").read_text()
    assert out["path"] == str(target.resolve()) and out["creed_values"] == 5 and out["heuristics"] == 10
    assert [c["domain"] for c in out["top_capabilities"]] == ["Python", "API Design", "Docker", "Bash", "SQL"]
    record = json.loads((sophia_home / "identity.json").read_text())
    assert record["path"] == str(target.resolve()) and record["generated_at"]
    status = json.loads(run_s3(["status", "--json"], s3_env).stdout)
    assert status["claude_md"]["stale"] is False
    # refreshing again gives the same bytes
    assert run_s3(["refresh-identity"], s3_env).returncode == 0
    assert target.read_text() == (FIX / "CLAUDE.md.golden").read_text()
    # a self-model change makes it stale again
    run_s3(["apply", "reflection", "-"], s3_env, input=json.dumps({"knowledge_gaps_identified": ["Rust"]}))
    assert json.loads(run_s3(["status", "--json"], s3_env).stdout)["claude_md"]["stale"] is True


def test_text_output_and_output_option(s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    _prepare(s3_env, sophia_home)
    target = tmp_path / "proj" / ".claude" / "CLAUDE.md"
    r = run_s3(["refresh-identity", "--output", str(target)], s3_env)
    assert r.returncode == 0, r.stderr
    for line in ("## Identity Refreshed", f"CLAUDE.md has been regenerated at: {target}",
                 "- Terminal creed (5 values)", "- Top capabilities: Python (85%), API Design (75%), Docker (68%)",
                 "- Knowledge gaps: 2 identified", "- Recent heuristics: 10 included"):
        assert line in r.stdout, (line, r.stdout)
    text = target.read_text()
    assert text.startswith(BEGIN) and text.rstrip().endswith(END)


def test_splice_keeps_user_content_around_the_block() -> None:
    user = "# Mine\n\nkeep me\n"
    once = splice(user, "BLOCK ONE\n")
    assert once.startswith(user) and once.count(BEGIN) == 1
    edited = once + "\n## Added after the block by the user\n"
    twice = splice(edited, "BLOCK TWO\n")
    assert "BLOCK ONE" not in twice and "BLOCK TWO" in twice
    assert twice.startswith(user) and twice.endswith("## Added after the block by the user\n")
    assert twice.count(BEGIN) == 1 and twice.count(END) == 1
    assert splice("", "B\n") == f"{BEGIN}\nB\n{END}\n"
