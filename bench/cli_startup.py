"""Whole-process start-up time of the ``s3`` CLI against ``python -c pass`` from the same venv.

Runs each command N times, interleaved (so load on the shared machine hits all of them alike), and
prints the median wall time of each and its ratio to the baseline. ``s3 status`` runs against a
fresh temp SOPHIA_HOME (initialised once before timing), holding ``--items`` semantic rules and ``--episodes``
entries in the episode index.

    python bench/cli_startup.py --venv ~/.sophia/venv [-n 30] [--items 10000] [--episodes 1000] [--json] [--before DIR]

``--venv`` is a venv where the package is installed (it has ``bin/s3``). Without it, the script
uses the running interpreter with ``from sophia.cli.entry import main`` (what the console script runs)
and PYTHONPATH=lib (the dev layout). ``--before DIR`` (another checkout, e.g. ``git archive`` of main) times
its ``s3`` commands too, interleaved with these in the same run and home, as rows "(before)" (not the status
after a turn: it would make this tree's next status one after a turn too; a tree without the status stamp
checks the files on every status). The row "s3 status after a turn" comes after what the Stop hook writes at
the end of a turn (untimed, through this tree's own writers: an entry upserted into the episode index, the user
model and the self-model updated), dated 10 s back. The row "s3 list rules after a change" runs in a copy of
the home whose rules file is dated anew (a minute back) before each run: the list then cannot print what the last
one kept (``cli/list_cache.py``); the other list rows can, as a user's lists between two changes of the rules.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# what the Stop hook writes after a turn (hooks/session_end.py: _save_episode, _update_models), then dated 10 s
# back (a status asked for a few seconds later; a file written within 2 s is never recorded as checked)
TURN = """import os, sys, time
from pathlib import Path
from sophia.episode_store import upsert_index_entries
from sophia.hooks.stats import update_self_model, update_user_model
from sophia.timeutil import iso
home, n = Path(sys.argv[1]), time.time_ns()
upsert_index_entries([{"id": f"ep_turn_{n}", "timestamp": iso(), "goal_summary": "fix the failing build",
                       "outcome": "SUCCESS", "tool_call_count": 4, "heuristics_count": 0, "trivial": False,
                       "consolidated": False, "keywords": ["build", "test"], "project": "/p", "session_id": "s1"}],
                     home, durable=False)
update_user_model(home, "default", prompts=["thanks, now the tests"], topics=["build"], durable=False)
update_self_model(home, new_session=False, new_episode=True, durable=False)
t = time.time() - 10
for p in (home / "episodes" / "index.json", home / "user_models" / "default.json", home / "self_model.json"):
    os.utime(p, (t, t))
"""


def turn(home: Path, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-c", TURN, str(home)], env={**env, "PYTHONPATH": str(ROOT / "lib")}, check=True)


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


def add_episodes(home: Path, n: int) -> None:
    """``n`` entries in the episode index, as the hooks write them (the index keeps at most 1,000)."""
    entries = [{"id": f"ep_{i:08d}", "timestamp": f"2026-11-{1 + i % 26:02d}T{i % 24:02d}:00:00Z",
                "goal_summary": f"fix the {('build', 'tests', 'deploy')[i % 3]} step {i}", "outcome": "SUCCESS",
                "tool_call_count": i % 40, "heuristics_count": 0, "trivial": False, "consolidated": False,
                "keywords": ["build", "test"], "project": "/p", "session_id": f"s{i}"} for i in range(n)]
    entries.sort(key=lambda e: e["timestamp"], reverse=True)
    index = {"last_updated": "2026-11-26T12:00:00Z", "total_episodes": n, "entries": entries}
    (home / "episodes" / "index.json").write_text(json.dumps(index, indent=1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", type=Path, help="venv with the package installed (has bin/s3)")
    ap.add_argument("-n", type=int, default=30, help="runs per command (default 30)")
    ap.add_argument("--items", type=int, default=0, help="semantic rules in the timed home (default none)")
    ap.add_argument("--episodes", type=int, default=0, help="entries in the episode index (default none)")
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
        home = Path(env["SOPHIA_HOME"])
        add_rules(home, args.items)
        add_episodes(home, args.episodes)
        old = time.time() - 60  # as a session left them a while ago (a file written within 2 s is never recorded)
        for p in home.rglob("*.json"):
            os.utime(p, (old, old))
        cases: dict[str, list[str]] = {
            "python -c pass": [py, "-c", "pass"],
            "s3 --help": [*s3, "--help"],
            "s3 version": [*s3, "version"],
            "s3 status": [*s3, "status"],
            "s3 status --json": [*s3, "status", "--json"],
            # the first status after a turn (TURN, untimed, before each run): it checks the files the turn changed
            # and records them for the statuses after it
            "s3 status after a turn": [*s3, "status"],
            "s3 list rules": [*s3, "list", "rules"],
            "s3 list rules --json": [*s3, "list", "rules", "--json"],
            # the first list after the rules changed (in a copy of the home whose rules file is dated anew before
            # each run): it decodes the rules and keeps what it prints for the lists after it
            "s3 list rules after a change": [*s3, "list", "rules"],
        }
        changed = Path(tmp) / "changed"
        shutil.copytree(home, changed)
        libs: dict[str, Path | None] = {k: None for k in cases}
        if args.before and not args.venv:
            for k, cmd in [(k, cmd) for k, cmd in cases.items() if k.startswith("s3 ") and " after a " not in k]:
                cases[f"{k} (before)"], libs[f"{k} (before)"] = cmd, args.before.resolve() / "lib"
        times: dict[str, list[float]] = {k: [] for k in cases}
        for i in range(args.n + 1):  # the first round warms the page cache and .pyc files
            for name, cmd in cases.items():
                if "after a turn" in name:
                    turn(home, env)
                run_env = env
                if "after a change" in name:
                    old -= 1  # another stamp, still older than 2 s: the list keeps its output
                    os.utime(changed / "semantic_rules.json", (old, old))
                    run_env = {**env, "SOPHIA_HOME": str(changed)}
                dt = timed(cmd, run_env, libs[name])
                if i:
                    times[name].append(dt)
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
