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
from sophia.learning import commands as C
from sophia.learning import learners as L
from sophia.learning import procedures as P
from sophia.learning import teachable
from sophia.state import init_tree

PROJECT = "/work/proj"
TRANSCRIPTS = shared_path("data/transcripts")


_CALLS = iter(range(10**9))


def ok(cmd: str) -> C.Command:
    """A call whose output proved it worked (each its own call id, as in a transcript)."""
    return C.Command(cmd, True, cid=f"toolu_{next(_CALLS)}")


def bad(cmd: str, err: str) -> C.Command:
    return C.Command(cmd, False, C.error_line(err), cid=f"toolu_{next(_CALLS)}")


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree(sophia_home)
    return sophia_home


def procedures(home: Path) -> list[dict[str, Any]]:
    from sophia.memory.files import load_items

    return load_items("procedures", home)


def fixes(home: Path) -> list[dict[str, Any]]:
    return [p for p in procedures(home) if p["meta"]["category"] == "error_fix"]


def gaps(home: Path) -> list[dict[str, Any]]:
    return list(json.loads((home / "self_model.json").read_text())["knowledge_gaps"])


# ---------------------------------------------------------------- normalising commands


def test_command_keys_and_noise() -> None:
    c = ok("cd /work/proj/src && timeout 60 npm run test -- --watch=false 2>&1 | tail -20")
    assert c.key == "npm run test" and C.classify(c.main) == "test"
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
    assert C.classify(ok(cmd).main) == cls


def test_error_line_picks_the_telling_line() -> None:
    tb = "Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'foo'"
    assert C.error_line(tb) == "ModuleNotFoundError: No module named 'foo'"
    assert C.error_line("\x1b[0;34m════\x1b[0m\nbuilding\n\x1b[31m✗ Error: tool missing\x1b[0m") == "✗ Error: tool missing"
    assert C.error_line("", 2) == "exit 2"
    nix = "error:\n       … while checking flake output 'nixosConfigurations'\n\n       error: infinite recursion encountered"
    assert C.error_line(nix) == "error: infinite recursion encountered"  # a bare heading: its message follows
    assert C.error_class("cp: target '/a/b': No such file or directory") == \
        C.error_class("cp: target '/c/d/e': No such file or directory")
    assert "hunter2secretvalue" not in C.error_line("Error: bad token API_KEY=sk-hunter2secretvalue0000000000")


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
    cmds, cwd = C.commands_from_transcript(p)
    assert cwd == PROJECT and len(cmds) == 4  # the rejected call is neither failure nor success
    fixes = L.find_fixes(cmds, PROJECT)
    assert [(f["failed"], f["fix"], f["steps"], f["error"]) for f in fixes] == [
        ("pytest -q", "pytest -q", ["edit x.py"], "E ImportError: cannot import name 'x'")]


def test_action_buffer_fallback_proves_failures_never_successes() -> None:
    """The buffer holds an exit status and three words, no output: a 0 proves nothing (the status may be
    masked), so it teaches no fix and no playbook command; its failures still count."""
    actions = [{"tool": "Bash", "summary": "npm test", "outcome": "error", "exit": 1},
               {"tool": "Edit", "file": "/p/a.js", "outcome": "ok"},
               {"tool": "Bash", "summary": "npm test", "outcome": "ok", "exit": 0},
               {"tool": "Bash", "summary": "npm run build [interrupted]", "outcome": "error"},
               {"tool": "Bash", "summary": "npm run lint", "outcome": "skipped", "verdict": "cancelled"}]
    cmds = C.commands_from_actions(actions)
    assert len(cmds) == 3 and [c.failed for c in cmds] == [True, False, False] and not cmds[2].ok
    assert L.find_fixes(cmds, PROJECT) == []
    lessons = L.analyse(cmds, PROJECT)
    assert lessons["playbook"] == [] and [f["error"] for f in lessons["failures"]] == ["exit 1"]


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


def session(*extra: C.Command) -> list[C.Command]:
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
    lines = P.session_lines(home, PROJECT)
    assert lines == ["- Playbook: test `pytest -q`; lint `ruff check lib`"]
    assert P.session_lines(home, "/other/project") == []  # project-scoped


def test_trivial_sessions_teach_nothing(home: Path) -> None:
    for sid in ("a", "b", "c"):
        r = L.learn_session(home, sid, PROJECT, session(ok("pytest")))
        assert r["trivial"]
    assert procedures(home) == [] and not L.state_path(home).exists()


# ---------------------------------------------------------------- (c) recurring failures


def test_recurring_failure_becomes_one_gap(home: Path) -> None:
    def sess(path: str) -> list[C.Command]:
        return session(bad("docker compose up", f"Error: open {path}/.env: no such file or directory"),
                       bad("npm run e2e", f"Error: {path.split('/')[1]} differs each time"), ok("make"))

    assert L.learn_session(home, "s1", PROJECT, sess("/a"))["gaps_added"] == []
    added = L.learn_session(home, "s2", PROJECT, sess("/b/c"))["gaps_added"]
    assert len(added) == 1 and "docker compose up" in added[0] and "proj" in added[0]
    assert L.learn_session(home, "s3", PROJECT, sess("/d"))["gaps_added"] == []  # a gap is added once
    assert L.learn_session(home, "s2", PROJECT, sess("/b/c"))["gaps_added"] == []
    docker = [g for g in gaps(home) if "docker" in g["text"]]
    assert [g["text"] for g in docker] == added
    # the gap is this project's, from the learner, closed by its command key and error class
    from sophia.gaps import failure_key

    key = L.analyse(sess("/a"), PROJECT)["failures"][0]
    assert (docker[0]["project"], docker[0]["source"]) == (PROJECT, "learner")
    assert docker[0]["key"] == failure_key(key["key"], key["class"]) and docker[0]["source_ids"] == ["s1", "s2"]


def test_session_lines_fit_the_cap(home: Path) -> None:
    for sid in ("s1", "s2"):
        cmds = session(ok("pnpm test"), *(c for i in range(6) for c in (
            bad(f"~/bin/tool{i}.sh go", f"Error: failure number {i} " + "x" * 80), ok(f"~/bin/tool{i}.sh go --retry"))))
        L.learn_session(home, sid, PROJECT, cmds)
    lines = P.session_lines(home, PROJECT, max_chars=500)
    assert lines[0] == "- Playbook: test `pnpm test`"
    assert 2 <= len(lines) < 7 and sum(len(x) + 1 for x in lines) <= 500
    assert all("\n" not in x for x in lines)


# ---------------------------------------------------------------- the real transcripts


def real(name: str) -> Path:
    found = sorted(TRANSCRIPTS.glob(f"{name}*.jsonl")) if TRANSCRIPTS.is_dir() else []
    if not found:
        pytest.skip(f"transcript {name} not in {TRANSCRIPTS}")
    return found[0]


def _labelled() -> list[tuple[dict[str, Any], list[C.Command], str | None]]:
    from bench.lessons import labels

    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"no transcripts in {TRANSCRIPTS}")
    return [(lb, *C.commands_from_transcript(TRANSCRIPTS / lb["file"])) for lb in labels()]


def test_real_sessions_teach_true_fixes_and_most_of_the_useful_ones() -> None:
    """Against the labels of what really happened (tests/fixtures/transcripts/labels): of the fixes the
    learner would teach, at most 1 in 20 names a call that did not fail or a fix that did not work, none
    is one the labels call destructive, and at least 70% of the useful fixes a reader found are taught
    (the issue's bars, here on the dev sessions)."""
    from bench.lessons import judge_fix, missed

    judged: list[str] = []
    useful = lost = 0
    for label, cmds, cwd in _labelled():
        taught = [f["calls"] for f in L.find_fixes(cmds, cwd) if not teachable.refusal(f)]
        judged += [judge_fix(f, label) for f in taught]
        useful += sum(1 for x in label["fixes"] if x.get("useful") and not x.get("destructive"))
        lost += len(missed(taught, label))
    assert len(judged) >= 10 and "unsafe" not in judged
    assert judged.count("false") * 20 <= len(judged), judged
    assert (useful - lost) * 10 >= useful * 7, (useful, lost)


def test_real_sessions_playbook_candidates_really_worked() -> None:
    """Every command a session offers the playbook (before it is seen in a second session) is one whose
    call really worked, and most of the playbook commands a reader found are among them."""
    want = found = 0
    for label, cmds, cwd in _labelled():
        offered = L.analyse(cmds, cwd)["playbook"]
        assert all(label["commands"][p["call"]]["verdict"] == "ok" for p in offered), label["file"]
        shown = {p["command"] for p in offered}
        book = {c.display(cwd, whole=False) for c in cmds if c.cid in {x["id"] for x in label["playbook"]}}
        want, found = want + len(book), found + len(book & shown)
    assert want >= 10 and found * 3 >= want * 2, (found, want)


def test_a_replayed_session_does_not_promote_its_own_commands(home: Path) -> None:
    """A resumed or replayed transcript repeats its calls: the same calls under another session id are
    not a second verification, so nothing is promoted to the playbook."""
    label, cmds, cwd = next(x for x in _labelled() if x[0]["playbook"])
    L.learn_session(home, "first", cwd, cmds)
    assert L.learn_session(home, "again", cwd, cmds)["playbook"] == []


def test_every_real_transcript_is_read_quickly() -> None:
    import time

    files = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []
    if not files:
        pytest.skip(f"no transcripts in {TRANSCRIPTS}")
    for f in files:
        t = time.perf_counter()
        cmds, _ = C.commands_from_transcript(f)
        L.analyse(cmds, "/p")
        assert cmds and time.perf_counter() - t < 2.0


# ---------------------------------------------------------------- lessons you can trust


def test_a_command_is_kept_as_typed() -> None:
    c = ok("cd /work/proj && make -j$(nproc) all 2>&1 | tail -5")
    assert c.display(PROJECT) == "make -j$(nproc) all" and c.key == "make all"


@pytest.mark.parametrize(("fix", "why"), [
    ("~/bin/wt.sh cleanup feat --force", "--force"),
    ("git push -f origin main", "git -f"),
    ("git reset --hard origin/main", "--hard"),
    ("rm -rf .claude.backup && ~/bin/wt.sh cleanup feat", "rm -r"),
])
def test_a_fix_that_forces_past_a_safety_check_is_never_taught(home: Path, fix: str, why: str) -> None:
    cmds = [bad("~/bin/wt.sh cleanup feat", "❌ Error: Worktree has uncommitted changes"), ok(fix)]
    if fix.startswith("git"):
        cmds = [bad(fix.replace(" -f", "").replace(" --hard", ""), "error: failed to push some refs"), ok(fix)]
    report = L.learn_session(home, "s1", PROJECT, cmds)
    assert report["procedures_added"] == [] and procedures(home) == []
    assert why in report["refused"][0]["why"]


def test_node_modules_is_not_the_users_data(home: Path) -> None:
    cmds = [bad("npm test", "Error: Cannot find module 'jest'"), ok("rm -rf node_modules && npm install"),
            ok("npm test -- --ci")]
    assert len(L.learn_session(home, "s1", PROJECT, cmds)["procedures_added"]) == 1


def test_a_fix_tied_to_a_one_off_value_is_not_taught(home: Path) -> None:
    cmds = [bad("gh pr checks 4812", "no checks reported on the 'fix-x' branch"), ok("gh pr checks 4812 --watch")]
    report = L.learn_session(home, "s1", PROJECT, cmds)
    assert report["procedures_added"] == [] and "4812" in report["refused"][0]["why"]


def test_another_target_or_a_plain_retry_is_not_a_fix() -> None:
    assert L.find_fixes([bad("npm info left-pad-x", "404 Not Found"), ok("npm info left-pad")], PROJECT) == []
    assert L.find_fixes([bad("make", "error: x"), ok("make")], PROJECT) == []
    # the user's reply between a failure and the same command again is a step (they fixed something)
    [fix] = L.find_fixes([bad("brew install gh", "Error: You have not agreed to the Xcode license"),
                          C.Command("", True, note=C.USER_STEP), ok("brew install gh")], PROJECT)
    assert fix["steps"] == [C.USER_STEP]


def test_a_success_with_a_warning_of_something_missing_proves_no_fix() -> None:
    from sophia import evidence

    warned = C.Command("./setup.sh", evidence.judge("./setup.sh", "⚠️ Warning: config.yml not found\ndone",
                                                     is_error=False), cid="toolu_w")
    assert warned.ok and warned.evidence.doubt
    assert L.find_fixes([bad("./setup.sh", "Error: no config"), ok("touch config.yml"), warned], PROJECT) == []


def test_a_procedure_keeps_its_evidence_and_its_confidence_moves(home: Path) -> None:
    fail, fix = bad("npm test", "Error: Cannot find module 'jest'"), ok("npm test -- --ci")
    L.learn_session(home, "s1", PROJECT, [fail, ok("npm install"), fix])
    [item] = fixes(home)
    meta = item["meta"]
    assert meta["evidence"][0]["session"] == "s1" and meta["evidence"][0]["calls"] == {
        "failed": [fail.cid], "fixed": fix.cid}
    assert (meta["successes"], meta["failures"], meta["status"]) == (1, 0, "active") and meta["confidence"] == 0.667
    L.learn_session(home, "s2", PROJECT, [ok("git pull"), ok("npm test -- --ci"), ok("ls")])  # works again
    assert fixes(home)[0]["meta"]["confidence"] == 0.75
    assert [p["text"] for p in procedures(home) if p["meta"]["category"] == "playbook"] == [
        "project playbook (test): `npm test -- --ci`"]  # proven by two calls in two sessions
    later = {sid: [ok("git pull"), bad("npm test -- --ci", "Error: 3 tests failed")] for sid in ("s3", "s4")}
    for sid, cmds in later.items():  # the fix fails later: demoted, said to be unreliable, off SessionStart
        L.learn_session(home, sid, PROJECT, cmds)
    [item] = fixes(home)
    assert item["meta"]["status"] == "demoted" and item["text"].startswith(P.UNRELIABLE)
    assert not any(item["id"] in line for line in P.session_lines(home, PROJECT))
    L.learn_session(home, "s4", PROJECT, later["s4"])
    assert fixes(home)[0]["meta"]["failures"] == 2  # the same session again (the same calls) counts nothing
    L.learn_session(home, "s5", PROJECT, [ok("git pull"), bad("npm test -- --ci", "Error: 3 tests failed")])
    [item] = fixes(home)
    assert item["meta"]["status"] == "retired"
    from sophia.index import db

    conn = db.connect(home)
    try:
        assert conn.execute("SELECT 1 FROM items WHERE id = ?", (item["id"],)).fetchone() is None
    finally:
        conn.close()


def test_a_failure_fixed_in_its_session_opens_no_gap(home: Path) -> None:
    for sid in ("s1", "s2"):
        report = L.learn_session(home, sid, PROJECT, session(
            bad("docker compose up", "Error: open /a/.env: no such file or directory"), ok("cp .env.example .env"),
            ok("docker compose up -d")))
        assert report["gaps_added"] == []


def test_procedures_an_older_kit_taught_that_force_past_a_check_are_retired_once(home: Path) -> None:
    """A store from before these rules (no evidence, no status) held `cleanup X --force worked`: the sweep
    retires it (out of the index, kept in the file with why) and keeps the sound one; once per rules."""
    from sophia.memory import indexing
    from sophia.memory.files import make_item, update_items

    old = [make_item("proc_old_force", "procedure", "when `wt.sh cleanup feat` fails with `uncommitted changes`, "
                     "`wt.sh cleanup feat --force` worked", project=PROJECT,
                     meta={"category": "error_fix", "learner": "zero_token", "failed": "wt.sh cleanup feat",
                           "procedure_steps": ["wt.sh cleanup feat --force"]}),
           make_item("proc_old_ok", "procedure", "when `npm test` fails with `x`, `npm test -- --ci` worked",
                     project=PROJECT, meta={"category": "error_fix", "learner": "zero_token", "failed": "npm test",
                                            "procedure_steps": ["npm install", "npm test -- --ci"]})]
    with update_items("procedures", home) as items:
        items.extend(old)
    indexing.upsert(old, home)
    assert P.sweep(home) == ["proc_old_force"]
    status = {p["id"]: p["meta"].get("status", "active") for p in procedures(home)}
    assert status == {"proc_old_force": "retired", "proc_old_ok": "active"}
    assert not any("proc_old_force" in line for line in P.session_lines(home, PROJECT))
    from sophia.index import search

    assert [r["id"] for r in search.recall("cleanup feat force", home=home)] == []
    assert P.sweep(home) == []  # once per version of the rules


def test_a_fix_learned_later_closes_the_projects_gap(home: Path) -> None:
    """Two sessions fail the same way (a gap of this project); a third learns the fix: the gap is closed
    by that procedure and SessionStart no longer lists it."""
    from sophia import gaps as gap_records
    from sophia.atomic import read_json

    def failing() -> list[C.Command]:
        return session(bad("docker compose up", "Error: open /a/.env: no such file or directory"), ok("make"))

    L.learn_session(home, "s1", PROJECT, failing())
    assert len(L.learn_session(home, "s2", PROJECT, failing())["gaps_added"]) == 1
    report = L.learn_session(home, "s3", PROJECT, session(
        bad("docker compose up", "Error: open /b/.env: no such file or directory"), ok("cp .env.example .env"),
        ok("docker compose up -d")))
    [proc] = fixes(home)
    assert len(report["gaps_closed"]) == 1
    [gap] = [g for g in gap_records.records(read_json(home / "self_model.json")["knowledge_gaps"])
             if "docker" in g["text"]]
    assert gap["closed_by"] == proc["id"] and not gap_records.is_open(gap)


def test_a_success_that_still_warns_about_the_failure_is_not_its_fix() -> None:
    """A run that exits 0 but still warns about what the failure was about goes on failing; the first
    clean run after it is the fix. A warning about something else (a fetch) does not matter."""
    from sophia import evidence

    def run(out: str) -> C.Command:
        return C.Command("./wt.sh create ui", evidence.judge("./wt.sh create ui", out, is_error=False),
                         cid=f"toolu_{next(_CALLS)}")

    failed = C.Command("./wt.sh create ui", evidence.judge(
        "./wt.sh create ui", "line 9: /opt/x/shared/setup-editor-links.sh: No such file or directory",
        is_error=False), cid="toolu_f")
    still = run("⚠ Warning: could not fetch\n⚠ Warning: could not setup editor links automatically\ncreated")
    clean = run("⚠ Warning: could not fetch\n✅ editor links created\ncreated")
    assert failed.failed and still.ok and not still.evidence.doubt
    fix, = L.find_fixes([failed, C.Command("", True, edit="wt.sh"), still, clean], PROJECT)
    assert fix["calls"] == {"failed": ["toolu_f"], "fixed": clean.cid}
    assert L.find_fixes([failed, C.Command("", True, edit="wt.sh"), clean], PROJECT)[0]["calls"]["fixed"] == clean.cid


def test_job_control_and_option_values_make_no_command_key() -> None:
    c = C.Command('npx tsc --noEmit --pretty false 2>&1 & PID=$!; sleep 45 && kill $PID; wait $PID; echo "EXIT: $?"',
                  True)
    assert c.key == "npx tsc"
    assert C.Command("kill 4242", True).key == "kill"  # killing a process by number is the intent


def test_the_users_edit_of_a_procedure_stands_and_its_confidence_stays_the_runs(home: Path) -> None:
    """Issue 32 (the viewer's edit): a new line and a chosen status; later runs move the confidence but not
    the status the user chose; choosing the runs' own status again hands it back to them."""
    from sophia.errors import BadInput
    from sophia.memory.files import make_item, update_items

    L.learn_session(home, "s1", PROJECT, [bad("npm test", "Error: Cannot find module 'jest'"), ok("npm install"),
                                          ok("npm test -- --ci")])
    [item] = fixes(home)
    P.edit(home, item["id"], "when jest is missing, `npm test -- --ci` after `npm install`", "demoted")
    [item] = fixes(home)
    assert item["text"].startswith(P.UNRELIABLE + "when jest is missing") and item["meta"]["user_status"] == "demoted"
    assert item["meta"]["confidence"] == 0.667 and not any(item["id"] in ln for ln in P.session_lines(home, PROJECT))
    L.learn_session(home, "s2", PROJECT, [ok("git pull"), ok("npm test -- --ci"), ok("ls")])
    [item] = fixes(home)
    assert (item["meta"]["status"], item["meta"]["confidence"]) == ("demoted", 0.75)  # the runs move it; she chose
    P.edit(home, item["id"], "when jest is missing, `npm test -- --ci` after `npm install`", "active")
    [item] = fixes(home)
    assert item["meta"]["status"] == "active" and "user_status" not in item["meta"]
    assert item["text"] == "when jest is missing, `npm test -- --ci` after `npm install`"
    for text, status in (("x", "gone"), ("  ", "active")):
        with pytest.raises(BadInput):
            P.edit(home, item["id"], text, status)
    with pytest.raises(BadInput, match="no procedure"):
        P.edit(home, "proc_nope", "x", "active")
    digest = make_item("proc_digest", "procedure", "deploy: build, push, tag", project=PROJECT,
                       meta={"name": "deploy", "confidence": 0.9, "procedure_steps": ["build", "push", "tag"]})
    with update_items("procedures", home) as items:
        items.append(digest)
    P.edit(home, "proc_digest", "deploy: build, push, then tag", "retired")
    saved = next(p for p in procedures(home) if p["id"] == "proc_digest")
    assert saved["meta"]["confidence"] == 0.9 and saved["meta"]["status"] == "retired"  # the digest's confidence
    assert saved["text"] == "deploy: build, push, then tag"


def test_a_fix_that_turns_on_a_wrapper_or_a_background_job_is_shown_as_typed() -> None:
    """`timeout` missing, the same check run in the background and killed after a while: the lesson
    keeps both as typed (the normalised form would read `npx tsc` -> `npx tsc`, which teaches nothing)."""
    from sophia import evidence

    failed_cmd = 'timeout 60 npx tsc --noEmit; echo "EXIT: $?"'
    fixed_cmd = 'npx tsc --noEmit & P=$!; sleep 45 && kill $P; wait $P; echo "EXIT: $?"'
    failed = C.Command(failed_cmd, evidence.judge(failed_cmd, "zsh: command not found: timeout\nEXIT: 127",
                                                  is_error=False), C.error_line("zsh: command not found: timeout"),
                       cid="toolu_t1")
    fixed = C.Command(fixed_cmd, evidence.judge(fixed_cmd, "EXIT: 0", is_error=False), cid="toolu_t2")
    fix, = L.find_fixes([failed, fixed], PROJECT)
    assert fix["failed"].startswith("timeout 60 npx tsc") and "& P=$!" in fix["fix"] and "kill $P" in fix["fix"]
    assert L.find_fixes([bad("make", "error: x"), ok("make -j4")], PROJECT)[0]["fix"] == "make -j4"
