"""Charts drawn on the server as inline SVG (no script, nothing fetched): bars, lines, windows.

Each function returns ``markupsafe.Markup``; every label passes through ``html.escape`` first.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

from markupsafe import Markup

W, H, PAD_L, PAD_B, PAD_T = 640, 180, 40, 34, 12
COLOURS = ("#3b6ea8", "#c0504d", "#e0a526", "#4f9d69", "#8064a2")


def _frame(body: str, height: int = H, title: str = "") -> Markup:
    t = f"<title>{escape(title)}</title>" if title else ""
    return Markup(f'<svg class="chart" viewBox="0 0 {W} {height}" role="img" xmlns="http://www.w3.org/2000/svg">'
                  f"{t}{body}</svg>")


def _axis(top: float, unit: str = "") -> str:
    y0, y1 = H - PAD_B, PAD_T
    return (f'<line x1="{PAD_L}" y1="{y0}" x2="{W - 4}" y2="{y0}" stroke="#999"/>'
            f'<text x="{PAD_L - 4}" y="{y1 + 4}" text-anchor="end" class="tick">{escape(_num(top))}{unit}</text>'
            f'<text x="{PAD_L - 4}" y="{y0}" text-anchor="end" class="tick">0</text>')


def _num(x: float) -> str:
    return f"{x:.0f}" if x >= 10 or x == int(x) else f"{x:.2f}"


def _xlabels(labels: list[str], step: float, offset: float) -> str:
    every = max(1, len(labels) // 8)
    return "".join(f'<text x="{PAD_L + offset + i * step:.1f}" y="{H - PAD_B + 14}" text-anchor="middle" '
                   f'class="tick">{escape(lab)}</text>' for i, lab in enumerate(labels) if i % every == 0)


def stacked_bars(labels: list[str], series: dict[str, list[float]], title: str = "") -> Markup:
    """One bar per label, its series stacked (e.g. guardian decisions per day: deny, ask)."""
    if not labels:
        return Markup('<p class="empty">nothing yet</p>')
    totals = [sum(vals[i] for vals in series.values()) for i in range(len(labels))]
    top = max(totals) or 1
    step = (W - PAD_L - 8) / len(labels)
    scale = (H - PAD_B - PAD_T) / top
    parts = [_axis(top)]
    bw = min(step * 0.7, 48.0)
    for i in range(len(labels)):
        y = float(H - PAD_B)
        for n, (name, vals) in enumerate(series.items()):
            h = vals[i] * scale
            y -= h
            parts.append(f'<rect x="{PAD_L + i * step + (step - bw) / 2:.1f}" y="{y:.1f}" width="{bw:.1f}" '
                         f'height="{h:.1f}" fill="{COLOURS[n % len(COLOURS)]}"><title>{escape(labels[i])} '
                         f'{escape(name)}: {_num(vals[i])}</title></rect>')
    parts.append(_xlabels(labels, step, step / 2))
    parts.append(_legend(list(series)))
    return _frame("".join(parts), title=title)


def bars(labels: list[str], values: list[float], title: str = "") -> Markup:
    return stacked_bars(labels, {title or "value": values}, title)


def lines(labels: list[str], series: dict[str, list[float | None]], top: float | None = None,
          title: str = "", unit: str = "") -> Markup:
    """One line per series over the labels (e.g. weeks); None leaves a gap."""
    if not labels:
        return Markup('<p class="empty">nothing yet</p>')
    known = [v for vals in series.values() for v in vals if v is not None]
    top = top or max(known or [1]) or 1
    step = (W - PAD_L - 16) / max(1, len(labels) - 1)
    parts = [_axis(top, unit)]
    for n, (name, vals) in enumerate(series.items()):
        pts = [(PAD_L + 8 + i * step, H - PAD_B - (v / top) * (H - PAD_B - PAD_T))
               for i, v in enumerate(vals) if v is not None]
        colour = COLOURS[n % len(COLOURS)]
        if len(pts) > 1:
            d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            parts.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{escape(name)}</title></circle>'
                  for x, y in pts]
    parts.append(_xlabels(labels, step, 8))
    parts.append(_legend(list(series)))
    return _frame("".join(parts), title=title)


def _legend(names: list[str]) -> str:
    if len(names) < 2:
        return ""
    return "".join(f'<rect x="{PAD_L + 8 + i * 130}" y="{H - 12}" width="10" height="10" '
                   f'fill="{COLOURS[i % len(COLOURS)]}"/><text x="{PAD_L + 22 + i * 130}" y="{H - 3}" '
                   f'class="tick">{escape(n)}</text>' for i, n in enumerate(names))


def windows(items: list[dict[str, Any]], now: datetime) -> Markup:
    """Validity windows on a calendar: one row per item, from ``start`` to ``end`` (open: to the edge),
    with today marked. Items are dicts with ``label``, ``start`` and ``end`` (datetimes or None)."""
    rows = [it for it in items if it.get("start") or it.get("end")][:40]
    if not rows:
        return Markup('<p class="empty">no validity windows</p>')
    times = [t for it in rows for t in (it.get("start"), it.get("end")) if t] + [now]
    lo, hi = min(times), max(times)
    span = max((hi - lo).total_seconds(), 86400.0)
    left, width, row_h = 220, W - 230, 18
    height = PAD_T + row_h * len(rows) + 24

    def x(t: datetime) -> float:
        return left + (t - lo).total_seconds() / span * width

    parts = [f'<line x1="{x(now):.1f}" y1="{PAD_T - 6}" x2="{x(now):.1f}" y2="{height - 20}" stroke="#c0504d" '
             f'stroke-dasharray="3,3"><title>now</title></line>']
    for i, it in enumerate(rows):
        y = PAD_T + i * row_h
        a = x(it["start"]) if it.get("start") else float(left)
        b = x(it["end"]) if it.get("end") else float(left + width)
        parts.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end" class="tick">'
                     f'{escape(str(it["label"])[:34])}</text>'
                     f'<rect x="{a:.1f}" y="{y + 2}" width="{max(b - a, 3):.1f}" height="{row_h - 6}" rx="3" '
                     f'fill="{COLOURS[0]}"><title>{escape(str(it["label"]))}</title></rect>')
    parts.append(f'<text x="{left}" y="{height - 4}" class="tick">{lo:%Y-%m-%d}</text>'
                 f'<text x="{left + width}" y="{height - 4}" text-anchor="end" class="tick">{hi:%Y-%m-%d}</text>')
    return _frame("".join(parts), height=height, title="validity windows")
