"""What a session's context already holds: the ids of the memories injected into it. Stdlib only.

One small JSON file per session (``paths.shown_path``: ``run/shown/<session>.json``)::

    {"session": "...", "origin": "SessionStart:startup", "last": "UserPromptSubmit", "ids": ["ep_...", ...]}

- SessionStart (any ``source``: startup, resume, clear, compact, fork) starts it afresh with the ids it
  showed: whatever the context held before is gone or is the transcript of a session it cannot see.
- Every prompt adds the ids it injected; the prompt hook never injects an id already here
  (``prompt_context.select``), so each memory reaches a session's context once.
- Compaction forgets: PreCompact empties it; PostCompact empties it too, unless SessionStart (source
  ``compact``) was the last to write it (it started it afresh for this compaction: Claude Code may run
  the two in either order). ``origin`` says what started the record, ``last`` what wrote it last.
- Bounded: the newest ``MAX_IDS`` ids. SessionEnd deletes the file; a killed session's file is swept
  once untouched for ``STALE_S`` (:func:`sweep`, at every SessionEnd).

The record is a cache: written atomically (a temporary file renamed over it) but not fsynced; losing it
costs at most one repeat of a memory. An unreadable file counts as empty.
"""

from __future__ import annotations

import json
import os
import time

from sophia import paths

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

MAX_IDS = 300
STALE_S = 2 * 86400.0
MAX_FILE_BYTES = 64 * 1024  # MAX_IDS ids of a few dozen characters each fit with room to spare
COMPACT_ORIGIN = "SessionStart:compact"


def ids_in(text: str) -> list[str]:
    """The ids an injected text shows: each ``- [id]`` a memory's line starts with (the renderers'
    shape: ``context.item_lines``, SessionStart's sections), in order, each once."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("- [") and "]" in line:
            item = line[3:line.index("]")]
            if item and " " not in item and item not in out:
                out.append(item)
    return out


def _read(home: Path, session: str) -> dict[str, Any]:
    try:
        with open(paths.shown_path(home, session), "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        data = json.loads(raw) if len(raw) <= MAX_FILE_BYTES else None
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("ids"), list) else {}


def load(home: Path, session: str | None) -> set[str]:
    """The ids already in ``session``'s context (empty when unknown)."""
    if not session:
        return set()
    return {i for i in _read(home, session).get("ids") or [] if isinstance(i, str)}


def _write(home: Path, session: str, origin: str, ids: list[str], last: str | None = None) -> None:
    from ..atomic import write_bytes_atomic

    data = {"session": session, "origin": origin, "last": last or origin, "ids": ids[-MAX_IDS:]}
    write_bytes_atomic(paths.shown_path(home, session), json.dumps(data, ensure_ascii=False).encode("utf-8"),
                       durable=False)  # a session's record: no fsync on the prompt's path


def add(home: Path, session: str | None, ids: Iterable[str]) -> int:
    """Record ``ids`` as injected into ``session``; how many were new."""
    if not session:
        return 0
    data = _read(home, session)
    known = [i for i in data.get("ids") or [] if isinstance(i, str)]
    had = set(known)
    new = [i for i in dict.fromkeys(ids) if i not in had]
    if new:
        _write(home, session, str(data.get("origin") or "UserPromptSubmit"), known + new, "UserPromptSubmit")
    return len(new)


def start(home: Path, session: str | None, origin: str, ids: Iterable[str] = ()) -> None:
    """Start ``session``'s record afresh (its context was just started, cleared or compacted)."""
    if session:
        _write(home, session, origin, list(dict.fromkeys(ids)))


def after_compaction(home: Path, session: str | None, event: str) -> str:
    """PreCompact / PostCompact: empty the record ('reset'), unless at PostCompact SessionStart
    already started it afresh for this compaction ('kept': it wrote it last)."""
    if not session:
        return ""
    if event == "PostCompact" and _read(home, session).get("last") == COMPACT_ORIGIN:
        return "kept"
    start(home, session, event)
    return "reset"


def remove(home: Path, session: str | None) -> bool:
    """SessionEnd: the session's record goes (True when there was one)."""
    if not session:
        return False
    try:
        os.unlink(paths.shown_path(home, session))
    except OSError:
        return False
    return True


def sweep(home: Path, now: float | None = None, max_age: float = STALE_S) -> int:
    """Delete the records (and stray temporary files) untouched for ``max_age`` seconds: sessions
    killed before their SessionEnd. Returns how many went."""
    from ..atomic import delete_stale

    return delete_stale(paths.shown_dir(home), (".json", ".tmp"), (now if now is not None else time.time()) - max_age)
