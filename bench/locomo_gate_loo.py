"""The prompt hook's gate constants, chosen by leaving one LoCoMo dev conversation out (issue 27).

    PYTHONPATH=lib python bench/locomo_gate_loo.py [--json] [--lib DIR] [--related 0.2,0.3,...]
                                                   [--convs N --own N --foreign N]

The gate (``prompt_context.select``) opens when the best item's relevance reaches
``context.prompt_context_min_score``; relevance depends on the knob ``relevance_idf_floor``
(``index/search.py``: no query word weighs less). Chosen on all of dev, such constants fit dev: on LoCoMo
conversations outside it the hook found evidence for 50.0 % of a conversation's own questions against
63.8 % on dev. This bench says what a choice is worth on a conversation it never saw.

Each dev conversation is ingested alone into a fresh home as one project's memory (in-process: what
``s3 ingest FILE --format locomo --project DIR`` does). Every question is put to every home through the
hook's own functions (the search its recall runs, keyword tier; ``select``; ``render``), the in-process
twin of ``bench/locomo_inject.py``: a **hit** when an own question's injected text holds one of its
evidence turns; **abstention** when another conversation's question gets nothing.

Two rules choose constants on a set of conversations: **sum**, the most hits + abstention (both %), and
**bar**, the most hits with abstention >= 90 % (the bar; none there: the most abstention); ties go to
more abstention, then to the earlier grid point. **Leave one out**: choose on four conversations (their
own questions, and as foreign questions only those of the four), score the choice on the fifth (its own
questions; every other conversation's as foreign); the figure pools the five. **In-sample**: choose on
all five and score on all five. The defaults to ship: the median of the five choices, knob by knob.
``--lib DIR`` measures another checkout's code; ``--own/--foreign/--convs`` take the first N of each (a
smoke run; 0 = all).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.locomo_inject import DATA, evidence, is_hit, norm_dia, turns_of  # noqa: E402

MIN_SCORES = tuple(round(0.30 + 0.01 * i, 2) for i in range(31))
IDF_FLOORS = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0)
# RELATED is not chosen by default: it changes no abstention (only the best item opens the gate) and hits
# always prefer the lowest (more items follow), so without a price on what the extra items cost (length,
# noise) it runs to the grid's edge (0.2 of 0.2-0.6). ``--related 0.2,0.3,...`` sweeps it anyway.
RELATEDS: tuple[float, ...] = ()  # (): the hook's own


def relateds() -> tuple[float, ...]:
    from sophia.hooks.prompt_context import RELATED

    return RELATEDS or (RELATED,)
ABSTAIN_BAR = 90.0
KNOBS = ("min_score", "idf_floor", "related")

Combo = tuple[float, float, float]  # (min_score, idf_floor, related)


class Home:
    """One conversation alone in a fresh home: its connection, project, turns and questions."""

    def __init__(self, tmp: Path, n: int, sample: dict[str, Any], own: int) -> None:
        from sophia.index.db import connect
        from sophia.ingest.core import ingest_conversations
        from sophia.ingest.formats import read_locomo

        self.sid = str(sample["sample_id"])
        self.home = tmp / f"h{n}"
        self.home.mkdir(mode=0o700)
        self.project = str((tmp / f"project{n}").resolve())
        src = tmp / f"s{n}.json"
        src.write_text(json.dumps(sample))
        ingest_conversations(list(read_locomo(src)), home=self.home, project=self.project, nudge=False)
        self.conn = connect(self.home)
        self.turns = turns_of(sample)
        self.ids: dict[str, str] = {}
        for iid, src_ids in self.conn.execute("SELECT id, source_ids FROM items WHERE type = 'turn'"):
            for d in json.loads(src_ids or "[]"):
                self.ids[norm_dia(str(d)) or str(d)] = iid
        known = set(self.turns)
        self.own = [(str(q["question"]), e) for q in sample["qa"] for e in [evidence(q, known)] if e]
        self.own = self.own[:own] if own else self.own
        self.questions = [str(q["question"]) for q in sample["qa"]]


def recall(h: Home, query: str, idf_floor: float) -> list[dict[str, Any]]:
    """What the hook's recall returns for this prompt (keyword tier), with this relevance knob."""
    from sophia.config_defaults import BY_KEY
    from sophia.hooks.prompt_context import context_types
    from sophia.index.search import search, with_knobs

    limit = int(BY_KEY["context.prompt_context_max_items"].default) * 4
    return search(h.conn, query, limit=limit, types=context_types({"include_ingested": True}), project=h.project,
                  knobs=with_knobs(relevance_idf_floor=idf_floor), use_semantic=False)


def injected(pc: Any, items: list[dict[str, Any]], query: str, project: str, m: float, max_items: int,
             ev: list[str], h: Home) -> bool:
    """Whether the hook's gate and renderer, given these recall results, inject an evidence turn."""
    chosen = pc.select(items, query, project=project, session_id=None, min_score=m, max_items=max_items)
    return bool(chosen) and is_hit(pc.render(chosen, m), ev, h.turns, h.ids)


class Table:
    """Per grid point and home: own hits, and silent foreign questions by the conversation they came from."""

    def __init__(self) -> None:
        self.own: dict[tuple[Combo, int], tuple[int, int]] = {}
        self.silent: dict[tuple[Combo, int, int], tuple[int, int]] = {}


def measure(homes: list[Home], foreign: int, progress: bool = True) -> Table:
    from sophia.config_defaults import BY_KEY
    from sophia.hooks import prompt_context as pc

    max_items = int(BY_KEY["context.prompt_context_max_items"].default)
    table = Table()
    saved = pc.RELATED
    try:
        for floor in IDF_FLOORS:
            t0 = time.perf_counter()
            for i, h in enumerate(homes):
                own = [(recall(h, q, floor), ev) for q, ev in h.own]
                best = {k: [max((float(it["relevance"]) for it in recall(h, q, floor)), default=0.0)
                            for q in (o.questions[:foreign] if foreign else o.questions)]
                        for k, o in enumerate(homes) if k != i}
                for related in relateds():
                    pc.RELATED = related
                    for m in MIN_SCORES:
                        c = (m, floor, related)
                        hits = sum(injected(pc, items, q, h.project, m, max_items, ev, h)
                                   for (items, ev), (q, _) in zip(own, h.own, strict=True))
                        table.own[c, i] = (hits, len(own))
                        for k, bs in best.items():  # select() is [] exactly when the best relevance is below m
                            table.silent[c, i, k] = (sum(1 for b in bs if b < m or b <= 0.0), len(bs))
            if progress:
                print(f"  idf floor {floor}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    finally:
        pc.RELATED = saved
    return table


def figures(table: Table, c: Combo, own_homes: list[int], foreign_of: dict[int, list[int]]) -> dict[str, Any]:
    """Pooled hit % over ``own_homes``' own questions, abstention % over each home's foreign conversations."""
    hits = sum(table.own[c, i][0] for i in own_homes)
    n_own = sum(table.own[c, i][1] for i in own_homes)
    silent = sum(table.silent[c, i, k][0] for i, ks in foreign_of.items() for k in ks)
    n_for = sum(table.silent[c, i, k][1] for i, ks in foreign_of.items() for k in ks)
    return {"hit_pct": round(100 * hits / max(n_own, 1), 1), "abstain_pct": round(100 * silent / max(n_for, 1), 1),
            "own": n_own, "foreign": n_for}


def grid() -> list[Combo]:
    return [(m, f, r) for f in IDF_FLOORS for r in relateds() for m in MIN_SCORES]


def _bar(f: dict[str, Any], n: int) -> tuple[Any, ...]:
    """The rule: most hits with abstention >= the bar (none there: most abstention); ties to more
    abstention, then the earlier grid point."""
    ok = f["abstain_pct"] >= ABSTAIN_BAR
    return (ok, f["hit_pct"] if ok else f["abstain_pct"], f["abstain_pct"], -n)


def _sum(f: dict[str, Any], n: int) -> tuple[Any, ...]:
    """The other rule, reported beside it: most hits + abstention (both %), ties as above."""
    return (f["hit_pct"] + f["abstain_pct"], f["abstain_pct"], -n)


RULES = {"sum": _sum, "bar": _bar}


def choose(table: Table, homes: list[int], rule: str = "sum") -> Combo:
    """The grid point ``rule`` ranks first on ``homes`` (foreign questions only from ``homes``)."""
    foreign_of = {i: [k for k in homes if k != i] for i in homes}
    key = RULES[rule]
    best: tuple[Any, ...] | None = None
    for n, c in enumerate(grid()):
        k = key(figures(table, c, homes, foreign_of), n)
        if best is None or k > best[0]:
            best = (k, c)
    assert best is not None
    return best[1]


def leave_one_out(table: Table, n: int, rule: str = "sum") -> dict[str, Any]:
    everyone = list(range(n))
    folds = []
    for i in everyone:
        c = choose(table, [k for k in everyone if k != i], rule)
        folds.append({"left_out": i, "choice": dict(zip(KNOBS, c, strict=True)),
                      **figures(table, c, [i], {i: [k for k in everyone if k != i]})})
    pooled = {"hits": 0, "own": 0, "silent": 0, "foreign": 0}
    for f in folds:
        pooled["hits"] += round(f["hit_pct"] * f["own"] / 100)
        pooled["own"] += f["own"]
        pooled["silent"] += round(f["abstain_pct"] * f["foreign"] / 100)
        pooled["foreign"] += f["foreign"]
    median = tuple(statistics.median(f["choice"][k] for f in folds) for k in KNOBS)
    all_foreign = {i: [k for k in everyone if k != i] for i in everyone}
    inside = choose(table, everyone, rule)
    return {
        "rule": rule,
        "folds": folds,
        "loo": {"hit_pct": round(100 * pooled["hits"] / max(pooled["own"], 1), 1),
                "abstain_pct": round(100 * pooled["silent"] / max(pooled["foreign"], 1), 1)},
        "median_choice": dict(zip(KNOBS, median, strict=True)),
        "at_median": figures(table, _on_grid(median), everyone, all_foreign),
        "in_sample_choice": dict(zip(KNOBS, inside, strict=True)),
        "in_sample": figures(table, inside, everyone, all_foreign),
    }


def _on_grid(c: tuple[float, ...]) -> Combo:
    """The grid point nearest a median (a median of grid values is one, or halfway between two)."""
    m = min(MIN_SCORES, key=lambda v: (abs(v - c[0]), v))
    f = min(IDF_FLOORS, key=lambda v: (abs(v - c[1]), v))
    r = min(relateds(), key=lambda v: (abs(v - c[2]), v))
    return (m, f, r)


def at(table: Table, c: Combo, n: int) -> dict[str, Any]:
    """Figures of given constants on all conversations (e.g. today's defaults)."""
    return figures(table, c, list(range(n)), {i: [k for k in range(n) if k != i] for i in range(n)})


def run(data: list[dict[str, Any]], *, own: int = 0, foreign: int = 0, progress: bool = True) -> dict[str, Any]:
    from sophia.config_defaults import BY_KEY
    from sophia.hooks.prompt_context import RELATED
    from sophia.index.search import DEFAULT_KNOBS

    with tempfile.TemporaryDirectory(prefix="s3-gate-loo-") as t:
        homes = [Home(Path(t), n, s, own) for n, s in enumerate(data)]
        try:
            table = measure(homes, foreign, progress)
        finally:
            for h in homes:
                h.conn.close()
    today = (float(BY_KEY["context.prompt_context_min_score"].default), DEFAULT_KNOBS.relevance_idf_floor, RELATED)
    return {"conversations": [h.sid for h in homes], "today_choice": dict(zip(KNOBS, today, strict=True)),
            "today": at(table, _on_grid(today), len(homes)),
            "rules": {rule: leave_one_out(table, len(homes), rule) for rule in RULES}}


def _knobs(c: dict[str, float]) -> str:
    return f"min_score {c['min_score']:.2f}, idf floor {c['idf_floor']}, related {c['related']}"


def print_report(r: dict[str, Any]) -> None:
    convs = r["conversations"]
    print(f"LoCoMo dev, {len(convs)} conversations; rules: bar = most hits with abstention >= {ABSTAIN_BAR} %, "
          "sum = most hits + abstention")
    print("| rule | left out | chosen on the others | hit % | abstention % | own q | foreign q |")
    print("|---|---|---|--:|--:|--:|--:|")
    for rule, x in r["rules"].items():
        for f in x["folds"]:
            print(f"| {rule} | {convs[f['left_out']]} | {_knobs(f['choice'])} | {f['hit_pct']} | {f['abstain_pct']} | "
                  f"{f['own']} | {f['foreign']} |")
    print()
    print("| rule | figure | constants | hit % | abstention % |")
    print("|---|---|---|--:|--:|")
    for rule, x in r["rules"].items():
        print(f"| {rule} | leave-one-out (pooled) | chosen per fold | {x['loo']['hit_pct']} | {x['loo']['abstain_pct']} |")
        print(f"| {rule} | in-sample | {_knobs(x['in_sample_choice'])} | {x['in_sample']['hit_pct']} | "
              f"{x['in_sample']['abstain_pct']} |")
        print(f"| {rule} | the folds' median, on all five | {_knobs(x['median_choice'])} | {x['at_median']['hit_pct']} | "
              f"{x['at_median']['abstain_pct']} |")
    print(f"| - | today's defaults, on all five | {_knobs(r['today_choice'])} | {r['today']['hit_pct']} | "
          f"{r['today']['abstain_pct']} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--lib", type=Path, help="import sophia from this lib folder (another checkout's)")
    ap.add_argument("--convs", type=int, default=0, help="the first N conversations (0: all)")
    ap.add_argument("--own", type=int, default=0, help="the first N own questions of each (0: all)")
    ap.add_argument("--foreign", type=int, default=0, help="the first N questions of each other conversation (0: all)")
    ap.add_argument("--related", default="", help="RELATED values to sweep, comma-separated (default: the hook's own)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    global RELATEDS
    RELATEDS = tuple(float(v) for v in a.related.split(",") if v.strip())
    if a.lib:
        sys.path.insert(0, str(a.lib.resolve()))
    data = json.loads(a.data.read_text())
    data = data if isinstance(data, list) else [data]
    r = run(data[:a.convs] if a.convs else data, own=a.own, foreign=a.foreign)
    if a.json:
        print(json.dumps(r, indent=2))
    else:
        print_report(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
