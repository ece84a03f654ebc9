"""MemCell boundary detection without an LLM (EverMemOS 2.1, seed cap of 50 messages).

A new MemCell starts at a session break, after a long time gap, when the cell reaches
``cap`` messages, or at a topic shift: the lexical similarity (cosine of stemmed-term bags)
between the ``window`` turns before a gap and the ``window`` turns after it falls below
``threshold`` while the current cell already holds ``min_size`` turns (TextTiling-like).
Standard library only.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Sequence
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
    return list(segment_stream(zip(sessions, times, terms, strict=True), cfg))


Cue = tuple[str | None, datetime | None, list[str]]  # (session, time, stemmed terms) of one turn


def segment_stream(turns: Iterable[Cue], cfg: Boundaries = Boundaries()) -> Iterator[int]:
    """The MemCell number of each turn as the turns stream by: it reads at most ``window`` turns ahead
    and keeps ``window`` behind, so a conversation of any length segments in constant memory."""
    it = iter(turns)
    ahead = max(cfg.window, 1)
    buf: deque[Cue] = deque()
    start = 0  # the index of buf[0]
    cell = size = i = 0
    while True:
        while start + len(buf) < i + ahead and (nxt := next(it, None)) is not None:
            buf.append(nxt)
        if start + len(buf) <= i:
            return
        while start < i - ahead:
            buf.popleft()
            start += 1
        if i > 0 and _starts_cell(buf, i - start, size, cfg):
            cell += 1
            size = 0
        yield cell
        size += 1
        i += 1


def _starts_cell(buf: deque[Cue], k: int, size: int, cfg: Boundaries) -> bool:
    """Does turn ``buf[k]`` open a new MemCell (``buf[k - 1]`` is the turn before it)?"""
    (sess, t, _), (psess, pt, _) = buf[k], buf[k - 1]
    if sess != psess:
        return True
    if t is not None and pt is not None and (t - pt).total_seconds() / 3600.0 > cfg.gap_hours:
        return True
    if size >= cfg.cap:
        return True
    if size < cfg.min_size:
        return False
    lo, hi = max(0, k - cfg.window), min(len(buf), k + cfg.window)
    before = Counter(w for j in range(lo, k) if buf[j][0] == sess for w in buf[j][2])
    after = Counter(w for j in range(k, hi) if buf[j][0] == sess for w in buf[j][2])
    return bool(before) and bool(after) and _cos(before, after) < cfg.threshold
