"""pytest plugin: no process started by the tests may outlive them.

The session makes itself a *child subreaper* (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``), so a process a
test started that detached itself (``setsid``, a double fork, ``nohup ... &``: the embedding service, a
detached reflection, a bootstrap) is re-parented to pytest instead of init and stays visible. After each
test the new live descendants are noted with the test that started them; when the session ends (every
fixture torn down) any descendant still alive after a short grace period is listed, killed, and the
session fails.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

PR_SET_CHILD_SUBREAPER = 36
GRACE_SECONDS = 3.0
# the residents live as long as their state home (a test's ends with the test): the guardian's analyzer, and
# the hook runner (a one-shot hook that stayed on: launch.py ... --serve)
RESIDENTS = ("sophia/guardian/resident.py", "sophia/hooks/launch.py")


def _stat(pid: int) -> tuple[int, str] | None:
    """(ppid, state) of a live process, None if gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = raw[raw.rfind(")") + 2:].split()
    return int(rest[1]), rest[0]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "?"


def descendants(root: int) -> dict[int, str]:
    """Live (non-zombie) descendants of ``root``: pid -> command line."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        st = _stat(int(entry))
        if st is None:
            continue
        children.setdefault(st[0], []).append(int(entry))
        states[int(entry)] = st[1]
    out: dict[int, str] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if states.get(pid) != "Z":
            out[pid] = _cmdline(pid)
        todo.extend(children.get(pid, []))
    return out


def _reap() -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break


class OrphanGuard:
    def __init__(self) -> None:
        self.enabled = False
        self.baseline: set[int] = set()
        self.started_by: dict[int, str] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not Path("/proc/self/stat").exists():
            return
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            self.enabled = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        self.baseline = set(descendants(os.getpid()))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: Any) -> None:
        if not self.enabled:
            return
        for pid, cmd in descendants(os.getpid()).items():
            if pid in self.baseline:
                continue
            if any(r in cmd for r in RESIDENTS):  # a resident of the test's state home: it ends here
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
                continue
            self.started_by.setdefault(pid, item.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.enabled:
            return
        me = os.getpid()
        deadline = time.monotonic() + GRACE_SECONDS
        left = {p: c for p, c in descendants(me).items() if p not in self.baseline}
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            _reap()
            left = {p: c for p, c in descendants(me).items() if p not in self.baseline}
        if not left:
            return
        lines = [f"  pid {pid}: {cmd}  (started during {self.started_by.get(pid, 'the session')})"
                 for pid, cmd in sorted(left.items())]
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
        _reap()
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        msg = f"{len(left)} process(es) started by the tests outlived them (now killed):\n" + "\n".join(lines)
        if tr is not None:
            tr.write_sep("=", "orphan processes", red=True)
            tr.write_line(msg)
        else:  # pragma: no cover
            print(msg)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
