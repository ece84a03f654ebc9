"""What a script will run: the file behind the call is read and the commands inside are judged with the
same rules as a command typed at the prompt.

- package scripts: ``npm run clean`` (``run-script``, ``rum``, ``urn``), ``npm test``/``start``/``stop``/
  ``restart``, a bare ``npm install``/``ci`` (the project's own install scripts), ``pnpm``/``yarn``/``bun``
  ``run X`` and their shorthands (``yarn clean``, ``pnpm build``, ``bun dev``): ``package.json`` in the folder
  or the nearest one above it;
- ``make [TARGET...]`` (``-C``, ``-f``, ``VAR=value``): the target's recipe after its prerequisites', with
  make's variables as far as they are plain (:mod:`.recipes`);
- ``just [RECIPE [ARGS]]`` and ``task [TASK...]`` (justfile, Taskfile.yml);
- ``./scripts/reset.sh``, ``bash x.sh``, ``sh x.sh``, ``source x.sh``: the file as shell commands (with ``$0``
  and the arguments it is given); ``python x.py``, ``node x.js`` and a path whose first line names Python or
  Node: the shell commands the file hands to os.system / subprocess / child_process as literal text.

Bounded: at most MAX_BYTES of one regular file at a time, a few ``stat`` calls to find it, nothing run,
nothing fetched, nothing cached. A file that cannot be read, is too big or cannot be understood leaves
the call judged as before. A finding from inside a file says which line of which file it comes from.
"""

from __future__ import annotations

import os
import posixpath

from . import recipes
from .credentials import head
from .lazyre import LazyRe
from .shell import UNKNOWN, parse

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call
    from .shell import Script

MAX_BYTES = 64 * 1024  # a package.json, Makefile, justfile, Taskfile, Python or Node file: read by regexes
MAX_SHELL = 16 * 1024  # a shell script: parsed whole by the shell lexer (~1 ms a KB on a quiet machine)
MAX_UP = 8  # folders climbed to find a package.json, justfile or Taskfile

PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn"})
MAKES = frozenset({"make", "gmake"})
RUNNERS = frozenset({"just", "task", "go-task"})
_SHELL_NAMES = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash"})


# -- reading ------------------------------------------------------------------------------------


def read(path: str | None, limit: int = MAX_BYTES) -> str | None:
    """The text of a regular file of at most ``limit`` bytes (None: missing, too big, binary, unreadable)."""
    if not path:
        return None
    data = head(path, limit + 1, limit)
    if data is None or b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def find_up(ctx_project: str | None, start: str | None, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` in ``start`` or the nearest folder above it (not above the project, at most
    MAX_UP folders)."""
    d = start
    for _ in range(MAX_UP):
        if not d or UNKNOWN in d:
            return None
        for n in names:
            p = posixpath.join(d, n)
            if os.path.isfile(p):
                return p
        if d == "/" or d == ctx_project:
            return None
        d = posixpath.dirname(d)
    return None


# -- judging text from a file -------------------------------------------------------------------


def judge(a: Analyzer, call: Call, found: list[recipes.Recipe], file: str, positional: list[str] | None = None) -> None:
    for r in found:
        judge_text(a, call, r, file, positional)


def judge_text(a: Analyzer, call: Call, r: recipes.Recipe, file: str, positional: list[str] | None = None) -> None:
    """Judge the shell text of ``r`` (from ``file``) as commands of their own, run in ``r.cwd``; every
    finding is prefixed with where it comes from."""
    from .analyze import MAX_DEPTH

    key = (file, r.line, r.text)
    if key in a.scripts_seen:
        return  # a script that runs itself again (`"a": "npm run a"`, `$(MAKE) clean` in clean)
    a.scripts_seen.add(key)
    depth = call.depth + 1
    if depth > MAX_DEPTH:
        a.add("ask", "nesting", f"`{call.show()}` runs scripts nested too deeply to judge",
              "Run the inner commands directly so they can be checked.")
        return
    saved = a.ctx
    a.ctx = saved.copy()
    a.ctx.cwd = r.cwd
    for k, v in enumerate(positional or [], 0):
        if k < 10:
            a.ctx.vars[str(k)] = v
    if positional:
        a.ctx.vars["BASH_SOURCE"] = positional[0]
    try:
        _walk(a, call, r, file, depth)
    finally:
        a.ctx = saved


# An ask only because a value is unknown until the file runs (a temp folder it makes, a variable a
# function sees when it is called, a folder it finds): in a file that is the program's own logic, and
# asking would stop most real scripts (bench/guardian_scripts.py). What the file names literally is
# judged, and a deny stays a deny (`rm -rf "$DIR/"` with DIR unset is still `rm -rf /`).
# tests/guardian/test_scripts.py holds every such ask of the rules to this pattern.
DOUBT = LazyRe(r"\bat run time\b|current directory is unknown")


def _walk(a: Analyzer, call: Call, r: recipes.Recipe, file: str, depth: int) -> None:
    from .rules_sys import fork_bombs

    sc = parse(r.text.replace(UNKNOWN, "$UNKNOWN_"))
    n = len(a.findings)
    fork_bombs(a, sc)
    _keep(a, n, call, r, file, r.line)
    for cmd, line in zip(sc.commands, command_lines(r.text, sc, r.line), strict=True):
        n = len(a.findings)
        a.command(cmd, sc, depth)
        _keep(a, n, call, r, file, line)


def _keep(a: Analyzer, n: int, call: Call, r: recipes.Recipe, file: str, line: int) -> None:
    """The findings after the first ``n``, without doubts, each prefixed with where it comes from."""
    kept = [f for f in a.findings[n:] if not (f.level == "ask" and DOUBT.search(f.why))]
    for f in kept:
        f.why = f"`{call.show()}` runs {r.label} ({file}, line {line}): {f.why}"
    a.findings[n:] = kept


def command_lines(text: str, sc: Script, first: int) -> list[int]:
    """The line each command of ``sc`` (parsed from ``text``, which starts at line ``first`` of its file)
    starts on: its first word found in the text after the previous command's, outside comments."""
    out: list[int] = []
    pos, line = 0, first
    for cmd in sc.commands:
        key = cmd.words[0].raw if cmd.words else (cmd.assigns[0][0] if cmd.assigns else "")
        i = _find_code(text, key, pos) if key else -1
        if i >= 0:
            line += text.count("\n", pos, i)
            pos = i + len(key)
            line += text.count("\n", i, pos)
            out.append(line - text.count("\n", i, pos))
        else:
            out.append(out[-1] if out else first)
    return out


def _find_code(text: str, key: str, pos: int) -> int:
    """The next place ``key`` stands as a word of code at or after ``pos`` (not in a comment); -1: none."""
    while True:
        i = text.find(key, pos)
        if i < 0:
            return -1
        start = text.rfind("\n", 0, i) + 1
        before = text[i - 1] if i else " "
        after = text[i + len(key)] if i + len(key) < len(text) else " "
        code_before = text[start:i]
        in_comment = "#" in code_before and code_before.lstrip().startswith("#")
        word_end = key[-1:].isalnum() or key[-1:] == "_"
        if not in_comment and not (before.isalnum() or before in "_-.") and not (
                word_end and (after.isalnum() or after == "_")):
            return i
        pos = i + 1


# -- files run directly -------------------------------------------------------------------------


def language(path: str, text: str) -> str | None:
    """sh, python or js from the file's first line (its ``#!``) or, without one, its name; None: other."""
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        words = first[2:].replace("/usr/bin/env", " ").replace(" -S ", " ").split()
        prog = posixpath.basename(words[0]) if words else ""
        if prog in _SHELL_NAMES:
            return "sh"
        if prog.startswith(("python", "pypy")):
            return "python"
        if prog in ("node", "nodejs", "bun", "deno", "tsx", "ts-node"):
            return "js"
        return None
    ext = posixpath.splitext(path)[1].lower()
    return {".sh": "sh", ".bash": "sh", ".py": "python", ".js": "js", ".mjs": "js", ".cjs": "js", ".ts": "js",
            "": "sh"}.get(ext)


def run_file(a: Analyzer, call: Call, word: str, args: list[str], lang: str | None = None) -> None:
    """``bash x.sh A B``, ``python x.py``, ``./x.sh``: judge what the file runs. ``lang``: how the call
    runs it (None: by its first line, as the kernel does)."""
    from .targets import resolve

    path = resolve(a.ctx, word) if word and UNKNOWN not in word else None
    text = read(path)
    if path is None or text is None:
        return
    lang = lang or language(path, text)
    if lang == "sh" and len(text.encode()) <= MAX_SHELL:
        judge_text(a, call, recipes.Recipe(1, text, "the script", a.ctx.cwd or "/"), path, [path, *args])
    elif lang in ("python", "js"):
        from .code import literal_shell

        for offset, cmd in literal_shell(text):
            judge_text(a, call, recipes.Recipe(recipes.line_at(text, offset), cmd, "a command in the file",
                                               a.ctx.cwd or "/"), path)


def run_path(a: Analyzer, call: Call) -> None:
    """A program named by its path (``./scripts/reset.sh``, ``bin/setup``): a script of the project."""
    run_file(a, call, call.inv.argv0, call.args)


# -- package scripts ----------------------------------------------------------------------------

_NPM_RUN = frozenset({"run", "run-script", "rum", "urn"})
_NPM_LIFECYCLE = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop",
                  "restart": "restart"}
_NPM_INSTALL = frozenset({"install", "i", "ci", "clean-install", "isntall", "add"})
# subcommands of yarn/pnpm/bun that are their own (anything else names a script)
_PM_BUILTINS = frozenset({
    "add", "audit", "autoclean", "bin", "cache", "check", "config", "create", "dedupe", "dlx", "exec", "env",
    "generate-lock-entry", "global", "help", "import", "info", "init", "install", "i", "licenses", "link", "list",
    "ls", "login", "logout", "node", "outdated", "owner", "pack", "patch", "policies", "prune", "publish",
    "rebuild", "remove", "rm", "root", "set", "store", "tag", "team", "unlink", "unplug", "up", "update",
    "upgrade", "upgrade-interactive", "version", "versions", "why", "workspace", "workspaces", "x", "test",
    "fetch", "setup", "server", "plugin", "constraints", "explain", "npm", "search", "sync", "pm",
    "completions", "repl",
})
_BUN_BUILTINS = _PM_BUILTINS | {"build", "test", "upgrade", "run"}
_PM_VALUE_OPTS = frozenset({"--prefix", "-C", "--dir", "--cwd", "--filter", "-F", "-w", "--workspace",
                            "--loglevel", "--registry", "--userconfig", "--cache", "--reporter"})
_PM_FOLDER_OPTS = frozenset({"--prefix", "-C", "--dir", "--cwd"})


def package(a: Analyzer, call: Call) -> None:
    """npm / pnpm / yarn: the package.json scripts the call runs."""
    folder, words, many = _pm_words(a, call.args)
    if many:
        return  # several workspaces' scripts: judged as the call alone
    names, extra = _pm_scripts(call.name, words)
    if not names:
        return
    file = find_up(a.ctx.project, folder, ("package.json",))
    text = read(file)
    found = recipes.package_scripts(text, names, posixpath.dirname(file or "/"), extra) if text else None
    if file and found:
        judge(a, call, found, file)


def _pm_words(a: Analyzer, args: list[str]) -> tuple[str | None, list[str], bool]:
    """(the folder the call works in, its words without options, whether it runs in several workspaces)."""
    from .targets import resolve

    folder = a.ctx.cwd
    words: list[str] = []
    many = False
    i = 0
    while i < len(args):
        x = args[i]
        if x == "--":
            words += args[i:]
            break
        opt, _eq, val = x.partition("=")
        if opt in _PM_VALUE_OPTS:
            val = val or (args[i + 1] if i + 1 < len(args) else "")
            i += 1 if _eq else 2
            if opt in _PM_FOLDER_OPTS:
                folder = resolve(a.ctx, val)
            else:
                many = True
            continue
        if x in ("-r", "--recursive", "-ws", "--workspaces", "--all", "-A"):
            many = True
        elif not x.startswith("-"):
            words.append(x)
        i += 1
    return folder, words, many


def _pm_scripts(pm: str, words: list[str]) -> tuple[list[str], list[str]]:
    """(the package.json scripts a package manager call runs, the arguments passed to the last one)."""
    if not words:
        return (list(recipes.INSTALL_SCRIPTS) if pm in ("yarn",) else []), []
    sub, rest = words[0], [w for w in words[1:] if w != "--"]
    if sub in _NPM_RUN:
        return (rest[:1], rest[1:]) if rest else ([], [])
    if sub in _NPM_LIFECYCLE:
        return [_NPM_LIFECYCLE[sub]], rest
    if sub in _NPM_INSTALL and sub != "add" and not rest:
        return list(recipes.INSTALL_SCRIPTS), []
    if pm != "npm" and sub not in _PM_BUILTINS:
        return [sub], rest  # `yarn clean`, `pnpm lint`
    return [], []


def bun(a: Analyzer, call: Call) -> bool:
    """``bun run X`` / ``bun X``: a package.json script when the project has one by that name (True:
    judged here); else bun runs a file, judged as an interpreter call."""
    args = [x for x in call.args if not x.startswith("-")]
    if not args or args[0] in _BUN_BUILTINS and args[0] != "run":
        return False
    name, extra = (args[1:2], args[2:]) if args[0] == "run" else (args[:1], args[1:])
    if not name or posixpath.splitext(name[0])[1]:
        return False
    file = find_up(a.ctx.project, a.ctx.cwd, ("package.json",))
    text = read(file)
    found = recipes.package_scripts(text, name, posixpath.dirname(file or "/"), extra) if text else None
    if not (file and found):
        return False
    judge(a, call, found, file)
    return True


# -- make, just, task ---------------------------------------------------------------------------

_MAKE_VALUE_OPTS = frozenset({"-C", "--directory", "-f", "--file", "--makefile", "-I", "--include-dir", "-o",
                              "--old-file", "--assume-old", "-W", "--what-if", "--new-file", "--assume-new",
                              "-l", "--load-average", "--max-load", "-E", "--eval", "-O", "--output-sync",
                              "--jobserver-style"})
_MAKE_NOTHING = frozenset({"-n", "--just-print", "--dry-run", "--recon", "-q", "--question", "-v", "--version",
                           "-h", "--help", "-p", "--print-data-base"})
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")


def make(a: Analyzer, call: Call) -> None:
    opts, goals, overrides = _make_args(call.args)
    if any(o in _MAKE_NOTHING or o.startswith("-") and not o.startswith("--") and o.strip("-").isalpha()
           and ("n" in o or "q" in o) for o in opts):
        return  # prints what it would run, runs nothing
    folder = a.ctx.cwd
    file = None
    for o, v in zip(opts, opts[1:] + [""], strict=False):
        if o in ("-C", "--directory") and v:
            folder = _join(folder, v)
        elif o in ("-f", "--file", "--makefile") and v:
            file = v
    if not folder:
        return
    path = posixpath.normpath(posixpath.join(folder, file)) if file else next(
        (p for p in (posixpath.join(folder, n) for n in MAKEFILES) if os.path.isfile(p)), None)
    text = read(path)
    if path is None or text is None:
        return
    mk = recipes.parse_makefile(text, folder)
    mk.vars.update(overrides)
    goal = recipes.make_default_goal(mk)
    judge(a, call, recipes.make_recipes(mk, goals or ([goal] if goal else [])), path)


def _join(folder: str | None, path: str) -> str | None:
    """``path`` from ``folder`` (an absolute path as it is), normalised; None when it cannot be known."""
    if UNKNOWN in path or not path.startswith("/") and not folder:
        return None
    return posixpath.normpath(posixpath.join(folder or "/", path))


def _make_args(args: list[str]) -> tuple[list[str], list[str], dict[str, str]]:
    """(options with their values, in order; goals; ``VAR=value`` overrides)."""
    opts: list[str] = []
    goals: list[str] = []
    overrides: dict[str, str] = {}
    i = 0
    while i < len(args):
        x = args[i]
        if x.startswith("-"):
            name, eq, val = x.partition("=")
            if name in _MAKE_VALUE_OPTS and not eq:
                opts += [name, args[i + 1] if i + 1 < len(args) else ""]
                i += 2
                continue
            if x[:2] in ("-C", "-f") and len(x) > 2 and not x.startswith("--"):
                opts += [x[:2], x[2:]]
            else:
                opts += [name, val] if eq else [x]
        elif "=" in x and x.split("=", 1)[0].replace("_", "").isalnum():
            k, v = x.split("=", 1)
            overrides[k] = v
        elif not x.isdigit():  # `make -j 4 all`: the job count
            goals.append(x)
        i += 1
    return opts, goals, overrides


JUSTFILES = ("justfile", "Justfile", ".justfile", "JUSTFILE")
_JUST_NOTHING = frozenset({"-n", "--dry-run", "-l", "--list", "--summary", "-s", "--show", "--evaluate",
                           "--dump", "--help", "-h", "--version", "-V", "--init", "--choose", "--fmt",
                           "--variables", "--groups", "--edit", "-e", "--completions"})
_JUST_VALUE_OPTS = frozenset({"-f", "--justfile", "-d", "--working-directory", "--set", "--shell",
                              "--shell-arg", "--color", "--dotenv-filename", "--dotenv-path", "-E"})


def just(a: Analyzer, call: Call) -> None:
    args = call.args
    if any(x in _JUST_NOTHING for x in args):
        return
    file, folder, words = _runner_args(a, args, ("-f", "--justfile"), _JUST_VALUE_OPTS)
    path = file or find_up(a.ctx.project, folder, JUSTFILES)
    text = read(path)
    if path is None or text is None:
        return
    jf = recipes.parse_justfile(text, posixpath.dirname(path))
    for w in [w for w in words if "=" in w]:
        jf.vars[w.split("=", 1)[0]] = w.split("=", 1)[1]
    words = [w for w in words if "=" not in w]
    calls: list[tuple[str, list[str]]] = []
    while words:
        name = jf.aliases.get(words[0], words[0])
        n = len(jf.recipes[name][1]) if name in jf.recipes else 0
        calls.append((name, words[1:1 + n]))
        words = words[1 + n:]
    judge(a, call, recipes.just_recipes(jf, calls or ([(jf.first, [])] if jf.first else [])), path)


TASKFILES = ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml",
             "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml")
_TASK_NOTHING = frozenset({"-n", "--dry", "-l", "--list", "-a", "--list-all", "--summary", "-h", "--help",
                           "--version", "-i", "--init", "--status", "--json", "-g", "--global"})
_TASK_VALUE_OPTS = frozenset({"-d", "--dir", "-t", "--taskfile", "-o", "--output", "-C", "--concurrency",
                              "--interval", "--sort"})


def task(a: Analyzer, call: Call) -> None:
    args = call.args
    cli = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    if any(x in _TASK_NOTHING for x in args):
        return
    file, folder, words = _runner_args(a, args, ("-t", "--taskfile"), _TASK_VALUE_OPTS)
    path = file or find_up(a.ctx.project, folder, TASKFILES)
    text = read(path)
    tf = recipes.parse_taskfile(text, posixpath.dirname(path)) if path and text else None
    if path is None or tf is None:
        return
    values = {w.split("=", 1)[0]: w.split("=", 1)[1] for w in words if "=" in w}
    values["CLI_ARGS"] = " ".join(cli)
    names = [w for w in words if "=" not in w] or ["default"]
    judge(a, call, recipes.task_recipes(tf, names, values), path)


def _runner_args(a: Analyzer, args: list[str], file_opts: tuple[str, str],
                 value_opts: frozenset[str]) -> tuple[str | None, str | None, list[str]]:
    """(the file named by ``-f``/``-t``, the folder named by ``-d`` (else the cwd); the other words)."""
    file = None
    folder = a.ctx.cwd
    words: list[str] = []
    i = 0
    while i < len(args):
        x = args[i]
        name, eq, val = x.partition("=")
        if name in value_opts:
            val = val if eq else (args[i + 1] if i + 1 < len(args) else "")
            i += 1 if eq else 2
            if name in file_opts:
                file = _join(a.ctx.cwd, val)
            elif name in ("-d", "--dir", "--working-directory"):
                folder = _join(a.ctx.cwd, val)
            continue
        if not x.startswith("-"):
            words.append(x)
        i += 1
    return file, folder, words
