"""Team memory kept in the repository: ``<project>/.sophia/team/*.md``, indexed read-only as the ``team``
kind. Standard library only (the prompt hook asks :func:`refresh_if_changed` on every prompt).

A teammate shares an item with ``s3 team share`` (:mod:`sophia.team.repo` writes the file with
:func:`render`); the file is committed, reviewed and pulled like code. Every teammate's kit indexes the
folder of the project it works in: one item per file (id ``team_`` + a hash of its path, the project its
clone's root), recalled and injected with the same gates as the kit's own memories and marked as the
team's. A teammate changes an item by editing its file; a file deleted upstream is forgotten at the next
refresh. Nothing here writes into a project.

A file is Markdown with a front matter of ``key: value`` lines (a YAML subset: a scalar is plain or a JSON
string; a list is ``key:`` then ``  - value`` lines) and the item's text as its body::

    ---
    id: rule_3fa2c1d4
    kind: rule
    trigger: testing
    learned_by: Alice Example
    learned_at: 2026-03-02T10:00:00Z
    shared_at: 2026-03-05T09:00:00Z
    confidence: 0.85
    evidence:
      - validated 3 times
    ---
    Run the integration tests with `make itest`, never `pytest -k integration`.

Refreshed when the folder changes: the hooks look at one ``stat`` of the folder (git replaces a file it
updates, so a pull changes the folder); ``s3 recall``, ``s3 status``, ``s3 list team`` and
``s3 index --rebuild`` compare every file (an edit in place). ``<home>/team_repo.json`` records, per
project, the folder's and the files' stamps and the index.db they went into (a rebuilt index is refilled).
"""

from __future__ import annotations

import json
import os

from .. import paths
from ..file_stamp import RACY_NS  # a stamp this recent may hide a change made in the same clock tick

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

KIND = "team"
PREFIX = "team_"
STATE_FILE = "team_repo.json"
README = "README.md"  # the folder's own explanation (s3 team init --repo), not an item
MAX_FILES = 1000  # files of one folder indexed (a team memory is small; more is not read)
MAX_BYTES = 16_000  # of one file
MAX_TEXT = 4000  # characters of an item's text
MAX_EVIDENCE = 10
LIST_FIELDS = ("evidence",)


# ---------------------------------------------------------------- the file format


def _scalar(value: Any) -> str:
    """A value as a front matter scalar: plain when YAML reads it back as the same string, else JSON."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    s = " ".join(str(value).split())
    plain = (s and s == s.strip() and s[0] not in "\"'[]{}!&*#?|>@`%-,:" and ": " not in s and " #" not in s
             and not s.endswith(":") and s.lower() not in ("true", "false", "null", "yes", "no", "on", "off", "~")
             and not _number(s))
    return s if plain else json.dumps(s, ensure_ascii=False)


def _number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def render(front: dict[str, Any], body: str) -> str:
    """One team file: the front matter (``None`` values left out, lists one ``- value`` a line), then
    the body."""
    lines = ["---"]
    for key, value in front.items():
        if value is None or value == []:
            continue
        if isinstance(value, list | tuple):
            lines.append(f"{key}:")
            lines += [f"  - {_scalar(v)}" for v in value]
        else:
            lines.append(f"{key}: {_scalar(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body.strip() + "\n"


def _value(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith('"'):
        try:
            return json.loads(raw)
        except ValueError:
            return raw.strip('"')
    if raw.startswith("'") and raw.endswith("'") and len(raw) > 1:
        return raw[1:-1].replace("''", "'")
    if raw.startswith("[") and raw.endswith("]"):
        return [_value(v) for v in raw[1:-1].split(",") if v.strip()]
    return raw


def parse(text: str) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a team file; ({}, text) when it has no front matter."""
    if not text.startswith("---"):
        return {}, text
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        return {}, text
    front: dict[str, Any] = {}
    key = None
    for line in head.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[:1] in (" ", "\t", "-") and key is not None and line.strip().startswith("-"):
            items = front[key] if isinstance(front.get(key), list) else []
            front[key] = [*items, _value(line.strip()[1:])]
            continue
        k, colon, v = line.partition(":")
        if colon and k.strip() and line[:1] not in (" ", "\t"):
            key = k.strip()
            front[key] = _value(v) if v.strip() else []
    return front, body.partition("\n")[2]  # what follows the closing ``---`` line


def _confidence(value: Any) -> float | None:
    try:
        c = float(value)
    except (TypeError, ValueError):
        return None
    return c if 0.0 <= c <= 1.0 else None


# ---------------------------------------------------------------- one file -> one item


def item_id(path: str) -> str:
    import hashlib

    return PREFIX + hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _read(path: str) -> str | None:
    """A regular file's first MAX_BYTES (None for a symlink, a FIFO or a device: a repository's file,
    never what a link in it points to elsewhere)."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with open(fd, encoding="utf-8", errors="replace", closefd=False) as fh:
            return fh.read(MAX_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)


def _text_list(value: Any) -> list[str]:
    from ..redact import redact

    values = value if isinstance(value, list) else [value] if value not in (None, "") else []
    return [redact(" ".join(str(v).split()))[:300] for v in values[:MAX_EVIDENCE] if str(v).strip()]


def file_item(path: str, project: str) -> dict[str, Any] | None:
    """The index item of one team file (None when it cannot be read or says nothing). Redacted: a secret
    a teammate committed never reaches the index."""
    from ..kinds import make_item
    from ..redact import redact

    raw = _read(path)
    if raw is None:
        return None
    front, body = parse(raw)
    body = body.strip()
    if not body:
        return None
    trigger = " ".join(str(front.get("trigger") or "").split())
    text = redact(f"{trigger}: {body}" if trigger else body)[:MAX_TEXT]
    meta: dict[str, Any] = {
        "file": os.path.join(paths.TEAM_FOLDER, os.path.basename(path)), "path": path,
        "origin_id": _plain(front.get("id")), "shared_kind": _plain(front.get("kind")) or "note",
        "learned_by": _plain(front.get("learned_by")), "learned_at": _plain(front.get("learned_at")),
        "shared_at": _plain(front.get("shared_at")), "confidence": _confidence(front.get("confidence")),
        "trigger": redact(trigger) or None, "evidence": _text_list(front.get("evidence")),
    }
    return make_item(item_id(path), KIND, text, project=project,
                     timestamp=meta["shared_at"] or meta["learned_at"] or _mtime_iso(path),
                     event_time=meta["learned_at"], source=path,
                     meta={k: v for k, v in meta.items() if v not in (None, [], "")})


def _plain(value: Any) -> str | None:
    from ..redact import redact

    s = " ".join(str(value).split())[:200] if isinstance(value, str | int | float) else ""
    return redact(s) or None


def _mtime_iso(path: str) -> str | None:
    from datetime import UTC, datetime

    from ..timeutil import iso

    try:
        return iso(datetime.fromtimestamp(os.stat(path).st_mtime, UTC))
    except OSError:
        return None


# ---------------------------------------------------------------- stamps and the state file


def _stamp(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in a path a payload gave
        return None
    return [st.st_mtime_ns, st.st_ino, st.st_size]


def own_folder(project: str) -> bool:
    """Whether ``<project>/.sophia/team`` is the repository's own folder, not a link out of it (to a
    folder of notes elsewhere: what is there is no team memory of this repository and is not read)."""
    real = os.path.realpath(paths.team_folder(project))
    return real == os.path.join(os.path.realpath(project), paths.TEAM_FOLDER)


def team_files(project: str) -> list[str]:
    """The folder's item files (``*.md`` but its README; regular files, not symlinks), sorted, at most
    MAX_FILES."""
    try:
        if not own_folder(project):
            return []
        with os.scandir(paths.team_folder(project)) as it:
            names = sorted(e.name for e in it if e.name.endswith(".md") and e.name != README
                           and not e.name.startswith(".") and e.is_file(follow_symlinks=False))
    except (OSError, ValueError):
        return []
    return names[:MAX_FILES]


def _scan(project: str) -> dict[str, list[int] | None]:
    folder = paths.team_folder(project)
    return {n: _stamp(os.path.join(folder, n)) for n in team_files(project)}


def state_path(home: Path | str) -> str:
    return os.path.join(home, STATE_FILE)


def read_state(home: Path | str) -> dict[str, Any]:
    try:
        with open(state_path(home), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("projects"), dict) else {}


def _index_id(home: Path | str) -> str | None:
    """Which index.db this is (device and inode): a rebuild swaps in one without our items."""
    st = _stamp(os.path.join(home, "index.db"))
    return None if st is None else f"{st[1]}"


def _racy(stamps: list[list[int] | None]) -> bool:
    import time

    newest = max((s[0] for s in stamps if s), default=0)
    return time.time_ns() - newest < RACY_NS


def kit_home(home: Path | str, project: str) -> bool:
    """Whether ``<project>/.sophia`` is the kit's own state home (a session in ``~``, outside any
    repository): its ``team/`` keeps a team database's settings, no team memory."""
    return os.path.normpath(paths.team_folder(project)) == os.path.normpath(os.path.join(home, "team"))


def changed(home: Path | str, project: str | None) -> bool:
    """Whether the project's team folder may have changed since its last refresh: one ``stat`` of the
    folder and one of index.db, and the small state file (the prompt hook asks on every prompt)."""
    if not project or kit_home(home, project):
        return False
    folder = _stamp(paths.team_folder(project))
    rec = read_state(home).get("projects", {}).get(project)
    if not isinstance(rec, dict):
        return folder is not None
    return folder != rec.get("folder") or _index_id(home) != rec.get("index_id")


# ---------------------------------------------------------------- refresh


def _current(home: Path, project: str) -> dict[str, Any] | None:
    """The project's record when the folder, every file and the index are as it says (None: look again)."""
    rec = read_state(home).get("projects", {}).get(project)
    if not isinstance(rec, dict):
        return {"count": 0} if _stamp(paths.team_folder(project)) is None else None
    same = (rec.get("folder") is not None and rec.get("folder") == _stamp(paths.team_folder(project))
            and rec.get("files") == _scan(project) and rec.get("index_id") == _index_id(home))
    return rec if same else None


def refresh(home: Path, project: str, force: bool = False, timeout: float = 30.0) -> dict[str, Any]:
    """Bring the index's team items of ``project`` up to date with its folder: changed files re-indexed,
    deleted ones dropped (the folder gone: all of them). Returns {"changed", "indexed", "removed"}. When
    nothing changed (the common case) it takes no lock and writes nothing."""
    from ..atomic import write_json_atomic
    from ..locking import locked
    from ..timeutil import iso

    if kit_home(home, project):
        return {"changed": False, "indexed": 0, "removed": 0}
    rec = None if force else _current(home, project)
    if rec is not None:
        return {"changed": False, "indexed": int(rec.get("count") or 0), "removed": 0}
    with locked(state_path(home), timeout=timeout):
        state = read_state(home) or {"projects": {}}
        rec = state["projects"].get(project) if isinstance(state["projects"].get(project), dict) else {}
        folder = _stamp(paths.team_folder(project))
        files = _scan(project)
        same = (not force and rec.get("files") == files and rec.get("index_id") == _index_id(home)
                and rec.get("index_id") is not None)
        removed = 0
        if not same:
            new = [it for it in (file_item(os.path.join(paths.team_folder(project), n), project) for n in files)
                   if it is not None]
            removed = _write_index(home, project, new)
            rec = {"count": len(new)}
        if folder is None and not files:
            state["projects"].pop(project, None)
        else:
            racy = _racy([folder, *files.values()])
            # a change in the same clock tick as this look would keep every stamp: look again next time
            state["projects"][project] = {"folder": None if racy else folder, "files": None if racy else files,
                                          "index_id": _index_id(home), "count": rec.get("count", len(files)),
                                          "refreshed_at": iso()}
        write_json_atomic(state_path(home), state)
    return {"changed": not same, "indexed": rec.get("count", 0), "removed": removed}


def _write_index(home: Path, project: str, new: list[dict[str, Any]]) -> int:
    """Upsert ``new`` and delete the project's other team items; how many were deleted."""
    from ..index import db, store

    if not new and _index_id(home) is None:
        return 0  # nothing to index and no index: none is created
    conn = db.connect(home)
    try:
        keep = {it["id"] for it in new}
        gone = [r[0] for r in conn.execute("SELECT id FROM items WHERE type = ? AND project = ?", (KIND, project))
                if r[0] not in keep]
        if new:
            store.upsert_items(conn, new)
        return store.delete_items(conn, gone) if gone else 0
    finally:
        conn.close()


def refresh_if_changed(home: Path, project: str | None, timeout: float = 2.0) -> bool:
    """:func:`refresh` when :func:`changed` says so (the prompt hook: a pull shows at the next prompt);
    True when it refreshed. Raises what refresh raises (a lock held past ``timeout``)."""
    if project and changed(home, project):
        refresh(home, project, timeout=timeout)
        return True
    return False


def projects(home: Path, extra: list[str] | None = None) -> list[str]:
    """The projects whose team folders were indexed, plus ``extra`` (those with a team folder)."""
    known = list(read_state(home).get("projects", {}))
    known += [p for p in extra or [] if p and os.path.isdir(paths.team_folder(p)) and not kit_home(home, p)]
    return sorted(set(known))


def refresh_all(home: Path, extra: list[str] | None = None) -> dict[str, Any]:
    """:func:`refresh` every known project (and ``extra``), comparing every file: ``s3 recall``,
    ``s3 status``, ``s3 list team`` and ``s3 index --rebuild``."""
    out = {}
    for project in projects(home, extra):
        out[project] = refresh(home, project)
    return out


def refresh_quietly(home: Path, extra: list[str] | None = None) -> None:
    """:func:`refresh_all` for callers that go on whatever happens (``s3 recall``): errors are ignored."""
    if not home.is_dir():
        return
    try:
        refresh_all(home, extra)
    except Exception:  # noqa: BLE001 - team memory is an extra; recall answers without it
        pass


# ---------------------------------------------------------------- what is there


def items(home: Path, extra: list[str] | None = None) -> list[dict[str, Any]]:
    """Every team file's item, project by project (``s3 list team``, the viewer)."""
    out = []
    for project in projects(home, extra):
        folder = paths.team_folder(project)
        out += [it for it in (file_item(os.path.join(folder, n), project) for n in team_files(project)) if it]
    return out


def counts(home: Path) -> dict[str, int]:
    """Team items indexed, per project (from the last refresh)."""
    return {p: int(r.get("count") or 0) for p, r in read_state(home).get("projects", {}).items()
            if isinstance(r, dict)}


# ---------------------------------------------------------------- the detached refresh (SessionStart)


def start_refresh(home: Path, project: str) -> int | None:
    """Refresh ``project`` in a detached ``python -I -S`` (the SessionStart hook, when :func:`changed`)."""
    from .claude_code import spawn

    return spawn(__name__, ["--home", str(home), "--project", project], home)


def main(argv: list[str]) -> int:
    from pathlib import Path

    home = Path(argv[argv.index("--home") + 1]) if "--home" in argv else paths.sophia_home()
    project = argv[argv.index("--project") + 1] if "--project" in argv else None
    if project and home.is_dir():
        try:
            refresh(home, project)
        except Exception:  # noqa: BLE001 - detached and silent: the next prompt or recall tries again
            return 1
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
