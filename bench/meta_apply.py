"""Time `s3 learn`, `s3 apply reflection|extraction` and `s3 list rules` against `python -c pass`.

Usage: PYTHONPATH=lib python bench/meta_apply.py [runs]
Reports the median wall time of each command and its ratio to the baseline measured in the same run
(timings on a shared machine are noisy; the ratio is what to compare).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib"


def timed(cmd: list[str], env: dict[str, str], stdin: str | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, env=env, input=stdin, text=True, capture_output=True, check=True)
    return time.perf_counter() - t


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HOME=tmp, SOPHIA_HOME=f"{tmp}/.sophia", PYTHONPATH=str(LIB), SOPHIA_EMBEDDINGS="off")
        s3 = [sys.executable, "-m", "sophia.cli.entry"]
        subprocess.run([*s3, "init"], env=env, check=True, capture_output=True)
        cases: dict[str, list[float]] = {"python -c pass": [], "s3 version": [], "s3 learn": [], "s3 apply reflection": [],
                                         "s3 apply extraction": [], "s3 list rules --json": []}
        for i in range(runs):
            cases["python -c pass"].append(timed([sys.executable, "-c", "pass"], env))
            cases["s3 version"].append(timed([*s3, "version"], env))
            cases["s3 learn"].append(timed([*s3, "learn", f"Bench insight number {i} about widgets {i * 7}"], env))
            refl = {"heuristics": [{"trigger_concept": "Bench", "rule_content": f"Rule {i} for gizmo {i * 3}"}],
                    "capability_updates": [{"domain": "Bench", "proficiency_delta": 0.01}]}
            cases["s3 apply reflection"].append(timed([*s3, "apply", "reflection", "-"], env, json.dumps(refl)))
            ext = {"episode": f"Session {i} about gizmos", "atomic_facts": [{"fact": f"Gizmo {i} weighs {i} kg"}],
                   "foresight": [{"description": f"Gizmo {i} ships", "start_time": "2026-01-01",
                                  "end_time": "2026-02-01"}]}
            cases["s3 apply extraction"].append(timed([*s3, "apply", "extraction", "-"], env, json.dumps(ext)))
            cases["s3 list rules --json"].append(timed([*s3, "list", "rules", "--json"], env))
        base = statistics.median(cases["python -c pass"])
        print(f"{'command':<24} {'median ms':>10} {'x baseline':>11}")
        for name, ts in cases.items():
            m = statistics.median(ts)
            print(f"{name:<24} {m * 1000:>10.0f} {m / base:>11.1f}")


if __name__ == "__main__":
    main()
