"""Background helpers never multiply: one detached reflection per home (pidfile + lock), however many
session ends race to start it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from sophia.state import init_tree


def _procs_with_home(home: Path) -> list[int]:
    out = []
    for e in os.listdir("/proc"):
        if not e.isdigit() or int(e) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{e}/environ").read_bytes()
        except OSError:
            continue
        if f"SOPHIA_HOME={home}".encode() + b"\0" in env:
            out.append(int(e))
    return out


def test_detached_reflection_never_multiplies(sophia_home: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    reflection = pytest.importorskip("sophia.hooks.reflection", reason="lifecycle hooks not merged yet")
    init_tree()
    calls = tmp_path / "claude_calls"
    fake = tmp_path / "claude"
    fake.write_text(f"#!/usr/bin/env bash\necho $$ >> {calls}\nsleep 2\necho '{{}}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SOPHIA_CLAUDE_BIN", str(fake))

    pids: list[int | None] = []
    barrier = threading.Barrier(8)

    def race() -> None:
        barrier.wait()
        pids.append(reflection.launch(sophia_home, ["ep_race"]))

    threads = [threading.Thread(target=race) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    started = [p for p in pids if p]
    assert started, pids
    time.sleep(0.5)
    assert reflection.running(sophia_home)
    assert reflection.launch(sophia_home, ["ep_again"]) is None  # one is running: nothing new starts
    deadline = time.monotonic() + 30
    while _procs_with_home(sophia_home) and time.monotonic() < deadline:
        time.sleep(0.1)
    for p in started:  # reap our children (the runners exited)
        try:
            os.waitpid(p, 0)
        except ChildProcessError:
            pass
    assert _procs_with_home(sophia_home) == []
    assert len(calls.read_text().split()) == 1, "more than one reflection ran claude"
    assert not (sophia_home / "run" / "reflection.pid").exists()

