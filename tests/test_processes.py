"""Processes: the orphan guard catches a detached process a test leaves behind (and kills it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent

INNER_CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from orphan_guard import OrphanGuard

def pytest_configure(config):
    config.pluginmanager.register(OrphanGuard(), "sophia-orphan-guard")
"""

INNER_TEST = """
import os, subprocess, sys, time

def test_leaves_a_detached_process(tmp_path):
    # like a service started with `setsid nohup ... &` from a hook
    subprocess.Popen(["setsid", sys.executable, "-c", "import time; time.sleep(120)  # orphan-marker"],
                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):  # until the detached grandchild runs
        if any(b"orphan-marker" in _cmd(p) for p in os.listdir("/proc") if p.isdigit()):
            break
        time.sleep(0.05)

def _cmd(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""

def test_clean():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
"""


def _marker_pids() -> list[int]:
    out = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                cmd = Path(f"/proc/{e}/cmdline").read_bytes()
            except OSError:
                continue
            if b"orphan-marker" in cmd and b"pytest" not in cmd:
                out.append(int(e))
    return out


def test_orphan_guard_fails_the_session_and_kills_the_orphan(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(INNER_CONFTEST)
    (tmp_path / "test_inner.py").write_text(INNER_TEST)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                        str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 passed" in r.stdout
    assert "outlived them" in r.stdout and "orphan-marker" in r.stdout
    assert "test_leaves_a_detached_process" in r.stdout
    time.sleep(0.2)
    assert _marker_pids() == []


def test_orphan_guard_passes_a_clean_session(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(INNER_CONFTEST)
    (tmp_path / "test_inner.py").write_text(INNER_TEST.split("def test_leaves")[0] + "def test_clean():\n    pass\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "outlived" not in r.stdout
