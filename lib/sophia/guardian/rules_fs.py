"""Deleting and overwriting files: rm, find -delete, xargs rm, rsync --delete, tee/cp/mv/sed -i, chmod/chown.

A recursive delete is judged by where its target lies (:func:`targets.zone`): the project's own
subdirectories and temp dirs are fine; ``/``, system dirs, HOME, top-level folders of HOME,
credential dirs, the project root or its ancestors and the kit itself are denied; other places in
the user's own folders are asked about.
"""

from __future__ import annotations

import posixpath
import re

from . import rules_self, targets
from .lazyre import LazyRe
from .shell import UNKNOWN

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

DENY_RECURSIVE = frozenset({"root", "system", "home", "home_sensitive", "home_top", "project_root",
                            "project_ancestor", "project_git", "kit", "elsewhere_top"})
ASK_RECURSIVE = frozenset({"home_cache", "home_other", "elsewhere", "temp_root", "unknown"})
_WHAT = {
    "root": "the whole filesystem", "system": "a system directory", "home": "your home directory",
    "home_sensitive": "credentials or shell start-up files", "home_top": "a top-level folder of your home",
    "project_root": "the whole project", "project_ancestor": "a folder that contains the project",
    "project_git": "the project's git history", "kit": "the Sophia kit itself",
    "elsewhere_top": "a top-level directory", "home_cache": "a folder in your home outside the project",
    "home_other": "a folder in your home outside the project", "elsewhere": "a path outside the project",
    "temp_root": "a whole temp directory", "unknown": "a path that is only known at run time",
    "system_cache": "the machine's cache",
}
INSTEAD_DELETE = "Delete only specific paths inside the project or a temp dir, or ask the user to run it."
_BROAD_GLOB = frozenset({"*", ".*", "*.*", ".[!.]*", "..?*", "**", "{*,.*}", ".??*", "[!.]*", "*/", UNKNOWN})


def _team_delete(a: Analyzer, path: str, via: str) -> bool:
    """Deleting or moving away a repository's team memory (or the folder holding it) asks; True when it did."""
    if not targets.team_memory(a.ctx, targets.known_prefix(path)[0], holding=True):
        return False
    a.add("ask", rules_self.TEAM_RULE, f"{via} removes {path}, the team's shared memory", rules_self.TEAM_INSTEAD)
    return True


def judge_delete(a: Analyzer, target: str, recursive: bool, via: str, filtered: bool = False,
                 tested: bool = False) -> None:
    """Judge deleting ``target`` (a word's value). ``filtered``: only matching entries (find -name);
    ``tested``: find tests of any kind (-mtime +7 is enough to make clearing a temp dir routine)."""
    if not target:
        return
    if target.startswith(UNKNOWN):
        _delete_unknown(a, target, recursive, via, filtered)
        return
    path = targets.resolve(a.ctx, target)
    if path is None:
        if recursive:
            a.add("ask", "rm_recursive", f"`{via}` deletes {target} but the current directory is unknown",
                  "Use an absolute path inside the project.")
        return
    if _team_delete(a, path, f"`{via}`"):
        return
    kind, prefix, contents = _delete_zone(a, path)
    if (contents or filtered or tested) and kind in ("temp_root", "project", "temp"):
        return
    shown = path if not contents else prefix.rstrip("/") + "/*"
    if recursive or contents and not filtered and kind in ("root", "system", "home", "home_top", "home_sensitive", "kit"):
        _delete_tree(a, kind, shown, via, filtered, tested)
    else:
        _delete_plain(a, kind, shown, via, path, prefix, contents)


def _delete_unknown(a: Analyzer, target: str, recursive: bool, via: str, filtered: bool) -> None:
    """A target that starts with a value known only at run time (``$DIR/``)."""
    rest = target.lstrip(UNKNOWN)
    if rest in ("/", "/*", "/.*", "/**") and recursive:
        a.add("deny", "rm_recursive", f"`{via}` deletes {rest.replace(UNKNOWN, '')} if the variable in "
              "front is empty (the classic `rm -rf \"$DIR/\"` disaster)",
              "Check the variable is set (`${DIR:?}`) and name the path explicitly.")
    elif recursive and not filtered:
        a.add("ask", "rm_recursive", f"`{via}` deletes a path only known at run time ({_show(target)})",
              "Name the directory explicitly so it can be checked.")


def _delete_zone(a: Analyzer, path: str) -> tuple[str, str, bool]:
    """(zone kind, known prefix, whether a broad glob takes everything inside the prefix) of a delete."""
    prefix, wild = targets.known_prefix(path)
    if targets.in_cache(a.ctx, path):
        return "system_cache", prefix, False
    if not wild:
        return targets.zone(a.ctx, path).kind, prefix, False
    seg, *rest = path[len(prefix):].lstrip("/").split("/")
    if _broad(seg) and not any(r and not _broad(r) for r in rest):
        return targets.zone(a.ctx, prefix).kind, prefix, True
    # a narrow glob (``tools-*``), or a broad one narrowed by a name below it (``*/__pycache__``): the
    # entries it matches lie inside the prefix
    kind = targets.zone(a.ctx, prefix.rstrip("/") + "/" + "/".join(["_glob_", *rest])).kind
    return ("home_other" if kind == "home_cache" else kind), prefix, False


def _broad(seg: str) -> bool:
    """A path segment that matches every entry of its folder (``*``, ``.*``, an unknown value)."""
    return seg in _BROAD_GLOB or seg.startswith(UNKNOWN) and seg.strip(UNKNOWN) in ("", "*")


def _delete_tree(a: Analyzer, kind: str, shown: str, via: str, filtered: bool, tested: bool) -> None:
    """A recursive delete (or a broad glob over a place that matters)."""
    if kind == "project_root" and tested and not filtered:
        a.add("ask", "find_delete", f"`{via}` deletes every file the time/size/type tests match across the "
              "whole project", "Name the files (-name) or the folder to clean.")
    elif kind in DENY_RECURSIVE and filtered and kind in ("home", "home_top", "project_root", "project_ancestor",
                                                           "elsewhere_top"):
        if kind != "project_root":
            a.add("ask", "find_delete", f"`{via}` deletes matching files across {shown} ({_WHAT[kind]})",
                  "Limit it to the project or a temp dir.")
    elif kind in DENY_RECURSIVE:
        a.add("deny", "rm_recursive", f"`{via}` would delete {shown} ({_WHAT[kind]})", INSTEAD_DELETE)
    elif kind in ASK_RECURSIVE:
        what = f"matching files under {shown}" if filtered else shown
        a.add("ask", "rm_recursive", f"`{via}` deletes {what}, {_WHAT[kind]}",
              "Confirm with the user that this folder should go.")


def _delete_plain(a: Analyzer, kind: str, shown: str, via: str, path: str, prefix: str, contents: bool) -> None:
    """A plain (non-recursive) delete."""
    if kind in ("home_sensitive", "kit"):
        a.add("deny", "sensitive_write", f"`{via}` deletes {shown} ({_WHAT[kind]})",
              "Leave credentials, shell start-up files and the kit alone.")
    elif kind in ("system", "root") and (targets.system_write_denied(path) or contents or path == "/"):
        a.add("deny", "rm_recursive", f"`{via}` deletes the system file {shown}", INSTEAD_DELETE)
    elif kind == "system":
        a.add("ask", "rm_recursive", f"`{via}` deletes {shown} outside your home and project", INSTEAD_DELETE)
    elif contents and kind in ("project_root", "home", "home_top"):
        a.add("ask", "rm_recursive", f"`{via}` deletes every file in {prefix}", "Name the files to delete.")


def _show(s: str) -> str:
    return s.replace(UNKNOWN, "$…")


def rm(a: Analyzer, call: Call) -> None:
    recursive = call.name in ("rimraf", "del-cli", "trash", "trash-put")
    targets_: list[str] = []
    end = False
    for arg in call.args:
        if not end and arg == "--":
            end = True
            continue
        if not end and arg.startswith("--"):
            if arg in ("--recursive", "--no-preserve-root"):
                recursive = True
            continue
        if not end and arg.startswith("-") and len(arg) > 1:
            if "r" in arg or "R" in arg:
                recursive = True
            continue
        targets_.append(arg)
    via = call.show()
    if call.inv.via_xargs:
        from_stdin(a, call, recursive, via)
    for t in targets_:
        judge_delete(a, t, recursive, via)


def from_stdin(a: Analyzer, call: Call, recursive: bool, via: str) -> None:
    """``... | xargs rm``: the deleted paths come from the producer."""
    st = call.stdin
    if st.kind == "find":
        for root in st.roots:
            judge_delete(a, root, True, via, filtered=st.filtered)
    elif st.kind == "text":
        for t in st.text.split():
            judge_delete(a, t, recursive, via)
    elif st.kind == "ls":
        for root in st.roots or ["."]:
            judge_delete(a, root.rstrip("/") + "/*", recursive, via)
    elif recursive:
        a.add("ask", "xargs_rm", f"`{via}` deletes a list of paths produced at run time",
              "Delete named paths inside the project instead.")


_FIND_ACTIONS_DELETE = ("-delete",)
_FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")
_FIND_TESTS = ("-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename", "-iwholename",
               "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-user",
               "-group", "-perm", "-links", "-inum", "-samefile", "-lname", "-ilname", "-uid", "-gid", "-used",
               "-type", "-xtype")
# Tests that pick entries by what they are (name, path, identity, emptiness). Time, size, type, owner and
# depth tests do not make a deletion targeted: `find ~ -type f -mtime +30 -delete` still empties a home.
_FIND_NARROWING = ("-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename", "-iwholename",
                   "-inum", "-samefile", "-lname", "-ilname", "-empty")


def narrows(expr: list[str]) -> bool:
    """Whether a find expression selects specific entries (a name or path test that is not ``*``)."""
    return any(x in _FIND_NARROWING for x in expr) and not _everything(expr)


def find_roots(args: list[str]) -> tuple[list[str], list[str]]:
    roots = []
    i = 0
    while i < len(args) and args[i] in ("-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3", "-D"):
        i += 2 if args[i] == "-D" else 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", "!", "\\("):
        roots.append(args[i])
        i += 1
    return roots or ["."], args[i:]


def find(a: Analyzer, call: Call) -> None:
    roots, expr = find_roots(call.args)
    deletes = "-delete" in expr
    # find reads its expression left to right: a name test after -delete narrows nothing it deleted
    filtered = narrows(expr[:expr.index("-delete")] if deletes else expr)
    i = 0
    while i < len(expr):
        if expr[i] in _FIND_EXEC:
            j = i + 1
            while j < len(expr) and expr[j] not in (";", "+", "\\;"):
                j += 1
            deletes = _find_exec(a, call, expr[i + 1:j], roots, filtered) or deletes
            i = j
        i += 1
    via = call.show()
    if not deletes:
        if any(UNKNOWN in x for x in _find_actions(expr)) or UNKNOWN in roots[1:]:
            _find_unknown_action(a, [r for r in roots if r != UNKNOWN], via, filtered)
        return
    if _git_locks_only(roots, expr):
        return
    for r in roots:
        judge_delete(a, r, True, via, filtered=filtered, tested=any(x in _FIND_TESTS for x in expr))


def _find_exec(a: Analyzer, call: Call, sub: list[str], roots: list[str], filtered: bool) -> bool:
    """``-exec``/``-execdir``/``-ok`` CMD ... ``{}``: True when CMD deletes what find lists (judged with the
    find's roots, below); any other CMD is judged as the command it runs on the entries found (an unfiltered
    find lists its roots themselves)."""
    from .rules_exec import shell_quote
    from .wrappers import strip

    inv = strip(sub)
    if inv.name in ("rm", "shred", "unlink", "rmdir", "srm"):
        if any(x != "{}" and not x.startswith("-") for x in inv.args):  # `-exec rm -rf / {} +`: a path of its own
            a.script(" ".join(shell_quote(x.replace("{}", "found")) for x in sub), call.depth + 1)
        return True
    found = roots if not filtered else [r.rstrip("/") + "/found" for r in roots]
    for value in found[:4]:
        a.script(" ".join(shell_quote(x.replace("{}", value)) for x in sub), call.depth + 1)
    return False


# find's tests and options that take a value (the value is not an action)
_FIND_VALUED = frozenset({*_FIND_TESTS, "-maxdepth", "-mindepth", "-printf", "-fprintf", "-fprint", "-fprint0",
                          "-fls", "-newermt", "-newerat", "-newerct", "-context", "-files0-from", "-fstype"})


def _find_actions(expr: list[str]) -> list[str]:
    """The words of a find expression that are not the value of a test (where an action could hide)."""
    out = []
    skip = False
    for x in expr:
        if skip:
            skip = False
            continue
        skip = x in _FIND_VALUED
        out.append(x)
    return out


def _find_unknown_action(a: Analyzer, roots: list[str], via: str, filtered: bool) -> None:
    """``find ~ $(...)``: an option built at run time could be ``-delete``: asked where a delete would be
    stopped."""
    from .decision import Finding

    probe = type(a)(a.ctx)
    for r in roots:
        judge_delete(probe, r, True, via, filtered=filtered)
    if probe.findings:
        a.findings.append(Finding("ask", "find_delete", f"`{via}` takes an option known only at run time (it could "
                                  "be -delete) over " + ", ".join(roots), "Write the find expression out in full."))


def _git_locks_only(roots: list[str], expr: list[str]) -> bool:
    """``find .git -name '*.lock' -delete``: clearing git's stale lock files (what a crashed git leaves
    behind and its own error message says to remove), as ``rm -f .git/index.lock`` is."""
    names = [expr[i + 1] for i, x in enumerate(expr[:-1]) if x in ("-name", "-iname")]
    return (bool(names) and all(n.endswith(".lock") for n in names) and "-o" not in expr
            and all("/.git/" in r + "/" or r.rstrip("/").endswith(".git") for r in roots))


def _everything(expr: list[str]) -> bool:
    """-name '*' filters nothing."""
    for i, x in enumerate(expr[:-1]):
        if x in ("-name", "-iname", "-path") and expr[i + 1] in ("*", "*.*", ".*"):
            return True
    return False


def fd(a: Analyzer, call: Call) -> None:
    args = call.args
    for flag in ("-x", "--exec", "-X", "--exec-batch"):
        if flag in args:
            k = args.index(flag)
            from .wrappers import strip

            inv = strip(args[k + 1:])
            if inv.name in ("rm", "shred", "unlink"):
                pos = [x for x in args[:k] if not x.startswith("-")]
                root = pos[1] if len(pos) > 1 else "."
                judge_delete(a, root, True, call.show(), filtered=bool(pos))


def rsync_dry_run(args: list[str]) -> bool:
    """``rsync -n``/``--dry-run``: rsync lists what it would do and changes nothing."""
    return any(x == "--dry-run" or x.startswith("-") and not x.startswith("--") and "n" in x[1:] for x in args)


def rsync(a: Analyzer, call: Call) -> None:
    args = call.args
    if rsync_dry_run(args):
        return
    deletes = any(x.startswith("--del") or x == "--remove-source-files" for x in args)
    pos = []
    skip = False
    for i, x in enumerate(args):
        if skip:
            skip = False
            continue
        if x in ("-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--exclude-from", "--files-from",
                 "--include-from", "--backup-dir", "--link-dest", "--compare-dest", "--chmod", "--chown", "-T"):
            skip = True
            continue
        if x.startswith("-"):
            continue
        pos.append(x)
        del i
    if len(pos) < 2:
        return
    dest = pos[-1]
    via = call.show()
    if re.match(r"^[\w.@-]+:", dest) or dest.startswith("rsync://"):
        if deletes:
            a.add("ask", "rsync_delete", f"`{via}` mirrors onto a remote host and deletes what is not in the source",
                  "Confirm the remote target with the user.")
        return
    if deletes:
        d = dest if dest.endswith("/") else dest
        judge_delete(a, d.rstrip("/") + "/*" if d.rstrip("/") else "/", True, via)
        if "--remove-source-files" in args:
            for s in pos[:-1]:
                judge_delete(a, s, True, via, filtered=True)
    else:
        judge_write(a, dest, via, copy=True)


def judge_write(a: Analyzer, target: str, via: str, copy: bool = False, existing: bool = False) -> None:
    """Judge writing ``target``; ``existing``: the tool only changes a file that is there (Edit)."""
    if not target:
        return
    if target.startswith(UNKNOWN):
        return
    path = targets.resolve(a.ctx, target)
    if path is None:
        return
    prefix, wild = targets.known_prefix(path)
    if wild:
        path = prefix
    lv = targets.write_level(a.ctx, path, existing=existing)
    if lv is None:
        return
    level, why = lv
    if targets.zone(a.ctx, path).kind == "kit":
        a.add(level, rules_self.RULE, f"{via} {why}", rules_self.INSTEAD)
        return
    team = targets.team_memory(a.ctx, path)
    rule = "disk" if "disk device" in why else rules_self.TEAM_RULE if team else "sensitive_write"
    instead = {"disk": "Never write to disk devices; use an image file.", rules_self.TEAM_RULE: rules_self.TEAM_INSTEAD
               }.get(rule, "Tell the user what to change and let them do it.")
    a.add(level, rule, f"{via} {why}", instead)


def _positional(args: list[str], takes: tuple[str, ...] = ()) -> list[str]:
    out = []
    skip = False
    end = False
    for x in args:
        if skip:
            skip = False
            continue
        if not end and x == "--":
            end = True
            continue
        if not end and x in takes:
            skip = True
            continue
        if not end and x.startswith("-") and x != "-":
            continue
        out.append(x)
    return out


def tee(a: Analyzer, call: Call) -> None:
    for t in _positional(call.args):
        judge_write(a, t, f"`{call.show()}`")


def copy_move(a: Analyzer, call: Call) -> None:
    args = call.args
    target_dir = None
    for i, x in enumerate(args):
        if x in ("-t", "--target-directory") and i + 1 < len(args):
            target_dir = args[i + 1]
        elif x.startswith("--target-directory="):
            target_dir = x.split("=", 1)[1]
    pos = _positional(args, ("-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner",
                             "-g", "--group"))
    if target_dir:
        dest, srcs = target_dir, pos
    elif len(pos) >= 2:
        dest, srcs = pos[-1], pos[:-1]
    else:
        return
    via = f"`{call.show()}`"
    if call.name == "cp" and len(srcs) == 1 and _backup_beside(a, srcs[0], dest):
        return
    judge_write(a, dest, via, copy=True)
    into_bin = targets.is_bin_folder(a.ctx, targets.resolve(a.ctx, dest) or "")
    for s in srcs:
        if dest.endswith("/") or len(srcs) > 1 or target_dir or into_bin:
            judge_write(a, dest.rstrip("/") + "/" + posixpath.basename(s.rstrip("/")), via, copy=True)
    if call.name == "mv":
        for s in srcs:
            _move_away(a, s, via)


_BACKUP_SUFFIX = LazyRe(r"^(?:[._-]?(?:bak|backup|orig|old|save|sav|prev|pre-\w+)(?:[._-][\w.-]*)?|~)$")


def _backup_beside(a: Analyzer, src: str, dest: str) -> bool:
    """``cp X X.backup``: a copy beside a file under a backup name changes nothing that runs (programs
    read ``X``, and their config folders skip such names), wherever ``X`` lies; not for credentials."""
    s, d = targets.resolve(a.ctx, src), targets.resolve(a.ctx, dest)
    if not s or not d or UNKNOWN in s + d or posixpath.dirname(s) != posixpath.dirname(d) or \
            targets.is_secret_path(s):
        return False
    base, copy = posixpath.basename(s), posixpath.basename(d)
    return copy.startswith(base) and bool(_BACKUP_SUFFIX.match(copy[len(base):]))


def _move_away(a: Analyzer, src: str, via: str) -> None:
    """``mv`` takes ``src`` away from where it is: judged like deleting it."""
    p = targets.resolve(a.ctx, src)
    if p is None or _team_delete(a, p, via):
        return
    kind, _prefix, contents = _delete_zone(a, p)  # a narrow glob (``proj/tools-*``) moves entries inside
    if kind in ("root", "home", "home_sensitive", "kit") or (
            kind == "system" and targets.system_write_denied(p)):
        a.add("deny", "sensitive_write", f"{via} moves away {src} ({_WHAT.get(kind, kind)})",
              "Leave it in place.")
    elif kind in ("project_root", "project_ancestor"):
        what = "everything in the project" if contents else "the project directory itself"
        a.add("ask", "rm_recursive", f"{via} moves {what}", "Confirm with the user.")


def link(a: Analyzer, call: Call) -> None:
    pos = _positional(call.args, ("-t", "--target-directory", "-S", "--suffix"))
    if len(pos) >= 2:
        judge_write(a, pos[-1], f"`{call.show()}`")


def sed(a: Analyzer, call: Call) -> None:
    args = call.args
    inplace = any(re.match(r"^-[a-zA-Z]*i", x) or x.startswith("--in-place") for x in args)
    if not inplace:
        return
    if "-i" in args and args.index("-i") + 1 < len(args) and args[args.index("-i") + 1] == "":
        k = args.index("-i")  # BSD/macOS `sed -i '' ...`: the empty word is the backup suffix, not the script
        args = args[:k + 1] + args[k + 2:]
    has_script_opt = any(x in ("-e", "-f", "--expression", "--file") or x.startswith(("--expression=", "--file="))
                         for x in args)
    pos = _positional(args, ("-e", "-f", "--expression", "--file", "-l", "--line-length"))
    files = pos if has_script_opt else pos[1:]
    for f in files:
        judge_write(a, f, f"`{call.show()}`")


def truncate(a: Analyzer, call: Call) -> None:
    for t in _positional(call.args, ("-s", "--size", "-r", "--reference")):
        judge_write(a, t, f"`{call.show()}`")


_WIDE_MODE = LazyRe(r"^(?:0?[0-7]?777|0?[0-7]?666|[ugoa]*[+=][rwxXst]*w[rwxXst]*|a\+rwx|o\+w|[ugoa]*=rwx)$")


def perms(a: Analyzer, call: Call) -> None:
    args = call.args
    recursive = any(x in ("-R", "--recursive") or re.match(r"^-[a-zA-Z]*R", x) for x in args)
    pos = _positional(args, ("--reference",))
    if call.name == "chmod":
        raw_mode = [x for x in args if re.match(r"^-[rwxXst]+$", x)]
        if raw_mode:
            pos = raw_mode[:1] + pos
    if len(pos) < 2:
        return
    mode, paths = pos[0], pos[1:]
    wide = call.name == "chmod" and bool(_WIDE_MODE.match(mode)) and ("777" in mode or "666" in mode or "o" in mode
                                                                      or "a" in mode or mode.startswith("+w"))
    setuid = call.name == "chmod" and ("s" in mode and "+" in mode or re.match(r"^[2467][0-7]{3}$", mode) is not None)
    via = f"`{call.show()}`"
    for p in paths:
        rp = targets.resolve(a.ctx, p)
        if rp is None:
            if recursive and p.startswith(UNKNOWN):
                a.add("ask", "chmod_chown", f"{via} changes permissions recursively on a path known only at run time")
            continue
        prefix, wild = targets.known_prefix(rp)
        z = targets.zone(a.ctx, prefix if wild else rp)
        if recursive and z.kind in ("root", "system", "home", "home_top", "home_sensitive", "project_ancestor",
                                    "kit", "elsewhere_top"):
            a.add("deny", "chmod_chown", f"{via} changes ownership/permissions of everything under {rp} "
                  f"({_WHAT.get(z.kind, z.kind)})", "Change only the specific files that need it.")
        elif wide and z.kind in ("root", "system", "home", "home_sensitive", "kit", "home_top", "project_ancestor"):
            a.add("deny", "chmod_chown", f"{via} makes {rp} writable by everyone ({_WHAT.get(z.kind, z.kind)})",
                  "Use the narrowest mode that works (e.g. 755/644) on your own files.")
        elif setuid:
            a.add("ask", "chmod_chown", f"{via} sets a setuid/setgid bit on {rp}")
        elif z.kind in ("root", "system"):
            a.add("ask", "chmod_chown", f"{via} changes permissions of the system path {rp}",
                  "Confirm with the user.")
        elif recursive and wide and z.kind in ("project_root", "home_other", "home_cache"):
            a.add("ask", "chmod_chown", f"{via} makes everything under {rp} world-writable")
