"""Cost of sophia.redact on 1 MB of text, as a ratio against json.loads of the same payload (a hook
parses its stdin anyway), measured in the same run. Also the worst adversarial runs (linear-time check).

    PYTHONPATH=lib /tmp/devvenv/bin/python bench/redact_cost.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from sophia.redact import redact, redact_obj  # noqa: E402


def best(fn, reps: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def realistic_mb() -> str:
    corpus = [json.loads(x) for x in (ROOT / "tests/fixtures/secrets.jsonl").read_text().splitlines()]
    filler = ("total 48\ndrwxr-xr-x  5 dev dev 4096 May  1 10:00 .\n-rw-r--r--  1 dev dev  812 May  1 10:00 README.md\n"
              "On branch main\nChanges not staged for commit:\n\tmodified:   src/app.py\n")
    lines, size, i = [], 0, 0
    while size < 1_000_000:
        e = corpus[i % len(corpus)]
        line = json.dumps({"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": filler * 3 + e["text"]}]}})
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)


def main() -> None:
    text = realistic_mb()
    mb = len(text.encode()) / 1e6
    as_json = "[" + text.replace("\n", ",") + "]"
    base = best(lambda: json.loads(as_json))
    t_text = best(lambda: redact(text))
    objs = json.loads(as_json)
    t_obj = best(lambda: redact_obj(objs), reps=3)
    print(f"payload: {mb:.2f} MB transcript-like JSON lines holding the corpus")
    print(f"json.loads baseline: {base * 1000:.0f} ms")
    print(f"redact(text):        {t_text * 1000:.0f} ms  ({t_text / base:.1f}x json.loads)")
    print(f"redact_obj(parsed):  {t_obj * 1000:.0f} ms  ({t_obj / base:.1f}x json.loads)")
    print("adversarial runs (linear: 4x the size should cost ~4x):")
    for pat in ["-", "a-", "a=", "TOKEN", "\\\"", "password=\"", "eyJa."]:
        small = pat * (100_000 // len(pat))
        big = pat * (400_000 // len(pat))
        ts, tb = best(lambda s=small: redact(s), 2), best(lambda b=big: redact(b), 2)
        print(f"  {pat!r:14} 100 KB {ts * 1000:6.0f} ms   400 KB {tb * 1000:6.0f} ms   ratio {tb / ts:4.1f}")


if __name__ == "__main__":
    main()
