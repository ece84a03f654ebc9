"""Claude Code's own memory, indexed read-only as the ``cc_memory`` kind. Standard library only.

Claude Code keeps its auto memory in ``~/.claude/projects/<slug>/memory/`` (``MEMORY.md`` and one
Markdown file per memory, frontmatter ``name``/``description``/``type``; ``autoMemoryDirectory``
moves it) and reads ``CLAUDE.md`` files (``~/.claude/CLAUDE.md``, ``<project>/CLAUDE.md``,
``<project>/.claude/CLAUDE.md``, ``<project>/CLAUDE.local.md``). This module only READS them: never
a write, rename or delete under ``~/.claude`` or in a project. Each file is one index item (id
``cc_`` + a hash of its path, the path as ``source``, its mtime as event time; our own block in a
CLAUDE.md, :mod:`sophia.identity_md`, is left out: it is already memory of ours). The hooks never
inject them (Claude Code loads them itself); ``s3 recall`` and the subagents find them.

Refreshed when stale, by mtime: :func:`refresh` (``s3 recall``, ``s3 status``, ``s3 index --rebuild``,
and a detached run the SessionStart hook starts when :func:`stale_for` says so, a few ``stat`` calls).
What was indexed is recorded in ``<home>/cc_memory.json``, with the identity (inode) of the index.db it
went into: an index rebuilt or repaired from our own files (which do not hold these) is refilled.
"""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

KIND = "cc_memory"
PREFIX = "cc_"
STATE_FILE = "cc_memory.json"
MAX_TEXT = 32_000
DISABLE_ENV = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_TRANSCRIPT_HEAD = 64 * 1024  # bytes of a transcript read for its cwd (the first lines carry it)
_FRONT = r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)"  # compiled on first use (re caches it), not on the hook's import


# ---------------------------------------------------------------- where Claude Code keeps things


def claude_dir() -> str:
    """Claude Code's config folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    return os.path.expanduser(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude")


def slug(project: str) -> str:
    """Claude Code's folder name for a project under ``~/.claude/projects`` (every character but
    ASCII letters and digits becomes ``-``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", project)


def _settings(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _settings_chain(project: str | None) -> list[tuple[str, dict[str, Any]]]:
    """(file, settings), lowest precedence first: user, project, project local."""
    files = [os.path.join(claude_dir(), "settings.json")]
    if project:
        files += [os.path.join(project, ".claude", "settings.json"),
                  os.path.join(project, ".claude", "settings.local.json")]
    return [(f, _settings(f)) for f in files]


def auto_memory(project: str | None = None) -> dict[str, Any]:
    """Whether Claude Code's auto memory is on for this user (and project), and why. Read only."""
    env = (os.environ.get(DISABLE_ENV) or "").strip().lower()
    if env in _TRUE:
        return {"enabled": False, "why": f"{DISABLE_ENV}={env}", "directory": None}
    enabled, why, directory = True, "Claude Code's default", None
    for f, s in _settings_chain(project):
        if isinstance(s.get("autoMemoryEnabled"), bool):
            enabled, why = s["autoMemoryEnabled"], f"autoMemoryEnabled={str(s['autoMemoryEnabled']).lower()} in {f}"
        if isinstance(s.get("autoMemoryDirectory"), str) and s["autoMemoryDirectory"].strip():
            directory = os.path.expanduser(s["autoMemoryDirectory"].strip())
    if env in _FALSE:
        enabled, why = True, f"{DISABLE_ENV}={env}"
    return {"enabled": enabled, "why": why, "directory": directory}


def _md_files(folder: str) -> list[str]:
    """The Markdown files of a memory folder and of its ``team/`` subfolder (one scandir each)."""
    out = []
    for d in (folder, os.path.join(folder, "team")):
        try:
            with os.scandir(d) as it:
                out += sorted(e.path for e in it if e.name.endswith(".md") and e.is_file())
        except OSError:
            continue
    return out


def claude_md_candidates(project: str | None, base: str | None = None) -> list[str]:
    """The CLAUDE.md files Claude Code reads for ``project`` (user's first), whether they exist or not."""
    out = [os.path.join(base or claude_dir(), "CLAUDE.md")]
    if project:
        out += [os.path.join(project, "CLAUDE.md"), os.path.join(project, ".claude", "CLAUDE.md"),
                os.path.join(project, "CLAUDE.local.md")]
    return out


def transcript_project(folder: str) -> str | None:
    """The project a ``~/.claude/projects/<slug>`` folder belongs to, from the ``cwd`` its newest session
    transcripts record (the slug alone is lossy: ``-`` stands for ``/``, ``.``, ``_`` and ``-``). None when
    no transcript names a folder whose slug is this one. Reads the head of at most three files."""
    name = os.path.basename(folder.rstrip(os.sep))
    try:
        with os.scandir(folder) as it:
            logs = sorted((e for e in it if e.name.endswith(".jsonl") and e.is_file()),
                          key=lambda e: e.stat().st_mtime_ns, reverse=True)[:3]
    except OSError:
        return None
    for e in logs:
        try:
            with open(e.path, encoding="utf-8", errors="replace") as fh:
                head = fh.readlines(_TRANSCRIPT_HEAD)
        except OSError:
            continue
        for line in head:
            try:
                cwd = json.loads(line).get("cwd")
            except (ValueError, AttributeError):
                continue
            if isinstance(cwd, str) and os.path.isabs(cwd) and slug(cwd) == name:
                return cwd
    return None


def sources(projects: list[str]) -> list[tuple[str, str, str | None]]:
    """(path, role, project) of every file to index: every memory folder under ``~/.claude/projects``
    (project None when the kit does not know it: :func:`assigned` looks it up), the folder
    ``autoMemoryDirectory`` names, the user's CLAUDE.md and each known project's CLAUDE.md files."""
    seen: dict[str, tuple[str, str, str | None]] = {}
    base = claude_dir()
    by_slug = {slug(p): p for p in projects}
    try:
        with os.scandir(os.path.join(base, "projects")) as it:
            slugs = sorted(e.name for e in it if e.is_dir())
    except OSError:
        slugs = []
    for s in slugs:
        for p in _md_files(os.path.join(base, "projects", s, "memory")):
            seen[p] = (p, "auto_memory", by_slug.get(s))
    directory = auto_memory(None)["directory"]  # a user setting: one folder for every project
    for p in _md_files(directory) if directory else []:
        seen.setdefault(p, (p, "auto_memory", None))
    user_md = os.path.join(base, "CLAUDE.md")
    if os.path.isfile(user_md):
        seen[user_md] = (user_md, "claude_md", None)
    for project in projects:
        for p in claude_md_candidates(project, base)[1:]:
            if os.path.isfile(p):
                seen.setdefault(p, (p, "claude_md", project))
    return list(seen.values())


def assigned(srcs: list[tuple[str, str, str | None]]) -> list[tuple[str, str, str | None]]:
    """``srcs`` with each memory folder of a project the kit does not know given the project its
    transcripts name (:func:`transcript_project`, once per folder), so that recall in another project
    does not take it for a memory of every project."""
    root = os.path.join(claude_dir(), "projects") + os.sep
    found: dict[str, str | None] = {}
    out = []
    for path, role, project in srcs:
        if project is None and role == "auto_memory" and path.startswith(root):
            folder = root + path[len(root):].split(os.sep, 1)[0]
            if folder not in found:
                found[folder] = transcript_project(folder)
            project = found[folder]
        out.append((path, role, project))
    return out


# ---------------------------------------------------------------- one file -> one item


def item_id(path: str) -> str:
    import hashlib

    return PREFIX + hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def frontmatter(text: str) -> tuple[dict[str, str], str]:
    """(``key: value`` pairs of a leading ``---`` block, the body after it)."""
    m = re.match(_FRONT, text, re.S)
    if not m:
        return {}, text
    fields = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            fields[key.strip()] = value.strip().strip("\"'")
    return fields, text[m.end():]


def _without_our_block(text: str) -> str:
    from ..kinds import CLAUDE_MD_BEGIN as BEGIN
    from ..kinds import CLAUDE_MD_END as END

    start = text.find(BEGIN)
    end = text.find(END, start + 1) if start >= 0 else -1
    return text if start < 0 or end < 0 else text[:start] + text[end + len(END):]


def file_item(path: str, role: str, project: str | None) -> dict[str, Any] | None:
    """The index item of one file (None when it cannot be read). Its text is redacted."""
    from ..kinds import make_item
    from ..redact import redact
    from ..timeutil import iso

    try:
        st = os.stat(path)
        with open(path, encoding="utf-8", errors="replace") as fh:
            raw = fh.read(MAX_TEXT * 2)
    except OSError:
        return None
    fields, body = frontmatter(raw)
    fields = {k: redact(v) for k, v in fields.items()}
    if role == "claude_md":
        body = _without_our_block(body)
    head = ": ".join(v for v in (fields.get("name"), fields.get("description")) if v)
    text = redact(f"{head}\n{body}".strip() if head else body.strip())[:MAX_TEXT]
    if not text:
        return None
    from datetime import UTC, datetime

    when = iso(datetime.fromtimestamp(st.st_mtime, UTC))
    meta = {"path": path, "role": role, "file": os.path.basename(path), "name": fields.get("name"),
            "description": fields.get("description"), "memory_type": fields.get("type"),
            "mtime_ns": st.st_mtime_ns}
    return make_item(item_id(path), KIND, text, project=project, timestamp=when, event_time=when,
                     source=path, meta={k: v for k, v in meta.items() if v is not None})


# ---------------------------------------------------------------- what was indexed, and when it is stale


def state_path(home: Path) -> Path:
    return home / STATE_FILE


def read_state(home: Path) -> dict[str, Any]:
    try:
        with open(state_path(home), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _index_id(home: Path) -> str | None:
    """Which index.db this is (device and inode): a rebuild or a repair swaps in a new one, without our items."""
    try:
        st = os.stat(os.path.join(home, "index.db"))
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


def _folder_of(project: str) -> str:
    return os.path.join(claude_dir(), "projects", slug(project), "memory")


def stale_for(home: Path, project: str | None) -> bool:
    """True when what Claude Code keeps for ``project`` changed since the last refresh: a new project,
    a memory folder or CLAUDE.md added, changed or removed. A few ``stat`` calls (the SessionStart
    hook asks; tests/test_cc_memory.py times it)."""
    st = read_state(home)
    files = st.get("files")
    if not isinstance(files, dict):
        return True
    if (project and project not in (st.get("projects") or [])) or _index_id(home) != st.get("index_id"):
        return True
    watched = [*claude_md_candidates(project)]
    folder = _folder_of(project) if project else ""
    if folder:
        watched += [folder, os.path.join(folder, "team")]
    dirs = st.get("dirs")
    dirs = dirs if isinstance(dirs, dict) else {}
    for p in watched:
        if _mtime(p) != (files.get(p) if p in files else dirs.get(p)):
            return True
    return any(_mtime(p) != m for p, m in files.items() if folder and p.startswith(folder + os.sep))


def known_projects(home: Path, extra: list[str] | None = None) -> list[str]:
    """The projects the kit has seen (its episodes' and the last refresh's), plus ``extra``. The episode
    index (up to 1000 entries) is read only when it changed since the last refresh."""
    from .. import paths

    st = read_state(home)
    found: list[str] = list(extra or []) + [p for p in st.get("projects") or [] if isinstance(p, str)]
    ip = paths.episode_index_path(home)
    if _mtime(str(ip)) != st.get("episode_index_mtime") or not st:
        try:
            with open(ip, encoding="utf-8") as fh:
                index = json.load(fh)
            entries = index.get("entries") if isinstance(index, dict) else None
        except (OSError, ValueError):
            entries = None
        found += [e["project"] for e in entries or [] if isinstance(e, dict) and isinstance(e.get("project"), str)]
    return sorted({p for p in found if p and os.path.isabs(p)})


def _watched_dirs(projects: list[str]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for project in projects:
        folder = _folder_of(project)
        out[folder] = _mtime(folder)
        out[os.path.join(folder, "team")] = _mtime(os.path.join(folder, "team"))
    return out


def items(home: Path, projects: list[str] | None = None) -> list[dict[str, Any]]:
    """Every file's index item (``s3 list cc_memory``)."""
    projects = known_projects(home) if projects is None else projects
    return [it for it in (file_item(*src) for src in assigned(sources(projects))) if it is not None]


def refresh(home: Path, extra_projects: list[str] | None = None, force: bool = False) -> dict[str, Any]:
    """Bring the index's ``cc_memory`` items up to date with the files when they changed (by mtime):
    changed files re-indexed, vanished ones dropped. Returns {"changed", "indexed", "removed"}."""
    from .. import paths

    projects = known_projects(home, extra_projects)
    srcs = sources(projects)
    files = {p: _mtime(p) for p, _, _ in srcs}
    dirs = _watched_dirs(projects)
    index_mtime = _mtime(str(paths.episode_index_path(home)))

    def unchanged(st: dict[str, Any]) -> bool:
        return (files == st.get("files") and dirs == st.get("dirs") and projects == st.get("projects")
                and index_mtime == st.get("episode_index_mtime") and _index_id(home) == st.get("index_id"))

    st = read_state(home)
    if not force and (unchanged(st) or unchanged({**st, "episode_index_mtime": index_mtime})):
        # the common case: no lock, no index. After a turn (the episode index rewritten) with no new project
        # there is nothing to index either: the index is read again (known_projects) until a refresh records it
        return {"changed": False, "indexed": len(files), "removed": 0}
    from ..locking import locked

    with locked(state_path(home), timeout=30):
        if not force and unchanged(read_state(home)):
            return {"changed": False, "indexed": len(files), "removed": 0}
        new = [it for it in (file_item(*src) for src in assigned(srcs)) if it is not None]
        removed = _write_index(home, new)
        counts = {"auto_memory": sum(1 for it in new if it["meta"]["role"] == "auto_memory"),
                  "claude_md": sum(1 for it in new if it["meta"]["role"] == "claude_md")}
        from ..atomic import write_json_atomic
        from ..timeutil import iso

        write_json_atomic(state_path(home), {"files": files, "dirs": dirs, "projects": projects,
                                             "episode_index_mtime": index_mtime, "index_id": _index_id(home),
                                             "counts": counts, "refreshed_at": iso()})
    return {"changed": True, "indexed": len(new), "removed": removed, "counts": counts}


def _write_index(home: Path, new: list[dict[str, Any]]) -> int:
    """Upsert ``new``, delete the kind's other items; returns how many were deleted."""
    from ..index import db, store

    if not new and _index_id(home) is None:
        return 0  # nothing to index and no index: none is created
    conn = db.connect(home)
    try:
        keep = {it["id"] for it in new}
        gone = [r[0] for r in conn.execute("SELECT id FROM items WHERE type = ?", (KIND,)) if r[0] not in keep]
        if new:
            store.upsert_items(conn, new)
        return store.delete_items(conn, gone) if gone else 0
    finally:
        conn.close()


def refresh_quietly(home: Path, extra_projects: list[str] | None = None) -> None:
    """:func:`refresh` for callers that must go on whatever happens (``s3 recall``): errors are ignored."""
    if not home.is_dir():
        return
    try:
        refresh(home, extra_projects)
    except Exception:  # noqa: BLE001 - Claude Code's memory is an extra; recall answers without it
        pass


def indexed_count(home: Path) -> int:
    """How many of Claude Code's files the index holds now (0 without an index)."""
    from ..index import db

    try:
        conn = db.read_only(home, 1.0)
    except Exception:  # noqa: BLE001 - sqlite3.Error, OSError: no count
        return 0
    if conn is None:
        return 0
    try:
        return int(conn.execute("SELECT count(*) FROM items WHERE type = ?", (KIND,)).fetchone()[0])
    except Exception:  # noqa: BLE001 - an old schema
        return 0
    finally:
        conn.close()


def status(home: Path, project: str | None) -> dict[str, Any]:
    """For ``s3 status``: auto memory on or off (and why) and how many of Claude Code's files are indexed."""
    am = auto_memory(project)
    st = read_state(home)
    return {"auto_memory_enabled": am["enabled"], "why": am["why"], "directory": am["directory"]
            or (_folder_of(project) if project else None), "project": project,
            "files_indexed": indexed_count(home), "by_role": st.get("counts") or {},
            "refreshed_at": st.get("refreshed_at")}


# ---------------------------------------------------------------- the detached refresh (SessionStart)

_BOOT = ("import sys, runpy; sys.path.insert(0, sys.argv[1]); m = sys.argv[2]; del sys.argv[1:3]; "
         "sys.argv[0] = m; runpy.run_module(m, run_name='__main__', alter_sys=True)")


def start_refresh(home: Path, project: str | None) -> int | None:
    """Start ``python -I -S -m sophia.memory.claude_code`` detached (its own session, no output) without
    waiting; returns its pid (None when it could not start)."""
    return spawn(__name__, ["--home", str(home), *(["--project", project] if project else [])], home)


def spawn(module: str, args: list[str], home: Path) -> int | None:
    """Run ``python -I -S -m MODULE ARGS`` detached (its own session, no output) without waiting; its pid,
    None when it could not start. ``os.posix_spawn``: no subprocess import on a hook's path."""
    import sys

    lib = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    argv = [sys.executable, "-I", "-S", "-c", _BOOT, lib, module, *args]
    env = {k: v for k, v in os.environ.items() if k != "SOPHIA_HOOK_GUARD"}
    env["SOPHIA_HOME"] = str(home)
    devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        return os.posix_spawn(sys.executable, argv, env, file_actions=devnull, setsid=True)
    except OSError:
        return None


def main(argv: list[str]) -> int:
    from pathlib import Path

    home = Path(argv[argv.index("--home") + 1]) if "--home" in argv else None
    project = argv[argv.index("--project") + 1] if "--project" in argv else None
    if home is None:
        from .. import paths

        home = paths.sophia_home()
    refresh_quietly(home, [project] if project else None)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
