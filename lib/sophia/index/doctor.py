"""``s3 doctor`` check for the index: a missing, unreadable or corrupt index.db is reported;
``--repair`` moves it to quarantine/ and rebuilds it from the files. Registered with
``sophia.state.register_checker`` by ``s3 doctor`` (``cli/cmd_core.py``)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from .. import paths


def _has_sources(home: Path) -> bool:
    from .conversations import conversation_files
    from .rebuild import _episode_files, _memory_files

    return bool(_episode_files(home) or _memory_files(home) or conversation_files(home))


def diagnose(home: Path) -> str | None:
    """Why the index is unusable, or None when it is fine (or legitimately absent)."""
    p = paths.index_db_path(home)
    if not p.exists():
        return "missing (recall finds nothing until it is rebuilt)" if _has_sources(home) else None
    try:
        conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return f"cannot be opened: {exc}"
    try:
        rows = conn.execute("PRAGMA integrity_check").fetchall()
        if [r[0] for r in rows] != ["ok"]:
            return "failed the SQLite integrity check: " + "; ".join(str(r[0]) for r in rows[:3])
        conn.execute("SELECT count(*), max(rowid) FROM items").fetchone()
        conn.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH 'x'").fetchone()
    except sqlite3.Error as exc:
        return f"is not a usable index ({exc})"
    finally:
        conn.close()
    return None


def check_index(home: Path, repair: bool) -> list[Any]:
    from ..state import Problem, quarantine
    from .rebuild import rebuild

    reason = diagnose(home)
    if reason is None:
        return []
    p = paths.index_db_path(home)
    prob = Problem(p, reason)
    if repair:
        actions = []
        if p.exists():
            actions.append(f"moved to {quarantine(p, home)}")
            for side in (Path(f"{p}-wal"), Path(f"{p}-shm")):
                with contextlib.suppress(OSError):
                    if side.exists():
                        quarantine(side, home)
        try:
            res = rebuild(home)
            actions.append(f"rebuilt from the files ({res['items']} items)")
        except Exception as exc:
            actions.append(f"rebuild failed: {exc}; no good copy")
        prob.action = "; ".join(actions)
    return [prob]
