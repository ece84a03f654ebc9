"""Destructive git, and destructive statements sent to database clients."""

from __future__ import annotations

from . import sql, targets
from .lazyre import LazyRe
from .shell import UNKNOWN

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from collections.abc import Callable

    from .analyze import Analyzer, Call

PROTECTED = LazyRe(r"^(?:main|master|trunk|develop|development|dev|release.*|prod.*|production|stable|staging|"
                       r"live|gh-pages|default|HEAD)$")
_GIT_GLOBAL_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"})
_PATH_LIKE = LazyRe(r"\.[A-Za-z0-9]{1,5}$")
# a path that names one file: a last part with an extension (or a dotfile), no glob, not a folder
_NAMED_FILE = LazyRe(r"^[^*?\[]*(?:^|/)(?:[^/.][^/]*\.[A-Za-z0-9]{1,10}|\.[^/.][^/]*)$")


def _split_git(args: list[str]) -> tuple[str, list[str]]:
    i = _global_end(args)
    return (args[i], args[i + 1:]) if i < len(args) else ("", [])


def _global_end(args: list[str]) -> int:
    """The index of git's subcommand, past its own options (``-C dir``, ``-c k=v``, ``--no-pager`` ...)."""
    i = 0
    while i < len(args):
        x = args[i]
        if x in _GIT_GLOBAL_ARG:
            i += 2
            continue
        if x.startswith("-"):
            i += 1
            continue
        return i
    return i


def _short_flags(args: list[str]) -> str:
    return "".join(x[1:] for x in args if x.startswith("-") and not x.startswith("--") and len(x) > 1)


def git(a: Analyzer, call: Call) -> None:
    from . import git_opts, git_runs

    args = call.args
    cfg = git_runs.config(a, call, args[:_global_end(args)])
    sub, raw = _split_git(args)
    for _ in range(git_runs.MAX_ALIASES):  # an alias may name another alias
        expanded = git_runs.expand_alias(a, cfg, sub, raw, call.depth) if sub else None
        if expanded is None:
            break
        sub, raw = (expanded[0], expanded[1:]) if expanded else ("", [])
    rest = git_opts.normalize(sub, raw)
    git_runs.runs(a, sub, rest, raw, call.depth)
    if sub == "config":
        git_runs.git_config_command(a, raw, call.depth)
    _judge(a, call, sub, rest)


def _judge(a: Analyzer, call: Call, sub: str, rest: list[str]) -> None:
    """What a git subcommand (its options spelled out in full) does to work, history and remotes."""
    via = f"`{call.show()}`"
    flags = _short_flags(rest)
    reset = _branch_reset(sub, rest, flags)
    if reset:
        a.add(reset[0], "git_destructive", f"{via} {reset[1]}", reset[2])
    if sub == "push":
        _push(a, rest, via)
    elif sub in ("checkout", "restore"):
        _discard(a, sub, rest, flags, via, lambda: _clean_tree(a, call.args))
    elif sub == "rm":
        _git_rm(a, rest, flags, via, lambda: _clean_tree(a, call.args))
    elif sub == "worktree":
        _worktree_remove(a, rest, flags, via)
    elif sub == "submodule" and rest[:1] == ["deinit"] and ("f" in flags or "--force" in rest):
        a.add("ask", "git_destructive", f"{via} removes submodule working trees with their local changes",
              "Run it without -f (git refuses to lose changes), or commit in the submodules first.")
    else:
        verdict = _GIT_JUDGES.get(sub, _git_history)(sub, rest, flags)
        if verdict and sub in ("reset", "switch") and _clean_tree(a, call.args):
            verdict = _on_clean_tree(sub, rest)
        if verdict:
            level, what, instead = verdict
            a.add(level, "git_destructive", f"{via} {what}", instead)


def _clean_tree(a: Analyzer, args: list[str]) -> bool:
    """Whether the repository the command works in (its cwd, or ``git -C DIR``) has nothing uncommitted
    in tracked files (asked of git: :mod:`.worktree`)."""
    where = a.ctx.cwd
    for i, x in enumerate(args[:-1]):
        if x == "-C":
            where = targets.resolve(a.ctx, args[i + 1])
    if not where:
        return False
    from .worktree import clean

    return clean(where)


def _on_clean_tree(sub: str, rest: list[str]) -> _Verdict:
    """A reset or forced switch on a clean tree loses no uncommitted work; ``reset --hard <ref>`` still
    moves the branch, leaving the commits after ``ref`` only in the reflog."""
    if sub == "reset":
        ref = next((x for x in rest if not x.startswith("-")), "HEAD")
        if ref not in ("HEAD", "@"):
            return ("ask", f"moves the branch to {ref}; the commits after it stay only in the reflog",
                    "Confirm with the user, or `git branch backup` first.")
    return None


# (level, what the command does, what to do instead) for a git subcommand; None if harmless
_Verdict = tuple[str, str, str] | None


def _git_reset(_sub: str, rest: list[str], _flags: str) -> _Verdict:
    if "--hard" in rest or "--merge" in rest:  # --merge keeps unstaged edits but resets staged ones
        return ("deny", "throws away uncommitted work" if "--hard" in rest else "throws away staged changes",
                "Use `git stash` (recoverable) or `git reset --soft`/`--mixed`, or ask the user.")
    if "--keep" in rest:  # refuses to touch local changes, but the commits after the target leave the tree
        return _on_clean_tree("reset", rest)
    return None


def _git_clean(_sub: str, rest: list[str], flags: str) -> _Verdict:
    if "n" in flags or "--dry-run" in rest:
        return None
    if "f" in flags or "--force" in rest:
        return ("deny", "permanently deletes untracked files",
                "Run `git clean -n` to list them and delete specific paths, or ask the user.")
    if "i" in flags or "--interactive" in rest:
        return ("ask", "deletes untracked files", "")
    return None


def _git_switch(_sub: str, rest: list[str], flags: str) -> _Verdict:
    if "--discard-changes" in rest or "f" in flags or "--force" in rest:
        return ("ask", "discards local changes", "")
    return None


def _git_branch(_sub: str, rest: list[str], flags: str) -> _Verdict:
    if "D" in flags or (("d" in flags or "--delete" in rest) and ("f" in flags or "--force" in rest)):
        return ("deny", "force-deletes a branch, losing its unmerged commits",
                "Use `git branch -d` (refuses unmerged work) or ask the user.")
    return None


def _git_stash(_sub: str, rest: list[str], _flags: str) -> _Verdict:
    if rest and rest[0] in ("clear", "drop"):
        return ("deny", "deletes stashed work", "Leave the stash; ask the user.")
    return None


def _git_history(sub: str, rest: list[str], _flags: str) -> _Verdict:
    """Commands that drop unreachable commits or rewrite history."""
    if sub == "reflog" and rest[:1] in (["expire"], ["delete"]) or sub == "gc" and any(
            x.startswith("--prune=now") for x in rest) or sub == "prune" and "-n" not in rest and "--dry-run" not in rest:
        return ("ask", "discards unreachable commits for good", "")
    if sub in ("filter-branch", "filter-repo") or sub == "update-ref" and "-d" in rest:
        return ("ask", "rewrites history", "")
    return None


_GIT_JUDGES = {"reset": _git_reset, "clean": _git_clean, "switch": _git_switch, "branch": _git_branch,
               "stash": _git_stash}


def _push(a: Analyzer, rest: list[str], via: str) -> None:
    flags = _short_flags(rest)
    lease = any(x.startswith(("--force-with-lease", "--force-if-includes")) for x in rest)
    force = "f" in flags or "--force" in rest
    pos = [x for x in rest if not x.startswith("-")]
    refspecs = pos[1:]
    plus = [r for r in refspecs if r.startswith("+")]
    if "--mirror" in rest:
        a.add("deny", "git_destructive", f"{via} overwrites every ref on the remote", "Push specific branches.")
        return
    deletes = "--delete" in rest or "d" in flags or any(r.startswith(":") for r in refspecs)
    if deletes or "--prune" in rest:
        what = "deletes a branch" if deletes else "deletes the branches that have no local counterpart"
        a.add("ask", "git_destructive", f"{via} {what} on the remote")
        return
    if not force and not plus:
        if lease:
            branches = [r.split(":")[-1].lstrip("+") for r in refspecs]
            if any(PROTECTED.match(b) for b in branches):
                a.add("ask", "git_destructive", f"{via} rewrites the shared branch {', '.join(branches)}")
        return
    branches = [r.split(":")[-1].lstrip("+") for r in refspecs] if refspecs else []
    if lease and not plus and not force:  # with --force as well, the lease is not checked: force wins
        if any(PROTECTED.match(b) for b in branches):
            a.add("ask", "git_destructive", f"{via} rewrites the shared branch {', '.join(branches)}")
        return
    if not branches or "--all" in rest or any(PROTECTED.match(b) or UNKNOWN in b for b in branches):
        target = ", ".join(branches) if branches else "the current branch (unnamed)"
        a.add("deny", "git_destructive", f"{via} force-pushes {target}, overwriting commits others may have",
              "Use `git push --force-with-lease origin <feature-branch>`, never on main/master.")
    else:
        how = "(--force skips the lease check)" if lease else "without --force-with-lease"
        a.add("ask", "git_destructive", f"{via} force-pushes {', '.join(branches)} {how}",
              "Prefer `--force-with-lease` alone.")


def _discard(a: Analyzer, sub: str, rest: list[str], flags: str, via: str, clean: Callable[[], bool]) -> None:
    """``git checkout``/``git restore`` over uncommitted changes (``clean()``: the tree has none, asked
    only when the command would be stopped: then it loses nothing)."""
    if a.ctx.cwd and targets.in_temp(a.ctx, a.ctx.cwd):
        return  # a scratch clone in a temp folder
    paths = _restore_paths(rest, flags) if sub == "restore" else _checkout_paths(rest, flags)
    if paths is not None and all(_narrow(p) for p in paths):
        return  # a branch switch, or named files: the everyday undo of one's own edits (or one side of a conflict)
    if clean():
        return  # nothing uncommitted in tracked files: nothing to lose
    if paths is None:
        a.add("ask", "git_destructive", f"{via} discards local changes while switching")
    elif _whole_tree(paths):
        a.add("deny", "git_destructive", f"{via} discards every uncommitted change in the working tree",
              "Commit or `git stash` first, or restore named files after asking the user.")
    else:
        a.add("ask", "git_destructive", f"{via} discards uncommitted changes under {' '.join(paths)[:80]}",
              "Restore the named files you changed, or `git stash` first.")


def _whole_tree(paths: list[str]) -> bool:
    """A pathspec that names the whole working tree (``.``, ``*``, ``:/``)."""
    return any(p in (".", "*", ":/", "./", "..", ":/*", "'*'") or p.endswith("/.") for p in paths)


def _git_rm(a: Analyzer, rest: list[str], flags: str, via: str, clean: Callable[[], bool]) -> None:
    """``git rm -f``: deletes the files even with uncommitted changes (without ``-f`` git refuses to lose
    any; ``--cached`` leaves the files alone). On a clean tree every file is in the last commit."""
    if "--cached" in rest or not ("f" in flags or "--force" in rest) or "n" in flags or "--dry-run" in rest:
        return
    end = rest.index("--") if "--" in rest else len(rest)
    paths = _listed_paths(rest) or [x for x in rest[:end] if not x.startswith("-")] + rest[end + 1:]
    if not paths or clean():
        return
    if _whole_tree(paths):
        a.add("deny", "git_destructive", f"{via} deletes every tracked file with its uncommitted changes",
              "Commit or `git stash` first, or remove named files after asking the user.")
    else:
        a.add("ask", "git_destructive", f"{via} deletes {' '.join(paths)[:80]} with any uncommitted changes",
              "Run `git rm` without -f (it refuses to lose changes), or commit first.")


def _worktree_remove(a: Analyzer, rest: list[str], flags: str, via: str) -> None:
    """``git worktree remove --force``: deletes another checkout with its uncommitted and untracked files
    (without --force git refuses). Asked of git whether that checkout holds any (:mod:`.worktree`)."""
    if rest[:1] != ["remove"] or not ("f" in flags or "--force" in rest):
        return
    from .worktree import has_work

    for p in [x for x in rest[1:] if not x.startswith("-")][:1]:
        path = targets.resolve(a.ctx, p) if UNKNOWN not in p else None
        if path and targets.in_temp(a.ctx, path):
            continue
        if path is None or has_work(path):
            shown = p.replace(UNKNOWN, "$…")
            a.add("ask", "git_destructive", f"{via} deletes the worktree {shown} with its uncommitted changes",
                  "Commit or stash in that worktree first, or remove it without --force.")


def _branch_reset(sub: str, rest: list[str], flags: str) -> _Verdict:
    """``checkout -B``/``switch -C``/``branch -f`` NAME START: an existing branch NAME moves to START, its
    own commits left only in the reflog; asked for a shared branch."""
    opts = {"checkout": ("-B",), "switch": ("-C", "--force-create"), "branch": ("-f", "--force")}.get(sub, ())
    at = next((i for i, x in enumerate(rest) if x in opts), None)
    if at is None or sub == "branch" and ("d" in flags or "D" in flags or "--delete" in rest):
        return None
    pos = [x for x in rest[at + (0 if sub == "branch" else 1):] if not x.startswith("-")]
    if len(pos) >= 2 and PROTECTED.match(pos[0]) and pos[1] not in (pos[0], "HEAD", "@"):
        return ("ask", f"resets the branch {pos[0]} to {pos[1]}; its commits not in {pos[1]} stay only in the "
                "reflog", "Confirm with the user, or `git branch backup` first.")
    return None


def _narrow(path: str) -> bool:
    """A named file, or anything below the top level of the tree (``src/views/home/``,
    ``.config/ghostty/config``): restoring it undoes edits in that one corner. A top-level folder
    (``src/``) is most of a project and is asked about; ``.`` is judged above."""
    p = path.removeprefix("./").rstrip("/")
    return bool(_NAMED_FILE.search(path)) or ("/" in p and not any(ch in p for ch in "*?[") and
                                               not p.startswith(("/", ":", "..")))


def _listed_paths(rest: list[str]) -> list[str]:
    """``--pathspec-from-file=F``: paths known only at run time (not narrow)."""
    for i, x in enumerate(rest):
        if x.startswith("--pathspec-from-file"):
            name = x.partition("=")[2] or (rest[i + 1] if i + 1 < len(rest) else "-")
            return [f"(the paths listed in {name})"]
    return []


def _restore_paths(rest: list[str], flags: str) -> list[str]:
    """The paths ``git restore`` overwrites in the working tree ([] for --staged alone)."""
    if ("--staged" in rest or "S" in flags) and not ("--worktree" in rest or "W" in flags):
        return []
    listed = _listed_paths(rest)
    if listed:
        return listed
    paths = [x for x in rest if not x.startswith("-")]
    for opt in ("-s", "--source", "--conflict"):
        if opt in rest:
            src_i = rest.index(opt) + 1
            if src_i < len(rest) and rest[src_i] in paths:
                paths.remove(rest[src_i])
    return paths


def _checkout_paths(rest: list[str], flags: str) -> list[str] | None:
    """The paths ``git checkout`` overwrites; [] for a branch switch; None for a forced switch (``-f``,
    also with ``-b``/``-B``: the new branch starts from a tree with the local changes thrown away)."""
    force = "f" in flags or "--force" in rest
    if "-b" in rest or "-B" in rest or "--orphan" in rest or "p" in flags or "--patch" in rest:
        return None if force and "p" not in flags and "--patch" not in rest else []
    listed = _listed_paths(rest)
    if listed:
        return listed
    if "--" in rest:
        paths = rest[rest.index("--") + 1:]
    else:
        pos = [x for x in rest if not x.startswith("-")]
        paths = [x for x in pos if x in (".", "*", ":/", "./") or _PATH_LIKE.search(x) and "/" not in x[:1]]
        if len(pos) >= 2 and not paths:
            paths = pos[1:]
    if not paths and ("f" in flags or "--force" in rest):
        return None
    return paths


# -- databases ---------------------------------------------------------------------------------

SQL_INSTEAD = "Run destructive SQL only with the user's explicit approval; add a WHERE clause or back up first."


def _report_sql(a: Analyzer, call: Call, found: list[tuple[str, str]]) -> None:
    for level, what in found:
        a.add(level, "sql_destructive", f"`{call.show()}` runs {what}", SQL_INSTEAD)


def _opt_values(args: list[str], short: tuple[str, ...], long: tuple[str, ...]) -> list[str]:
    vals = []
    for i, x in enumerate(args):
        if x in short or x in long:
            if i + 1 < len(args):
                vals.append(args[i + 1])
        else:
            for lg in long:
                if x.startswith(lg + "="):
                    vals.append(x[len(lg) + 1:])
            for sh in short:
                if x.startswith(sh) and len(x) > len(sh) and not x.startswith("--"):
                    vals.append(x[len(sh):])
    return vals


def _stdin_sql(call: Call) -> list[str]:
    return [call.stdin.text] if call.stdin.kind == "text" else []


def psql(a: Analyzer, call: Call) -> None:
    texts = _opt_values(call.args, ("-c",), ("--command",)) + _stdin_sql(call)
    for t in texts:
        _report_sql(a, call, sql.sql_findings(t))


def mysql(a: Analyzer, call: Call) -> None:
    texts = _opt_values(call.args, ("-e",), ("--execute",)) + _stdin_sql(call)
    for t in texts:
        _report_sql(a, call, sql.sql_findings(t))


def sqlite(a: Analyzer, call: Call) -> None:
    db, texts = _sqlite_args(call.args)
    texts += _stdin_sql(call)
    if _scratch_db(a, db) and not any("attach" in t.lower() for t in texts):
        return
    for t in texts:
        _report_sql(a, call, sql.sql_findings(t))


_SQLITE_VALUE_OPTS = frozenset({"-separator", "-newline", "-nullvalue", "-init", "-vfs", "-maxsize", "-lookaside",
                                "-pagecache", "-mmap"})


def _sqlite_args(args: list[str]) -> tuple[str, list[str]]:
    """(the database file, '' when none; the SQL texts: ``-cmd`` values and the words after the file)."""
    db: str | None = None
    texts: list[str] = []
    i = 0
    while i < len(args):
        x = args[i]
        if x == "-cmd" and i + 1 < len(args):
            texts.append(args[i + 1])
        elif x not in _SQLITE_VALUE_OPTS and not x.startswith("-"):
            if db is None:
                db = x
            elif x:
                texts.append(x)
            i += 1
            continue
        i += 2 if x == "-cmd" or x in _SQLITE_VALUE_OPTS else 1
    return db or "", texts


def _scratch_db(a: Analyzer, db: str) -> bool:
    """A database nothing else keeps: in memory (no file, ``:memory:``) or a file in a temp folder (an
    ``ATTACH`` of another file is judged as usual)."""
    if db in ("", ":memory:"):
        return True
    path = targets.resolve(a.ctx, db) if UNKNOWN not in db else None
    return bool(path) and targets.zone(a.ctx, path or "").kind == "temp"


def generic_sql(a: Analyzer, call: Call) -> None:
    texts = _opt_values(call.args, ("-e", "-q", "-Q"), ("--execute", "--query", "--command")) + _stdin_sql(call)
    for t in texts:
        _report_sql(a, call, sql.sql_findings(t))


def mongo(a: Analyzer, call: Call) -> None:
    texts = _opt_values(call.args, (), ("--eval",)) + _stdin_sql(call)
    for t in texts:
        for level, what in sql.mongo_findings(t):
            a.add(level, "sql_destructive", f"`{call.show()}` {what}", SQL_INSTEAD)


def redis(a: Analyzer, call: Call) -> None:
    args = call.args
    words = []
    skip = False
    for x in args:
        if skip:
            skip = False
            continue
        if x in ("-h", "-p", "-a", "-n", "-u", "--user", "--pass", "-s", "-r", "-i", "-d", "--tls-cert", "--cacert",
                 "--key", "--cert", "--sni", "-t"):
            skip = True
            continue
        if x.startswith("-"):
            continue
        words.append(x)
    found = sql.redis_findings(words)
    if call.inv.via_xargs and words and words[0].upper() in ("DEL", "UNLINK"):
        st = call.stdin
        if st.kind == "redis_keys" and any(r.strip("'\"") in ("*", "") for r in st.roots):
            found.append(("deny", f"{words[0]} of every key the scan lists erases the data set, like FLUSHDB"))
        else:
            found.append(("ask", f"{words[0]} of keys produced at run time"))
    if call.stdin.kind == "text":
        found += sql.redis_text_findings(call.stdin.text)
    for level, what in found:
        a.add(level, "sql_destructive", f"`{call.show()}`: {what}", SQL_INSTEAD)


def dropdb(a: Analyzer, call: Call) -> None:
    if any(x in ("--help", "-?", "--version", "-V") for x in call.args):
        return
    a.add("deny", "sql_destructive", f"`{call.show()}` deletes a whole PostgreSQL database", SQL_INSTEAD)


def mysqladmin(a: Analyzer, call: Call) -> None:
    if "drop" in [x.lower() for x in call.args]:
        a.add("deny", "sql_destructive", f"`{call.show()}` deletes a whole MySQL database", SQL_INSTEAD)
