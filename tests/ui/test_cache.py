"""The viewer's cache of slow figures: fresh when quick, the previous value while a slow one is redone."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sophia.ui.cache import Slow, stat_key


def test_recomputed_when_the_files_change_and_never_blocks_long(tmp_path: Path) -> None:
    d = tmp_path / "episodes"
    d.mkdir()
    calls: list[int] = []
    gate = threading.Event()
    gate.set()

    def compute() -> int:
        gate.wait(10)
        calls.append(1)
        return len(list(d.iterdir()))

    slow = Slow(compute, lambda: stat_key(d), wait=0.2)
    assert slow.get() == 0
    assert slow.get() == 0 and len(calls) == 1  # unchanged files: not recomputed
    (d / "a.json").write_text("{}")
    assert slow.get() == 1 and len(calls) == 2  # quick enough: the page shows the fresh figure
    gate.clear()
    (d / "b.json").write_text("{}")
    t0 = time.monotonic()
    assert slow.get() == 1  # slow: the previous value, after at most `wait`
    assert time.monotonic() - t0 < 1.0
    gate.set()
    for _ in range(100):
        if slow.get() == 2:
            break
        time.sleep(0.02)
    assert slow.get() == 2 and len(calls) == 3


def test_a_failing_computation_keeps_the_last_value(tmp_path: Path) -> None:
    f = tmp_path / "log"
    f.write_text("x")
    box = {"fail": False}

    def compute() -> str:
        if box["fail"]:
            raise ValueError("torn line")
        return f.read_text()

    slow = Slow(compute, lambda: stat_key(f))
    assert slow.get() == "x"
    box["fail"] = True
    f.write_text("xy")
    assert slow.get() == "x" and "torn line" in slow.error
