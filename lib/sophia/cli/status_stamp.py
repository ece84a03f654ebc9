"""What the last ``s3 status`` checked, so the next one need not check it again (issue 30).

``s3 status`` validates every state file through its pydantic model (10,000 semantic rules take longer
than the rest of the command). When they all pass and the self-model file already holds what its model
dumps, the typer command records each file's identity (inode, size, mtime in ns; None when missing) and
the number of rules in ``run/status_stamp.json``. The fast path (``fast_cmds``) trusts a file whose
identity still matches: every write of a state file replaces it (a new inode) or changes its mtime, so a
changed file is checked again by the typer command. A file written in the last ``RACY_NS`` is not recorded
(file times are coarse: a second write of the same size in the same clock tick would keep the mtime), as in
``memory.team_repo``. Standard library only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

NAME = "status_stamp.json"
RACY_NS = 2_000_000_000


def _path(home: Path) -> Path:
    from .. import paths

    return paths.run_dir(home) / NAME


def identity(path: Path | int) -> list[int] | None:
    """A file's (or an open file descriptor's) inode, size and mtime in ns; None when it is missing."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def identities(files: list[Path]) -> dict[str, list[int] | None]:
    """Taken before the files are read: a file replaced meanwhile no longer matches what is recorded."""
    return {str(p): identity(p) for p in files}


def record(home: Path, seen: dict[str, list[int] | None], self_model: dict[str, Any], rules_total: int) -> None:
    """After the files in ``seen`` passed: recorded only when the self-model file holds exactly
    ``self_model`` (its model's dump; a file with defaults still to fill would print other values)."""
    import time

    from .. import paths
    from ..atomic import write_json_atomic

    sm_path = paths.self_model_path(home)
    recent = time.time_ns() - RACY_NS
    if any(ident is not None and ident[2] > recent for ident in seen.values()):
        return
    try:
        if seen.get(str(sm_path)) is None or json.dumps(self_model) != json.dumps(json.loads(sm_path.read_bytes())):
            return
        write_json_atomic(_path(home), {"files": seen, "rules_total": rules_total}, durable=False)
    except (OSError, ValueError):
        return  # a read-only home, a file changed meanwhile: the next status checks again


def cached(home: Path) -> tuple[dict[str, Any], int] | None:
    """The self-model and the number of rules when no state file changed since they were checked, else None."""
    from .. import paths

    try:
        stamp = json.loads(_path(home).read_bytes())
        files, total = stamp["files"], stamp["rules_total"]
        sm_path, rules = str(paths.self_model_path(home)), str(paths.rules_path(home))
        if not (isinstance(files, dict) and isinstance(total, int) and sm_path in files and rules in files):
            return None
        if any(identity(Path(p)) != seen for p, seen in files.items()):
            return None
        with open(sm_path, "rb") as f:
            raw = f.read()
            if identity(f.fileno()) != files[sm_path]:
                return None  # replaced after the check above
        self_model = json.loads(raw)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (self_model, total) if isinstance(self_model, dict) else None
