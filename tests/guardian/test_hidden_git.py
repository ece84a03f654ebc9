"""The pieces behind issue 28's classes 2 and 3: how words become several words, what awk runs, how git
reads its options, and the git rules that ask git about a real working tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sophia.guardian import awk, fields, git_opts, targets, worktree
from sophia.guardian.analyze import Analyzer, analyze_tool
from sophia.guardian.shell import UNKNOWN, parse, substitutions


@pytest.mark.parametrize(("word", "words"), [
    ("/tmp/{safe,../home}", ["/tmp/safe", "/tmp/../home"]),
    ("a{b,c{d,e}}f", ["abf", "acdf", "acef"]),
    ("file{1..3}.txt", ["file1.txt", "file2.txt", "file3.txt"]),
    ("{}", ["{}"]), ("HEAD@{1}", ["HEAD@{1}"]), ("x{a}", ["x{a}"]), ("a,b", ["a,b"]),
])
def test_brace_expansion_makes_the_words_bash_makes(word: str, words: list[str]) -> None:
    assert fields.split(fields.mark_braces(word)) == words


def test_an_unquoted_value_splits_at_blanks_and_a_quoted_one_does_not() -> None:
    assert fields.split(fields.mark_blanks("-rf /")) == ["-rf", "/"]
    env = {"HOME": "/home/dev"}
    assert analyze_tool("Bash", {"command": 'X="-rf /"; rm $X'}, "/home/dev/p", env).level == "deny"
    assert analyze_tool("Bash", {"command": 'X="-rf /"; rm "$X"'}, "/home/dev/p", env).level == "allow"


def test_substitutions_inside_arithmetic_and_subshell_scopes() -> None:
    assert substitutions(" $(rm -rf ~) + `ls` + $(( $(date) )) ") == ["rm -rf ~", "ls", "date"]
    sc = parse("(cd / && ls); { a; (b); }; c")
    assert [(c.words[0].raw, c.subshells) for c in sc.commands] == [
        ("cd", (1,)), ("ls", (1,)), ("a", ()), ("b", (2,)), ("c", ())]
    a = Analyzer(targets.make_ctx("/home/dev/p", {"HOME": "/home/dev"}))
    a.script("(cd ~ && export D=/); true")
    assert a.ctx.cwd == "/home/dev/p" and "D" not in a.ctx.vars


def test_awk_commands_are_read_with_escapes_variables_and_pipes() -> None:
    prog = awk.read('BEGIN{c="rm\\x20-rf"; system(c " ~"); "date" | getline d; print "ls" | "sh"; '
                    'printf "%s\\n", "x" > "/etc/hosts"; print "a", $1}')
    assert prog.runs == [("rm -rf ~", None), ("date", None), ("sh", "ls")]
    assert prog.writes == ["/etc/hosts"]
    assert prog.printed == ["a " + UNKNOWN]
    assert awk.variables(["-v", "c=rm -rf /", "-vx=1", "--assign=y=2"]) == {"c": "rm -rf /", "x": "1", "y": "2"}


@pytest.mark.parametrize(("sub", "argv", "canonical"), [
    ("reset", ["--ha"], ["--hard"]),
    ("branch", ["--del", "--forc", "x"], ["--delete", "--force", "x"]),
    ("switch", ["--discard-ch", "main"], ["--discard-changes", "main"]),
    ("push", ["--mir"], ["--mirror"]),
    ("push", ["--forc", "origin"], ["--force", "origin"]),  # every reading is a force: the plainest one
    ("push", ["--fo", "origin"], ["--fo", "origin"]),  # --force or --follow-tags: git refuses it
    ("checkout", ["-qbfeature"], ["-q", "-b", "feature"]),
    ("switch", ["-Cfixup"], ["-C", "fixup"]),
    ("clean", ["-fdx"], ["-f", "-d", "-x"]),
    ("worktree", ["remove", "--forc", "x"], ["remove", "--force", "x"]),
    ("rebase", ["--exe=make", "-xls"], ["--exec=make", "-x", "ls"]),
    ("log", ["--oneline", "-5"], ["--oneline", "-5"]),  # no table: as typed
])
def test_git_options_are_read_as_git_reads_them(sub: str, argv: list[str], canonical: list[str]) -> None:
    assert git_opts.normalize(sub, argv) == canonical


def _git(path: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "HOME": str(path), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    (r / "a.txt").write_text("1\n")
    _git(r, "add", "a.txt")
    _git(r, "commit", "-q", "-m", "init")
    return r


def test_a_forced_worktree_removal_asks_only_when_that_checkout_holds_work(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    _git(repo, "worktree", "add", "-q", str(wt), "-b", "feature")
    assert worktree.has_work(str(wt)) is False
    assert worktree.has_work(str(tmp_path / "gone")) is False

    def decide() -> str:
        a = Analyzer(targets.Ctx(str(repo), str(tmp_path / "home"), str(repo), tmpdirs=("/nowhere",)))
        a.script(f"git worktree remove --force {wt}")
        return max((f.level for f in a.findings), default="allow")

    assert decide() == "allow"
    (wt / "notes.txt").write_text("unsaved\n")  # an untracked file: --force deletes it
    assert worktree.has_work(str(wt)) is True
    assert decide() == "ask"


def test_git_rm_force_loses_nothing_on_a_clean_tree(repo: Path) -> None:
    env = {"HOME": str(repo.parent), "CLAUDE_PROJECT_DIR": str(repo)}
    assert analyze_tool("Bash", {"command": "git rm -rf ."}, str(repo), env).level == "allow"
    (repo / "a.txt").write_text("2\n")
    assert analyze_tool("Bash", {"command": "git rm -rf ."}, str(repo), env).level == "deny"
    assert analyze_tool("Bash", {"command": "git rm -f a.txt"}, str(repo), env).level == "ask"
    assert analyze_tool("Bash", {"command": "git rm --cached -f a.txt"}, str(repo), env).level == "allow"
