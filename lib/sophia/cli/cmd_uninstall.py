"""s3 uninstall: remove the install (hooks, skills, agents, CLAUDE.md block, kit, venv, launcher).

The same code as ``./uninstall.sh`` (:mod:`sophia.install.uninstall`), so it works after the
checkout was deleted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import app
from .cmd_core import JsonOpt


@app.command()
def uninstall(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="No questions.")] = False,
    purge: Annotated[bool, typer.Option("--purge", help="Also delete SOPHIA_HOME (all memory); asks first "
                                        "unless --yes, refused without --yes when there is no terminal.")] = False,
    project: Annotated[Path | None, typer.Option("--project", metavar="DIR",
                                                 help="Remove the install made with `install.sh --project DIR`.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Print what would be removed, change nothing.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Remove Sophia System 3 as installed (the install manifest says what); the memory stays unless --purge.

    Takes out only our hook entries from settings.json and only the System 3 block from CLAUDE.md
    (your text and its mode are put back), the s3-* skills and agents, the kit, the venv and the
    launcher the install created, and the folders it created once they are empty.
    """
    from ..install import uninstall as un

    argv = [flag for flag, on in (("--yes", yes), ("--purge", purge), ("--dry-run", dry_run),
                                  ("--json", json_out)) if on]
    if project is not None:
        argv += ["--project", str(project)]
    raise typer.Exit(un.main(argv, prog="s3"))
