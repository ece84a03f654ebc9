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
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "xargs": frozenset({"-I", "-n", "-L", "-P", "-s", "-d", "-E", "-e", "-a", "--arg-file", "--max-args",
                        "--max-procs", "--delimiter", "--max-lines", "--max-chars", "--eof", "--replace",
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
    return name.rsplit("/", 1)[-1].lower()


def strip(args: list[str]) -> Invocation:
    inv = Invocation("", [])
    i = 0
    while i < len(args):
        name = base(args[i])
        if name not in _OPT_ARGS:
            break
        inv.wrappers.append(name)
        if name in ("sudo", "doas"):
            inv.sudo = True
        takes = _OPT_ARGS[name]
        i += 1
        if name == "env":
            while i < len(args):
                a = args[i]
                if a == "--":
                    i += 1
                    break
                if a in ("-S", "--split-string") and i + 1 < len(args):
                    # env -S 'rm -rf /' : the string is split into words
                    rest = args[i + 1].split() + args[i + 2:]
                    args = args[:i] + rest
                    continue
                if a.startswith("--split-string="):
                    args = args[:i] + a.split("=", 1)[1].split() + args[i + 1:]
                    continue
                if a.startswith("-") and a != "-":
                    i += 2 if a in takes else 1
                    continue
                if "=" in a and not a.startswith("="):
                    i += 1
                    continue
                break
            continue
        if name in ("command", "builtin"):
            while i < len(args) and args[i].startswith("-"):
                if args[i] in ("-v", "-V"):
                    inv.lookup_only = True
                i += 1
            continue
        while i < len(args):
            a = args[i]
            if a == "--":
                i += 1
                break
            if name == "xargs":
                inv.via_xargs = True
                if a in ("-I", "--replace") and i + 1 < len(args):
                    inv.xargs_replace = args[i + 1]
                    i += 2
                    continue
                if a.startswith("-I") and len(a) > 2:
                    inv.xargs_replace = a[2:]
                    i += 1
                    continue
                if a.startswith("-i"):
                    inv.xargs_replace = a[2:] or "{}"
                    i += 1
                    continue
            if name == "stdbuf" and a[:2] in ("-i", "-o", "-e") and len(a) > 2:
                i += 1
                continue
            if a.startswith("-") and len(a) > 1:
                if a in takes:
                    i += 2
                elif "=" in a or not a.startswith("--") and len(a) > 2 and a[:2] in takes:
                    i += 1
                else:
                    i += 1
                continue
            break
        if name == "nice" and i < len(args) and args[i].lstrip("-").isdigit():
            i += 1
        if name == "timeout" and i < len(args):
            i += 1  # DURATION
        if name == "chrt" and i < len(args) and args[i].isdigit():
            i += 1
        if name == "taskset" and i < len(args) and not args[i].startswith("-") and "-c" not in args[:i]:
            i += 1  # mask
        if name == "flock" and i < len(args):
            i += 1  # lock file
            if i < len(args) and args[i] in ("-c", "--command") and i + 1 < len(args):
                return Invocation("sh", ["-c", args[i + 1]], "sh", inv.sudo, inv.via_xargs, inv.xargs_replace,
                                  inv.wrappers)
    if i >= len(args):
        inv.name = "xargs-echo" if inv.via_xargs else ("env" if inv.wrappers[-1:] == ["env"] else "")
        return inv
    inv.argv0 = args[i]
    inv.name = base(args[i]) if UNKNOWN not in args[i] else UNKNOWN
    inv.args = args[i + 1:]
    return inv


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
