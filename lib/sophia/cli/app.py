"""The typer application. Each ``cmd_*`` module attaches its commands to ``app``.

Keep this import-light: no pydantic, numpy or torch at module level in any ``cmd_*``
module; import them inside the command functions that need them.
"""

from __future__ import annotations

import typer

from .helpfmt import tidy

tidy()  # --help shows TEXT / FILE as click does, not <str> / {file}

app = typer.Typer(
    name="s3",
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
