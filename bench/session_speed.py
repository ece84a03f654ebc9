"""Real sessions through the real hooks, timed: each hook's median and p95, quiet and under a CPU load.

    PYTHONPATH=lib python bench/session_speed.py [--dir ../shared/data/transcripts] [--load 2] [--kit DIR]
                                                 [--python PY] [--limit N] [--json]

1. A fresh state home; every dev transcript replayed into it through the kit's hooks as Claude Code runs
   them (``bench/replay_transcripts.py``): SessionStart; per prompt a Stop (the turn before ended) then
   UserPromptSubmit; per tool call PreToolUse (the guardian, its resident analyzer started by
   SessionStart) and PostToolUse; Stop when the last turn ended, then SessionEnd. This first pass fills
   the memory. (Before 2026-11-27 the replay left out that last Stop, which Claude Code fires at the end of
   every assistant turn, so SessionEnd was timed recording the last turn itself, which no real
   SessionEnd does: 13 of the 20 dev sessions end on a finished turn.)
2. Two copies of that home; each session replayed once more under a new id in its project (a returning
   user), in one copy on the machine as it is ("quiet"), in the other with ``--load`` busy processes
   (``bench/loadgen.py``: 2 is a load of 2, every core of a 2-core machine taken), session by session
   alternately, so the rest of the machine's noise hits both alike. Each session's detached learners
   finish before the next session starts, the load taken off first: they run at the lowest CPU priority
   (``runtime.background``), so two spinning processes would hold them back for minutes, and no hook is
   timed while they are waited for either way.

Every hook run is followed by its baseline fed the same payload: ``bash -c 'cat >/dev/null'`` for the bash
hooks (PreToolUse, PostToolUse), ``python -I -S -c pass`` of the hooks' interpreter for the Python ones.
Prints, per pass and event: runs, wall median and p95 (ms), the baseline's median, median / baseline,
CPU median (the hook and its children); then each event's loaded median over its quiet median.
``--kit`` measures another checkout's hooks (the bench's own replay code is used either way).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT))

from bench import replay_transcripts as R  # noqa: E402
from bench.loadgen import busy, loadavg  # noqa: E402

BASH_HOOKS = ("guardian_tier1", "log_action")
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreToolUse", "PostToolUse", "PostToolUseFailure",
          "SessionEnd")


def run(argv: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float, bytes, int]:
    """(wall ms, CPU ms of the process and its waited-for children, stdout, exit code) of one run."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(argv, input=data, capture_output=True, env=env, timeout=60, check=False)
    wall = (time.perf_counter() - t) * 1000
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) * 1000
    return wall, cpu, proc.stdout, proc.returncode


class Timer:
    """Stands in for ``replay_transcripts.hook``: runs the kit's hook, then its baseline, and records both."""

    def __init__(self, kit: Path, python: str) -> None:
        self.kit, self.python = kit, python
        self.phase = ""
        self.samples: dict[tuple[str, str], list[tuple[float, float, float]]] = {}

    def hook(self, name: str, payload: dict[str, Any], env: dict[str, str]) -> str:
        data = json.dumps(payload).encode()
        wall, cpu, out, code = run(["bash", str(self.kit / "hooks" / f"{name}.sh")], data, env)
        if code not in (0, 2):
            raise SystemExit(f"{name} exited {code}")
        base = ["bash", "-c", "cat >/dev/null"] if name in BASH_HOOKS else [self.python, "-I", "-S", "-c", "pass"]
        base_wall = run(base, data, env)[0]
        event = str(payload.get("hook_event_name") or name)
        self.samples.setdefault((self.phase, event), []).append((wall, cpu, base_wall))
        if name in BASH_HOOKS or not out.strip():
            return ""
        try:
            return str(json.loads(out)["hookSpecificOutput"].get("additionalContext") or "")
        except (ValueError, KeyError, TypeError):
            return ""


def learners_done(home: Path) -> int:
    """How many detached after-session runs have logged their line."""
    log = home / "logs" / "learning.log"
    text = log.read_text(errors="replace") if log.is_file() else ""
    return text.count("learned:") + text.count("learners failed")


def wait_learners(home: Path, want: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while learners_done(home) < want and time.monotonic() < deadline:
        time.sleep(0.2)


RESIDENTS = ("guardian", "hooks")  # run/<kind>/resident: the guardian's analyzer, the hook runner


def stop_residents(*homes: Path) -> None:
    """End the residents the hooks started in these homes."""
    for home in homes:
        for kind in RESIDENTS:
            try:
                pid = int((home / "run" / kind / "resident").read_text().split("\n")[4])
                os.kill(pid, 15)
            except (OSError, IndexError, ValueError):
                pass


def copy_home(src: Path, dst: Path) -> None:
    """A copy of a state home, less its residents' key files (the copy starts its own)."""
    shutil.copytree(src, dst, symlinks=True,
                    ignore=lambda d, names: [n for n in names if Path(d).name == "run" and n in RESIDENTS])


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def summary(samples: list[tuple[float, float, float]]) -> dict[str, float]:
    walls, cpus, bases = [s[0] for s in samples], [s[1] for s in samples], [s[2] for s in samples]
    med, base = statistics.median(walls), statistics.median(bases)
    return {"runs": len(walls), "median_ms": round(med, 1), "p95_ms": round(pct(walls, 0.95), 1),
            "max_ms": round(max(walls), 1), "base_ms": round(base, 1), "x_base": round(med / base, 2),
            "p95_x_base": round(pct(walls, 0.95) / base, 2), "cpu_ms": round(statistics.median(cpus), 1)}


def report(timer: Timer) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for (phase, event), samples in timer.samples.items():
        out.setdefault(phase, {})[event] = summary(samples)
    quiet, loaded = out.get("quiet", {}), out.get("loaded", {})
    out["loaded_x_quiet"] = {ev: round(loaded[ev]["median_ms"] / quiet[ev]["median_ms"], 2)
                             for ev in EVENTS if ev in quiet and ev in loaded}
    return out


def print_report(rep: dict[str, Any], meta: dict[str, Any]) -> None:
    print(f"{meta['sessions']} sessions; kit {meta['kit']}; python {meta['python']}; load {meta['load']} busy "
          f"processes in the loaded pass; machine load average {meta['load_before']:.1f} before, "
          f"{meta['load_after']:.1f} after; {meta['seconds']:.0f} s\n")
    print("| pass | event | runs | median ms | p95 ms | max ms | baseline ms | median x baseline | p95 x baseline "
          "| CPU ms |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for phase in ("first", "quiet", "loaded"):
        for ev in EVENTS:
            r = rep.get(phase, {}).get(ev)
            if r:
                print(f"| {phase} | {ev} | {r['runs']} | {r['median_ms']} | {r['p95_ms']} | {r['max_ms']} | "
                      f"{r['base_ms']} | {r['x_base']} | {r['p95_x_base']} | {r['cpu_ms']} |")
    if rep["loaded_x_quiet"]:
        print("\nloaded median / quiet median: " + ", ".join(f"{k} {v}x" for k, v in rep["loaded_x_quiet"].items()))


def replay_pass(files: list[Path], timer: Timer, homes: list[tuple[str, Path, dict[str, str]]],
                load: int) -> None:
    """Each session once more (a returning user) in every home of ``homes``, session by session."""
    done = {str(h): learners_done(h) for _, h, _ in homes}
    for f in files:
        for phase, home, env in homes:
            timer.phase = phase
            with busy(load if phase == "loaded" else 0):
                R.replay(f, env, 0, again=True, guard=True)
            done[str(home)] += 1
            wait_learners(home, done[str(home)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=R.SHARED / "data/transcripts")
    ap.add_argument("--kit", type=Path, default=ROOT, help="the checkout whose hooks are measured")
    ap.add_argument("--python", default=os.environ.get("SOPHIA_PYTHON") or sys.executable,
                    help="the interpreter the hooks run (SOPHIA_PYTHON)")
    ap.add_argument("--load", type=int, default=2, help="busy processes in the loaded pass (0: no loaded pass)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N sessions")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    files = sorted(a.dir.glob("*.jsonl")) if a.dir.is_dir() else []
    files = files[:a.limit] if a.limit else files
    if not files:
        print(f"no transcripts in {a.dir}: nothing replayed")
        return 0
    kit = a.kit.resolve()
    timer = Timer(kit, a.python)
    R.hook = timer.hook
    t0, load0 = time.perf_counter(), loadavg()
    with tempfile.TemporaryDirectory(prefix="s3-session-speed-") as t:
        tmp = Path(t)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
        base.update(HOME=str(tmp), PYTHONPATH=str(kit / "lib"), SOPHIA_RECALL_SEMANTIC="0", SOPHIA_PYTHON=a.python)

        def env_of(name: str) -> dict[str, str]:
            (tmp / f"{name}-transcripts").mkdir(exist_ok=True)
            return dict(base, SOPHIA_HOME=str(tmp / name), REPLAY_DIR=str(tmp / f"{name}-transcripts"))

        first = env_of("first")
        subprocess.run([sys.executable, "-m", "sophia.cli.entry", "init"], env=first, check=True, capture_output=True)
        homes = [("quiet", tmp / "quiet")] + ([("loaded", tmp / "loaded")] if a.load else [])
        try:
            timer.phase = "first"
            for f in files:
                R.replay(f, first, 0, guard=True)
            wait_learners(tmp / "first", len(files))
            stop_residents(tmp / "first")
            for _, home in homes:
                copy_home(tmp / "first", home)
            replay_pass(files, timer, [(p, h, env_of(p)) for p, h in homes], a.load)
        finally:
            stop_residents(tmp / "first", *(h for _, h in homes))
    rep = report(timer)
    meta = {"sessions": len(files), "kit": str(kit), "python": a.python, "load": a.load, "load_before": load0,
            "load_after": loadavg(), "seconds": time.perf_counter() - t0}
    if a.json:
        print(json.dumps({"meta": meta, **rep}, indent=2))
    else:
        print_report(rep, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
