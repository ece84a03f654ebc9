"""Speed of ``s3 mcp``: ready (spawn to the answer of ``initialize``, which the server gives before the
SDK has loaded), the first ``search`` (which waits on the SDK's load) and later ones, at 10k memory
items, as ratios against a bare ``python -c pass`` measured in the same run. "ready + first" is what a
client waits from spawn to its first result.

    PYTHONPATH=lib .venv/bin/python bench/mcp_speed.py [--items 10000] [--runs 7] [--queries 20]

The home holds ``--items`` facts made from LoCoMo dev's turns (../shared/data/locomo, realistic
vocabulary; a word list when it is absent), indexed with the kit's own store, keyword tier only
(``embedding_provider: none``: no embedding service). The server is started the way the console script
``s3`` starts it (``sophia.cli.entry.main`` with ``mcp``), spoken to with raw JSON-RPC lines over its
stdin/stdout (no client library on the measuring side). Each run is a fresh process: ready, then the
first ``search``, then ``--queries`` more whose median is reported. Also reported: the SDK's import
alone (``import mcp.server.lowlevel, mcp.server.stdio``), which bounds what ready can be, and the CPU
time (user + system, from ``wait4``) of a start, of that import and of ``python -c pass``: on shared
cores wall times stretch with the load, CPU times much less.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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

from bench.baseline import python_pass_ms  # noqa: E402

LOCOMO = Path("/work/shared/data/locomo/locomo_dev.json")
QUERIES = ["adoption agency interview", "LGBTQ support group", "camping with the kids", "painting a sunset",
           "pottery class", "charity race", "new job offer", "violin lessons"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def texts(n: int) -> list[str]:
    turns: list[str] = []
    if LOCOMO.exists():
        for s in json.loads(LOCOMO.read_text()):
            for k, v in s["conversation"].items():
                if k.startswith("session_") and isinstance(v, list):
                    turns += [t["text"] for t in v if t.get("text")]
    if not turns:
        rnd = random.Random(7)
        words = ["deploy", "pytest", "docker", "cache", "kelp", "pump", "tank", "widget", "gadget", "import", "module", "schema", "index", "query"]
        turns = [" ".join(rnd.choices(words, k=12)) for _ in range(500)]
    return [turns[i % len(turns)] + (f" #{i // len(turns)}" if i >= len(turns) else "") for i in range(n)]


def make_home(root: Path, n: int) -> Path:
    from sophia.index import db, store
    from sophia.kinds import make_item
    from sophia.state import init_tree

    home = root / ".sophia"
    os.environ["SOPHIA_HOME"] = str(home)
    init_tree(home)
    cfg = home / "config.json"
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "embedding_provider": "none"}))
    conn = db.connect(home)
    items = [make_item(f"fact_b{i:06d}", "fact", t, project="/bench/p" if i % 3 else None,
                       event_time=f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z") for i, t in enumerate(texts(n))]
    for i in range(0, len(items), 2000):
        store.upsert_items(conn, items[i:i + 2000])
    conn.close()
    return home


def _send(p: subprocess.Popen[str], msg: dict[str, Any]) -> None:
    assert p.stdin is not None
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()


def _answer(p: subprocess.Popen[str], want: int) -> dict[str, Any]:
    assert p.stdout is not None
    while True:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its stdout")
        obj = json.loads(line)
        if obj.get("id") == want:
            return obj


def one_run(env: dict[str, str], queries: int) -> tuple[float, float, list[float]]:
    """(ready ms, first search ms, later searches ms)."""
    code = "import sys; sys.argv = ['s3', 'mcp']; from sophia.cli.entry import main; main()"
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        _send(p, INIT)
        _answer(p, 1)
        ready = (time.perf_counter() - t0) * 1000
        _send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for i in range(queries + 1):
            q = QUERIES[i % len(QUERIES)]
            t = time.perf_counter()
            _send(p, {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                      "params": {"name": "search", "arguments": {"query": q, "limit": 10}}})
            ans = _answer(p, 10 + i)
            times.append((time.perf_counter() - t) * 1000)
            assert not ans["result"].get("isError"), ans
        return ready, times[0], times[1:]
    finally:
        if p.stdin:
            p.stdin.close()
        p.wait(timeout=30)


def start_cpu_ms(env: dict[str, str], search: bool) -> float:
    """CPU time (user + system) of a server that answers ``initialize`` (and with ``search``, a first
    search) and is told to stop, the SDK's load included (it loads before it reads the end of its stdin):
    what a start costs the machine, less sensitive than wall time to other processes sharing the cores."""
    code = "import sys; sys.argv = ['s3', 'mcp']; from sophia.cli.entry import main; main()"
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    _send(p, INIT)
    _answer(p, 1)
    if search:
        _send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "search", "arguments": {"query": QUERIES[0], "limit": 10}}})
        _answer(p, 2)
    assert p.stdin is not None
    p.stdin.close()
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return (ru.ru_utime + ru.ru_stime) * 1000


def cpu_ms(argv: list[str]) -> float:
    p = subprocess.Popen(argv)
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return (ru.ru_utime + ru.ru_stime) * 1000


def tool_search_ms(home: Path, queries: int) -> tuple[float, float]:
    """The ``search`` tool's own cost in this process (median wall and CPU ms per call, after one warm
    call): what a search costs the server, apart from the pipe and the load's scheduling."""
    os.environ["SOPHIA_HOME"] = str(home)
    from sophia.cli import mcp_tools

    mcp_tools.call("search", {"query": QUERIES[0], "limit": 10})
    walls, cpus = [], []
    for i in range(queries):
        t, c = time.perf_counter(), time.process_time()
        mcp_tools.call("search", {"query": QUERIES[i % len(QUERIES)], "limit": 10})
        walls.append((time.perf_counter() - t) * 1000)
        cpus.append((time.process_time() - c) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def sdk_import_ms(runs: int) -> float:
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], check=True)
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = make_home(Path(tmp), args.items)
        env = dict(os.environ, SOPHIA_HOME=str(home), HOME=tmp, PYTHONPATH=str(ROOT / "lib"))
        base = python_pass_ms(10)
        sdk = sdk_import_ms(args.runs)
        runs = [one_run(env, args.queries) for _ in range(args.runs)]
        base_cpu = statistics.median(cpu_ms([sys.executable, "-c", "pass"]) for _ in range(10))
        sdk_cpu = statistics.median(cpu_ms([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"])
                                    for _ in range(args.runs))
        ready_cpu = statistics.median(start_cpu_ms(env, False) for _ in range(args.runs))
        first_cpu = statistics.median(start_cpu_ms(env, True) for _ in range(args.runs))
        tool_wall, tool_cpu = tool_search_ms(home, args.queries)
        base2 = python_pass_ms(10)
    ready = statistics.median(r[0] for r in runs)
    first = statistics.median(r[1] for r in runs)
    later = statistics.median(t for r in runs for t in r[2])
    b = (base + base2) / 2
    print(f"items {args.items}, runs {args.runs}, later searches {args.queries} per run")
    print(f"python -c pass      {b:8.1f} ms  (1.0x; {base:.1f} before, {base2:.1f} after)")
    print(f"SDK import alone    {sdk:8.1f} ms  ({sdk / b:.1f}x)")
    print(f"ready (initialize)  {ready:8.1f} ms  ({ready / b:.1f}x)")
    print(f"first search        {first:8.1f} ms  ({first / b:.1f}x)")
    print(f"ready + first       {ready + first:8.1f} ms  ({(ready + first) / b:.1f}x)")
    print(f"later search median {later:8.1f} ms  ({later / b:.1f}x)")
    print(f"CPU: python -c pass {base_cpu:6.1f} ms, SDK import {sdk_cpu:.1f} ms ({sdk_cpu / base_cpu:.1f}x), "
          f"a start {ready_cpu:.1f} ms ({ready_cpu / base_cpu:.1f}x), a start and a first search {first_cpu:.1f} ms "
          f"({first_cpu / base_cpu:.1f}x)")
    print(f"search tool in process: {tool_wall:.1f} ms wall, {tool_cpu:.1f} ms CPU (median of {args.queries})")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
