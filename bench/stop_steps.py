"""Where a Stop's time goes, step by step: the dev sessions replayed, each Stop run in this process as the
resident hook runner runs it, every step timed in wall and CPU time.

    PYTHONPATH=lib python bench/stop_steps.py [--dir ../shared/data/transcripts] [--limit N] [--one-shot]

A fresh state home is filled by replaying every dev transcript through the kit's hooks
(``bench/replay_transcripts.py``, the first pass of ``bench/session_speed.py``); then each session is
replayed once more as a returning user, its Stops run here by ``session_end.process`` (the other hooks
through their scripts), as the resident does (its recall index kept open: ``index.kept``; ``--one-shot``:
opened and closed by every Stop, as a one-shot hook does). Prints the Stop's wall and CPU median and
p95, then each step's (``_read_session``, ``_update_episode``, ``_update_models``, ``_write_state``,
``_index``) and the time spent in ``os.replace`` and ``os.fsync`` inside it, and the slowest Stops.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import replay_transcripts as R  # noqa: E402
from bench.session_speed import copy_home, learners_done, stop_residents, wait_learners  # noqa: E402

STEPS = ("_read_session", "_update_episode", "_update_models", "_write_state", "_index")


def timed(owner: Any, name: str, acc: dict[str, list[float]]) -> None:
    """Wrap ``owner.name`` so that each call adds its wall and CPU seconds to ``acc[name]``."""
    f: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(f)
    def wrapper(*a: Any, **k: Any) -> Any:
        t, c = time.perf_counter(), time.process_time()
        try:
            return f(*a, **k)
        finally:
            w = acc.setdefault(name, [0.0, 0.0])
            w[0] += time.perf_counter() - t
            w[1] += time.process_time() - c

    setattr(owner, name, wrapper)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def line(label: str, wall: list[float], cpu: list[float]) -> str:
    return (f"{label:16} wall median {statistics.median(wall):6.1f} p95 {pct(wall, .95):6.1f} ms | CPU median "
            f"{statistics.median(cpu):5.1f} p95 {pct(cpu, .95):5.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=R.SHARED / "data/transcripts")
    ap.add_argument("--limit", type=int, default=0, help="only the first N sessions")
    ap.add_argument("--one-shot", action="store_true", help="open and close the index at every Stop")
    a = ap.parse_args()
    files = sorted(a.dir.glob("*.jsonl"))[: a.limit or None] if a.dir.is_dir() else []
    if not files:
        print(f"no transcripts in {a.dir}: nothing replayed")
        return 0
    from sophia.hooks import session_end as se
    from sophia.index import kept

    with tempfile.TemporaryDirectory(prefix="s3-stop-steps-") as t:
        tmp = Path(t)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
        base.update(HOME=str(tmp), SOPHIA_RECALL_SEMANTIC="0", SOPHIA_PYTHON=sys.executable,
                    PYTHONPATH=str(ROOT / "lib"))
        first = dict(base, SOPHIA_HOME=str(tmp / "first"), REPLAY_DIR=str(tmp))
        subprocess.run([sys.executable, "-m", "sophia.cli.entry", "init"], env=first, check=True, capture_output=True)
        for f in files:
            R.replay(f, first, 0, guard=True)
        wait_learners(tmp / "first", len(files))
        stop_residents(tmp / "first")
        home = tmp / "again"
        copy_home(tmp / "first", home)
        env = dict(first, SOPHIA_HOME=str(home))
        os.environ.update(env)
        kept.keep(not a.one_shot)
        acc: dict[str, list[float]] = {}
        for name in STEPS:
            timed(se, name, acc)
        timed(os, "replace", acc)
        timed(os, "fsync", acc)
        rows: list[tuple[float, float, dict[str, list[float]]]] = []
        script_hook = R.hook

        def hook(name: str, payload: dict[str, Any], env: dict[str, str]) -> str:
            if name != "session_end" or payload.get("hook_event_name") != "Stop":
                return script_hook(name, payload, env)
            acc.clear()
            t, c = time.perf_counter(), time.process_time()
            se.process(payload)
            rows.append((time.perf_counter() - t, time.process_time() - c, {k: list(v) for k, v in acc.items()}))
            return ""

        R.hook = hook
        done = learners_done(home)
        try:
            for f in files:
                R.replay(f, env, 0, again=True, guard=True)
                done += 1
                wait_learners(home, done)
        finally:
            stop_residents(home)
    report(rows, a.one_shot)
    return 0


def report(rows: list[tuple[float, float, dict[str, list[float]]]], one_shot: bool) -> None:
    print(f"{len(rows)} Stops ({'index opened and closed each time' if one_shot else 'index kept open'}); "
          f"load average {os.getloadavg()[0]:.1f}")
    print(line("Stop", [r[0] * 1000 for r in rows], [r[1] * 1000 for r in rows]))
    for name in (*STEPS, "replace", "fsync"):
        got = [r[2].get(name, [0.0, 0.0]) for r in rows]
        print("  " + line(name, [g[0] * 1000 for g in got], [g[1] * 1000 for g in got]))
    print("slowest (ms, wall):")
    for w, c, steps in sorted(rows, key=lambda r: -r[0])[:8]:
        parts = " ".join(f"{k.strip('_')}={v[0] * 1000:.0f}" for k, v in steps.items() if v[0] >= 0.001)
        print(f"  {w * 1000:6.1f} (CPU {c * 1000:5.1f}): {parts}")


if __name__ == "__main__":
    sys.exit(main())
