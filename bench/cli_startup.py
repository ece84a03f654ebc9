"""Whole-process start-up time of the ``s3`` CLI against ``python -c pass`` from the same venv.

Runs each command N times, interleaved (so load on the shared machine hits all of them alike), and
prints the median wall time of each and its ratio to the baseline. ``s3 status`` runs against a
fresh temp SOPHIA_HOME (initialised once before timing), holding ``--items`` semantic rules.

    python bench/cli_startup.py --venv ~/.sophia/venv [-n 30] [--items 10000] [--json] [--before DIR]

``--venv`` is a venv where the package is installed (it has ``bin/s3``). Without it, the script
uses the running interpreter with ``from sophia.cli.entry import main`` (what the console script runs)
and PYTHONPATH=lib (the dev layout). ``--before DIR`` (another checkout, e.g. ``git archive`` of main) times
its ``s3`` commands too, interleaved with these in the same run and home, as rows "(before)" (not the status
after a turn: it would make this tree's next status one after a turn too; a tree without the status stamp
checks the files on every status).
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


def timed(cmd: list[str], env: dict[str, str], lib: Path | None = None) -> float:
    if lib is not None:
        env = {**env, "PYTHONPATH": str(lib)}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode(errors='replace')[:400]}")
    return dt


def add_rules(home: Path, n: int) -> None:
    """``n`` semantic rules in the shape ``s3 learn`` writes them (issue 30: the CLI at 10k items)."""
    words = ("build", "cache", "deploy", "docker", "test", "config", "retry", "lock", "index", "schema")
    rules = [{"id": f"rule_{i:012x}", "trigger_concept": words[i % 10].capitalize(),
              "rule_content": f"when the {words[i % 7]} step fails, check the {words[i % 10]} before rerun {i}",
              "source": "manual", "source_episodes": [], "confidence": 0.8, "last_validated": None,
              "validation_count": 0, "created_at": "2026-11-26T12:00:00Z"} for i in range(n)]
    (home / "semantic_rules.json").write_text(json.dumps(rules, indent=2))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", type=Path, help="venv with the package installed (has bin/s3)")
    ap.add_argument("-n", type=int, default=30, help="runs per command (default 30)")
    ap.add_argument("--items", type=int, default=0, help="semantic rules in the timed home (default none)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--before", type=Path, help="another checkout whose lib/ is timed too (dev layout only)")
    args = ap.parse_args()

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an install keeps its .pyc files: time the CLI as users run it
    if args.venv:
        py = str(args.venv / "bin" / "python")
        s3 = [str(args.venv / "bin" / "s3")]
    else:
        py = sys.executable
        s3 = [py, "-c", "from sophia.cli.entry import main; main()"]
        env["PYTHONPATH"] = str(ROOT / "lib")
    with tempfile.TemporaryDirectory(prefix="s3bench-") as tmp:
        env["HOME"] = tmp
        env["SOPHIA_HOME"] = str(Path(tmp) / ".sophia")
        subprocess.run([*s3, "init"], env=env, check=True, stdout=subprocess.DEVNULL)
        add_rules(Path(env["SOPHIA_HOME"]), args.items)
        cases: dict[str, list[str]] = {
            "python -c pass": [py, "-c", "pass"],
            "s3 --help": [*s3, "--help"],
            "s3 version": [*s3, "version"],
            "s3 status": [*s3, "status"],
            "s3 status --json": [*s3, "status", "--json"],
            # the first status after a turn (whose hooks rewrote episodes/index.json 10 s ago): it checks every
            # state file again through typer and pydantic, and records them for the statuses after it
            "s3 status after a turn": [py, "-c", "import os, sys, time; t = time.time() - 10; os.utime(sys.argv[1], "
                                       "(t, t)); sys.argv[1:] = ['status']; from sophia.cli.entry import main; main()",
                                       str(Path(env["SOPHIA_HOME"]) / "episodes" / "index.json")],
            "s3 list rules": [*s3, "list", "rules"],
            "s3 list rules --json": [*s3, "list", "rules", "--json"],
        }
        libs: dict[str, Path | None] = {k: None for k in cases}
        if args.before and not args.venv:
            for k, cmd in [(k, cmd) for k, cmd in cases.items() if k.startswith("s3 ") and "after a turn" not in k]:
                cases[f"{k} (before)"], libs[f"{k} (before)"] = cmd, args.before.resolve() / "lib"
        for name, cmd in cases.items():  # warm the page cache and .pyc files
            timed(cmd, env, libs[name])
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.n):
            for name, cmd in cases.items():
                times[name].append(timed(cmd, env, libs[name]))
    base = statistics.median(times["python -c pass"])
    rows = [{"command": k, "median_ms": round(statistics.median(v) * 1000, 1),
             "ratio": round(statistics.median(v) / base, 2)} for k, v in times.items()]
    if args.json:
        print(json.dumps({"runs": args.n, "python": py, "rows": rows}, indent=2))
    else:
        print(f"{args.n} runs each, interleaved; baseline: python -c pass from the same venv ({py})")
        print(f"{'command':<31} {'median ms':>10} {'x baseline':>11}")
        for r in rows:
            print(f"{r['command']:<31} {r['median_ms']:>10.1f} {r['ratio']:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
