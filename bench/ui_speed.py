"""Page load times of `s3 ui` with 10k episodes, beside a baseline served by the same server.

    PYTHONPATH=lib python bench/ui_speed.py [--episodes 10000] [--rounds 30] [--json]

Builds the synthetic home of bench/hook_speed.py (10k episodes over 20 projects, 300 rules, 50
foresight, the recall index), adds 5,000 guardian log lines, 2,000 digest ledger lines and 400 learned procedures, starts the
real `s3 ui --no-open` and times whole HTTP requests (keep-alive, one client, the page read to its
end) round-robin with the baseline: the viewer's stylesheet (the same server, the guard and the
routing, no state read). Each page's first (cold) load is reported apart. Bar (issue 17): every
page's median under 300 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import signal
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

BAR_MS = 300.0
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)")


def add_logs(home: Path, n_guardian: int = 5000, n_ledger: int = 2000, seed: int = 3) -> None:
    rnd = random.Random(seed)
    (home / "logs").mkdir(exist_ok=True)
    with open(home / "logs" / "guardian_blocks.jsonl", "w", encoding="utf-8") as f:
        for i in range(n_guardian):
            day = 1 + i % 28
            f.write(json.dumps({"ts": time.strftime("%Y-%m-") + f"{day:02d}T10:00:00Z",
                                "decision": rnd.choice(["deny", "ask", "ask"]), "rule": f"rule_{i % 17}",
                                "tool": "Bash", "command": f"rm -rf /tmp/x{i}", "reason": "destructive"}) + "\n")
    digests = home / "digests"
    digests.mkdir(exist_ok=True)
    with open(digests / "ledger.jsonl", "w", encoding="utf-8") as f:
        for i in range(n_ledger):
            f.write(json.dumps({"at": "2026-10-01T00:00:00Z", "day": f"2026-10-{1 + i % 28:02d}", "job": f"j{i}",
                                "stage": "extract", "ok": True, "cost_usd": 0.01, "tokens": 1200}) + "\n")


def add_procedures(home: Path, n: int = 400) -> None:
    """What the zero-token learners keep: ``n`` error -> fix procedures over the projects of the episodes,
    each with five pieces of evidence naming real sessions (the page links each to its episode)."""
    from sophia.episode_store import read_index
    from sophia.learning import procedures as P
    from sophia.memory.files import update_items

    entries = [e for e in read_index(home).get("entries") or [] if e.get("session_id")]
    items = []
    for i in range(n):
        ep = entries[i % len(entries)]
        project = ep.get("project") or f"/work/p{i % 20}"
        fix = {"failed": f"make test{i}", "error": f"Error: missing module m{i}", "fix": f"make test{i} -j1",
               "steps": ["make clean"], "key": f"make test{i}", "class": "test",
               "calls": {"failed": [f"toolu_f{i}"], "fixed": f"toolu_x{i}"},
               "proof": [f"{i} passed in 0.1s"]}
        item = P.fix_item(fix, project, ep["id"], ep["session_id"], "2026-10-01T00:00:00Z")
        item["meta"]["evidence"] = [{**item["meta"]["evidence"][0], "session": entries[(i + k) % len(entries)]
                                     ["session_id"]} for k in range(P.KEEP_EVIDENCE)]
        items.append(item)
    with update_items("procedures", home) as stored:
        stored.extend(items)


def pages(home: Path) -> list[str]:
    first = sorted((home / "episodes").glob("ep_*.json"))[-1].stem
    return ["/", "/episodes", "/episodes?q=docker+compose+cache", "/episodes?q=postgres+migration&as_of=2025-06-01",
            f"/episodes/{first}", "/rules", "/procedures", "/facts", "/profile", "/scenes", "/conflicts", "/digests", "/guardian"]


def get(conn: http.client.HTTPConnection, path: str, token: str) -> float:
    t0 = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": f"s3ui={token}"})
    r = conn.getresponse()
    r.read()
    ms = (time.perf_counter() - t0) * 1000
    if r.status != 200:
        raise RuntimeError(f"{path}: HTTP {r.status}")
    return ms


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def measure(port: int, token: str, paths: list[str], rounds: int) -> dict[str, Any]:
    import socket

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.connect()
    assert conn.sock is not None
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as browsers do (else Nagle adds ~40 ms)
    time.sleep(3)  # the server warms up its slow figures when it starts; a person reads the URL meanwhile
    cold = {p: get(conn, p, token) for p in paths}
    base = "/static/style.css"
    times: dict[str, list[float]] = {p: [] for p in [base, *paths]}
    for _ in range(rounds):
        for p in paths:
            times[base].append(get(conn, base, token))
            times[p].append(get(conn, p, token))
    conn.close()
    return {p: {"median_ms": round(statistics.median(v), 1), "p95_ms": round(pct(v, 0.95), 1),
                "cold_ms": round(cold[p], 1) if p in cold else None} for p, v in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from bench.hook_speed import make_home

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        made = make_home(base, args.episodes)
        home = Path(made["home"])
        add_logs(home)
        add_procedures(home)
        env = {**os.environ, "HOME": str(base), "SOPHIA_HOME": str(home), "PYTHONPATH": str(ROOT / "lib"),
               "SOPHIA_RECALL_SEMANTIC": "0"}
        proc = subprocess.Popen([sys.executable, "-m", "sophia.cli.entry", "ui", "--no-open"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            m = URL.search(proc.stdout.readline())
            if m is None:
                raise SystemExit(f"s3 ui printed no URL: {proc.communicate()[1]}")
            result = measure(int(m.group(1)), m.group(2), pages(home), args.rounds)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=20)
    worst = max(v["median_ms"] for p, v in result.items() if not p.startswith("/static"))
    out = {"episodes": args.episodes, "rounds": args.rounds, "bar_ms": BAR_MS, "pages": result,
           "worst_median_ms": worst, "bar_met": worst < BAR_MS}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"s3 ui with {args.episodes:,} episodes, {args.rounds} rounds (median / p95 / first load, ms):")
    for p, v in result.items():
        cold = f"{v['cold_ms']:8.1f}" if v["cold_ms"] is not None else "       -"
        print(f"  {p:<52} {v['median_ms']:8.1f} {v['p95_ms']:8.1f} {cold}")
    print(f"worst median {worst:.1f} ms: {'under' if out['bar_met'] else 'OVER'} the {BAR_MS:.0f} ms bar")
    return 0


if __name__ == "__main__":
    sys.exit(main())
