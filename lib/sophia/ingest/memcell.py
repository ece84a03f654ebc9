"""MemCell boundary detection without an LLM (EverMemOS 2.1, seed cap of 50 messages).

A new MemCell starts at a session break, after a long time gap, when the cell reaches
``cap`` messages, or at a topic shift: the lexical similarity (cosine of stemmed-term bags)
between the ``window`` turns before a gap and the ``window`` turns after it falls below
``threshold`` while the current cell already holds ``min_size`` turns (TextTiling-like).
Standard library only.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Boundaries:
    cap: int = 50
    gap_hours: float = 4.0
    min_size: int = 8
    window: int = 3
    threshold: float = 0.05


def _cos(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(v * b.get(k, 0) for k, v in a.items())
    if not dot:
        return 0.0
    return dot / (math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values())))


def segment(sessions: Sequence[str | None], times: Sequence[datetime | None], terms: Sequence[list[str]],
            cfg: Boundaries = Boundaries()) -> list[int]:
    """Return the MemCell number (0, 1, ...) of each turn, in order."""
    n = len(terms)
    out: list[int] = []
    cell, size = 0, 0
    for i in range(n):
        new = False
        if i > 0:
            if sessions[i] != sessions[i - 1]:
                new = True
            elif times[i] is not None and times[i - 1] is not None:
                gap = (times[i] - times[i - 1]).total_seconds() / 3600.0  # type: ignore[operator]
                new = gap > cfg.gap_hours
            if not new and size >= cfg.cap:
                new = True
            if not new and size >= cfg.min_size:
                lo = max(0, i - cfg.window)
                hi = min(n, i + cfg.window)
                before = Counter(t for j in range(lo, i) if sessions[j] == sessions[i] for t in terms[j])
                after = Counter(t for j in range(i, hi) if sessions[j] == sessions[i] for t in terms[j])
                new = bool(before) and bool(after) and _cos(before, after) < cfg.threshold
        if new:
            cell += 1
            size = 0
        out.append(cell)
        size += 1
    return out
