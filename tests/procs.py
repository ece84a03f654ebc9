"""Finding and stopping the processes the tests start (scans /proc; Linux only, like the kit's CI)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return None


def running(pid: int) -> bool:
    """Alive and not a zombie (a zombie has exited and only waits to be reaped)."""
    state = _state(pid)
    return state is not None and state != "Z"


def live_pids() -> Iterator[int]:
    """Every running process but this one."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me and running(int(entry)):
            yield int(entry)


def argv(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def has_env(pid: int, key: str, value: str | Path) -> bool:
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{key}={value}".encode() + b"\0" in env


def is_embed_service(pid: int) -> bool:
    return b"sophia.embed.service" in argv(pid)


def pids_with_home(home: Path) -> list[int]:
    """Processes whose environment says SOPHIA_HOME=home."""
    return [p for p in live_pids() if has_env(p, "SOPHIA_HOME", home)]


def stop(pids: list[int], timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL what is still running after ``timeout``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if running(p)]
            time.sleep(0.05)
        if not pids:
            return
