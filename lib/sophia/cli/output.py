"""Output helpers shared by the commands: JSON on stdout, rich text, one-line errors."""

from __future__ import annotations

from typing import Any, NoReturn

import typer

from ..errors import SophiaError
from .plain import console, emit_json  # noqa: F401  (the commands import them from here)

# Exit codes, the same for every command (README, "Exit codes"):
OK = 0
FAILED = 1  # the operation failed: unreadable state, a broken index, a service that would not start
USAGE = 2  # what was typed or given is wrong: unknown option or value, bad date, missing or invalid input file
INTERRUPTED = 130  # Ctrl-C (128 + SIGINT); the message says what was done and how to finish
# `s3 guardian check` answers with the decision (errors and usage keep 1 and 2):
GUARDIAN_EXIT = {"allow": 0, "ask": 3, "deny": 4}


def say_error(message: str, hint: str = "") -> None:
    """The one error style of every command: ``s3: error: ...`` on one line (and a hint on the next)."""
    typer.echo(f"s3: error: {message}", err=True)
    if hint:
        typer.echo(f"s3: {hint}", err=True)


def fail(message: str, code: int = FAILED, hint: str = "") -> NoReturn:
    say_error(message, hint)
    raise typer.Exit(code)


def usage_message(exc: Any) -> str:
    """A click/typer usage error (unknown option or command, missing or extra argument, bad value) as one
    line in our style: its message, lower-cased like ours, and where to look (``s3 CMD --help``)."""
    msg = " ".join(str(exc.format_message()).split()).rstrip(".")
    if msg[:1].isupper() and msg[1:2].islower():
        msg = msg[0].lower() + msg[1:]
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None and ctx.command_path else "s3"
    return f"{msg} (see `{where} --help`)"


def usage(message: str, hint: str = "") -> NoReturn:
    """Bad input (exit 2), said in one line like click's own usage errors."""
    fail(message, USAGE, hint)


def interrupted(done: str, finish: str) -> NoReturn:
    """Ctrl-C in a long command: what was done, how to finish, exit 130."""
    typer.echo(f"s3: interrupted: {done}; {finish}", err=True)
    raise typer.Exit(INTERRUPTED)


def error_hint(exc: SophiaError) -> str:
    """What to do about an expected error: its own hint, or for an unreadable state file, doctor."""
    from ..errors import StateFileError

    hint = getattr(exc, "hint", "") or ""
    if not hint and isinstance(exc, StateFileError):
        hint = "run `s3 doctor --repair` to set it aside and restore it"
    return hint


def existing_home() -> Any:
    """The state home, or a clear error (exit 1) when it was never created."""
    from .. import paths

    home = paths.sophia_home()
    if not home.is_dir():
        fail(f"{home} does not exist", hint="run `s3 init` (or ./install.sh) first")
    return home
