"""The seal's hook: ``python -I -S seal_gate.py [recall] [list]``, a PreToolUse hook (matcher ``*``) on every
headless digest stage and on the detached reflection. Standard library only and no import of the package:
it runs as a script.

The subcommands named on its command line are what the stage may run; every tool call is denied (exit 2,
the reason on stderr, which the model reads) but a Bash call that is exactly ``s3 <subcommand> ...`` with
one of them and only the arguments :data:`OPTIONS` lists (``s3 recall --queries FILE`` would read a file):
no shell metacharacter outside quotes, no ``$``, backquote or backslash inside double quotes, nothing
but printable characters inside single quotes, one command. Which ``s3`` runs is whichever the worker or
the reflection runner put first on the run's PATH (the kit's own, ``seal.s3_on_path``). An allowed call
gets no answer at all (exit 0, nothing printed): the client's own permission rules still judge it, so the
call must pass both.

It never reads ``SOPHIA_HOOK_GUARD`` (that guard turns the kit's normal hooks off in these runs, not the
seal). Its own failure denies: :func:`main` turns any error into a deny, and the hook's command line ends in
``|| exit 2``, so a crash or a missing interpreter denies too (Claude Code lets a call through on any exit
code but 2).
"""

from __future__ import annotations

import json
import sys

# What each subcommand takes: option -> kind of value (None: a flag), and how many positional words.
OPTIONS: dict[str, dict[str, str | None]] = {
    "recall": {"--json": None, "--limit": "count", "-n": "count", "--type": "word", "-t": "word",
               "--project": "text", "--as-of": "text", "--known-at": "text"},
    "list": {"--json": None},
}
POSITIONAL = {"recall": "text", "list": "word"}  # exactly one: the query, the kind
BASH_FIELDS = {"command", "description", "timeout"}  # run_in_background and the sandbox switch are refused
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:/=+%@")
_NOT_IN_DOUBLE = frozenset('$`\\!')


class Denied(Exception):
    """Why the call is refused (one line, shown to the model)."""


def words(command: str) -> list[str]:
    """The words of ``command`` as a POSIX shell reads them, for the only shapes that expand nothing;
    raises :class:`Denied` on anything else (operators, substitutions, globs, escapes, control characters)."""
    out: list[str] = []
    word: str | None = None
    quote = ""
    for ch in command:
        if ord(ch) < 32 or ord(ch) == 127:
            raise Denied("control characters (newlines, tabs) are not allowed")
        if quote:
            if ch == quote:
                quote = ""
            elif quote == '"' and ch in _NOT_IN_DOUBLE:
                raise Denied(f"{ch!r} inside double quotes is not allowed (use single quotes)")
            else:
                word = (word or "") + ch
        elif ch in "'\"":
            quote, word = ch, word or ""
        elif ch == " ":
            if word is not None:
                out.append(word)
            word = None
        elif ch in _PLAIN:
            word = (word or "") + ch
        else:
            raise Denied(f"the shell character {ch!r} is not allowed outside quotes")
    if quote:
        raise Denied("an unclosed quote")
    return out + ([word] if word is not None else [])


def _value_ok(kind: str | None, value: str) -> bool:
    if kind == "count":
        return value.isdigit() and 1 <= int(value) <= 1000
    if kind == "word":
        return bool(value) and all(c.isalnum() or c == "_" for c in value)
    return kind == "text"


def check_args(sub: str, args: list[str]) -> None:
    """Raise :class:`Denied` unless ``args`` are one positional word and listed options of ``sub``."""
    opts, positional = OPTIONS[sub], []
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if a.startswith("-"):
            if name not in opts:
                raise Denied(f"`s3 {sub}` option {name!r} is not allowed here")
            kind = opts[name]
            if kind is None and eq:
                raise Denied(f"{name} takes no value")
            if kind is not None:
                value = inline if eq else (args[i + 1] if i + 1 < len(args) else "")
                i += 0 if eq else 1
                if not _value_ok(kind, value):
                    raise Denied(f"{name} {value!r} is not an allowed value")
        else:
            positional.append(a)
        i += 1
    if len(positional) != 1 or not _value_ok(POSITIONAL[sub], positional[0]):
        raise Denied(f"`s3 {sub}` takes exactly one {'query' if sub == 'recall' else 'kind'}")


def judge(payload: dict[str, object], allowed: tuple[str, ...]) -> None:
    """Return if the call may go on to the client's own rules; raise :class:`Denied` otherwise."""
    tool = payload.get("tool_name")
    if tool != "Bash" or not allowed:
        raise Denied(f"{tool or 'this tool'} is not available to this stage")
    inp = payload.get("tool_input")
    if not isinstance(inp, dict) or not isinstance(inp.get("command"), str) or set(inp) - BASH_FIELDS:
        raise Denied("only a plain Bash command may run")
    w = words(inp["command"])
    if len(w) < 2 or w[0] != "s3" or w[1] not in allowed:
        raise Denied("only " + " and ".join(f"`s3 {s} ...`" for s in allowed) + " may run")
    check_args(w[1], w[2:])


def usage(allowed: tuple[str, ...]) -> str:
    forms = {"recall": "s3 recall '<words>' [--json] [--limit N]", "list": "s3 list <kind> [--json]"}
    return "; this stage may run only " + " or ".join(f"`{forms[s]}`" for s in allowed) if allowed else \
        "; this stage may use no tool: answer from what the prompt gives"


def main(argv: list[str]) -> int:
    allowed = tuple(a for a in argv if a in OPTIONS)
    try:
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
        judge(payload if isinstance(payload, dict) else {}, allowed)
        return 0
    except Denied as exc:
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - the seal fails closed: whatever went wrong, the call is refused
        reason = f"the seal could not judge the call ({type(exc).__name__})"
    sys.stderr.write(f"Sophia digest seal: denied: {reason}{usage(allowed)}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
