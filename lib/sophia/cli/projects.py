"""What ``--project`` names, read the same way by every command (stdlib only: ``s3 recall``'s fast path
uses it).

A project is recorded as the git root its sessions ran in (``hooks/project.py``). ``--project`` takes that
path, any folder inside the project (``--project .``), or the recorded path of a project whose folder is
gone. Anything else (a typo) is bad input, said in one line: a filter on a project that does not exist
would answer "nothing" and look like an empty memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable


def resolve(given: str, recorded: Callable[[str], bool]) -> str | None:
    """The project ``given`` names: an existing folder's project (its git root), else ``given`` itself
    when something was recorded under it; None when it names nothing."""
    if os.path.isdir(given):
        from ..hooks.project import project_of

        return project_of(given)
    return given if recorded(given) else None


def unknown(given: str, what: str) -> str:
    """The one-line message for a ``--project`` that names nothing."""
    return f"--project {given}: no such folder, and no {what} was recorded in it"
