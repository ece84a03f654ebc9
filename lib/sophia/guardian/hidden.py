"""Commands hidden behind other commands: what ``xargs`` and ``parallel`` run with the values they are
given, and variables whose value is a command another program runs (``PAGER``, ``GIT_SSH_COMMAND`` ...).

Each is judged as the command it becomes: ``echo / | xargs -I{} sh -c 'rm -rf {}'`` is ``sh -c 'rm -rf /'``,
``parallel rm -rf ::: /`` is ``rm -rf /``, ``PAGER='rm -rf ~' git log`` runs ``rm -rf ~``. A value that
cannot be known (the output of a program, a file's lines) is an unknown argument, as for any command.
"""

from __future__ import annotations

import posixpath

from .shell import UNKNOWN
from .wrappers import Invocation

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call, Stdin

MAX_RUNS = 16

# Variables whose value is a command line another program runs through a shell (git, less, man, the
# shell itself before each prompt, editors started by git/crontab/visudo ...): the value is judged as
# one. A program path (GIT_SSH, the askpass helpers) is a command line of one word.
COMMAND_VARS = frozenset({
    "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "GH_PAGER", "PSQL_PAGER",
    "GIT_EDITOR", "EDITOR", "VISUAL", "SUDO_EDITOR", "KUBE_EDITOR", "GH_EDITOR", "GIT_SEQUENCE_EDITOR",
    "FCEDIT", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
    "LESSOPEN", "LESSCLOSE", "PROMPT_COMMAND", "BROWSER", "RSYNC_RSH", "CVS_RSH",
})


def env_wrapper(a: Analyzer, words: list[str], depth: int) -> str | None:
    """``env [-C DIR] NAME=value ... cmd``: judge the assignments env makes for the command it runs, and
    return the folder that command runs in (``-C``/``--chdir``)."""
    from . import targets
    from .wrappers import base

    cwd = a.ctx.cwd
    i = next((k for k, w in enumerate(words) if base(w) == "env"), len(words)) + 1
    while i < len(words):
        w = words[i]
        name, eq, value = w.partition("=")
        if w in ("-C", "--chdir") and i + 1 < len(words) or w.startswith(("--chdir=", "-C")) and len(w) > 2:
            folder = words[i + 1] if w in ("-C", "--chdir") else w.partition("=")[2] or w[2:]
            cwd = targets.resolve(a.ctx, folder) if UNKNOWN not in folder else None
            i += 1 if w in ("-C", "--chdir") else 0
        elif eq and not w.startswith("-"):
            if name in COMMAND_VARS:
                program_var(a, name, value, depth)
        elif w in ("-u", "--unset", "-P", "-a", "--argv0", "-S", "--split-string"):
            i += 1  # its value
        elif not w.startswith("-"):
            break  # the command env runs
        i += 1
    return cwd


def program_var(a: Analyzer, name: str, value: str, depth: int) -> None:
    """``NAME=value`` (before a command, alone, or exported) where NAME names a command to run."""
    if name not in COMMAND_VARS or not value.strip() or value == UNKNOWN:
        return
    if name in ("LESSOPEN", "LESSCLOSE"):
        value = value.lstrip("|-").replace("%s", "file")  # "|lesspipe %s": a filter less runs on each file
    a.script(value, depth + 1)


def run_alias(a: Analyzer, inv: Invocation, depth: int) -> None:
    """A command named by an alias defined earlier (``alias x='rm -rf /'; x``): the alias's text, then
    its arguments, as the shell expands it."""
    from .rules_exec import shell_quote

    a.script(a.aliases[inv.name] + "".join(" " + shell_quote(x) for x in inv.args), depth + 1)


def script_command(a: Analyzer, call: Call) -> None:
    """``script -c CMD [file]`` runs CMD in a new terminal session."""
    args = call.args
    for i, x in enumerate(args):
        if x in ("-c", "--command") and i + 1 < len(args):
            a.script(args[i + 1], call.depth + 1)
        elif x.startswith("--command="):
            a.script(x.partition("=")[2], call.depth + 1)


# -- xargs ---------------------------------------------------------------------------------------

# commands whose rule reads xargs' standard input itself (the paths or keys it gets)
_READS_XARGS_INPUT = frozenset({"rm", "unlink", "srm", "rimraf", "trash", "trash-put", "del-cli", "redis-cli",
                                "valkey-cli", "keydb-cli"})


def stdin_items(stdin: Stdin, lines: bool) -> list[str]:
    """The values a command that turns its standard input into arguments gets (by line with ``lines``):
    known text word by word, the paths find/ls list, else one unknown value."""
    if stdin.kind == "text":
        items = [x.strip() for x in stdin.text.splitlines()] if lines else stdin.text.split()
        return [x for x in items if x][:MAX_RUNS * 4]
    if stdin.kind == "find":
        # an unfiltered find lists its roots first; a filtered one only entries inside them
        return [r for r in stdin.roots] if not stdin.filtered else [r.rstrip("/") + "/found" for r in stdin.roots]
    if stdin.kind == "ls":
        return [r.rstrip("/") + "/*" for r in stdin.roots or ["."]]
    return [UNKNOWN]


def xargs_runs(inv: Invocation, stdin: Stdin) -> list[Invocation]:
    """The commands xargs runs: with ``-I R`` one per line of input, ``R`` replaced by the line; else the
    values appended (a rule that reads them itself gets the command as typed)."""
    rep = inv.xargs_replace
    if rep:
        lists = [[x.replace(rep, item) for x in inv.args] for item in stdin_items(stdin, True)[:MAX_RUNS]]
    elif inv.name in _READS_XARGS_INPUT:
        return [inv]
    else:
        lists = [[*inv.args, *stdin_items(stdin, False)]]
    return [_with_args(inv, args) for args in lists] or [inv]


def _with_args(inv: Invocation, args: list[str]) -> Invocation:
    return Invocation(inv.name, args, inv.argv0, inv.sudo, inv.via_xargs, inv.xargs_replace, list(inv.wrappers))


# -- GNU parallel --------------------------------------------------------------------------------

# parallel's options that take a value (as a separate word or after "=")
_PARALLEL_VALUE = frozenset({
    "-j", "--jobs", "-P", "--max-procs", "-S", "--sshlogin", "--slf", "--sshloginfile", "-a", "--arg-file",
    "-d", "--delimiter", "-I", "--results", "--res", "--joblog", "--tmpdir", "--workdir", "--wd", "-n",
    "--max-args", "-N", "-L", "--max-lines", "-s", "--max-chars", "--timeout", "--delay", "--retries",
    "--load", "--memfree", "-C", "--colsep", "--tagstring", "--tag-string", "--env", "--basefile", "--bf",
    "--return", "--transferfile", "--tf", "--sshdelay", "--halt", "--halt-on-error", "--termseq", "--limit",
    "--block", "--block-size", "--recstart", "--recend", "--rpl", "--shellquote-file", "--ssh", "--plus-rpl",
    "--fifo-name", "--cat-name", "--tmux-args", "--joblog-file", "-E", "--eof", "--tee-name",
})
_SEPARATORS = (":::", ":::+", "::::", "::::+")


def parallel(a: Analyzer, call: Call) -> None:
    """``parallel [options] command ::: values`` (or values from standard input): each job is the
    command with the value in place of ``{}`` (appended when it has none), run by a shell; with no
    command, each value is itself a command line. ``sem`` (``parallel --semaphore``) runs its command once."""
    args = call.args
    i, replace, quote = _parallel_options(args)
    opts = args[:i]
    if any(x in ("--dry-run", "--dryrun") for x in opts):
        return  # prints the jobs, runs none
    cmd: list[str] = []
    while i < len(args) and args[i] not in _SEPARATORS:
        cmd.append(args[i])
        i += 1
    groups = _parallel_groups(args[i:])
    if call.name == "sem" or any(x in ("--pipe", "--pipepart", "--spreadstdin", "--semaphore") for x in opts):
        groups = []  # one job (sem), or the input is the jobs' standard input, not their arguments
    elif groups is None:
        items = stdin_items(call.stdin, True) if "-a" not in args and "--arg-file" not in args else [UNKNOWN]
        groups = [items]
    for values in _jobs(groups):
        text = _job(cmd, values, replace, quote)
        if text:
            a.script(text, call.depth + 1)


def _parallel_options(args: list[str]) -> tuple[int, str, bool]:
    """(index of the command, the replace string, whether --quote/-q makes it one literal command)."""
    i = 0
    replace = "{}"
    quote = False
    while i < len(args) and args[i].startswith("-") and args[i] not in _SEPARATORS:
        x = args[i]
        if x == "--":
            return i + 1, replace, quote
        quote = quote or x in ("-q", "--quote")
        if x in ("-I", "--replace") and i + 1 < len(args):
            replace = args[i + 1]
        elif x.startswith("-I") and len(x) > 2:
            replace = x[2:]
        i += 2 if x in _PARALLEL_VALUE else 1
    return i, replace, quote


def _parallel_groups(rest: list[str]) -> list[list[str]] | None:
    """The value groups after ``:::`` (a file after ``::::`` gives unknown values); None if there are none."""
    groups: list[list[str]] = []
    cur: list[str] | None = None
    for x in rest:
        if x in _SEPARATORS:
            cur = []
            groups.append(cur)
            if x.startswith("::::"):
                cur.append(UNKNOWN)
                cur = None  # the file names are not values
        elif cur is not None:
            cur.append(x)
    return groups or None


def _jobs(groups: list[list[str]]) -> list[list[str]]:
    """Every combination of one value from each group, as parallel runs them (bounded)."""
    jobs: list[list[str]] = [[]]
    for g in groups:
        jobs = [[*j, v] for j in jobs for v in (g or [""])][:MAX_RUNS]
    return jobs


def _job(cmd: list[str], values: list[str], replace: str, quote: bool) -> str:
    """The command line of one job."""
    from .rules_exec import shell_quote

    if not cmd:
        return " ".join(values)  # the values are the commands
    words = [shell_quote(x) for x in cmd] if quote else list(cmd)
    text = " ".join(words)
    subs = _replacements(replace, values)
    if not any(r in text for r in subs):
        return text + " " + " ".join(shell_quote(v) if UNKNOWN not in v else v for v in values)
    for r, v in subs.items():
        text = text.replace(r, shell_quote(v) if UNKNOWN not in v else v)
    return text


def _replacements(replace: str, values: list[str]) -> dict[str, str]:
    """parallel's replacement strings for a job's values: ``{}`` and its path forms, ``{n}`` per group."""
    v = " ".join(values)
    base = posixpath.basename(v)
    out = {replace: v, "{.}": posixpath.splitext(v)[0], "{/}": base, "{//}": posixpath.dirname(v),
           "{/.}": posixpath.splitext(base)[0], "{#}": "1", "{%}": "1"}
    for k, val in enumerate(values, 1):
        out[f"{{{k}}}"] = val
        out[f"{{{k}.}}"] = posixpath.splitext(val)[0]
        out[f"{{{k}/}}"] = posixpath.basename(val)
    return out
