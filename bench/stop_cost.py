"""What the Stop hook costs when each turn adds a test run: this kit against a git ref's, in the same run.

    python bench/stop_cost.py [--baseline REF] [--rounds 40] [--episodes 1000]

Each kit (this checkout's, and the tree of git ref REF, default ``main``, exported with ``git archive``)
gets its own state home (``bench/hook_speed.py``'s synthetic one) and its own transcript of 20 turns.
Before every Stop one more turn is appended to each transcript (a prompt, ``npm test`` piped to
``tail``, its passing output, a closing message), so each Stop reads a new shell call, pairs it, judges
it and rebuilds the episode, as after a real turn. The two kits' Stops and ``python -I -S -c pass`` run
round-robin, so machine noise hits all alike. Prints wall and CPU medians (CPU: the children's user +
system time) and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.hook_speed import make_home, real_python  # noqa: E402


def turn(i: int) -> str:
    """One turn of a session: a prompt, a test run through ``| tail``, its passing output, a closing message."""
    tid, ts = f"toolu_stop{i:05d}", "2025-06-01T10:00:00Z"
    lines = [
        {"type": "user", "message": {"role": "user", "content": f"run the tests again please ({i})"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "cd app && npm test 2>&1 | tail -5"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": "Tests: 12 passed, 12 total\nDone in 3.2s"}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "All 12 tests pass. Done."}]}},
    ]
    return "".join(json.dumps({**obj, "sessionId": "stopcost", "timestamp": ts}) + "\n" for obj in lines)


def run(argv: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms of the child)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, input=data, env=env, capture_output=True, check=False)
    wall = (time.perf_counter() - t0) * 1000
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000


def export(ref: str, into: Path) -> Path:
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default="main", metavar="REF")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--episodes", type=int, default=1000)
    args = ap.parse_args()
    py = real_python()
    with tempfile.TemporaryDirectory(prefix="s3-stopcost-") as t:
        base = Path(t)
        kits = {"this": ROOT, args.baseline: export(args.baseline, base / "kit")}
        setups = {}
        for name, kit in kits.items():
            work = base / ("w-" + name.replace("/", "_"))
            work.mkdir()
            info = make_home(work, args.episodes)
            transcript = work / "t.jsonl"
            transcript.write_text("".join(turn(i) for i in range(20)), encoding="utf-8")
            env = dict(os.environ, HOME=str(work), SOPHIA_HOME=str(info["home"]), SOPHIA_PYTHON=py)
            env.pop("SOPHIA_HOOK_GUARD", None)
            payload = json.dumps({"session_id": "stopcost", "transcript_path": str(transcript),
                                  "cwd": info["projects"][3], "hook_event_name": "Stop", "stop_hook_active": False,
                                  "last_assistant_message": "All 12 tests pass. Done."}).encode()
            run([str(kit / "hooks/session_end.sh")], payload, env)  # the first Stop reads the 20 turns
            setups[name] = (kit, transcript, payload, env)
        wall: dict[str, list[float]] = {n: [] for n in [*kits, "python -I -S -c pass"]}
        cpu: dict[str, list[float]] = {n: [] for n in wall}
        for i in range(args.rounds):
            for name, (kit, transcript, payload, env) in setups.items():
                with transcript.open("a", encoding="utf-8") as fh:
                    fh.write(turn(100 + i))
                w, c = run([str(kit / "hooks/session_end.sh")], payload, env)
                wall[name].append(w)
                cpu[name].append(c)
            w, c = run([py, "-I", "-S", "-c", "pass"], b"", env)
            wall["python -I -S -c pass"].append(w)
            cpu["python -I -S -c pass"].append(c)
    med = {n: (statistics.median(wall[n]), statistics.median(cpu[n])) for n in wall}
    py_wall, py_cpu = med["python -I -S -c pass"]
    print(f"{args.rounds} rounds, one new turn with a test run before each Stop\n")
    print("| Stop of | wall median ms | x python | CPU median ms | CPU x python |")
    print("|---|--:|--:|--:|--:|")
    for name, (w, c) in med.items():
        print(f"| {name} | {w:.1f} | {w / py_wall:.2f} | {c:.1f} | {c / py_cpu:.2f} |")
    (w1, c1), (w0, c0) = med["this"], med[args.baseline]
    print(f"\nthis / {args.baseline}: wall {w1 / w0:.3f}, CPU {c1 / c0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
