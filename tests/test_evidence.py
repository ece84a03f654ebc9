"""The command-evidence classifier (``sophia.evidence``): a command is judged by what its output shows,
not by its exit status alone. Cases written from how agents mask failures; the real sessions' labels
(``tests/fixtures/transcripts/labels``) check it on real calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared_data import looked_in, shared_path
from sophia import evidence as E
from sophia import transcript_entries as T

LABELS = Path(__file__).parent / "fixtures" / "transcripts" / "labels"


def verdict(command: str, output: str, *, is_error: bool = False, **kw: bool) -> str:
    return E.judge(command, output, is_error=is_error, **kw).verdict


@pytest.mark.parametrize(("command", "output"), [
    ("make all 2>&1 | tail -20", "gcc -o app main.o util.o\n/usr/bin/ld: main.o: undefined reference to `frob'\n"
                                 "collect2: error: ld returned 1 exit status\nmake: *** [Makefile:4: all] Error 1"),
    ("./build.sh | head", "./build.sh: line 3: ./configure: No such file or directory"),
    ("pip install requests | tail -3", "error: externally-managed-environment\n\n× This environment is externally managed"),
    ("pytest -q 2>&1 | tail -3", "..F.\nFAILED tests/test_x.py::test_y - AssertionError\n1 failed, 3 passed in 0.2s"),
    ("npx tsc --noEmit 2>&1 | head -20", "src/a.tsx(22,5): error TS2322: Type 'string' is not assignable to type 'number'."),
    ("./check.sh", "✅ config found\n❌ database unreachable\n"),
    ("cargo build 2>&1 | tail -2", "error[E0425]: cannot find value `x` in this scope\nerror: could not compile `app`"),
    ("mytool --sync; echo done", "mytool: command not found\ndone"),
    ("python app.py | tee run.log", "Traceback (most recent call last):\n  File \"app.py\", line 1\nValueError: bad"),
    ("./run-all.sh", "step 1 ok\nexit code: 2"),
])
def test_a_masked_or_exit_zero_failure_is_failed(command: str, output: str) -> None:
    ev = E.judge(command, output, is_error=False)
    assert ev.verdict == E.FAILED, ev
    assert ev.proof, "the lines that proved it are kept"


@pytest.mark.parametrize(("command", "output"), [
    ("npx eslint . || true", ""),
    ("make all 2>&1 | tail -5", "gcc -o app main.o util.o\nstrip app"),
    ("npm run build; echo finished", "finished"),
    ("set +e\n./deploy.sh\n", "deploying"),
])
def test_a_masked_status_with_nothing_telling_is_unknown(command: str, output: str) -> None:
    assert verdict(command, output) == E.UNKNOWN


@pytest.mark.parametrize(("command", "output"), [
    ("pytest -q 2>&1 | tail -2", "........\n8 passed in 0.31s"),
    ("npm install 2>&1 | tail -1", "added 12 packages in 3s"),
    ("cargo test 2>&1 | tail -1", "test result: ok. 14 passed; 0 failed; 0 ignored"),
    ("npx tsc --noEmit 2>&1 | head -20", ""),
])
def test_a_masked_status_with_a_success_summary_is_ok(command: str, output: str) -> None:
    assert verdict(command, output) == E.OK


def test_exit_zero_without_markers_is_ok_and_pipefail_is_not_a_mask() -> None:
    assert verdict("npm test", "> jest\nTests: 3 passed, 3 total") == E.OK
    assert verdict("set -o pipefail; make | tee build.log", "cc -o app app.c") == E.OK
    assert E.shape("set -o pipefail; make | tee build.log")["mask"] is None


def test_a_reader_prints_content_not_diagnostics() -> None:
    """grep/cat output that mentions errors is what was asked for; only the reader's own complaints count."""
    assert verdict("grep -rn 'error:' src/", "src/a.py:3: raise ValueError('error: bad')") == E.OK
    assert verdict("tail -5 train.log", "Traceback (most recent call last):\nRuntimeError: nan") == E.OK
    assert verdict("cat missing.txt | head", "cat: missing.txt: No such file or directory") == E.FAILED


def test_negated_and_zero_counts_are_not_failures() -> None:
    assert verdict("pytest", "== 3 passed, 0 failed ==") == E.OK
    assert verdict("./lint.sh", "no errors found") == E.OK


def test_a_backgrounded_command_is_unknown_until_something_shows_its_result() -> None:
    assert verdict("gcc -o x x.c 2>/dev/null &", "") == E.UNKNOWN
    assert verdict("python train.py", "Command running in background with ID: b1. Output is being written to: /tmp/o") \
        == E.UNKNOWN
    assert verdict("npm run dev", "", background=True) == E.UNKNOWN


@pytest.mark.parametrize(("text", "kind"), [
    ("<tool_use_error>Sibling tool call errored</tool_use_error>", E.CANCELLED),
    ("Cancelled: parallel tool call Bash(ls) errored", E.CANCELLED),
    ("The user doesn't want to proceed with this tool use. The tool use was rejected", E.DENIED),
    ("Permission to use Bash with command rm -rf build has been denied.", E.DENIED),
    ("PreToolUse:Bash hook error: [/home/u/.claude/hooks/block.sh]: blocked", E.DENIED),
    ("[Request interrupted by user for tool use]", E.INTERRUPTED),
])
def test_calls_that_never_ran_are_neither_success_nor_failure(text: str, kind: str) -> None:
    ev = E.judge("make test", text, is_error=True)
    assert ev.verdict == kind and ev.verdict in E.NOT_RUN


def test_an_error_status_is_a_failure_with_its_exit_code_and_a_timeout_too() -> None:
    ev = E.judge("npm test", "Error: Exit code 1\n> jest\nTests: 2 failed, 3 passed", is_error=True)
    assert (ev.verdict, ev.exit, ev.proof) == (E.FAILED, 1, ["Tests: 2 failed, 3 passed"])
    assert E.judge("npm run e2e", "Command timed out after 2m 0.0s", is_error=True).reason == "timed out"


def test_the_shape_keeps_program_names_only() -> None:
    sh = E.shape("API_KEY=sk-secret123 curl -H 'Authorization: Bearer abc' https://x.example | jq .")
    assert "sk-secret123" not in json.dumps(sh) and "abc" not in json.dumps(sh)
    assert sh["progs"] == ["curl", "jq"] and sh["mask"] == "| jq"


def test_a_non_bash_tool_is_judged_by_the_clients_status_only() -> None:
    rec = {"id": "t1", "tool": "Read", "file": "/p/notes.md"}
    ok = T.action(rec, {"id": "t1", "error": False, "text": "error: this line is file content"}, None)
    assert ok["outcome"] == "ok"
    skipped = T.action(rec, {"id": "t1", "error": True, "text": "Sibling tool call errored"}, None)
    assert (skipped["outcome"], skipped["verdict"]) == ("skipped", "cancelled")


def _judged_calls(transcript: Path) -> dict[str, tuple[str, bool]]:
    """Every Bash call of a real transcript: the classifier's verdict through the transcript readers, and
    whether the command only reads."""
    pending: dict[str, dict[str, Any]] = {}
    out: dict[str, tuple[str, bool]] = {}
    for raw in transcript.read_bytes().splitlines():
        obj = T.parse_line(raw) or {}
        if obj.get("type") == "assistant":
            pending.update({c["id"]: T.call_record(c) for c in T.tool_calls(obj)})
        elif obj.get("type") == "user":
            for r in T.tool_results(obj):
                rec = pending.pop(r["id"], None)
                if rec and rec["tool"] == "Bash":
                    out[r["id"]] = (T.judge_result(rec, r).verdict, bool(rec["shape"]["reader"]))
    return out


def test_on_real_sessions_a_call_a_reader_saw_fail_is_rarely_called_ok() -> None:
    """Against the labels of what really happened: of the labelled failures of commands that do something
    (not the readers: an empty `find` is a judgement of intent), at most 1 in 10 is called ok; a call
    that never ran is never called failed or ok."""
    where = shared_path("data/transcripts")
    if not where.is_dir():
        pytest.skip(looked_in("data/transcripts"))
    failed_ok = failed = not_run_wrong = 0
    for label_file in sorted(LABELS.glob("*.json")):
        label = json.loads(label_file.read_text())
        judged = _judged_calls(where / label["file"])
        for cid, want in label["commands"].items():
            got, reader = judged.get(cid, (None, True))
            if want["verdict"] in E.NOT_RUN and got in (E.OK, E.FAILED):
                not_run_wrong += 1
            if want["verdict"] == E.FAILED and not reader:
                failed += 1
                failed_ok += got == E.OK
    assert failed >= 40, "the labels hold enough failures to judge"
    assert failed_ok * 10 <= failed, f"{failed_ok} of {failed} labelled failures called ok"
    assert not_run_wrong == 0


def test_a_printed_status_is_the_intended_commands_when_nothing_masks_it() -> None:
    assert verdict('make all 2>&1; echo "EXIT: $?"', "cc -o app main.c\nEXIT: 0") == E.OK
    assert verdict("cargo build; echo $?", "Compiling x\n0") == E.OK
    assert verdict('make all 2>&1; echo "exit code: $?"', "exit code: 2") == E.FAILED
    # a pipe's status is its last program's: `tail` says nothing about make
    assert verdict('make all 2>&1 | tail -3; echo "EXIT: $?"', "EXIT: 0") == E.UNKNOWN
    # a job sent to the background, then waited for: wait returns the job's status
    job = 'npx tsc --noEmit & P=$!; sleep 45 && kill $P 2>/dev/null; wait $P; echo "EXIT: $?"'
    assert verdict(job, "EXIT: 0") == E.OK
    assert verdict(job, "EXIT: 143") == E.FAILED
    assert verdict("npx tsc --noEmit & sleep 5; echo $?", "0") == E.UNKNOWN  # sleep's status


def test_a_warning_that_work_was_left_to_do_by_hand_casts_doubt() -> None:
    ev = E.judge("./setup.sh", "✅ created\n⚠️  Warning: editor symlinks may need manual setup", is_error=False)
    assert ev.ok and ev.doubt and ev.warnings
    assert not E.judge("./setup.sh", "⚠️  Warning: could not fetch from remote\ncreated", is_error=False).doubt


def test_terminal_codes_are_not_words_of_the_output() -> None:
    """Issue 32: an error in colour (`\\x1b[0;34m`), a title and a charset switch leave plain words only."""
    raw = "\x1b[0;31mE   ModuleNotFoundError\x1b[0m: \x1b]0;title\x07No module \x1b(Bnamed \x1b[?25l'widgets'"
    assert E.plain(raw) == "E   ModuleNotFoundError: No module named 'widgets'"
    assert "\x1b" not in E.plain("half an escape \x1b")


def test_a_compound_command_is_summarised_by_what_ran_not_by_cd() -> None:
    assert T.bash_summary("cd /work/shop && pytest -q") == "pytest"
    assert T.bash_summary("cd a; cd b && make test") == "make test"
    assert T.bash_summary("cd /work/shop") == "cd"
    assert T.bash_summary("cd x && TOKEN=abc make") == ""  # the whitelist still stops at a secret


@pytest.mark.parametrize(("args", "reads"), [
    # git-config(1): a key alone or --get/--list reads; a value, --unset, --add, --remove-section write
    ("config --list", True), ("config --global user.email", True), ("config --get-regexp ^alias", True),
    ("config user.name Ada", False), ("config --unset core.editor", False), ("config --remove-section x", False),
    ("config --add remote.o.push main", False),
    # git-branch(1) / git-tag(1): listing without a name (or with --list); a name creates, -d/-D/-m change
    ("branch", True), ("branch -a -v", True), ("branch --show-current", True), ("branch --list 'fix/*'", True),
    ("branch fix/x", False), ("branch -D old", False), ("branch -m a b", False),
    ("tag", True), ("tag -l 'v1.*'", True), ("tag v1.2.0", False), ("tag -d v1", False),
    # git-remote(1), git-stash(1)
    ("remote -v", True), ("remote show origin", True), ("remote add up url", False), ("remote set-url o u", False),
    ("stash list", True), ("stash show -p", True), ("stash", False), ("stash pop", False), ("stash drop", False),
    # git's own options before the subcommand
    ("-C /repo status --short", True), ("-c core.pager=cat log -3", True), ("--no-pager diff", True),
    ("-C /repo push", False), ("commit -am x", False), ("checkout -- f", False),
])
def test_git_reads_tells_looking_from_changing(args: str, reads: bool) -> None:
    assert E.git_reads(args.split()) is reads
    assert E.shape(f"git {args}")["reader"] is reads


def test_a_git_config_read_is_no_fix_of_a_config_write() -> None:
    """`git config --list` after a failed `git config --remove-section` looks: it is no step and no fix."""
    from sophia.learning.commands import is_heartbeat

    assert is_heartbeat(["git", "config", "--list"]) and is_heartbeat(["git", "config", "--get", "user.name"])
    assert not is_heartbeat(["git", "config", "--remove-section", "x"]) and not is_heartbeat(["git", "tag", "v1"])
