"""The digest's input size and what it costs: every real transcript in ../shared/data/transcripts, raw
against condensed (lib/sophia/learning/condense.py), at a stated price per million input tokens.

    python bench/digest_input.py [--dir DIR] [--budget TOKENS] [--price USD_PER_M]

Tokens are estimated as characters / 4 for the condensed text (the condenser's own estimate) and as
bytes / 4 for the raw file. PRICE_PER_M_INPUT is an ASSUMPTION: a Haiku-class small model at $1 per
million input tokens; the digest's instructions and the model's output are not counted here.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from sophia.learning.condense import BUDGET_TOKENS, CHARS_PER_TOKEN, condense, estimate_tokens  # noqa: E402

PRICE_PER_M_INPUT = 1.00  # USD per million input tokens, small model (assumed: Haiku-class)
# ../shared from the main checkout, ../../shared from a worktree beside it
SHARED = next((d for d in (ROOT.parent / "shared/data/transcripts", ROOT.parent.parent / "shared/data/transcripts")
               if d.is_dir()), ROOT.parent / "shared/data/transcripts")


def row(path: Path, budget: int, price: float) -> tuple[str, int, int, int, int, float, float, float, float]:
    raw = path.stat().st_size
    t0 = time.perf_counter()
    text = condense(path, budget)
    ms = (time.perf_counter() - t0) * 1000
    raw_tok, tok = -(-raw // CHARS_PER_TOKEN), estimate_tokens(len(text))
    return (path.name[:44], raw, raw_tok, len(text), tok, raw / max(1, len(text)), raw_tok * price / 1e6,
            tok * price / 1e6, ms)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=SHARED)
    ap.add_argument("--budget", type=int, default=BUDGET_TOKENS, help="token budget of the digest input")
    ap.add_argument("--price", type=float, default=PRICE_PER_M_INPUT, help="USD per million input tokens")
    args = ap.parse_args()
    files = sorted(args.dir.glob("*.jsonl")) if args.dir.is_dir() else []
    if not files:
        print(f"skipped: no transcripts in {args.dir}")
        return 0
    print(f"budget {args.budget} tokens (~{args.budget * CHARS_PER_TOKEN} chars); tokens estimated as chars/4; "
          f"price ${args.price:.2f}/M input tokens (assumed, small model)\n")
    print("| transcript | raw bytes | raw tok (est.) | condensed chars | condensed tok (est.) | ratio | "
          "raw $/digest | condensed $/digest | condense ms |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    rows = [row(p, args.budget, args.price) for p in files]
    for r in rows:
        print(f"| {r[0]} | {r[1]:,} | {r[2]:,} | {r[3]:,} | {r[4]:,} | {r[5]:.0f}x | ${r[6]:.4f} | ${r[7]:.4f} | "
              f"{r[8]:.0f} |")
    raw_total, tok_total = sum(r[2] for r in rows), sum(r[4] for r in rows)
    print(f"\n{len(rows)} transcripts: {raw_total:,} raw tokens -> {tok_total:,} condensed "
          f"({raw_total / max(1, tok_total):.0f}x less); mean ${tok_total / len(rows) * args.price / 1e6:.4f} "
          f"per digest input instead of ${raw_total / len(rows) * args.price / 1e6:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
