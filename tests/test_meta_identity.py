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


def test_a_projects_gaps_are_named_only_in_the_claude_md_of_that_project(s3_env: dict[str, str], sophia_home: Path,
                                                                       isolated_home: Path, tmp_path: Path) -> None:
    """~/.claude/CLAUDE.md is loaded in every project: only global open gaps; a project's CLAUDE.md adds its own."""
    _prepare(s3_env, sophia_home)
    sm = json.loads((sophia_home / "self_model.json").read_text())
    proj = tmp_path / "billing"
    sm["knowledge_gaps"][2]["project"] = str(proj.resolve())
    (sophia_home / "self_model.json").write_text(json.dumps(sm))
    assert run_s3(["refresh-identity"], s3_env).returncode == 0
    user = (isolated_home / ".claude" / "CLAUDE.md").read_text()
    assert "Kubernetes networking configuration" in user and "How the billing service deploys" not in user
    assert "An old gap whose project is unknown" not in user and "closed since" not in user
    out = json.loads(run_s3(["refresh-identity", "--output", str(proj / ".claude" / "CLAUDE.md"), "--json"],
                            s3_env).stdout)
    text = (proj / ".claude" / "CLAUDE.md").read_text()
    assert "How the billing service deploys" in text and "Kubernetes networking configuration" in text
    assert out["knowledge_gaps"] == 3 and "An old gap whose project is unknown" not in text


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


# ---- issue 13.6: an oversized state can never produce a huge CLAUDE.md


def test_oversized_state_gives_a_bounded_claude_md(s3_env: dict[str, str], sophia_home: Path,
                                                    isolated_home: Path) -> None:
    """A 115 KB rule (stored before the cap existed) and hundreds of long gaps stay out of CLAUDE.md."""
    from sophia.identity_md import MAX_BLOCK_CHARS

    _prepare(s3_env, sophia_home)
    rs = json.loads((sophia_home / "semantic_rules.json").read_text())
    for r in rs:
        r["rule_content"] = "Always keep the build green. " * 4000
        r["trigger_concept"] = "T" * 5000
    (sophia_home / "semantic_rules.json").write_text(json.dumps(rs))
    sm = json.loads((sophia_home / "self_model.json").read_text())
    sm["knowledge_gaps"] = [{"text": f"gap {i} " + "g" * 5000, "is_global": True} for i in range(300)]
    (sophia_home / "self_model.json").write_text(json.dumps(sm))
    r = run_s3(["refresh-identity", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    text = (isolated_home / ".claude" / "CLAUDE.md").read_text()
    assert len(text) <= MAX_BLOCK_CHARS + len(BEGIN) + len(END) + 2, len(text)
    assert max(len(line) for line in text.splitlines()) <= 400
    assert "Always keep the build green." in text and "gap 0 " in text  # shortened, not dropped


# ---- issue 13.11: --output elsewhere is not what Claude Code loads; status judges the loaded file


def test_output_elsewhere_says_claude_code_does_not_load_it(s3_env: dict[str, str], sophia_home: Path,
                                                           tmp_path: Path) -> None:
    _prepare(s3_env, sophia_home)
    target = tmp_path / "x.md"
    r = run_s3(["refresh-identity", "--output", str(target)], s3_env)
    assert r.returncode == 0, r.stderr
    assert "will be loaded at the start of your next session" not in r.stdout
    assert f"Wrote {target}" in r.stdout and "Claude Code does not load this file" in r.stdout, r.stdout
    assert "~/.claude/CLAUDE.md" in r.stdout
    out = json.loads(run_s3(["refresh-identity", "--output", str(target), "--json"], s3_env).stdout)
    assert out["loaded_by_claude_code"] == "never"
    project_md = tmp_path / "proj" / ".claude" / "CLAUDE.md"
    r = run_s3(["refresh-identity", "--output", str(project_md)], s3_env)
    assert f"Claude Code loads it only in sessions started in {tmp_path / 'proj'}" in r.stdout, r.stdout
    r = run_s3(["refresh-identity"], s3_env)
    assert "The new CLAUDE.md will be loaded at the start of your next session." in r.stdout


def test_status_staleness_is_judged_on_the_loaded_claude_md(s3_env: dict[str, str], sophia_home: Path,
                                                           isolated_home: Path, tmp_path: Path) -> None:
    _prepare(s3_env, sophia_home)
    loaded = (isolated_home / ".claude" / "CLAUDE.md").resolve()

    def claude_md() -> dict[str, object]:
        return dict(json.loads(run_s3(["status", "--json"], s3_env).stdout)["claude_md"])

    assert run_s3(["refresh-identity"], s3_env).returncode == 0
    assert claude_md()["stale"] is False
    run_s3(["apply", "reflection", "-"], s3_env, input=json.dumps({"knowledge_gaps_identified": ["Rust"]}))
    # writing some other file afterwards does not make the loaded one fresh
    assert run_s3(["refresh-identity", "--output", str(tmp_path / "x.md")], s3_env).returncode == 0
    st = claude_md()
    assert st["stale"] is True and st["path"] == str(loaded), st
    assert "s3 refresh-identity" in str(st["message"])
    assert run_s3(["refresh-identity"], s3_env).returncode == 0
    assert claude_md() == {**claude_md(), "stale": False, "path": str(loaded)}
    # a later write elsewhere leaves the loaded one's verdict alone
    assert run_s3(["refresh-identity", "--output", str(tmp_path / "y.md")], s3_env).returncode == 0
    assert claude_md()["path"] == str(loaded) and claude_md()["stale"] is False


def test_project_install_refreshes_and_judges_the_projects_claude_md(s3_env: dict[str, str], sophia_home: Path,
                                                                     tmp_path: Path) -> None:
    _prepare(s3_env, sophia_home)
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    manifest = {"schema_version": 1, "targets": [{"scope": "project", "claude_dir": str(proj / ".claude")}]}
    (sophia_home / "install-manifest.json").write_text(json.dumps(manifest))
    st = json.loads(run_s3(["status", "--json"], s3_env).stdout)["claude_md"]
    assert st["stale"] is True and st["path"] == str((proj / ".claude" / "CLAUDE.md").resolve())
    r = run_s3(["refresh-identity", "--json"], s3_env)
    assert json.loads(r.stdout)["path"] == str((proj / ".claude" / "CLAUDE.md").resolve())
    assert (proj / ".claude" / "CLAUDE.md").read_text().startswith(BEGIN)
    assert json.loads(run_s3(["status", "--json"], s3_env).stdout)["claude_md"]["stale"] is False
