"""bench/locomo_gate_loo.py: the gate's constants chosen by leaving one conversation out (issue 27)."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT
from shared_data import looked_in, shared_path

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import locomo_gate_loo as loo  # noqa: E402


def _table(own: dict[int, dict[int, int]]) -> loo.Table:
    """Three homes, ten own and ten foreign questions each; ``own[point][home]`` hits at grid point
    ``point`` (0 elsewhere); every foreign question silent everywhere."""
    t = loo.Table()
    for n, c in enumerate(loo.grid()):
        for i in range(3):
            t.own[c, i] = (own.get(n, {}).get(i, 0), 10)
            for k in range(3):
                if k != i:
                    t.silent[c, i, k] = (10, 10)
    return t


def test_the_left_out_conversation_never_takes_part_in_its_choice() -> None:
    a, b = loo.grid()[0], loo.grid()[1]  # min_score 0.30 and 0.31, the rest equal
    table = _table({0: {0: 10, 1: 10, 2: 0}, 1: {0: 5, 1: 5, 2: 10}})
    r = loo.leave_one_out(table, 3, "bar")
    chosen = [tuple(f["choice"][k] for k in loo.KNOBS) for f in r["folds"]]
    # left out 0: on homes 1, 2 b has 15 hits, a 10; left out 2: on homes 0, 1 a has 20, b 10
    assert chosen == [b, b, a]
    assert [f["hit_pct"] for f in r["folds"]] == [50.0, 50.0, 0.0]  # home 2 would have liked b: not asked
    assert r["loo"] == {"hit_pct": 33.3, "abstain_pct": 100.0}
    assert tuple(r["in_sample_choice"].values()) == a  # 20 hits each: the earlier grid point
    assert r["in_sample"]["hit_pct"] == 66.7
    assert tuple(r["median_choice"].values()) == b


def test_below_the_abstention_bar_hits_do_not_count() -> None:
    table = _table({0: {0: 10, 1: 10, 2: 10}, 1: {0: 7, 1: 7, 2: 7}})
    for i in range(3):
        for k in range(3):
            if k != i:
                table.silent[loo.grid()[0], i, k] = (8, 10)  # 80 % abstention at the point with most hits
    assert loo.choose(table, [0, 1, 2], "bar") == loo.grid()[1]  # 70 % hits at 100 %: the only one over the bar
    assert loo.choose(table, [0, 1, 2], "sum") == loo.grid()[0]  # 100 + 80 > 70 + 100
    assert loo.choose(table, [0, 1, 2]) == loo.grid()[0]  # sum is the rule the defaults come from


def test_the_bench_runs_on_locomo_dev() -> None:
    data_path = shared_path("data/locomo/locomo_dev.json")
    if not data_path.exists():
        pytest.skip(looked_in("data/locomo/locomo_dev.json"))
    data = json.loads(data_path.read_text())[:3]
    r = loo.run(data, own=6, foreign=6, progress=False)
    assert r["conversations"] == [s["sample_id"] for s in data]
    for rule in loo.RULES:
        x = r["rules"][rule]
        assert [f["own"] for f in x["folds"]] == [6, 6, 6] and [f["foreign"] for f in x["folds"]] == [12, 12, 12]
        for f in x["folds"]:
            c = f["choice"]
            assert c["min_score"] in loo.MIN_SCORES and c["idf_floor"] in loo.IDF_FLOORS
            assert c["related"] in loo.relateds()
        for fig in (x["loo"], x["in_sample"], x["at_median"]):
            assert 0.0 <= fig["hit_pct"] <= 100.0 and 0.0 <= fig["abstain_pct"] <= 100.0
    assert r["today"]["own"] == 18 and r["today"]["foreign"] == 36
