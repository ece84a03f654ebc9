"""Atomic, durable file writes and strict reads. Standard library only (imported by hooks).

A write goes to a temp file in the same directory, is fsynced, then renamed over the
target, and the directory is fsynced: a reader sees the old file or the new one, never
a half-written or empty one, even if the writer is killed. The newest good version
of a state file is also copied under ``backups/last/`` so ``s3 doctor --repair`` can
restore it.

Inside :func:`deferred_sync` a durable write that replaces a file renames the new version into place
unsynced (as a ``durable=False`` write does: the rename over the old file never leaves it torn or
empty) and the fsyncs wait for :func:`sync_files`: SessionEnd's, until its answer is out. A new file is
still fsynced at once (nothing guards a fresh name's content but its fsync).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .errors import StateFileError, StateWriteError

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

FILE_MODE = 0o600
DIR_MODE = 0o700


def ensure_dir(path: Path) -> None:
    if not path.is_dir():
        try:
            path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        except OSError as exc:
            raise StateWriteError(path, exc.strerror or str(exc)) from exc


# the files whose fsync waits (deferred_sync): None when a durable write fsyncs at once
_deferred: list[str] | None = None


@contextlib.contextmanager
def deferred_sync() -> Iterator[list[str]]:
    """Inside, a durable write over an existing file puts off its fsyncs and adds the file to the list
    yielded; pass the list to :func:`sync_files` (once, later). Outside, writes fsync at once again."""
    global _deferred
    outer, _deferred = _deferred, []
    try:
        yield _deferred
    finally:
        _deferred = outer


def sync_files(files: list[str]) -> None:
    """fsync each file (one gone since is skipped), then each folder holding one: what :func:`deferred_sync`
    put off, now as durable as a write that fsynced at once."""
    for f in dict.fromkeys(files):
        _fsync_path(f, os.O_RDONLY)
    for folder in dict.fromkeys(os.path.dirname(f) for f in files):
        _fsync_dir(Path(folder))


def _fsync_dir(path: Path) -> None:
    _fsync_path(path, os.O_RDONLY | os.O_DIRECTORY)


def _fsync_path(path: Path | str, flags: int) -> None:
    """fsync what ``path`` names (opened with ``flags``); one gone or refused is skipped."""
    with contextlib.suppress(OSError):
        fd = os.open(path, flags | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_bytes_atomic(path: Path | str, data: bytes, *, keep_last: Path | None = None, durable: bool = True) -> None:
    """Atomically replace ``path`` with ``data`` (mode 0600); a failed write leaves no temp file.

    ``keep_last``: where a copy of the new version goes once it is in place: the last good
    copy ``s3 doctor --repair`` restores if the file is later damaged. ``durable=False``: no fsync (a
    record that only lives as long as a session, written on a hook's path).
    """
    target = Path(path)
    ensure_dir(target.parent)
    tmp_name = ""
    pending = _deferred if durable and _deferred is not None and target.exists() else None
    durable = durable and pending is None
    try:
        # os.open with O_EXCL instead of tempfile.mkstemp: importing tempfile costs hooks a few ms.
        tmp_name = str(target.parent / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        fd = os.open(tmp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, target)
        tmp_name = ""
        if durable:
            _fsync_dir(target.parent)
        elif pending is not None:
            pending.append(str(target))
        if keep_last is not None:
            # A copy, not a hard link: a hand edit in place would change a linked twin too.
            with contextlib.suppress(StateWriteError):
                write_bytes_atomic(keep_last, data)
    except OSError as exc:
        raise StateWriteError(target, exc.strerror or str(exc)) from exc
    finally:
        if tmp_name:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)


def dumps(obj: Any, depth: int | None = None) -> bytes:
    """JSON text, indented. ``depth``: only the first ``depth`` levels get a line per element, what lies
    below is written on that line (episodes and the episode index: one action, one entry per line). The
    compact parts go through the C encoder; an indented ``json.dumps`` runs in pure Python, ten times slower
    on a 1,000-entry index rewritten after a turn."""
    if depth is None:
        return (json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    return (_lines(obj, depth, "") + "\n").encode("utf-8")


def _lines(obj: Any, depth: int, pad: str) -> str:
    if depth <= 0 or not isinstance(obj, (dict, list)) or not obj:
        return json.dumps(obj, ensure_ascii=False, default=str)
    inner = pad + "  "
    if isinstance(obj, dict):
        body = ",\n".join(f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_lines(v, depth - 1, inner)}"
                          for k, v in obj.items())
        return f"{{\n{body}\n{pad}}}"
    body = ",\n".join(f"{inner}{_lines(v, depth - 1, inner)}" for v in obj)
    return f"[\n{body}\n{pad}]"


def write_json_atomic(path: Path | str, obj: Any, *, keep_last: Path | None = None, durable: bool = True,
                      depth: int | None = None) -> None:
    """``durable=False``: no fsync (a file rewritten after every turn of a session: its next write, or the
    session's end, which is durable, follows; the rename still never leaves a torn file). ``depth``: see
    :func:`dumps`."""
    data = dumps(obj, depth)
    write_bytes_atomic(path, data, durable=durable)
    if keep_last is not None:
        # A copy, not a hard link: a hand edit in place would change a linked twin too.
        with contextlib.suppress(StateWriteError):
            write_bytes_atomic(keep_last, data, durable=durable)


def delete_stale(folder: Path, suffixes: tuple[str, ...], before: float) -> int:
    """Delete the regular files in ``folder`` named with one of ``suffixes`` and last changed before
    ``before`` (a time stamp): what killed sessions left behind. Never raises; how many went."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    removed = 0
    for e in entries:
        try:
            if e.name.endswith(suffixes) and e.is_file(follow_symlinks=False) \
                    and e.stat(follow_symlinks=False).st_mtime < before:
                os.unlink(e.path)
                removed += 1
        except OSError:
            continue
    return removed


def read_json(path: Path | str, default: Any = None) -> Any:
    """Parse a JSON state file. Missing -> ``default``; unparsable -> :class:`StateFileError`."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return default
    except IsADirectoryError as exc:
        raise StateFileError(p, "is a directory, expected a JSON file") from exc
    except OSError as exc:
        raise StateFileError(p, f"cannot read: {exc.strerror or exc}") from exc
    if not raw.strip():
        raise StateFileError(p, "file is empty")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise StateFileError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except RecursionError as exc:
        raise StateFileError(p, "JSON nested too deeply") from exc
    except json.JSONDecodeError as exc:
        raise StateFileError(p, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc


def append_line(path: Path | str, line: str) -> None:
    """Append one line (O_APPEND, one write: concurrent appenders never interleave lines)."""
    p = Path(path)
    ensure_dir(p.parent)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    try:
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StateWriteError(p, exc.strerror or str(exc)) from exc
