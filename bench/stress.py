"""Concurrency and crash-consistency harness for the ~/.sophia state tree.

Two loops, both against a throw-away SOPHIA_HOME:

* ``stress``: W mixed writers (episodes via episode_store.upsert_episode, rules under the rules lock,
  self_model and the user model via state.update_model, the SQLite index via sophia.index.store when it
  exists) run at once. Each writer journals every operation AFTER it returned (acknowledged). Then every
  acknowledged operation must be found in the files (nothing lost) and every JSON file must parse.
* ``crash``: K iterations; each starts a few writers, SIGKILLs them at a random moment, then checks that
  every state file parses (never empty or half-written), that a fresh writer gets every lock at once
  (flock: a dead holder leaves no lock), and that every acknowledged operation survived.

The CI-sized versions are in tests/test_stress.py; the long runs are:
    PYTHONPATH=lib /tmp/devvenv/bin/python bench/stress.py stress --writers 32 --ops 40
    PYTHONPATH=lib /tmp/devvenv/bin/python bench/stress.py crash --iterations 200 --writers 4
    PYTHONPATH=lib /tmp/devvenv/bin/python bench/stress.py learn --processes 8 --each 25
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "lib") not in sys.path:
    sys.path.insert(0, str(ROOT / "lib"))

from sophia import paths  # noqa: E402
from sophia.atomic import read_json, write_json_atomic  # noqa: E402
from sophia.episode_store import upsert_episode  # noqa: E402
from sophia.locking import locked  # noqa: E402

KINDS = ("episode", "rule", "self_model", "user_model", "memory", "index")


def index_available() -> bool:
    try:
        from sophia.index import db, store  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------ operations


def op_episode(home: Path, wid: int, j: int) -> str:
    eid = f"ep_w{wid}_{j}"
    stamp = f"2025-{1 + (j % 12):02d}-{1 + (wid % 28):02d}T10:{j % 60:02d}:00Z"
    upsert_episode({
        "id": eid, "session_id": f"s{wid}", "started_at": stamp, "ended_at": stamp, "timestamp": stamp,
        "goal_summary": f"writer {wid} op {j}", "outcome": "SUCCESS", "tool_call_count": j,
    }, home)
    return eid


WORDS = ("cache", "docker", "retry", "schema", "pytest", "deploy", "index", "lock", "queue", "branch", "token",
         "kernel", "socket", "vector", "parser", "budget", "render", "signal", "thread", "module", "proxy", "cursor")


def insight(wid: int, j: int) -> str:
    """A distinct lesson per (writer, op): a unique term plus random words, far from any near-duplicate."""
    rng = random.Random(wid * 100_003 + j)
    return f"lesson w{wid}n{j}: " + " ".join(rng.sample(WORDS, 5))


def learn_available() -> bool:
    try:
        from sophia.memory.manage import learn  # noqa: F401
    except ImportError:
        return False
    return True


def op_rule(home: Path, wid: int, j: int) -> str:
    """What `s3 learn` does (sophia.memory.manage.learn) when it exists, else the rules file under its lock."""
    if learn_available():
        from sophia.memory.manage import learn

        out = learn(insight(wid, j), f"stress w{wid}", home=home)
        if out["status"] != "added":
            raise RuntimeError(f"learn {out['status']} instead of added: {insight(wid, j)}")
        return str(out["rule"]["id"])
    from sophia.state import last_good_path

    rid = f"rule_w{wid}_{j}"
    rp = paths.rules_path(home)
    with locked(rp):
        rules = read_json(rp, default=[])
        rules.append({"id": rid, "trigger_concept": f"writer {wid}", "rule_content": f"rule {j} of writer {wid}",
                      "source": "manual", "created_at": "2025-01-01T00:00:00Z"})
        write_json_atomic(rp, rules, keep_last=last_good_path(rp, home))
    return rid


def op_self_model(home: Path, wid: int, j: int) -> str:
    from sophia.models import SelfModel
    from sophia.state import _default_self_model, update_model

    with update_model(paths.self_model_path(home), SelfModel, _default_self_model, home=home) as sm:
        sm.total_sessions += 1
    return "+1"


def op_user_model(home: Path, wid: int, j: int) -> str:
    from sophia.models import UserModel
    from sophia.state import update_model

    with update_model(paths.user_model_path("default", home), UserModel, UserModel, home=home) as um:
        um.interaction_count += 1
        um.topics_discussed = (um.topics_discussed + [f"w{wid}_{j}"])[-50:]
    return "+1"


def op_index(home: Path, wid: int, j: int) -> str:
    from sophia.index import db, store

    iid = f"fact_w{wid}_{j}"
    conn = db.connect(home)
    try:
        store.upsert_items(conn, [{"id": iid, "type": "fact", "text": f"writer {wid} fact {j} about locks",
                                   "timestamp": "2025-01-01T00:00:00Z"}])
    finally:
        conn.close()
    return iid


def op_memory(home: Path, wid: int, j: int) -> str:
    """memory/fact.json ({"items": [...]}, the index contract's file shape), kept large (~0.5 MB) so that
    kills often land inside the write itself."""
    iid = f"fact_mem_w{wid}_{j}"
    mp = paths.memory_dir(home) / "fact.json"
    with locked(mp):
        data = read_json(mp, default=None) or {"items": []}
        data["items"].append({"id": iid, "type": "fact", "text": f"writer {wid} fact {j}", "meta": {}})
        data["padding"] = "x" * 500_000
        write_json_atomic(mp, data)
    return iid


OPS: dict[str, Callable[[Path, int, int], str]] = {
    "episode": op_episode, "rule": op_rule, "self_model": op_self_model, "user_model": op_user_model,
    "memory": op_memory, "index": op_index,
}


def worker(home: str, journal: str, kind: str, wid: int, ops: int, delay: float) -> None:
    """Run ``ops`` operations of ``kind``; journal each one after it returned."""
    os.environ["SOPHIA_HOME"] = home
    h = Path(home)
    fn = OPS[kind]
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        for j in range(ops):
            ident = fn(h, wid, j)
            os.write(fd, f"{kind}\t{ident}\n".encode())
            if delay:
                time.sleep(random.random() * delay)
    finally:
        os.close(fd)


# ------------------------------------------------------------------ checks


@dataclass
class Report:
    writers: int = 0
    operations_acked: int = 0
    kills: int = 0
    iterations: int = 0
    files_checked: int = 0
    bad_files: list[str] = field(default_factory=list)
    losses: list[str] = field(default_factory=list)
    max_lock_wait_s: float = 0.0
    leftover_tmp: int = 0
    seconds: float = 0.0
    kinds: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        return not self.bad_files and not self.losses

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["bad_files"] = self.bad_files[:20]
        d["losses"] = self.losses[:20]
        d["losses_found"] = len(self.losses)
        return d


def read_journals(jdir: Path) -> dict[str, list[str]]:
    acked: dict[str, list[str]] = {k: [] for k in KINDS}
    for jp in jdir.glob("*.journal"):
        for line in jp.read_text(encoding="utf-8", errors="replace").splitlines():
            kind, _, ident = line.partition("\t")
            if kind in acked and ident:
                acked[kind].append(ident)
    return acked


def check_files(home: Path, report: Report) -> None:
    """Every JSON state file parses (non-empty, complete); the SQLite index passes integrity_check."""
    report.leftover_tmp = 0  # temp files of killed writes at this check (s3 doctor --repair removes them)
    for p in sorted(home.rglob("*")):
        if not p.is_file():
            continue
        if p.name.endswith(".tmp"):
            report.leftover_tmp += 1
            continue
        if p.suffix == ".json":
            report.files_checked += 1
            try:
                raw = p.read_bytes()
                if not raw.strip():
                    raise ValueError("empty")
                json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                report.bad_files.append(f"{p.relative_to(home)}: {exc}")
        elif p.suffix == ".db":
            report.files_checked += 1
            import sqlite3

            try:
                con = sqlite3.connect(p)
                res = con.execute("PRAGMA integrity_check").fetchone()[0]
                con.close()
                if res != "ok":
                    report.bad_files.append(f"{p.relative_to(home)}: integrity_check {res}")
            except sqlite3.Error as exc:
                report.bad_files.append(f"{p.relative_to(home)}: {exc}")


def check_acked(home: Path, acked: dict[str, list[str]], attempted_counters: dict[str, int], report: Report) -> None:
    """Every acknowledged operation is in the files (counters: acked <= value <= attempted)."""
    if acked["episode"]:
        known: set[str] = set()
        for ip in paths.episodes_dir(home).glob("index*.json"):
            data = read_json(ip, default={}) or {}
            known.update(e.get("id") for e in data.get("entries", []) if isinstance(e, dict))
        for eid in acked["episode"]:
            if not (paths.episodes_dir(home) / f"{eid}.json").is_file():
                report.losses.append(f"episode file {eid}")
            elif eid not in known:
                report.losses.append(f"episode index entry {eid}")
    if acked["rule"]:
        rules = read_json(paths.rules_path(home), default=[]) or []
        ids = [r.get("id") for r in rules]
        have = set(ids)
        report.losses.extend(f"rule {rid}" for rid in acked["rule"] if rid not in have)
        if len(ids) != len(have):
            report.losses.append(f"duplicate rules: {len(ids) - len(have)}")
    for kind, path_fn, key in (("self_model", paths.self_model_path, "total_sessions"),
                               ("user_model", lambda h: paths.user_model_path("default", h), "interaction_count")):
        n = len(acked[kind])
        if n:
            value = int((read_json(path_fn(home), default={}) or {}).get(key, 0))
            if not n <= value <= attempted_counters.get(kind, n):
                report.losses.append(f"{kind}.{key} = {value}, acknowledged {n}, at most {attempted_counters.get(kind, n)}")
    if acked["memory"]:
        data = read_json(paths.memory_dir(home) / "fact.json", default={}) or {}
        have = [i.get("id") for i in data.get("items", [])]
        report.losses.extend(f"memory item {i}" for i in acked["memory"] if i not in set(have))
        if len(have) != len(set(have)):
            report.losses.append("duplicate memory items")
    if acked["index"]:
        import sqlite3

        try:
            have = index_ids(paths.index_db_path(home))
        except sqlite3.Error as exc:
            report.losses.append(f"index unreadable: {exc}")
            have = set()
        report.losses.extend(f"index item {i}" for i in acked["index"] if i not in have)


def index_ids(db: Path) -> set[str]:
    """Every item id in the SQLite index (the table holding items: an ``id`` and a ``type`` column)."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for t in (["items"] if "items" in tables else []) + tables:
            cols = {r[1] for r in con.execute(f'PRAGMA table_info("{t}")')}
            if {"id", "type"} <= cols:
                return {str(r[0]) for r in con.execute(f'SELECT id FROM "{t}"')}
        return set()
    finally:
        con.close()


def lock_wait(home: Path) -> float:
    """Longest time a fresh writer waits for the lock of each state file."""
    worst = 0.0
    targets = [paths.rules_path(home), paths.self_model_path(home), paths.episode_index_path(home),
               paths.user_model_path("default", home), paths.config_path(home)]
    for t in targets:
        t0 = time.monotonic()
        with locked(t, timeout=10):
            pass
        worst = max(worst, time.monotonic() - t0)
    return worst


# ------------------------------------------------------------------ loops


def _ctx() -> Any:
    return multiprocessing.get_context("fork")


def _setup(home: Path) -> None:
    from sophia.state import init_tree

    os.environ["SOPHIA_HOME"] = str(home)
    init_tree(home)


def run_stress(writers: int = 32, ops: int = 20, kinds: tuple[str, ...] | None = None,
               base: Path | None = None) -> Report:
    kinds = kinds or tuple(k for k in KINDS if k != "index" or index_available())
    report = Report(writers=writers, kinds=list(kinds))
    with tempfile.TemporaryDirectory(dir=base, prefix="stress-") as tmp:
        home, jdir = Path(tmp) / "home", Path(tmp) / "journals"
        jdir.mkdir()
        _setup(home)
        t0 = time.monotonic()
        procs = []
        for w in range(writers):
            kind = kinds[w % len(kinds)]
            p = _ctx().Process(target=worker, args=(str(home), str(jdir / f"w{w}.journal"), kind, w, ops, 0.0))
            p.start()
            procs.append(p)
        for p in procs:
            p.join(600)
            if p.exitcode != 0:
                report.losses.append(f"writer pid {p.pid} exited {p.exitcode}")
        report.seconds = round(time.monotonic() - t0, 2)
        acked = read_journals(jdir)
        report.operations_acked = sum(len(v) for v in acked.values())
        attempted = {k: len(v) for k, v in acked.items()}
        check_files(home, report)
        check_acked(home, acked, attempted, report)
        report.max_lock_wait_s = round(lock_wait(home), 4)
    return report


def run_crash(iterations: int = 20, writers: int = 4, ops: int = 10_000, max_alive: float = 0.6,
              seed: int = 1, kinds: tuple[str, ...] | None = None, base: Path | None = None) -> Report:
    """Each iteration: start ``writers`` writers, SIGKILL every one at a random moment, then check."""
    kinds = kinds or tuple(k for k in KINDS if k != "index" or index_available())
    rng = random.Random(seed)
    report = Report(writers=writers, kinds=list(kinds))
    with tempfile.TemporaryDirectory(dir=base, prefix="crash-") as tmp:
        home, jdir = Path(tmp) / "home", Path(tmp) / "journals"
        jdir.mkdir()
        _setup(home)
        t0 = time.monotonic()
        killed_per_kind: dict[str, int] = {k: 0 for k in KINDS}
        wid = 0
        for _ in range(iterations):
            procs = []
            for _w in range(writers):
                kind = kinds[rng.randrange(len(kinds))]
                p = _ctx().Process(target=worker, args=(str(home), str(jdir / f"w{wid}.journal"), kind, wid, ops, 0.0))
                p.start()
                procs.append((p, kind))
                wid += 1
            # kill each writer at its own random moment (mid-write, mid-rename, holding a lock...)
            deadlines = sorted((rng.uniform(0.05, max_alive), i) for i in range(len(procs)))
            start = time.monotonic()
            for when, i in deadlines:
                time.sleep(max(0.0, start + when - time.monotonic()))
                p, kind = procs[i]
                if p.is_alive():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(p.pid, signal.SIGKILL)
                    report.kills += 1
                    killed_per_kind[kind] += 1
            for p, _kind in procs:
                p.join(30)
            report.iterations += 1
            before = len(report.bad_files)
            check_files(home, report)
            if len(report.bad_files) > before:
                break
            report.max_lock_wait_s = max(report.max_lock_wait_s, round(lock_wait(home), 4))
        report.seconds = round(time.monotonic() - t0, 2)
        report.writers = wid
        acked = read_journals(jdir)
        report.operations_acked = sum(len(v) for v in acked.values())
        attempted = {k: len(v) + killed_per_kind[k] for k, v in acked.items()}
        check_acked(home, acked, attempted, report)
    return report


def _learn_proc(home: str, wid: int, n: int, real: bool) -> int:
    """n `s3 learn` calls: real subprocesses of the CLI, or the CLI app invoked in this (forked) process."""
    env = dict(os.environ, SOPHIA_HOME=home, PYTHONPATH=str(ROOT / "lib"))
    failures = 0
    for j in range(n):
        args = ["learn", insight(wid, j), "--domain", f"stress w{wid}"]
        if real:
            import subprocess

            r = subprocess.run([sys.executable, "-m", "sophia.cli.entry", *args], env=env, capture_output=True,
                               text=True, timeout=300)
            failures += r.returncode != 0
        else:
            from sophia.cli.app import app

            os.environ["SOPHIA_HOME"] = home
            try:
                app(args=args, prog_name="s3", standalone_mode=False)
            except SystemExit as exc:
                failures += bool(exc.code)
            except Exception:
                failures += 1
    return failures


def run_learn(processes: int = 8, each: int = 25, real: bool = True, base: Path | None = None) -> dict[str, Any]:
    """``processes`` concurrent processes each running `s3 learn` ``each`` times: exactly processes*each rules."""
    import contextlib as _cl
    import io

    with tempfile.TemporaryDirectory(dir=base, prefix="learn-") as tmp:
        home = Path(tmp) / "home"
        _setup(home)
        t0 = time.monotonic()
        with _ctx().Pool(processes) as pool, _cl.redirect_stdout(io.StringIO()):
            failures = sum(pool.starmap(_learn_proc, [(str(home), w, each, real) for w in range(processes)]))
        seconds = round(time.monotonic() - t0, 2)
        rules = read_json(paths.rules_path(home), default=[]) or []
        ids = [r.get("id") for r in rules]
        report = Report(writers=processes, operations_acked=processes * each - failures, seconds=seconds)
        check_files(home, report)
        return {"processes": processes, "each": each, "real_subprocesses": real, "expected": processes * each,
                "rules": len(rules), "distinct_ids": len(set(ids)), "failed_calls": failures,
                "files_checked": report.files_checked, "bad_files": report.bad_files, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stress", help="W mixed writers at once; nothing lost, every file parses")
    s.add_argument("--writers", type=int, default=32)
    s.add_argument("--ops", type=int, default=40)
    c = sub.add_parser("crash", help="writers SIGKILLed at random moments, many iterations")
    c.add_argument("--iterations", type=int, default=100)
    c.add_argument("--writers", type=int, default=4)
    c.add_argument("--seed", type=int, default=1)
    lp = sub.add_parser("learn", help="P processes x N real `s3 learn` calls: exactly P*N rules")
    lp.add_argument("--processes", type=int, default=8)
    lp.add_argument("--each", type=int, default=25)
    args = ap.parse_args(argv)
    if args.cmd == "learn":
        res = run_learn(args.processes, args.each, real=True)
        print(json.dumps(res, indent=2))
        return 0 if res["rules"] == res["expected"] == res["distinct_ids"] and not res["bad_files"] else 1
    if args.cmd == "stress":
        report = run_stress(args.writers, args.ops)
    else:
        report = run_crash(args.iterations, args.writers, seed=args.seed)
    print(json.dumps(report.to_json(), indent=2))
    return 0 if report.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
