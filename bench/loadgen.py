"""A CPU load for speed benches: ``n`` busy processes, so a hook competes for the cores as on a busy laptop.

    with busy(2):   # a load of 2 (on 2 cores: every core taken)
        ...

Each process spins in pure Python (no I/O, no memory growth) in its own session, and is killed when the
block ends, whatever happens inside it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

SPIN = "while True:\n    pass\n"


@contextlib.contextmanager
def busy(n: int) -> Iterator[list[int]]:
    """Run ``n`` spinning processes for the duration of the block; yields their pids."""
    procs = [subprocess.Popen([sys.executable, "-I", "-S", "-c", SPIN], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
             for _ in range(max(0, n))]
    try:
        if procs:
            time.sleep(0.2)  # let them reach the CPU before the first timed run
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()


def loadavg() -> float:
    """The machine's 1-minute load average (0.0 where unknown)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0
