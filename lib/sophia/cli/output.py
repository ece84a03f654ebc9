"""Output helpers shared by the commands: JSON on stdout, rich text, one-line errors."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

from ..errors import SophiaError


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str, indent=2) + "\n")


def console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def fail(message: str, code: int = 1, hint: str = "") -> NoReturn:
    typer.echo(f"s3: error: {message}", err=True)
    if hint:
        typer.echo(f"s3: {hint}", err=True)
    raise typer.Exit(code)


def error_hint(exc: SophiaError) -> str:
    """What to do about an expected error: its own hint, or for an unreadable state file, doctor."""
    from ..errors import StateFileError

    hint = getattr(exc, "hint", "") or ""
    if not hint and isinstance(exc, StateFileError):
        hint = "run `s3 doctor --repair` to set it aside and restore it"
    return hint
