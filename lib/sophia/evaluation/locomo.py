"""``s3 bench locomo``: turn-level evidence recall at k on LoCoMo, exactly as
``shared/docs/benchmarks.md`` defines it.

Each sample is ingested into a fresh, empty SOPHIA_HOME (a temp dir), then every question with
evidence is asked through the same search function ``s3 recall --queries`` uses. Results are
turned into a list of source ids in rank order, deduplicated, an item without source ids taking
one slot, cut at k; R@k = evidence turns found / evidence turns, averaged over questions.
Standard library only.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVID = re.compile(r"D:?(\d+):(\d+)")

SemanticFn = Callable[[str, list[dict[str, Any]], Path], Callable[[str, int], list[tuple[str, float]]] | None]


def norm_dia(s: str) -> str | None:
    m = _EVID.fullmatch(s.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def evidence(qa: dict[str, Any], turn_ids: set[str]) -> list[str]:
    """The README's quirks: split on ; , and spaces, normalise D<s>:<t>, drop ids naming no turn."""
    out: list[str] = []
    for ev in qa.get("evidence") or []:
        for part in re.split(r"[;,\s]+", str(ev)):
            d = norm_dia(part) if part else None
            if d and d in turn_ids and d not in out:
                out.append(d)
    return out


def ranked_slots(results: list[dict[str, Any]]) -> list[str]:
    slots: list[str] = []
    seen: set[str] = set()
    for n, r in enumerate(results):
        src = r.get("source_ids") or []
        if not src:
            slots.append(f"\0item{n}")
            continue
        for s in src:
            d = norm_dia(str(s)) or str(s)
            if d not in seen:
                seen.add(d)
                slots.append(d)
    return slots


def recall_at(slots: list[str], ev: list[str], k: int) -> float:
    top = set(slots[:k])
    return sum(1 for e in ev if e in top) / len(ev)


def run(path: Path, ks: list[int], *, knobs: Any = None, semantic: SemanticFn | None = None,
        progress: Callable[[int, int, str], None] | None = None, limit: int | None = None,
        samples: list[str] | None = None) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    data = data if isinstance(data, list) else [data]
    if samples:
        data = [s for s in data if s.get("sample_id") in samples]
    per_q: list[dict[str, Any]] = []
    clock = {"ingest": 0.0, "query": 0.0, "embed": 0.0, "turns": 0}
    total_q = sum(1 for s in data for q in s.get("qa") or [] if q.get("evidence"))

    def answered(sample_id: str) -> None:
        if progress:
            progress(len(per_q), total_q, sample_id)

    with tempfile.TemporaryDirectory(prefix="s3-locomo-") as tmp:
        for si, sample in enumerate(data):
            _run_sample(Path(tmp), si, sample, ks, limit or max(ks), knobs, semantic, clock, per_q, answered)
    out = summarize(per_q, ks, ingest_s=clock["ingest"], query_s=clock["query"], turns=int(clock["turns"]),
                    samples=len(data))
    out["semantic"] = semantic is not None
    if semantic is not None:
        out["embed_seconds"] = round(clock["embed"], 2)
    return out


def _run_sample(tmp: Path, si: int, sample: dict[str, Any], ks: list[int], want: int, knobs: Any,
                semantic: SemanticFn | None, clock: dict[str, float], per_q: list[dict[str, Any]],
                answered: Callable[[str], None]) -> None:
    """Ingest one conversation into a home of its own and ask its questions (appended to ``per_q``)."""
    from ..index.db import connect
    from ..ingest.core import ingest_conversations
    from ..ingest.formats import read_locomo

    home = tmp / f"home{si}"
    home.mkdir(mode=0o700)
    src = tmp / f"sample{si}.json"
    src.write_text(json.dumps(sample), encoding="utf-8")
    convs = list(read_locomo(src))
    t0 = time.perf_counter()
    ingest_conversations(convs, home=home, nudge=False)
    clock["ingest"] += time.perf_counter() - t0
    turns = convs[0][1]
    clock["turns"] += len(turns)
    turn_ids = {norm_dia(t["sid"]) or t["sid"] for t in turns}
    conn = connect(home)
    t2 = time.perf_counter()
    sem_fn = semantic(sample.get("sample_id", str(si)), turns, home) if semantic else None
    clock["embed"] += time.perf_counter() - t2
    try:
        for qa in sample.get("qa") or []:
            ev = evidence(qa, turn_ids)
            if ev:
                per_q.append(_ask(conn, home, sample, qa, ev, ks, want, knobs, sem_fn, clock))
                answered(str(sample.get("sample_id")))
    finally:
        conn.close()
        close = getattr(sem_fn, "close", None)
        if close:
            close()


def _ask(conn: Any, home: Path, sample: dict[str, Any], qa: dict[str, Any], ev: list[str], ks: list[int],
         want: int, knobs: Any, sem_fn: Any, clock: dict[str, float]) -> dict[str, Any]:
    """One question: its recall at each k."""
    from ..index.search import CLI_KNOBS, search

    t1 = time.perf_counter()
    hits = sem_fn(qa["question"], 100) if sem_fn else None
    res = search(conn, str(qa["question"]), limit=want, knobs=knobs or CLI_KNOBS,
                 semantic_hits=hits, use_semantic=False, home=home)
    clock["query"] += time.perf_counter() - t1
    slots = ranked_slots(res)
    return {"sample": sample.get("sample_id"), "category": int(qa.get("category") or 0),
            "recall": {k: recall_at(slots, ev, k) for k in ks}}


class _ServiceSearch:
    """Semantic hits from the real embedding service of one bench home (started, warmed, filled)."""

    def __init__(self, home: Path, timeout: float, wait: float):
        from ..embed_client import client

        self.client, self.home, self.timeout = client, home, timeout
        client.ensure_started(home, force=True)
        if not client.wait_warm(home, timeout=wait):
            reason = client.unavailable_reason(home) or "it did not get warm in time"
            raise RuntimeError(f"the embedding service is not available: {reason}")
        client.request_embed(home)
        if not client.wait_embedded(home, timeout=wait):
            raise RuntimeError("the embedding service did not embed the conversation in time")

    def __call__(self, query: str, k: int) -> list[tuple[str, float]]:
        return self.client.search(query, k, home=self.home, timeout=self.timeout, start=False) or []

    def close(self) -> None:
        self.client.stop(self.home)


def service_semantic(timeout: float = 5.0, wait: float = 900.0) -> SemanticFn:
    """A ``semantic`` argument for :func:`run` backed by the embedding service (``sophia.embed``)."""

    def factory(sample_id: str, turns: list[dict[str, Any]], home: Path) -> Callable[[str, int], list[tuple[str, float]]]:
        return _ServiceSearch(home, timeout, wait)

    return factory


def _mean(xs: list[float]) -> float:
    return round(100.0 * sum(xs) / len(xs), 1) if xs else 0.0


def summarize(per_q: list[dict[str, Any]], ks: list[int], **extra: Any) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {"all": per_q, "1-4": [q for q in per_q if 1 <= q["category"] <= 4]}
    for c, name in CATEGORIES.items():
        groups[f"{c} {name}"] = [q for q in per_q if q["category"] == c]
    table = {g: {"questions": len(qs), **{f"R@{k}": _mean([q["recall"][k] for q in qs]) for k in ks}}
             for g, qs in groups.items()}
    out: dict[str, Any] = {"questions": len(per_q), "recall": table}
    if "ingest_s" in extra:
        out["ingest_seconds"] = round(extra["ingest_s"], 3)
        out["query_seconds"] = round(extra["query_s"], 3)
        out["ms_per_query"] = round(1000.0 * extra["query_s"] / max(len(per_q), 1), 2)
        out["turns"] = extra["turns"]
        out["samples"] = extra["samples"]
    return out
