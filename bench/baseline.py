"""The baseline every speed figure is divided by: a bare interpreter start, measured in the same run."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def python_pass_ms(runs: int = 10) -> float:
    """Median wall time of ``python -c pass`` (this interpreter) in milliseconds."""
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1000
