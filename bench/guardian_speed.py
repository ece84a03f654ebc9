"""Whole-process speed of the guardian hook, as ratios against a bare bash fed the same payload.

Usage: python bench/guardian_speed.py [--rounds N] [--corpus FILE] [--python PY]

1. Ordinary commands (ls, git status, pytest, npm test, cat README.md): each round runs
   ``bash hooks/guardian_tier1.sh`` and the baseline ``bash -c 'cat >/dev/null'`` on the same
   payload, interleaved; prints the median time of each and the ratio (bar: <= 4x).
2. Mixed corpus (every case of tests/guardian/corpus.jsonl, dangerous and harmless): p95 of the
   hook's time over the cases against the baseline's median (bar: <= 25x).
The analyzer runs with ``SOPHIA_PYTHON`` (default: this interpreter's real binary).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "hooks" / "guardian_tier1.sh"
ORDINARY = ["ls", "git status", "pytest", "npm test", "cat README.md"]


def payload(tool: str, tool_input: dict, cwd: str) -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": "/home/dev/.claude/projects/x/bench.jsonl",
                       "cwd": cwd, "permission_mode": "default", "hook_event_name": "PreToolUse",
                       "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_bench"}).encode()


CPU: list[float] = []  # CPU seconds (user+sys) of the last timed() call, appended per call


def timed(cmd: list[str], data: bytes, env: dict[str, str]) -> float:
    """Wall time of one whole process (its CPU time, user+sys of it and its children, goes to CPU)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.close()
    _pid, _status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = 0
    CPU.append(ru.ru_utime + ru.ru_stime)
    return wall


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=40, help="rounds per ordinary command (default 40)")
    ap.add_argument("--corpus", type=Path, default=ROOT / "tests/guardian/corpus.jsonl")
    ap.add_argument("--python", default=os.path.realpath(sys.executable))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as sh:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
        env.update(HOME="/home/dev", SOPHIA_HOME=sh, SOPHIA_PYTHON=a.python,
                   CLAUDE_PROJECT_DIR="/home/dev/projects/app")
        hook = ["bash", str(HOOK)]
        base = ["bash", "-c", "cat >/dev/null"]
        print(f"hook: {HOOK}\nanalyzer python: {a.python}\n")
        print(f"{'ordinary command':18} {'hook ms':>8} {'bare ms':>8} {'ratio':>6}")
        all_h: list[float] = []
        all_b: list[float] = []
        ch: list[float] = []
        cb: list[float] = []
        for cmd in ORDINARY:
            data = payload("Bash", {"command": cmd, "description": "run"}, "/home/dev/projects/app")
            hs, bs = [], []
            for _ in range(a.rounds):
                bs.append(timed(base, data, env))
                cb.append(CPU[-1])
                hs.append(timed(hook, data, env))
                ch.append(CPU[-1])
            all_h += hs
            all_b += bs
            print(f"{cmd:18} {statistics.median(hs) * 1e3:8.2f} {statistics.median(bs) * 1e3:8.2f} "
                  f"{statistics.median(hs) / statistics.median(bs):6.2f}")
        med_ratio = statistics.median(all_h) / statistics.median(all_b)
        print(f"{'ALL ordinary':18} {statistics.median(all_h) * 1e3:8.2f} {statistics.median(all_b) * 1e3:8.2f} "
              f"{med_ratio:6.2f}   (bar: median <= 4x)")
        print(f"  CPU time (user+sys): hook median {statistics.median(ch) * 1e3:.2f} ms, bare {statistics.median(cb) * 1e3:.2f} ms,"
              f" ratio {statistics.median(ch) / max(statistics.median(cb), 1e-4):.2f}")
        cbase = statistics.median(cb)
        cases = [json.loads(line) for line in a.corpus.read_text().splitlines() if line.strip()]
        hs, bs = [], []
        ch = []
        for c in cases:
            data = payload(c["tool_name"], c["tool_input"], c["cwd"])
            bs.append(timed(base, data, env))
            hs.append(timed(hook, data, env))
            ch.append(CPU[-1])
        b_med = statistics.median(bs)
        print(f"\nmixed corpus ({len(cases)} cases, {a.corpus.name}):")
        print(f"  hook median {statistics.median(hs) * 1e3:.2f} ms, p95 {pct(hs, 0.95) * 1e3:.2f} ms; "
              f"bare median {b_med * 1e3:.2f} ms")
        print(f"  p95 ratio {pct(hs, 0.95) / b_med:.2f}x (bar: <= 25x); median ratio {statistics.median(hs) / b_med:.2f}x")
        print(f"  CPU time: hook p95 {pct(ch, 0.95) * 1e3:.2f} ms, bare median {cbase * 1e3:.2f} ms, "
              f"p95 ratio {pct(ch, 0.95) / max(cbase, 1e-4):.2f}x")
        print(f"  load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
