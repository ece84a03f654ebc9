"""Commands that run another command: strip them to find what really runs.

``strip(args)`` turns ``sudo -u root env FOO=1 nice -n 5 timeout 10 /bin/rm -rf x`` into
``Invocation(name="rm", args=["-rf", "x"], sudo=True)``. ``xargs`` is stripped too, with
``via_xargs`` set: the real arguments then also come from standard input.
"""

from __future__ import annotations

from .record import field, record
from .shell import UNKNOWN

# wrapper -> options that take a separate value
_OPT_ARGS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R", "--user", "--group",
                       "--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--close-from"}),
    "doas": frozenset({"-u", "-C"}),
    "pkexec": frozenset({"--user"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-P", "-a", "--argv0", "-L", "-U"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "xargs": frozenset({"-I", "-n", "-L", "-P", "-s", "-d", "-E", "-e", "-a", "--arg-file", "--max-args",
                        "--max-procs", "--delimiter", "--max-lines", "--max-chars", "--eof",
                        "--process-slot-var"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}),
    "chrt": frozenset(),
    "taskset": frozenset({"-c", "--cpu-list"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "setsid": frozenset(),
    "unbuffer": frozenset(),
    "caffeinate": frozenset({"-t", "-w"}),
    "busybox": frozenset(),
    "toybox": frozenset(),
    "strace": frozenset({"-e", "-o", "-p", "-s", "-u", "-E"}),
    "ltrace": frozenset({"-e", "-o", "-p", "-s", "-u"}),
    "catchsegv": frozenset(),
    "chronic": frozenset(),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "torsocks": frozenset(),
    "firejail": frozenset(),
    "aws-vault": frozenset(),
    "dbus-run-session": frozenset(),
    "with-contenv": frozenset(),
    "systemd-run": frozenset({"-u", "--unit", "-p", "--property", "-E", "--setenv"}),
    "run-one": frozenset(),
    "pv": frozenset(),
}


@record
class Invocation:
    name: str  # lower-cased basename of the program
    args: list[str]
    argv0: str = ""
    sudo: bool = False
    via_xargs: bool = False
    xargs_replace: str | None = None
    wrappers: list[str] = field(default_factory=list)
    lookup_only: bool = False  # `command -v x`


def base(name: str) -> str:
    """The program a command word names: its last path part, lower-cased, without Windows' ``.exe``
    (``C:\\Program Files\\Git\\bin\\git.exe``, ``GIT.EXE``)."""
    name = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    return name[:-4] if name.endswith(".exe") and len(name) > 4 else name


def strip(args: list[str]) -> Invocation:
    inv = Invocation("", [])
    i = 0
    while i < len(args):
        name = base(args[i])
        if name not in _OPT_ARGS:
            break
        inv.wrappers.append(name)
        inv.sudo = inv.sudo or name in ("sudo", "doas")
        i += 1
        if name == "env":
            args, i = _env_options(args, i)
            continue
        if name in ("command", "builtin"):
            i = _lookup_options(args, i, inv)
            continue
        i = _operands(name, args, _options(name, args, i, inv))
        if name == "flock" and i + 1 < len(args) and args[i] in ("-c", "--command"):
            return Invocation("sh", ["-c", args[i + 1]], "sh", inv.sudo, inv.via_xargs, inv.xargs_replace,
                              inv.wrappers)
    return _invoked(args, i, inv)


def _env_options(args: list[str], i: int) -> tuple[list[str], int]:
    """Past env's options and NAME=VALUE words; ``-S STRING`` is split into words in place. ``-`` is ``-i``;
    short options cluster (``-iS 'cmd'``, ``-uNAME``) as getopt reads them."""
    takes = _OPT_ARGS["env"]
    while i < len(args):
        a = args[i]
        if a == "--":
            return args, i + 1
        if a.startswith("--split-string=") or a in ("-S", "--split-string"):
            text = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            args = args[:i] + split_string(text) + args[i + (1 if "=" in a else 2):]
            continue
        if a.startswith("--"):
            i += 2 if a in takes else 1
            continue
        if a.startswith("-") and a != "-":
            args, i = _env_cluster(args, i)
            continue
        if a == "-" or "=" in a and not a.startswith("="):
            i += 1
            continue
        break
    return args, i


def _env_cluster(args: list[str], i: int) -> tuple[list[str], int]:
    """One cluster of env's short options at ``args[i]``: the letters before one that takes a value are
    flags; ``S`` splits its value (the rest of the cluster, or the next word) into words in place."""
    a = args[i]
    for k in range(1, len(a)):
        if "-" + a[k] not in _OPT_ARGS["env"]:
            continue
        glued = a[k + 1:]
        if a[k] == "S":
            text = glued or (args[i + 1] if i + 1 < len(args) else "")
            return args[:i] + split_string(text) + args[i + (1 if glued else 2):], i
        return args, i + (1 if glued else 2)
    return args, i + 1


def split_string(text: str) -> list[str]:
    """``env -S``'s string as words (quotes and backslashes read, ``${VAR}`` unknown)."""
    import shlex

    text = text.replace("\\_", " ")
    try:
        words = shlex.split(text, comments=False)
    except ValueError:
        words = text.split()
    return [UNKNOWN if "${" in w else w for w in words]


def _lookup_options(args: list[str], i: int, inv: Invocation) -> int:
    """Past the options of ``command`` / ``builtin``; ``-v`` / ``-V`` only look the name up."""
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-v", "-V"):
            inv.lookup_only = True
        i += 1
    return i


def _options(name: str, args: list[str], i: int, inv: Invocation) -> int:
    """Past a wrapper's options (and the values of those that take one)."""
    takes = _OPT_ARGS[name]
    while i < len(args):
        a = args[i]
        if a == "--":
            return i + 1
        if name == "xargs":
            inv.via_xargs = True
            used = _xargs_replace(a, args, i, inv)
            if used:
                i += used
                continue
        if name == "stdbuf" and a[:2] in ("-i", "-o", "-e") and len(a) > 2:
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            i += 2 if a in takes else 1
            continue
        break
    return i


def _xargs_replace(a: str, args: list[str], i: int, inv: Invocation) -> int:
    """xargs' replace string (``-I R``, ``-IR``, ``-i[R]``): the words it used, 0 if ``a`` is not one."""
    if a == "-I" and i + 1 < len(args):
        inv.xargs_replace = args[i + 1]
        return 2
    if a == "--replace" or a.startswith("--replace="):
        inv.xargs_replace = a.partition("=")[2] or "{}"
        return 1
    if a.startswith("-I") and len(a) > 2:
        inv.xargs_replace = a[2:]
        return 1
    if a.startswith("-i"):
        inv.xargs_replace = a[2:] or "{}"
        return 1
    return 0


def _operands(name: str, args: list[str], i: int) -> int:
    """Past the operand a wrapper takes before the command: timeout's DURATION, flock's lock file,
    nice's adjustment, chrt's priority, taskset's mask, aws-vault's ``exec PROFILE --``."""
    if i >= len(args):
        return i
    a = args[i]
    if name == "aws-vault":
        return _aws_vault(args, i)
    skip = (name in ("timeout", "flock")
            or name == "nice" and a.lstrip("-").isdigit()
            or name == "chrt" and a.isdigit()
            or name == "taskset" and not a.startswith("-") and "-c" not in args[:i])
    return i + 1 if skip else i


def _aws_vault(args: list[str], i: int) -> int:
    """``aws-vault exec [--flags] PROFILE [--] cmd ...``: the command starts after the profile."""
    if args[i] != "exec":
        return i
    i += 1
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        i += 1
    i += 1  # the profile
    return i + 1 if i < len(args) and args[i] == "--" else i


def _invoked(args: list[str], i: int, inv: Invocation) -> Invocation:
    """The command the wrappers run, from ``args[i]`` on."""
    if i >= len(args):
        inv.name = "xargs-echo" if inv.via_xargs else ("env" if inv.wrappers[-1:] == ["env"] else "")
        return inv
    inv.argv0 = args[i]
    inv.name = base(args[i]) if UNKNOWN not in args[i] else UNKNOWN
    inv.args = args[i + 1:]
    return inv


# Programs that fetch a URL (their output piped into a shell is code from the network).
NET_FETCHERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lwp-request", "GET",
                          "lynx", "links", "httpie", "curlie"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "rbash",
                    "busybox"})
INTERPRETERS = {
    "python": "python", "python2": "python", "python3": "python", "pypy": "python", "pypy3": "python",
    "node": "js", "nodejs": "js", "deno": "js", "bun": "js", "ruby": "ruby", "perl": "perl", "php": "php",
    "lua": "lua", "rscript": "r", "osascript": "applescript", "pwsh": "ps", "powershell": "ps",
    "tclsh": "tcl", "awk": "awk", "gawk": "awk", "mawk": "awk", "nawk": "awk",
}


def interpreter(name: str) -> str | None:
    if name in INTERPRETERS:
        return INTERPRETERS[name]
    for prefix in ("python", "pypy", "perl", "ruby", "php", "node", "lua"):
        if name.startswith(prefix) and all(c.isdigit() or c == "." for c in name[len(prefix):]):
            return INTERPRETERS.get(prefix, prefix)
    return None
