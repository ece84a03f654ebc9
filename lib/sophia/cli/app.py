"""The typer application. Each ``cmd_*`` module attaches its commands to ``app``.

Keep this import-light: no pydantic, numpy or torch at module level in any ``cmd_*``
module; import them inside the command functions that need them.
"""

from __future__ import annotations

from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from .helpfmt import tidy

tidy()  # --help shows TEXT / FILE as click does, not <str> / {file}

try:  # typer 0.22+ carries its own copy of click
    from typer._click import Context
    from typer._click import exceptions as click_errors
except ImportError:  # an older typer runs on click itself
    from click import Context  # type: ignore[assignment]
    from click import exceptions as click_errors  # type: ignore[no-redef]


class OneStyle(TyperGroup):
    """The top-level group: a usage error anywhere below it (unknown command or option, a missing or extra
    argument, a bad value) is said as every other error is, ``s3: error: ...`` on one line, exit 2, instead
    of typer's box. A missing command still shows the help (click's ``no_args_is_help``)."""

    def make_context(self, info_name: str | None, args: list[str], parent: Context | None = None,
                     **extra: Any) -> Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click_errors.UsageError as exc:
            _one_line(exc)

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except click_errors.UsageError as exc:
            _one_line(exc)


def _one_line(exc: Exception) -> NoReturn:
    if isinstance(exc, click_errors.NoArgsIsHelpError):
        raise exc  # typer shows the help
    from .output import USAGE, say_error, usage_message

    say_error(usage_message(exc))
    raise typer.Exit(USAGE) from None


app = typer.Typer(
    name="s3",
    cls=OneStyle,
    help="Sophia System 3: memory and a conscience for Claude Code.\n\n"
    "State lives in ~/.sophia (override with SOPHIA_HOME). Every command that reports "
    "takes --json for machine-readable output.",
    rich_markup_mode="markdown",  # a docstring paragraph is reflowed, not cut where the source wraps
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register() -> None:
    from . import (  # noqa: F401
        cmd_apply,
        cmd_bench,
        cmd_config,
        cmd_core,
        cmd_digest,
        cmd_embed,
        cmd_guardian,
        cmd_learning,
        cmd_mcp,
        cmd_memory,
        cmd_portable,
        cmd_recall,
        cmd_reflect,
        cmd_team,
        cmd_ui,
        cmd_uninstall,
    )


_register()
