"""The viewer's charts as a reader sees them (issue 32): weeks at their dates, rates in percent, labels that
fit, projects told apart, one colour per guardian verdict. No server needed."""

from __future__ import annotations

import re

from sophia.ui import charts


def _xs(svg: str, tag: str = "circle") -> list[float]:
    return [float(x) for x in re.findall(rf'<{tag} cx="([\d.]+)"', svg)]


def _texts(svg: str) -> list[tuple[float, str, str]]:
    """(x, anchor, text) of every label."""
    return [(float(x), a, t) for x, a, t in re.findall(r'<text x="([\d.]+)" y="[\d.]+"(?: text-anchor="(\w+)")?'
                                                        r' class="tick">([^<]*)', svg)]


def _inside(svg: str) -> list[str]:
    """Labels that would cross the picture's edges (their width estimated as the charts estimate it)."""
    width = float(re.search(r'viewBox="0 0 (\d+)', svg).group(1))  # type: ignore[union-attr]
    out = []
    for x, anchor, text in _texts(svg):
        w = len(text) * charts.CHAR_W
        lo = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
        if lo < 0 or lo + w > width:
            out.append(text)
    return out


def test_weeks_are_placed_at_their_dates_so_a_gap_of_months_shows() -> None:
    weeks = ["2025-W40", "2025-W41", "2026-W20"]  # two weeks, then seven months of nothing
    svg = str(charts.time_lines(weeks, {"success": [0.5, 1.0, 0.25]}, percent=True))
    a, b, c = _xs(svg)
    assert (c - b) / (b - a) > 25  # 31 weeks later, not one step later
    assert svg.count("<polyline") == 1  # the line joins the two neighbours only: it breaks at the gap
    labels = [t for _, _, t in _texts(svg)]
    assert {"0%", "50%", "100%"} <= set(labels) and not any(t in labels for t in ("1", "1.00", "0.50"))
    assert "success 2026-W20: 25%" in svg


def test_no_label_crosses_the_edge_even_a_long_one_at_either_end() -> None:
    weeks = [f"2026-W{w:02d}" for w in range(1, 53)]
    svg = str(charts.time_lines(weeks, {"success rate with a long name": [0.5] * 52,
                                        "tool calls that failed in every project": [0.1] * 52}, percent=True))
    assert _inside(svg) == []
    assert len(_texts(svg)) <= 3 + 6 + 2  # the y axis, at most six dates, the legend: none overlap
    bars = str(charts.time_bars(["2026-11-01", "2026-11-02"], {"USD": [0.25, 1.5]}))
    assert _inside(bars) == []
    caps = str(charts.hbars(["a domain with a very long name that cannot fit beside its bar", "python"], [0.9, 0.4],
                            percent=True))
    assert _inside(caps) == [] and "…" in caps and "90%" in caps


def test_counts_have_whole_ticks() -> None:
    svg = str(charts.time_bars(["2026-11-01", "2026-11-02"], {"deny": [1, 0], "ask": [2, 1]}))
    ticks = [t for _, a, t in _texts(svg) if a == "end"]
    assert ticks == ["0", "2", "4"]


def test_projects_are_named_by_enough_of_their_path_to_tell_them_apart() -> None:
    names = charts.short_names(["/mnt/c/ClaudeWorkspace/Claude", "/Users/natedamstra/.claude", "/home/b/shop",
                                "/home/a/blog", "/srv/x/blog"])
    assert names["/mnt/c/ClaudeWorkspace/Claude"] == "ClaudeWorkspace/Claude"
    assert names["/Users/natedamstra/.claude"] == "natedamstra/.claude"
    assert names["/home/b/shop"] == "shop" and {names["/home/a/blog"], names["/srv/x/blog"]} == {"a/blog", "x/blog"}


def test_each_verdict_has_one_colour_and_allowed_once_is_drawn() -> None:
    svg = str(charts.time_bars(["2026-11-01"], {"deny": [1], "ask": [1], "allowed_once": [1]},
                               colours=charts.VERDICTS, names=charts.VERDICT_LABELS))
    for verdict, colour in charts.VERDICTS.items():
        assert f'fill="{colour}"><title>2026-11-01 {charts.VERDICT_LABELS[verdict]}: 1</title>' in svg
    assert len(set(charts.VERDICTS.values())) == len(charts.VERDICTS)


def test_an_empty_chart_says_what_would_fill_it() -> None:
    assert "no episodes measured yet" in str(charts.time_lines([], {}, empty="no episodes measured yet"))
