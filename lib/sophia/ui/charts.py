"""Charts drawn on the server as inline SVG (no script, nothing fetched).

- over time (weeks, days): :func:`time_lines` and :func:`time_bars` place each point at its date, so a
  gap of months shows as a gap (a line breaks there) instead of vanishing between evenly spaced labels;
- by name (capabilities): :func:`hbars`, one horizontal bar per name with the name beside it;
- validity windows on a calendar: :func:`windows`.

Rates are drawn as percentages (``percent=True``: 0-100 %). Labels are 13 units high in a 600-unit-wide
picture (about 11 px on a half-width chart) and are kept inside the picture: the first and last tick are
anchored to the edges, long names are cut with an ellipsis. Each function returns ``markupsafe.Markup``;
every label passes through ``html.escape`` first. :data:`VERDICTS` is the one colour of each guardian
verdict, for the charts and the log's table alike (the stylesheet's rules are made from it).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from html import escape
from typing import Any

from markupsafe import Markup

W, H, PAD_L, PAD_R, PAD_B, PAD_T = 600, 200, 46, 12, 40, 14
FONT = 13  # label height in picture units (the stylesheet's svg .tick)
CHAR_W = 0.6 * FONT  # a label's width per character, for keeping it inside the picture
COLOURS = ("#3b6ea8", "#c07a00", "#4f9d69", "#8064a2", "#c0504d")
# one colour per guardian verdict, everywhere (charts, the log's table, the legend)
VERDICTS = {"deny": "#b42318", "ask": "#c07a00", "allowed_once": "#2e7d4f"}
VERDICT_LABELS = {"deny": "denied", "ask": "asked", "allowed_once": "allowed once",
                  "grant": "your allow-once grant (not a decision)"}
EMPTY = '<p class="empty">{}</p>'


def _frame(body: str, height: int = H, title: str = "") -> Markup:
    t = f"<title>{escape(title)}</title>" if title else ""
    return Markup(f'<svg class="chart" viewBox="0 0 {W} {height}" role="img" xmlns="http://www.w3.org/2000/svg">'
                  f"{t}{body}</svg>")


def _num(x: float) -> str:
    return f"{x:.0f}" if x >= 10 or x == int(x) else f"{x:.2f}"


def _value(x: float, percent: bool) -> str:
    return f"{round(x * 100)}%" if percent else _num(x)


def _top(highest: float, counts: bool) -> float:
    """The axis's top: for counts an even whole number (its half, a tick, is whole too)."""
    if not counts:
        return highest
    whole = max(2, int(-(-highest // 1)))
    return float(whole + whole % 2)


def _y_axis(top: float, percent: bool) -> str:
    """Gridlines and labels at 0, half and the top (``0% 50% 100%`` for a rate)."""
    parts = []
    for frac in (0.0, 0.5, 1.0):
        y = H - PAD_B - frac * (H - PAD_B - PAD_T)
        colour = "#999" if frac == 0 else "#e3e6ea"
        parts.append(f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" stroke="{colour}"/>'
                     f'<text x="{PAD_L - 5}" y="{y + FONT / 3:.1f}" text-anchor="end" class="tick">'
                     f"{escape(_value(top * frac, percent))}</text>")
    return "".join(parts)


def _fit(text: str, room: float) -> str:
    """``text`` cut to what fits in ``room`` picture units (with an ellipsis)."""
    n = max(1, int(room / CHAR_W))
    return text if len(text) <= n else text[:max(1, n - 1)] + "…"


def _label(x: float, y: float, text: str, anchor: str = "middle") -> str:
    """A tick label that stays inside the picture: anchored to an edge when it would cross it."""
    half = len(text) * CHAR_W / 2
    if anchor == "middle" and x - half < 2:
        anchor, x = "start", 2
    elif anchor == "middle" and x + half > W - 2:
        anchor, x = "end", W - 2
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="tick">{escape(text)}</text>'


def _legend(names: list[str], colours: list[str]) -> str:
    """One row of swatches under the chart; each name cut to its share of the width."""
    if len(names) < 2:
        return ""
    room = (W - PAD_L) / len(names)
    return "".join(f'<rect x="{PAD_L + i * room:.1f}" y="{H - 13}" width="10" height="10" fill="{colours[i]}"/>'
                   f'<text x="{PAD_L + 14 + i * room:.1f}" y="{H - 4}" class="tick">{escape(_fit(n, room - 20))}'
                   "</text>" for i, n in enumerate(names))


# ---------------------------------------------------------------- over time


def as_date(label: str) -> date | None:
    """``2026-W23`` (an ISO week: its Monday) or ``2026-06-01`` (a day) as a date; None otherwise."""
    try:
        if "-W" in label:
            year, week = label.split("-W")
            return date.fromisocalendar(int(year), int(week), 1)
        return date.fromisoformat(label[:10])
    except ValueError:
        return None


class _Time:
    """Where a date goes on the x axis, and the axis's tick labels (a few, spread, inside the picture)."""

    def __init__(self, dates: list[date], step_days: int) -> None:
        self.lo, self.hi = min(dates), max(dates) + timedelta(days=step_days)
        self.days = max((self.hi - self.lo).days, 1)
        self.step_days = step_days

    def x(self, d: date) -> float:
        return PAD_L + 4 + (d - self.lo).days / self.days * (W - PAD_L - PAD_R - 8)

    def width(self) -> float:
        """One step (a week, a day) in picture units."""
        return self.step_days / self.days * (W - PAD_L - PAD_R - 8)

    def ticks(self, centre: bool = False) -> str:
        """Month starts (``Jun 2026``; ``Jun 3`` within one month), at most six, none overlapping;
        ``centre``: under the middle of each step (a bar's), not its start."""
        if self.days <= 45:
            marks = [self.lo + timedelta(days=i) for i in range(0, self.days, max(1, self.days // 6))]
            fmt = "day"
        else:
            months, d = [], date(self.lo.year, self.lo.month, 1)
            while d <= self.hi:
                if d >= self.lo:
                    months.append(d)
                d = date(d.year + d.month // 12, d.month % 12 + 1, 1)
            marks = months[:: max(1, -(-len(months) // 6))] or [self.lo]
            fmt = "%b %Y"
        out, last_end = [], -1e9
        for m in marks:
            text = f"{m:%b} {m.day}" if fmt == "day" else m.strftime(fmt)
            x = self.x(m) + (self.width() / 2 if centre and fmt == "day" else 0)
            if x - len(text) * CHAR_W / 2 < last_end + 8:
                continue
            out.append(f'<line x1="{x:.1f}" y1="{H - PAD_B}" x2="{x:.1f}" y2="{H - PAD_B + 4}" stroke="#999"/>'
                       + _label(x, H - PAD_B + FONT + 4, text))
            last_end = x + len(text) * CHAR_W / 2
        return "".join(out)


def _dated(labels: list[str]) -> list[tuple[int, date]]:
    return [(i, d) for i, lab in enumerate(labels) if (d := as_date(lab)) is not None]


def time_lines(labels: list[str], series: dict[str, list[float | None]], *, percent: bool = False,
               top: float | None = None, title: str = "", step_days: int = 7, breaks: bool = True,
               empty: str = "nothing yet") -> Markup:
    """One line per series over dated labels (ISO weeks or days). A point is placed at its date; the line
    breaks at None and, with ``breaks``, where the next point is more than one step later (no data in
    between; without it, for values carried forward)."""
    dated = _dated(labels)
    if not dated:
        return Markup(EMPTY.format(escape(empty)))
    known = [v for vals in series.values() for v in vals if v is not None]
    top = top or (1.0 if percent else _top(max(known or [1]) or 1, all(float(v).is_integer() for v in known)))
    axis = _Time([d for _, d in dated], step_days)
    parts = [_y_axis(top, percent), axis.ticks()]
    for n, (name, vals) in enumerate(series.items()):
        colour = COLOURS[n % len(COLOURS)]
        run: list[tuple[float, float]] = []
        prev: date | None = None
        for i, d in dated:
            v = vals[i] if i < len(vals) else None
            if v is None or (breaks and prev is not None and (d - prev).days > step_days):
                parts.append(_polyline(run, colour))
                run = []
            if v is None:
                prev = None
                continue
            x, y = axis.x(d), H - PAD_B - (v / top) * (H - PAD_B - PAD_T)
            run.append((x, y))
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{escape(name)} '
                         f"{escape(labels[i])}: {escape(_value(v, percent))}</title></circle>")
            prev = d
        parts.append(_polyline(run, colour))
    parts.append(_legend(list(series), [COLOURS[n % len(COLOURS)] for n in range(len(series))]))
    return _frame("".join(parts), title=title)


def _polyline(points: list[tuple[float, float]], colour: str) -> str:
    if len(points) < 2:
        return ""
    d = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"/>'


def time_bars(labels: list[str], series: dict[str, list[float]], *, colours: dict[str, str] | None = None,
              names: dict[str, str] | None = None, percent: bool = False, title: str = "", step_days: int = 1,
              empty: str = "nothing yet") -> Markup:
    """One bar per dated label (a day, a week) at its date, its series stacked in their colours."""
    dated = _dated(labels)
    if not dated:
        return Markup(EMPTY.format(escape(empty)))
    totals = [sum(vals[i] for vals in series.values()) for i, _ in dated]
    top = 1.0 if percent else _top(max(totals) or 1, all(float(v).is_integer() for vals in series.values()
                                                          for v in vals))
    axis = _Time([d for _, d in dated], step_days)
    bw = max(min(axis.width() * 0.8, 40.0), 3.0)
    scale = (H - PAD_B - PAD_T) / top
    cols = [(colours or {}).get(k) or COLOURS[n % len(COLOURS)] for n, k in enumerate(series)]
    parts = [_y_axis(top, percent), axis.ticks(centre=True)]
    for i, d in dated:
        y = float(H - PAD_B)
        x = axis.x(d) + axis.width() / 2 - bw / 2
        for n, (key, vals) in enumerate(series.items()):
            h = vals[i] * scale
            if h <= 0:
                continue
            y -= h
            label = (names or {}).get(key, key)
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw:.1f}" height="{h:.1f}" fill="{cols[n]}">'
                         f"<title>{escape(labels[i])} {escape(label)}: {escape(_value(vals[i], percent))}</title>"
                         "</rect>")
    parts.append(_legend([(names or {}).get(k, k) for k in series], cols))
    return _frame("".join(parts), title=title)


# ---------------------------------------------------------------- by name


def hbars(labels: list[str], values: list[float], *, percent: bool = False, title: str = "",
          empty: str = "nothing yet") -> Markup:
    """One horizontal bar per name (the name on its left, cut to fit; the value on its right)."""
    if not labels:
        return Markup(EMPTY.format(escape(empty)))
    row, left = 22, 190
    height = PAD_T + row * len(labels) + 8
    top = 1.0 if percent else (max(values) or 1)
    width = W - left - 60
    parts = []
    for i, (lab, v) in enumerate(zip(labels, values, strict=False)):
        y = PAD_T + i * row
        bar = max(v / top * width, 1.0)
        parts.append(f'<text x="{left - 6}" y="{y + FONT:.1f}" text-anchor="end" class="tick">'
                     f"{escape(_fit(lab, left - 10))}<title>{escape(lab)}</title></text>"
                     f'<rect x="{left}" y="{y + 3}" width="{bar:.1f}" height="{row - 8}" rx="2" fill="{COLOURS[0]}">'
                     f"<title>{escape(lab)}: {escape(_value(v, percent))}</title></rect>"
                     f'<text x="{left + bar + 5:.1f}" y="{y + FONT:.1f}" class="tick">{escape(_value(v, percent))}'
                     "</text>")
    return _frame("".join(parts), height=height, title=title)


# ---------------------------------------------------------------- names that tell projects apart


def short_names(paths: list[str]) -> dict[str, str]:
    """Each path's last folder, with as many parent folders as it takes to tell it from the others (a case
    or a leading dot is not a difference a reader sees: ``Claude`` and ``.claude`` become
    ``ClaudeWorkspace/Claude`` and ``natedamstra/.claude``)."""
    def key(s: str) -> str:
        return s.lower().lstrip(".")

    parts = {p: [x for x in p.split("/") if x] or [p] for p in paths}
    depth = dict.fromkeys(paths, 1)
    for _ in range(8):
        shown = {p: "/".join(parts[p][-depth[p]:]) for p in paths}
        clash = [p for p in paths if sum(key(shown[q]) == key(shown[p]) for q in paths) > 1]
        if not clash:
            break
        for p in clash:
            depth[p] = min(depth[p] + 1, len(parts[p]))
    return {p: "/".join(parts[p][-depth[p]:]) for p in paths}


# ---------------------------------------------------------------- validity windows


def windows(items: list[dict[str, Any]], now: datetime) -> Markup:
    """Validity windows on a calendar: one row per item, from ``start`` to ``end`` (open: to the edge),
    with today marked. Items are dicts with ``label``, ``start`` and ``end`` (datetimes or None)."""
    rows = [it for it in items if it.get("start") or it.get("end")][:40]
    if not rows:
        return Markup(EMPTY.format("no validity windows yet (facts and foresight that say from when or until "
                                   "when they hold)"))
    times = [t for it in rows for t in (it.get("start"), it.get("end")) if t] + [now]
    lo, hi = min(times), max(times)
    span = max((hi - lo).total_seconds(), 86400.0)
    left, width, row_h = 230, W - 240, 20
    height = PAD_T + row_h * len(rows) + 26

    def x(t: datetime) -> float:
        return left + (t - lo).total_seconds() / span * width

    parts = [f'<line x1="{x(now):.1f}" y1="{PAD_T - 6}" x2="{x(now):.1f}" y2="{height - 22}" stroke="#c0504d" '
             f'stroke-dasharray="3,3"><title>now</title></line>']
    for i, it in enumerate(rows):
        y = PAD_T + i * row_h
        a = x(it["start"]) if it.get("start") else float(left)
        b = x(it["end"]) if it.get("end") else float(left + width)
        parts.append(f'<text x="{left - 6}" y="{y + FONT}" text-anchor="end" class="tick">'
                     f'{escape(_fit(str(it["label"]), left - 10))}</text>'
                     f'<rect x="{a:.1f}" y="{y + 3}" width="{max(b - a, 3):.1f}" height="{row_h - 7}" rx="3" '
                     f'fill="{COLOURS[0]}"><title>{escape(str(it["label"]))}</title></rect>')
    parts.append(f'<text x="{left}" y="{height - 5}" class="tick">{lo:%Y-%m-%d}</text>'
                 f'<text x="{left + width}" y="{height - 5}" text-anchor="end" class="tick">{hi:%Y-%m-%d}</text>')
    return _frame("".join(parts), height=height, title="validity windows")
