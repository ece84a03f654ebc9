"""Dense retrieval (all-MiniLM-L6-v2 alone) on the LoCoMo dev split, turn level, plus cheap variants.

    PYTHONPATH=lib /tmp/devvenv/bin/python bench/locomo_dense.py [--data FILE] [--threads 2]

Metric exactly as /work/shared/docs/benchmarks.md: every turn is one item whose source_ids are
its dia_id, so R@k = evidence turns among the top k / evidence turns, averaged over the
questions that have evidence (malformed ids normalised, unknown ids dropped). Turn text is
"Speaker: text [shares caption]". Variants (document side x query side):

- docs ``turn``: the turn alone (the published baseline);
- docs ``prev+turn``: the previous turn of the same session, then the turn;
- docs ``turn+prev``: the turn, then "(after: previous turn)" (so truncation eats the context, not the turn);
- docs ``turn+prev+next``: the same plus "(before: next turn)";
- ``mix(a)``: score = cos(q, turn) + a * cos(q, prev+turn) (two vectors per turn);
- queries ``raw`` or ``strip``: question words and auxiliaries removed ("When did Caroline go to
  the support group?" -> "Caroline go to the support group").

Prints R@5/10/25/50 for all categories, categories 1-4, and each category, and writes
bench/out/locomo_dense_<variant>.jsonl: one line per question with its top-100 ranked dia_ids
and cosine scores (for the fusion work). Embeddings are cached in bench/out/locomo_dense_cache.npz.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
DATA = Path("/work/shared/data/locomo/locomo_dev.json")
OUT = ROOT / "bench" / "out"
KS = (5, 10, 25, 50)
CATS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

QWORDS = {
    "what", "when", "where", "who", "whom", "whose", "which", "why", "how", "did", "does", "do", "is", "are",
    "was", "were", "would", "could", "can", "will", "has", "have", "had", "should", "might", "may", "kind",
    "type", "much", "many", "long", "the", "a", "an", "of",
}
ID_RE = re.compile(r"D:?(\d+):(\d+)")


def turn_text(t: dict[str, Any]) -> str:
    s = f"{t['speaker']}: {t.get('text', '')}"
    if t.get("blip_caption"):
        s += f" [shares {t['blip_caption']}]"
    return s


def turn_with_context(text: str, prev: str | None, nxt: str | None = None) -> str:
    """The turn first (so truncation eats context, not the turn), then its neighbours."""
    s = text
    if prev:
        s += f"\n(after: {prev})"
    if nxt:
        s += f"\n(before: {nxt})"
    return s


def strip_question(q: str) -> str:
    words = re.findall(r"[\w'-]+", q)
    kept = [w for w in words if w.lower() not in QWORDS]
    return " ".join(kept) or q


def norm_ids(evidence: list[str], known: set[str]) -> list[str]:
    out: list[str] = []
    for e in evidence:
        for part in re.split(r"[;,\s]+", e):
            m = ID_RE.fullmatch(part.strip())
            if m:
                did = f"D{int(m.group(1))}:{int(m.group(2))}"
                if did in known and did not in out:
                    out.append(did)
    return out


def load(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    data = data if isinstance(data, list) else [data]
    convs = []
    for s in data:
        c = s["conversation"]
        sessions = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
        turns = []
        for sn in sessions:
            prev = None
            start = len(turns)
            for t in c[f"session_{sn}"]:
                txt = turn_text(t)
                turns.append({"id": t["dia_id"], "text": txt, "prev": prev, "next": None})
                prev = txt
            for a, b in zip(turns[start:], turns[start + 1 :], strict=False):
                a["next"] = b["text"]
        known = {t["id"] for t in turns}
        qs = []
        for qi, qa in enumerate(s["qa"]):
            ev = norm_ids(qa.get("evidence") or [], known)
            if ev:
                qs.append({"qi": qi, "question": qa["question"], "category": qa["category"], "evidence": ev})
        convs.append({"sample_id": s["sample_id"], "turns": turns, "questions": qs})
    return convs


class Embedder:
    def __init__(self, threads: int, cache: Path) -> None:
        from sophia.embed.model import Encoder

        self.enc = Encoder(threads=threads)
        self.cache_path = cache
        self.cache: dict[str, np.ndarray] = {}
        if cache.exists():
            with np.load(cache, allow_pickle=False) as z:
                self.cache = {k: z[k] for k in z.files}
        self.encoded = 0
        self.seconds = 0.0

    def __call__(self, key: str, texts: list[str]) -> np.ndarray:
        if key in self.cache and self.cache[key].shape[0] == len(texts):
            return self.cache[key]
        t = time.perf_counter()
        m = np.asarray(self.enc.encode(texts, batch_size=64), dtype=np.float32)
        self.seconds += time.perf_counter() - t
        self.encoded += len(texts)
        self.cache[key] = m
        return m

    def save(self) -> None:
        np.savez(self.cache_path, **self.cache)


def recall_at(ranked: list[str], evidence: list[str]) -> dict[int, float]:
    ev = set(evidence)
    return {k: len(ev & set(ranked[:k])) / len(ev) for k in KS}


def report(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    def avg(sel: list[dict[str, Any]]) -> dict[int, float]:
        return {k: 100 * sum(r["r"][k] for r in sel) / len(sel) for k in KS} if sel else {k: 0.0 for k in KS}

    res = {"all": avg(rows), "cat1-4": avg([r for r in rows if r["category"] != 5])}
    for c, label in CATS.items():
        res[label] = avg([r for r in rows if r["category"] == c])
    a, b = res["all"], res["cat1-4"]
    per = " ".join(f"{CATS[c][:5]} {res[CATS[c]][10]:.1f}" for c in CATS)
    print(f"{name:<26} all R@5 {a[5]:5.1f} R@10 {a[10]:5.1f} R@25 {a[25]:5.1f} R@50 {a[50]:5.1f} | "
          f"1-4 R@10 {b[10]:5.1f} R@25 {b[25]:5.1f} | R@10 by cat: {per}")
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mix", type=float, nargs="+", default=[0.5, 1.0])
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    OUT.mkdir(parents=True, exist_ok=True)
    convs = load(args.data)
    nq = sum(len(c["questions"]) for c in convs)
    nt = sum(len(c["turns"]) for c in convs)
    print(f"# {len(convs)} conversations, {nt} turns, {nq} questions with evidence ({args.data})")
    t0 = time.perf_counter()
    emb = Embedder(args.threads, OUT / "locomo_dense_cache.npz")
    print(f"# model loaded in {time.perf_counter() - t0:.1f}s")

    # score matrices per conversation: doc variant -> (n_questions x n_turns), per query variant
    sims: dict[tuple[str, str], list[np.ndarray]] = {}
    for c in convs:
        sid = c["sample_id"]
        turns = c["turns"]
        docs = {
            "turn": [t["text"] for t in turns],
            "prev+turn": [f"{t['prev']}\n{t['text']}" if t["prev"] else t["text"] for t in turns],
            "turn+prev": [turn_with_context(t["text"], t["prev"]) for t in turns],
            "turn+prev+next": [turn_with_context(t["text"], t["prev"], t["next"]) for t in turns],
        }
        queries = {
            "raw": [q["question"] for q in c["questions"]],
            "strip": [strip_question(q["question"]) for q in c["questions"]],
        }
        dm = {k: emb(f"{sid}/doc/{k}", v) for k, v in docs.items()}
        qm = {k: emb(f"{sid}/q/{k}", v) for k, v in queries.items()}
        for dk, d in dm.items():
            for qk, q in qm.items():
                sims.setdefault((dk, qk), []).append(q @ d.T)
    emb.save()
    if emb.encoded:
        print(f"# encoded {emb.encoded} texts in {emb.seconds:.1f}s ({emb.encoded / emb.seconds:.0f} texts/s, "
              f"batch 64, {args.threads} threads)")

    variants: dict[str, list[np.ndarray]] = {}
    for (dk, qk), mats in sims.items():
        variants[f"{dk} / {qk}"] = mats
    for a in args.mix:
        for qk in ("raw", "strip"):
            variants[f"mix({a:g}) / {qk}"] = [x + a * y for x, y in zip(sims[("turn", qk)], sims[("prev+turn", qk)],
                                                                       strict=True)]
    summary = {}
    print("# variant (docs / query)  -- MiniLM alone; published ten-conversation baseline: R@10 42.5, R@25 55.2")
    for name, mats in variants.items():
        rows = []
        lines = []
        for c, m in zip(convs, mats, strict=True):
            ids = [t["id"] for t in c["turns"]]
            for q, scores in zip(c["questions"], m, strict=True):
                order = np.argsort(-scores, kind="stable")
                ranked = [ids[i] for i in order]
                rows.append({"category": q["category"], "r": recall_at(ranked, q["evidence"])})
                lines.append(json.dumps({
                    "sample_id": c["sample_id"], "qi": q["qi"], "question": q["question"],
                    "category": q["category"], "evidence": q["evidence"],
                    "ranked": [[ids[i], round(float(scores[i]), 5)] for i in order[:100]],
                }))
        summary[name] = report(name, rows)
        fname = re.sub(r"[^a-z0-9.+]+", "_", name.lower()).strip("_")
        (OUT / f"locomo_dense_{fname}.jsonl").write_text("\n".join(lines) + "\n")
    (OUT / "locomo_dense_summary.json").write_text(json.dumps(summary, indent=1))
    print(f"# ranked lists: {OUT}/locomo_dense_<variant>.jsonl (top 100 per question)")


if __name__ == "__main__":
    main()
