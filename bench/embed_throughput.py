"""MiniLM embedding throughput on this CPU, and 10k messages embedded end to end by the service.

    PYTHONPATH=lib /tmp/devvenv/bin/python bench/embed_throughput.py [--n 10000] [--sample 1024]

1. In process: sentences/s encoding LoCoMo turn texts ("Speaker: text [shares caption]") for
   batch sizes 16/32/64/128 and 1 or 2 torch threads (what ``embedding_batch_size`` and
   ``embedding_threads`` set in the service).
2. End to end: ``--n`` distinct messages (LoCoMo dev turns, cycled, each made unique) are put in
   a fresh index.db; then the clock runs from ``client.request_embed`` (which starts the service
   cold) until the service reports nothing pending: model load + embedding + writing vectors.
The baseline is ``python -c pass`` of the same venv in the same run (shared, noisy machine).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT / "bench"))

from baseline import python_pass_ms  # noqa: E402


def service_cpu_seconds(pid: int) -> float:
    """utime + stime of the service process (all threads), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def texts(n: int) -> list[str]:
    from locomo_dense import DATA, load

    base = [t["text"] for c in load(DATA) for t in c["turns"]]
    return [base[i % len(base)] + ("" if i < len(base) else f" ({i // len(base)})") for i in range(n)]


def in_process(sample: list[str]) -> None:
    from sophia.embed.model import Encoder

    t = time.perf_counter()
    enc = Encoder(threads=2)
    print(f"model load (import + weights) in process: {time.perf_counter() - t:.1f}s")
    import torch

    enc.encode(sample[:64], 64)  # warm up
    print(f"{'threads':>7} {'batch':>5} {'sent/s':>8}   ({len(sample)} LoCoMo turns, mean {statistics.mean(map(len, sample)):.0f} chars)")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for bs in (16, 32, 64, 128):
            t = time.perf_counter()
            enc.encode(sample, bs)
            dt = time.perf_counter() - t
            print(f"{threads:>7} {bs:>5} {len(sample) / dt:>8.0f}")


def end_to_end(msgs: list[str]) -> None:
    from sophia.embed import vectors
    from sophia.embed_client import client

    out_dir = ROOT / "bench" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        os.environ["SOPHIA_HOME"] = str(home)
        conn = vectors.connect(home)
        conn.executemany(
            "INSERT INTO items(id, type, text, content_hash) VALUES (?, 'turn', ?, ?)",
            [(f"turn:{i}", m, hashlib.sha256(m.encode()).hexdigest()) for i, m in enumerate(msgs)],
        )
        conn.commit()
        conn.close()
        try:
            t0 = time.perf_counter()
            client.request_embed(home)
            assert client.wait_warm(home, 300), "service did not start"
            warm = time.perf_counter() - t0
            assert client.wait_embedded(home, 900), "embedding did not finish"
            total = time.perf_counter() - t0
            st = client.status(home) or {}
            cpu = service_cpu_seconds(int(st.get("pid") or 0))
            print(f"end to end: {len(msgs)} messages embedded in {total:.1f}s from a cold start "
                  f"(service warm after {warm:.1f}s; {len(msgs) / (total - warm):.0f} msg/s once warm); "
                  f"embedded {st.get('embedded')}, pending {st.get('pending')}, "
                  f"batch {st.get('batch_size', 'config')}, threads {st.get('threads')}; service CPU time "
                  f"{cpu:.0f}s ({1000 * cpu / len(msgs):.0f} CPU-ms per message, load-independent-ish), "
                  f"RSS {st.get('rss_mb')} MB")
            t = time.perf_counter()
            hits = client.search("adopting a dog", 10, home=home, timeout=5)
            print(f"warm search over {len(msgs)} vectors: {1000 * (time.perf_counter() - t):.1f} ms, "
                  f"{len(hits or [])} hits")
        finally:
            client.stop(home)
            for line in (home / "logs" / "embed.log").read_text().splitlines():
                if "indexed" in line or "loaded in" in line:
                    print("service log:", line)
            print(f"load average after: {os.getloadavg()[0]:.1f} (2 cores)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=1024)
    ap.add_argument("--skip-in-process", action="store_true")
    args = ap.parse_args()
    print(f"baseline: `python -c pass` median {python_pass_ms():.1f} ms (same venv, same run); "
          f"load average {os.getloadavg()[0]:.1f} (2 cores)")
    msgs = texts(args.n)
    if not args.skip_in_process:
        in_process(msgs[: args.sample])
    end_to_end(msgs)


if __name__ == "__main__":
    main()
