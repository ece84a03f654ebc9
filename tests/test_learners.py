"""The zero-token learners (sophia.learning.learners): error -> fix, the playbook, recurring failures.

Synthetic sessions for each learner (with the noise that must stay out, and learning twice), a
synthetic transcript for the reader, then the real transcripts in ../shared (skipped when absent):
the fixes and test commands a person reading them names must be found.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared_data import shared_path
from sophia.learning import learners as L
from sophia.state import init_tree

PROJECT = "/work/proj"
TRANSCRIPTS = shared_path("data/transcripts")


def ok(cmd: str) -> L.Command:
    return L.Command(cmd, True)


def bad(cmd: str, err: str) -> L.Command:
    return L.Command(cmd, False, L.error_line(err))


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree(sophia_home)
    return sophia_home


def procedures(home: Path) -> list[dict[str, Any]]:
    from sophia.memory.files import load_items

    return load_items("procedures", home)


def gaps(home: Path) -> list[str]:
    return list(json.loads((home / "self_model.json").read_text())["knowledge_gaps"])


# ---------------------------------------------------------------- normalising commands


def test_command_keys_and_noise() -> None:
    c = ok("cd /work/proj/src && timeout 60 npm run test -- --watch=false 2>&1 | tail -20")
    assert c.key == "npm run test" and L.classify(c.main) == "test"
    assert c.display(PROJECT, whole=False) == "cd src && npm run test -- --watch=false"
    assert ok("ls -la && git status").heartbeat and ok("pwd").heartbeat and ok("cat README.md | head").heartbeat
    assert ok("python3 -c 'print(1)'").key is None  # inline code is not a reusable command
    assert not ok("make clean && make -j4").heartbeat and ok("make clean && make -j4").key == "make"
    assert ok("sudo FOO=1 env BAR=2 cargo test --lib").key == "cargo test"


@pytest.mark.parametrize(("cmd", "cls"), [
    ("pytest -q tests", "test"), ("python -m pytest -x", "test"), ("npm test", "test"), ("pnpm test", "test"),
    ("cargo test", "test"), ("go test ./...", "test"), ("make test", "test"), ("uv run pytest", "test"),
    ("./run_tests.sh", "test"), ("ruff check lib", "lint"), ("npx tsc --noEmit", "lint"),
    ("npm run lint", "lint"), ("cargo clippy", "lint"), ("make", "build"), ("pnpm build", "build"),
    ("cargo build --release", "build"), ("npm run dev", "run"), ("python manage.py runserver", "run"),
    ("npm install", "setup"), ("git commit -m x", None), ("rm -rf build", None), ("cp a b", None),
    ("~/.local/bin/tool.sh list", None), ("make clean", None),
])
def test_playbook_verbs(cmd: str, cls: str | None) -> None:
    assert L.classify(ok(cmd).main) == cls


def test_error_line_picks_the_telling_line() -> None:
    tb = "Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'foo'"
    assert L.error_line(tb) == "ModuleNotFoundError: No module named 'foo'"
    assert L.error_line("\x1b[0;34m════\x1b[0m\nbuilding\n\x1b[31m✗ Error: tool missing\x1b[0m") == "✗ Error: tool missing"
    assert L.error_line("", 2) == "exit 2"
    assert L.error_class("cp: target '/a/b': No such file or directory") == \
        L.error_class("cp: target '/c/d/e': No such file or directory")
    assert "hunter2secretvalue" not in L.error_line("Error: bad token API_KEY=sk-hunter2secretvalue0000000000")


# ---------------------------------------------------------------- (a) error -> fix


def test_fix_is_a_succeeding_variant() -> None:
    cmds = [bad("npm test", "Error: Cannot find module 'jest'"), ok("ls"), ok("npm install"),
            ok("npm test -- --runInBand")]
    fixes = L.find_fixes(cmds, PROJECT)
    assert len(fixes) == 1
    f = fixes[0]
    assert (f["failed"], f["fix"], f["steps"]) == ("npm test", "npm test -- --runInBand", ["npm install"])
    assert "Cannot find module" in f["error"]


def test_no_fix_from_noise() -> None:
    cmds = [
        bad("ls /nope", "ls: cannot access '/nope'"), ok("ls /"),  # heartbeats never pair
        bad("python3 -c 'import x'", "ModuleNotFoundError"), ok("python3 -c 'import os'"),  # inline code
        bad("make", "error: x"), ok("git status"), ok("make"),  # same command, nothing changed in between
        bad("cargo build", "error[E0425]"), *[ok(f"touch f{i}") for i in range(L.FIX_WINDOW + 1)],
        ok("cargo build"),  # too far away
        bad("go vet", "vet: x"), ok("go build"),  # another key
    ]
    assert L.find_fixes(cmds, PROJECT) == []


def test_rejected_calls_and_sidechains_in_a_transcript(tmp_path: Path) -> None:
    lines = [{"type": "user", "cwd": PROJECT, "message": {"role": "user", "content": "run the tests"}}]

    def call(i: int, cmd: str, result: str, error: bool, side: bool = False) -> None:
        lines.append({"type": "assistant", "isSidechain": side, "message": {"content": [
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": cmd}}]}})
        lines.append({"type": "user", "isSidechain": side, "message": {"content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": result, "is_error": error}]}})

    call(1, "pytest -q", "Exit code 1\nE   ImportError: cannot import name 'x'", True)
    call(2, "pytest -q tests/unit", "The user doesn't want to proceed with this tool use.", True)
    lines.append({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "e1", "name": "Edit", "input": {"file_path": f"{PROJECT}/src/x.py"}}]}})
    call(3, "pytest -q", "3 passed", False, side=True)  # a subagent's run does not fix the main chain's
    call(4, "pytest -q", "3 passed", False)
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n{not json\n")
    cmds, cwd = L.commands_from_transcript(p)
    assert cwd == PROJECT and len(cmds) == 4  # the rejected call is neither failure nor success
    fixes = L.find_fixes(cmds, PROJECT)
    assert [(f["failed"], f["fix"], f["steps"], f["error"]) for f in fixes] == [
        ("pytest -q", "pytest -q", ["edit x.py"], "E ImportError: cannot import name 'x'")]


def test_action_buffer_fallback() -> None:
    actions = [{"tool": "Bash", "summary": "npm test", "outcome": "error", "exit": 1},
               {"tool": "Edit", "file": "/p/a.js", "outcome": "ok"},
               {"tool": "Bash", "summary": "npm test", "outcome": "ok", "exit": 0},
               {"tool": "Bash", "summary": "npm run build [interrupted]", "outcome": "error"}]
    cmds = L.commands_from_actions(actions)
    assert len(cmds) == 3
    [fix] = L.find_fixes(cmds, PROJECT)
    assert fix["error"] == "exit 1" and fix["steps"] == ["edit a.js"]


def test_fixes_are_stored_indexed_and_idempotent(home: Path) -> None:
    cmds = [bad("npm test", "Error: Cannot find module 'jest'"), ok("npm install"), ok("npm test")]
    r1 = L.learn_session(home, "s1", PROJECT, cmds, at="2026-01-01T00:00:00Z")
    assert len(r1["procedures_added"]) == 1
    before = (home / "memory" / "procedures.json").read_bytes()
    r2 = L.learn_session(home, "s1", PROJECT, cmds, at="2026-01-02T00:00:00Z")
    assert r2["procedures_added"] == [] and (home / "memory" / "procedures.json").read_bytes() == before
    [item] = procedures(home)
    assert item["type"] == "procedure" and item["project"] == PROJECT and item["meta"]["category"] == "error_fix"
    assert item["text"].startswith("when `npm test` fails with `Error: Cannot find module 'jest'`, `npm test` worked")
    from sophia.index import db

    conn = db.connect(home)
    try:
        assert conn.execute("SELECT type FROM items WHERE id = ?", (item["id"],)).fetchone() == ("procedure",)
    finally:
        conn.close()
    L.learn_session(home, "s2", PROJECT, cmds)  # the same fix in another session: one procedure, 2 sessions
    [item] = [p for p in procedures(home) if p["meta"]["category"] == "error_fix"]
    assert item["meta"]["sessions"] == 2 and item["source_ids"] == ["s1", "s2"]


# ---------------------------------------------------------------- (b) the playbook


def session(*extra: L.Command) -> list[L.Command]:
    return [ok("git status"), ok("ls"), ok("cat setup.cfg"), *extra]


def test_playbook_needs_two_sessions_and_ignores_noise(home: Path) -> None:
    s1 = session(ok("pytest -q 2>&1 | tail -5"), ok("ruff check lib"), ok("python3 scripts/once.py"),
                 ok("rm -rf build"), bad("make", "error"))
    r = L.learn_session(home, "s1", PROJECT, s1)
    assert r["playbook"] == [] and procedures(home) == []  # one session: nothing yet
    s2 = session(ok("cd /work/proj && pytest -q"), ok("ruff check lib"), ok("echo done"), ok("pwd"))
    r = L.learn_session(home, "s2", PROJECT, s2)
    assert sorted(r["playbook"]) == ["pytest -q", "ruff check lib"]
    assert L.learn_session(home, "s2", PROJECT, s2)["procedures_added"] == []  # idempotent
    lines = L.session_lines(home, PROJECT)
    assert lines == ["- Playbook: test `pytest -q`; lint `ruff check lib`"]
    assert L.session_lines(home, "/other/project") == []  # project-scoped


def test_trivial_sessions_teach_nothing(home: Path) -> None:
    for sid in ("a", "b", "c"):
        r = L.learn_session(home, sid, PROJECT, session(ok("pytest")))
        assert r["trivial"]
    assert procedures(home) == [] and not L.state_path(home).exists()


# ---------------------------------------------------------------- (c) recurring failures


def test_recurring_failure_becomes_one_gap(home: Path) -> None:
    def sess(path: str) -> list[L.Command]:
        return session(bad("docker compose up", f"Error: open {path}/.env: no such file or directory"),
                       bad("npm run e2e", f"Error: {path.split('/')[1]} differs each time"), ok("make"))

    assert L.learn_session(home, "s1", PROJECT, sess("/a"))["gaps_added"] == []
    added = L.learn_session(home, "s2", PROJECT, sess("/b/c"))["gaps_added"]
    assert len(added) == 1 and "docker compose up" in added[0] and "proj" in added[0]
    assert L.learn_session(home, "s3", PROJECT, sess("/d"))["gaps_added"] == []  # a gap is added once
    assert L.learn_session(home, "s2", PROJECT, sess("/b/c"))["gaps_added"] == []
    assert [g for g in gaps(home) if "docker" in g] == added


def test_session_lines_fit_the_cap(home: Path) -> None:
    for sid in ("s1", "s2"):
        cmds = session(ok("pnpm test"), *(c for i in range(6) for c in (
            bad(f"~/bin/tool{i}.sh go", f"Error: failure number {i} " + "x" * 80), ok(f"~/bin/tool{i}.sh go --force"))))
        L.learn_session(home, sid, PROJECT, cmds)
    lines = L.session_lines(home, PROJECT, max_chars=500)
    assert lines[0] == "- Playbook: test `pnpm test`"
    assert 2 <= len(lines) < 7 and sum(len(x) + 1 for x in lines) <= 500
    assert all("\n" not in x for x in lines)


# ---------------------------------------------------------------- the real transcripts


def real(name: str) -> Path:
    found = sorted(TRANSCRIPTS.glob(f"{name}*.jsonl")) if TRANSCRIPTS.is_dir() else []
    if not found:
        pytest.skip(f"transcript {name} not in {TRANSCRIPTS}")
    return found[0]


# What a person reading each transcript names (see docs/benchmarks.md, "Zero-token learners").
REAL_FIXES = {
    "SWORDIntel__claude-backups__fb4f7a6e": ["gcc ultra_hybrid_enhanced", "cp"],
    "njdamstra__claude-code-config": ["wt-dispatcher.sh create", "wt-dispatcher.sh cleanup",
                                       "wt-full-dispatcher.sh switch", "migrate-feature-prefix.sh"],
}
REAL_PLAYBOOK = {
    "SantiagoCoronado__pragma-web-design-test": {"pnpm test": "test", "pnpm build": "build",
                                                 "npx tsc --noEmit": "lint"},
    "SWORDIntel__claude-backups__9ef4f65f": {"python3 test-agent-registration.py": "test"},
    "SWORDIntel__claude-backups__fb4f7a6e": {"cd agents/src/c && make all": "build"},
}


@pytest.mark.parametrize("name", sorted(REAL_FIXES))
def test_real_transcript_fixes(name: str) -> None:
    cmds, cwd = L.commands_from_transcript(real(name))
    keys = {f["key"] for f in L.find_fixes(cmds, cwd)}
    assert set(REAL_FIXES[name]) <= keys


@pytest.mark.parametrize("name", sorted(REAL_PLAYBOOK))
def test_real_transcript_playbook(name: str, home: Path) -> None:
    path = real(name)
    L.learn_transcript(home, "first", path)
    report = L.learn_transcript(home, "second", path)  # the same commands in a second session promote
    cmds, cwd = L.commands_from_transcript(path)
    found = {p["command"]: p["class"] for p in L.analyse(cmds, cwd)["playbook"]}
    for cmd, cls in REAL_PLAYBOOK[name].items():
        assert found.get(cmd) == cls and cmd in report["playbook"]
    assert L.learn_transcript(home, "second", path)["procedures_added"] == []


def test_every_real_transcript_is_read_quickly() -> None:
    import time

    files = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []
    if not files:
        pytest.skip(f"no transcripts in {TRANSCRIPTS}")
    for f in files:
        t = time.perf_counter()
        cmds, _ = L.commands_from_transcript(f)
        L.analyse(cmds, "/p")
        assert cmds and time.perf_counter() - t < 2.0
