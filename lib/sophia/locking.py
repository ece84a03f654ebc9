"""Inter-process locks on state files. Standard library only (imported by hooks).

Protocol (seed 11.4, made crash-proof): the lock for ``X`` is an advisory ``flock`` on
``X.lock``. The kernel drops a flock when its holder dies, so a killed process can never
leave a stale lock behind: the next writer gets the lock at once. A lock held by a live
process longer than ``timeout`` (default 5 s) raises :class:`LockTimeout` naming the file
and the holder's pid. The lock file is never unlinked (unlinking would let two writers
lock two different inodes).

The CLI takes the lock through the ``filelock`` package (``UnixFileLock``); hooks run
with ``python -I -S`` and no site-packages, and take the very same kernel lock through
``fcntl`` directly (importing filelock alone costs ~80 ms). Both exclude each other: a
test holds one kind and checks the other waits.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sys
import time
from pathlib import Path

from .errors import LockTimeout, StateWriteError

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

DEFAULT_TIMEOUT = 5.0
_POLL = 0.01


def lock_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _filelock_module() -> Any:
    if sys.flags.no_site:
        return None
    try:
        import filelock
    except ImportError:
        return None
    return filelock


@contextlib.contextmanager
def locked(path: Path | str, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` for the duration of the block."""
    target = Path(path)
    lp = lock_path_for(target)
    fl = _filelock_module()
    if fl is not None:
        try:
            lp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StateWriteError(lp, exc.strerror or str(exc)) from exc
        lock = fl.UnixFileLock(str(lp), timeout=timeout, mode=0o600)
        try:
            lock.acquire()
        except fl.Timeout:
            raise LockTimeout(target, timeout, _read_holder(lp)) from None
        except OSError as exc:
            raise StateWriteError(lp, exc.strerror or str(exc)) from exc
        try:
            _write_holder(lp)
            yield
        finally:
            lock.release()
        return
    try:
        lp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(lp, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise StateWriteError(lp, exc.strerror or str(exc)) from exc
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() >= deadline:
                    raise LockTimeout(target, timeout, _holder(fd)) from None
                time.sleep(_POLL)
        with contextlib.suppress(OSError):
            os.pwrite(fd, f"{os.getpid():<10d}\n".encode(), 0)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f"pid {raw}" if raw.isdigit() else ""


def _read_holder(lp: Path) -> str:
    try:
        raw = lp.read_bytes()[:32].decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f"pid {raw}" if raw.isdigit() else ""


def _write_holder(lp: Path) -> None:
    """Record the holder's pid (fixed width, so no truncation is ever needed)."""
    with contextlib.suppress(OSError):
        fd = os.open(lp, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.pwrite(fd, f"{os.getpid():<10d}\n".encode(), 0)
        finally:
            os.close(fd)


# ---- singletons (a background process that must run once per home: worker, reflection, embedding service)

_BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)


def try_flock(path: Path | str) -> int | None:
    """Open ``path`` (created 0600) and take its flock without waiting: the open fd, which holds the lock
    until it is closed or the process exits, or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in _BUSY:
            return None
        raise
    return fd


def flock_held(path: Path | str) -> bool:
    """True while some process holds the flock on ``path`` (a singleton is alive); never creates it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in _BUSY
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
