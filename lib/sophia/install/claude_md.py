"""Taking the System 3 block out of a CLAUDE.md again (uninstall). Standard library only.

``s3 refresh-identity`` writes its block between the markers of :mod:`sophia.identity_md`, appended
after the user's own text with a separator (:func:`sophia.identity_md.splice`), as a new file mode
0600, and locks through ``CLAUDE.md.lock``. The install records what the file was before
(:func:`snapshot`: existed, mode, sha256); :func:`clean` puts back exactly the user's bytes and mode:
the separator is undone by trying each text ``splice`` could have started from, the recorded hash
picking the right one (else the one ending in a single newline, the usual case); a file the install
did not find is deleted when nothing but the block was in it; the lock file goes too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

from sophia.identity_md import BEGIN, END, splice
from sophia.install.settings_merge import write_through

LOCK_SUFFIX = ".lock"  # sophia.locking.lock_path_for


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def snapshot(path: Path) -> dict[str, Any]:
    """What ``path`` is before the install (``existed`` None: it already holds a block, so unknown)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {"path": str(path), "existed": False, "mode": None, "sha256": None}
    except OSError:
        return {"path": str(path), "existed": None, "mode": None, "sha256": None}
    text = data.decode("utf-8", errors="replace")
    if BEGIN in text:
        return {"path": str(path), "existed": None, "mode": None, "sha256": None}
    return {"path": str(path), "existed": True, "mode": path.stat().st_mode & 0o777,
            "sha256": hashlib.sha256(data).hexdigest()}


def _origins(head: str) -> list[str]:
    """Every user text that ``splice`` turns into ``head`` + block, the most usual first."""
    cands = [head[:-1], head, head[:-2]] if head.endswith("\n\n") else []
    return [c for c in cands if c.strip() and splice(c, "x").startswith(head + BEGIN)]


def strip_block(text: str, sha256: str | None = None) -> str | None:
    """``text`` without our block and the separator added with it; None when it has no block."""
    start = text.find(BEGIN)
    end = text.find(END, start + len(BEGIN)) if start >= 0 else -1
    if start < 0 or end < 0:
        return None
    head, tail = text[:start], text[end + len(END):]
    tail = tail[1:] if tail.startswith("\n") else tail
    if tail:  # the user wrote after the block: keep both sides as they are
        return head + tail
    if not head.strip():
        return ""
    origins = _origins(head)
    for cand in origins:
        if sha256 and _sha(cand) == sha256:
            return cand
    return origins[0] if origins else head


def plan(path: Path, record: dict[str, Any] | None) -> dict[str, Any] | None:
    """What :func:`clean` would do to ``path``: None when it holds no block (and no lock of ours)."""
    record = record or {}
    lock = path.with_name(path.name + LOCK_SUFFIX)
    try:
        text: str | None = path.read_bytes().decode("utf-8")  # bytes: keep \r\n as they are
    except (OSError, UnicodeDecodeError):
        text = None
    new = strip_block(text, record.get("sha256")) if text is not None else None
    if new is None:
        return {"action": "lock", "path": str(lock)} if lock.is_file() else None
    delete = not new.strip() and record.get("existed") is not True
    mode = record.get("mode")
    return {"action": "delete" if delete else "strip", "path": str(path), "text": new,
            "mode": mode if isinstance(mode, int) else None, "lock": str(lock) if lock.is_file() else None}


def clean(step: dict[str, Any]) -> None:
    """Carry out a :func:`plan` step."""
    path = Path(step["path"])
    if step["action"] == "delete":
        path.unlink()
    elif step["action"] == "strip":
        current = path.stat().st_mode & 0o777
        write_through(path, step["text"], step["mode"] if step["mode"] is not None else current)
    lock = step.get("lock") or (step["path"] if step["action"] == "lock" else None)
    if lock:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
