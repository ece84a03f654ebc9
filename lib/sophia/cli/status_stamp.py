"""What the last ``s3 status`` checked, so the next one need not check it again (issue 30).

``s3 status`` validates every state file through its pydantic model (10,000 semantic rules take longer
than the rest of the command). When they all pass and the self-model file already holds what its model
dumps, the typer command records each file's identity (inode, size, mtime in ns; None when missing) and
the number of rules in ``run/status_stamp.json``. The fast path (``fast_cmds``) trusts a file whose
identity still matches: every write of a state file replaces it (a new inode) or changes its mtime, so a
changed file is checked again (below, else by the typer command). A file written in the last ``RACY_NS`` is not recorded
(``file_stamp``: file times are coarse).

A file changed since (the hooks rewrite the episode index and the user and self models every turn) is checked
by ``status_check`` against the schema its model gave when the stamp was recorded (kept in the stamp, with the
identity of ``models.py`` then); when every changed file passes, the fast path records their new identities, so
only the first status after a change checks them. Standard library only.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..file_stamp import racy
from ..file_stamp import stamp as identity

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

NAME = "status_stamp.json"


def _path(home: Path) -> Path:
    from .. import paths

    return paths.run_dir(home) / NAME


def identities(files: list[Path]) -> dict[str, list[int] | None]:
    """Taken before the files are read: a file replaced meanwhile no longer matches what is recorded."""
    return {str(p): identity(p) for p in files}


def _code() -> list[int] | None:
    """The identity of the models the stamp's schemas came from (another version checks files again)."""
    return identity(Path(__file__).resolve().parents[1] / "models.py")


def record(home: Path, seen: dict[str, list[int] | None], self_model: dict[str, Any], rules_total: int) -> None:
    """After the files in ``seen`` passed: recorded only when the self-model file holds exactly
    ``self_model`` (its model's dump; a file with defaults still to fill would print other values), with the
    files' schemas (typer path only: they come from the models)."""
    from .. import paths
    from .status_check import custom_fields, schemas

    sm_path = paths.self_model_path(home)
    if racy(seen.values()):
        return
    try:
        if seen.get(str(sm_path)) is None or json.dumps(self_model) != json.dumps(json.loads(sm_path.read_bytes())):
            return
        shapes = schemas(home)
        custom = {k: self_model[k] for k in custom_fields(shapes[str(sm_path)]) if k in self_model}
        _write(home, {"files": seen, "rules_total": rules_total, "schemas": shapes, "custom": custom,
                      "code": _code()})
    except (OSError, ValueError, KeyError):
        return  # a read-only home, a file changed meanwhile: the next status checks again


def _write(home: Path, stamp: dict[str, Any]) -> None:
    from ..atomic import write_json_atomic

    write_json_atomic(_path(home), stamp, durable=False, depth=1)  # the schemas on a line each: C-encoded


def cached(home: Path) -> tuple[dict[str, Any], int, Any] | None:
    """The self-model, the number of rules and the episode index if it was read here (else None) when every
    state file is as a status checked it, or passes the check of its schema now (the changed ones then
    recorded), else None."""
    from .. import paths

    try:
        stamp = json.loads(_path(home).read_bytes())
        files, total = stamp["files"], stamp["rules_total"]
        sm_path, rules = str(paths.self_model_path(home)), str(paths.rules_path(home))
        if not (isinstance(files, dict) and isinstance(total, int) and sm_path in files and rules in files):
            return None
        read = _changed(stamp, sm_path)
        if read is None:
            return None
        self_model = (read.get(sm_path) or _read(sm_path, files[sm_path]))[1]
        if rules in read:
            total = len(read[rules][1])
        _remember(home, stamp, read, total)
        index = read.get(str(paths.episode_index_path(home)), (None, None))[1]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return (self_model, total, index) if isinstance(self_model, dict) else None


def _changed(stamp: dict[str, Any], sm_path: str) -> dict[str, tuple[list[int], Any]] | None:
    """Each file changed since the stamp, read and checked against its schema; None when one fails."""
    files = stamp["files"]
    now = {p: identity(Path(p)) for p in files}
    changed = [p for p in files if now[p] != files[p]]
    if not changed:
        return {}
    if stamp.get("code") != _code() or any(now[p] is None or files[p] is None for p in changed):
        return None  # another version of the models, a file made or deleted: the typer path says it
    from .status_check import compile_file

    read = {}
    for p in changed:
        ident, data = _read(p, now[p])
        custom = stamp["custom"] if p == sm_path else {}
        if not compile_file(stamp["schemas"][p], exact=p == sm_path, custom=custom)(data):
            return None
        read[p] = (ident, data)
    return read


def _read(path: str, expected: list[int] | None) -> tuple[list[int], Any]:
    """A file's JSON, read through one descriptor whose identity is the one expected (else ValueError), and
    decoded as ``atomic.read_json`` decodes it."""
    with open(path, "rb") as f:
        raw = f.read()
        ident = identity(f.fileno())
    if ident is None or ident != expected:
        raise ValueError(f"{path} replaced while read")
    return ident, json.loads(raw.decode("utf-8"))


def _remember(home: Path, stamp: dict[str, Any], read: dict[str, tuple[list[int], Any]], total: int) -> None:
    """Record the files checked here, so the next status need not (not one written within ``RACY_NS``)."""
    if not read:
        return
    files = {**stamp["files"], **{p: ident for p, (ident, _) in read.items()}}
    if racy(files.values()):
        return
    try:
        _write(home, {**stamp, "files": files, "rules_total": total})
    except OSError:
        return  # a read-only home: the answer stands, the next status checks them again
