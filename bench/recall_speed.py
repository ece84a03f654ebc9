"""Whole-process speed of ``s3 recall`` and ``s3 ingest`` at 10k, 100k and 1M ingested messages.

    PYTHONPATH=lib .venv/bin/python bench/recall_speed.py [--sizes 10000,100000,1000000] [--runs 20] [--semantic]
        [--keep DIR] [--corpus locomo|common]

Messages are the LoCoMo dev turns, cycled over many conversations (realistic vocabulary and
lengths; from the second cycle on each text gets a " #k" suffix, so every message is distinct and
embedding 10k messages means 10k encodings) and written as JSONL. For each size: ``s3 ingest FILE --format jsonl`` is timed once,
then ``hyperfine`` runs ``s3 recall QUERY --json`` for a few queries against a bare
``python -c pass`` of the same interpreter, in the same run; the figure that matters is the
ratio. With ``--semantic`` the embedding service of each home is started and every message
embedded before timing (recall then fuses both tiers); without it ``SOPHIA_RECALL_SEMANTIC=0``
measures the keyword tier alone. ``s3`` is invoked the way the installed console script does it
(``from sophia.cli.entry import main``), not through ``python -m`` (which adds runpy).

``--corpus common`` (issue 30) ingests ordinary work instead: turns of 16 words, 30 % from a small set of common
coding words (``COMMON``: fix, test, build, deploy, error, config, cache...), the rest from a Zipf-like tail of
50,000 made-up words, and times queries made only of common words (``COMMON_QUERIES``): at a million turns each
common word is in about a fifth of them.

``--injected`` times the prompt hook's path instead: ``s3 recall --type K`` for every kind the hook
injects (no turns), after adding LoCoMo dev's observations as 2,000-odd facts beside the turns (what a
user who imported chat archives and also has notes of their own holds).

The ingest's peak resident memory is reported too (the bar: 500 MB at any size), and each query's
median as well as its mean. ``--keep DIR`` keeps the files and homes in DIR and reuses a home already
holding its size (a million messages take minutes to ingest): its ingest columns are then empty.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEV = Path("/work/shared/data/locomo/locomo_dev.json")
QUERIES = ["LGBTQ support group", "What did Melanie paint?", "adoption agency interview",
           "when did Caroline go camping with her kids"]


def make_jsonl(n: int, out: Path) -> None:
    data = json.loads(DEV.read_text())
    turns = []
    for s in data:
        c = s["conversation"]
        for k, v in c.items():
            if k.startswith("session_") and isinstance(v, list):
                for t in v:
                    text = t["text"] + (f" [shares {t['blip_caption']}]" if t.get("blip_caption") else "")
                    turns.append((t["speaker"], text))
    with out.open("w") as fh:
        for i in range(n):
            sp, text = turns[i % len(turns)]
            if i >= len(turns):  # every message distinct, so none is embedded for free by content hash
                text += f" #{i // len(turns)}"
            conv, pos = divmod(i, 500)
            fh.write(json.dumps({"id": f"c{conv}-m{pos}", "session": f"s{conv}-{pos // 25}", "speaker": sp,
                                 "text": text, "timestamp": f"2024-{1 + conv % 12:02d}-{1 + pos // 25:02d}T10:"
                                 f"{pos % 25:02d}:00Z"}) + "\n")


# --corpus common (issue 30): what a million memories of ordinary work look like: 16 words a turn, 30 % of them
# from a small set of common coding words, the rest from a Zipf-like tail; queries made only of common words
COMMON = ("fix", "test", "build", "deploy", "error", "config", "cache", "update", "add", "remove", "check", "run",
          "file", "code", "debug", "log", "server", "api", "data", "user")
COMMON_QUERIES = ["fix test", "build error config", "deploy cache server", "fix the failing test build error"]
TAIL_WORDS = 50_000


def tail_vocabulary(n: int = TAIL_WORDS, seed: int = 30) -> list[str]:
    """``n`` distinct made-up words (syllables), the same every run."""
    import random

    rnd = random.Random(seed)
    cons, vows = "bcdfghjklmnprstvwz", "aeiou"
    out: dict[str, None] = {}
    while len(out) < n:
        w = "".join(rnd.choice(cons) + rnd.choice(vows) for _ in range(rnd.randint(2, 4)))
        if w not in COMMON:
            out[w] = None
    return list(out)


def make_common_jsonl(n: int, out: Path, words: int = 16, common_share: float = 0.3, seed: int = 30) -> None:
    """``n`` turns of ``words`` words: each word common with probability ``common_share``, else the r-th
    tail word with probability proportional to 1/r (Zipf, s = 1)."""
    import itertools
    import random

    rnd = random.Random(seed)
    tail = tail_vocabulary()
    cum = list(itertools.accumulate(1.0 / r for r in range(1, len(tail) + 1)))
    with out.open("w") as fh:
        for i in range(n):
            k = sum(1 for _ in range(words) if rnd.random() < common_share)
            ws = rnd.choices(COMMON, k=k) + rnd.choices(tail, cum_weights=cum, k=words - k)
            rnd.shuffle(ws)
            conv, pos = divmod(i, 500)
            fh.write(json.dumps({"id": f"c{conv}-m{pos}", "session": f"s{conv}-{pos // 25}",
                                 "speaker": "dev" if pos % 2 else "agent", "text": " ".join(ws),
                                 "timestamp": f"2024-{1 + conv % 12:02d}-{1 + pos // 25:02d}T10:{pos % 25:02d}:00Z"})
                     + "\n")


def corpus(args: argparse.Namespace) -> tuple[Any, list[str], str]:
    """(the generator of ``n`` turns, the queries, the homes' name prefix) of ``--corpus``."""
    if args.corpus == "common":
        return make_common_jsonl, COMMON_QUERIES, "common"
    return make_jsonl, QUERIES, ""


def injected_types(env: dict[str, str]) -> list[str]:
    """The kinds the prompt hook injects, as the measured tree (``--lib``) says."""
    out = subprocess.run([sys.executable, "-c", "from sophia.kinds import injected_types; print(*injected_types())"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return out.split()


def add_notes(home: Path, env: dict[str, str]) -> None:
    """LoCoMo dev's observations as facts in ``home``'s index (once)."""
    code = """if True:
        import json, sys
        from pathlib import Path
        from sophia.index import db, store
        conn = db.connect(Path(sys.argv[1]))
        if not conn.execute("SELECT count(*) FROM items WHERE type = 'fact'").fetchone()[0]:
            items = []
            for s in json.loads(Path(sys.argv[2]).read_text()):
                for sess, obs in (s.get("observation") or {}).items():
                    for who, lines in obs.items():
                        for k, line in enumerate(lines):
                            text = line[0] if isinstance(line, list) else str(line)
                            items.append({"id": f"fact_{s['sample_id']}_{sess}_{who}_{k}", "type": "fact",
                                          "text": text})
            store.upsert_items(conn, items)
        print(conn.execute("SELECT count(*) FROM items WHERE type = 'fact'").fetchone()[0], file=sys.stderr)
    """
    subprocess.run([sys.executable, "-c", code, str(home), str(DEV)], env=env, check=True)


def stop_service(home: Path, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-c", "import sys; from sophia.embed_client import client as c; "
                    "c.stop(sys.argv[1])", str(home)], env=env, check=False)


def timed_ingest(s3: Path, src: Path, env: dict[str, str]) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one ``s3 ingest``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(s3), "ingest", str(src), "--format", "jsonl", "--json"], env=env,
                            stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"s3 ingest failed ({proc.returncode})")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def holds(home: Path, n: int) -> bool:
    """Does ``home`` already hold the ``n`` ingested messages (``--keep``)?"""
    import sqlite3

    db = home / "index.db"
    if not db.exists():
        return False
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM items WHERE type = 'turn'").fetchone()[0] == n
    finally:
        conn.close()


def s3_script(tmp: Path) -> Path:
    p = tmp / "s3"
    p.write_text(f"#!{sys.executable}\nimport sys\nfrom sophia.cli.entry import main\nsys.exit(main())\n")
    p.chmod(0o755)
    return p


def hyperfine(cmds: list[str], env: dict[str, str], runs: int, out: Path) -> list[dict[str, float]]:
    subprocess.run(["hyperfine", "-N", "-w", "3", "-r", str(runs), "--export-json", str(out), *cmds],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return [{"mean_ms": r["mean"] * 1000, "median_ms": r["median"] * 1000, "stddev_ms": r["stddev"] * 1000,
             "max_ms": r["max"] * 1000} for r in json.loads(out.read_text())["results"]]


def callgrind(cmd: list[str], env: dict[str, str], tmp: Path) -> int:
    out = tmp / "callgrind.out"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd], env=env,
                   capture_output=True, check=False)
    text = out.read_text()
    out.unlink()
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith(("summary:", "totals:"))))


def instruction_counts(args: argparse.Namespace) -> None:
    """Instructions of ``s3 recall`` per query and of ``python -c pass``, keyword tier, each size."""
    with tempfile.TemporaryDirectory(prefix="s3-instr-") as t:
        tmp = Path(t)
        s3 = s3_script(tmp)
        print(f"lib {args.lib}\n\n| messages | `python -c pass` M instr | `s3 recall` mean M instr | ratio mean / worst |")
        print("|---:|---:|---:|---:|")
        work = args.keep or tmp
        work.mkdir(parents=True, exist_ok=True)
        make, queries, prefix = corpus(args)
        for n in (int(x) for x in args.sizes.split(",")):
            home = work / f"{prefix}home{n}"
            env = dict(os.environ, SOPHIA_HOME=str(home), PYTHONPATH=args.lib, SOPHIA_RECALL_SEMANTIC="0")
            if not (args.keep and holds(home, n)):
                src = work / f"{prefix}msgs{n}.jsonl"
                make(n, src)
                subprocess.run([str(s3), "ingest", str(src), "--format", "jsonl", "--json"], env=env, check=True,
                               stdout=subprocess.DEVNULL)
            subprocess.run([str(s3), "recall", queries[0], "--json"], env=env, check=True, stdout=subprocess.DEVNULL)
            base = callgrind([sys.executable, "-c", "pass"], env, tmp)
            counts = [callgrind([sys.executable, str(s3), "recall", q, "--json"], env, tmp) for q in queries]
            mean = sum(counts) / len(counts)
            print(f"| {n:,} | {base / 1e6:.1f} | {mean / 1e6:.1f} | {mean / base:.2f}x / {max(counts) / base:.2f}x |",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--semantic", action="store_true")
    ap.add_argument("--keep", type=Path, help="keep files and homes here; reuse a home that holds its size")
    ap.add_argument("--lib", default=str(ROOT / "lib"), help="the package to measure (default: this tree)")
    ap.add_argument("--corpus", choices=("locomo", "common"), default="locomo",
                    help="LoCoMo dev's turns cycled (default), or ordinary work: common coding words and a Zipf tail")
    ap.add_argument("--injected", action="store_true",
                    help="time recall limited to the kinds the prompt hook injects (its path), with notes added")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions with callgrind (one run per query) instead of timing with hyperfine: "
                         "repeatable on a busy machine; compare two trees with --lib")
    args = ap.parse_args()
    if args.instructions:
        return instruction_counts(args)
    if not shutil.which("hyperfine"):
        sys.exit("hyperfine is needed (apt-get install hyperfine)")
    with tempfile.TemporaryDirectory(prefix="s3-speed-") as t:
        tmp = Path(t)
        work = args.keep or tmp
        work.mkdir(parents=True, exist_ok=True)
        report = [measure(n, args, work, s3_script(tmp), tmp) for n in (int(x) for x in args.sizes.split(","))]
    print("\n| messages | ingest (s) | ingest peak RSS (MB) | then embed all (s) | `python -c pass` (ms) "
          "| `s3 recall` mean (ms) | ratio mean / worst query | ratio of medians: median / worst query |")
    print("|---|---|---|---|---|---|---|---|")
    for r in report:
        mean_ms = sum(x["mean_ms"] for x in r["recall"]) / len(r["recall"])
        print(f"| {r['messages']:,} | {r['ingest_seconds'] or '-'} | {r['ingest_peak_mb'] or '-'} "
              f"| {r['embed_seconds'] or '-'} | {r['python_c_pass_ms']} | {mean_ms:.1f} "
              f"| {r['mean_ratio']}x / {r['worst_ratio']}x | {r['median_ratio']}x / {r['worst_median_ratio']}x |")


def measure(n: int, args: argparse.Namespace, work: Path, s3: Path, tmp: Path) -> dict[str, Any]:
    """Ingest ``n`` messages (unless ``--keep`` holds them), then time the queries against ``python -c pass``."""
    make, queries, prefix = corpus(args)
    home = work / f"{prefix}home{n}"
    env = dict(os.environ, SOPHIA_HOME=str(home), PYTHONPATH=args.lib,
               SOPHIA_RECALL_SEMANTIC="1" if args.semantic else "0")
    ingest_s = peak_mb = None
    if not (args.keep and holds(home, n)):
        src = work / f"{prefix}msgs{n}.jsonl"
        make(n, src)
        ingest_s, peak_mb = timed_ingest(s3, src, env)
    type_args = ""
    if args.injected:
        add_notes(home, env)
        type_args = " " + " ".join(f"--type {t}" for t in injected_types(env))
    embed_s = None
    if not args.semantic:  # `s3 ingest` starts the embedding service for the new items, as a user wants;
        stop_service(home, env)  # here it would only eat the CPU the keyword timings share
    if args.semantic:
        t1 = time.perf_counter()
        code = ("import sys; from pathlib import Path; from sophia.embed_client import client as c; h=Path(sys.argv[1]);"
                "c.ensure_started(h, force=True); assert c.wait_warm(h, 900); c.request_embed(h);"
                "assert c.wait_embedded(h, 3600)")
        subprocess.run([sys.executable, "-c", code, str(home)], env=env, check=True)
        embed_s = round(time.perf_counter() - t1, 1)
    cmds = [f"{sys.executable} -c pass"] + [f"{s3} recall '{q}' --json{type_args}" for q in queries]
    res = hyperfine(cmds, env, args.runs, tmp / f"hf{n}.json")
    base, base_med = res[0]["mean_ms"], res[0]["median_ms"]
    rows: list[dict[str, Any]] = [
        {"query": q, **r, "ratio": round(r["mean_ms"] / base, 2), "median_ratio": round(r["median_ms"] / base_med, 2)}
            for q, r in zip(queries, res[1:], strict=True)]
    if args.semantic:
        stop_service(home, env)
    medians = sorted(r["median_ratio"] for r in rows)
    out = {"messages": n, "semantic": args.semantic, "embed_seconds": embed_s,
           "ingest_seconds": None if ingest_s is None else round(ingest_s, 2),
           "ingest_peak_mb": None if peak_mb is None else round(peak_mb), "python_c_pass_ms": round(base, 1),
           "recall": rows, "worst_ratio": max(r["ratio"] for r in rows),
           "mean_ratio": round(sum(r["ratio"] for r in rows) / len(rows), 2),
           "median_ratio": medians[len(medians) // 2], "worst_median_ratio": medians[-1],
           "db_bytes": (home / "index.db").stat().st_size}
    print(json.dumps(out), flush=True)
    return out


if __name__ == "__main__":
    main()
