"""Shared helpers for the hooks that bring memory back into context. Stdlib only."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from ..kinds import one_line  # noqa: F401 - re-exported for the hook modules
from ..timeutil import parse
from .words import stems, tokens

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

HOOK_TEXT_CAP = 9500  # Claude Code caps hook strings at 10,000 characters

__all__ = ["HOOK_TEXT_CAP", "ago", "episode_lines", "fit", "memory_items", "one_line", "overlap", "read_json_quiet",
           "render_items", "stems", "strength", "tokens"]

# What an injection says, kind by kind: lessons first (rules, procedures), then what is known, raw
# sessions and conversations last.
KIND_ORDER = ("rule", "procedure", "causal", "foresight", "fact", "profile", "scene", "episode", "memcell", "turn")
# By relevance (``strength``): a weak match gets one short line, a strong one a few.
LINES_BY_STRENGTH = ((0.34, 1), (0.67, 2), (1.01, 3))
CHARS_BY_LINES = {1: 120, 2: 330, 3: 480}  # a weak match: a pointer the model can follow with `s3 recall`
LINE_CHARS = 240  # the longest one line gets (a rule, a procedure, a fact; an episode's first line)
DETAIL_CHARS = 200  # an episode's lesson / why / files line
MAX_INJECT_CHARS = 1200


def overlap(query_stems: set[str], text: str) -> int:
    """How many of the query's stems occur in ``text``."""
    return len(query_stems & stems(text))


def read_json_quiet(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None


def memory_items(home: Path, kind: str) -> list[dict[str, Any]]:
    data = read_json_quiet(home / "memory" / f"{kind}.json")
    items = data.get("items") if isinstance(data, dict) else data
    return [i for i in items or [] if isinstance(i, dict)] if isinstance(items, list) else []


def fit(sections: list[tuple[str, list[str]]], max_chars: int, preamble: str = "") -> str:
    """Join sections (title, lines) in order, skipping lines that no longer fit in ``max_chars``."""
    budget = min(max_chars, HOOK_TEXT_CAP)
    out = preamble
    for title, lines in sections:
        block = ""
        for line in lines:
            piece = ("\n\n" + title if not block else "") + "\n" + line
            if len(out) + len(block) + len(piece) > budget:
                continue
            block += piece
        out += block
    return out.strip()


# ---------------------------------------------------------------- what is injected, one line each


def relevance(item: dict[str, Any]) -> Any:
    """The item's absolute relevance (0..1, what the prompt gate judges); its score when it has none."""
    return item.get("relevance", item.get("score"))


def strength(score: Any, floor: float) -> float:
    """How far above the gate an item's relevance is, 0..1 (the gate, ``floor``, is the weakest that passes).
    Read as absolute relevance in 0..1; an unreadable one counts as the weakest."""
    try:
        s = float(score)
    except (TypeError, ValueError):
        return 0.0
    top = max(1.0, floor + 1e-9)
    return max(0.0, min(1.0, (s - floor) / (top - floor)))


def lines_for(strength_: float) -> int:
    return next(n for limit, n in LINES_BY_STRENGTH if strength_ < limit)


def ago(value: Any, now: datetime) -> str:
    """'today', 'yesterday', '3 days ago', '2 weeks ago', '5 months ago', '2 years ago' ('' when unknown)."""
    d = parse(value) if isinstance(value, str) else None
    if d is None:
        return ""
    days = int(max(0.0, (now - d).total_seconds()) // 86400)
    if days < 2:
        return ("today", "yesterday")[days]
    for unit, size in (("year", 365), ("month", 30), ("week", 7), ("day", 1)):
        if days >= size * (2 if unit != "day" else 1):
            n = days // size
            return f"{n} {unit}s ago"
    return f"{days} days ago"


def _meta(it: dict[str, Any]) -> dict[str, Any]:
    return it["meta"] if isinstance(it.get("meta"), dict) else {}


def episode_lines(card: dict[str, Any], head: str, n: int) -> list[str]:
    """An episode in ``n`` lines at most: ``head`` (id, age, outcome) with what was done and what came
    of it, then, as room allows: the lesson, why the outcome is not SUCCESS, files and commands, the
    error hit most (only when none of the others is known)."""
    if n == 1:  # one line: the task and its result share what the head leaves of it
        room = max(40, CHARS_BY_LINES[1] - len(head) - 6)
        did = one_line(card.get("did"), room // 2)
        result = one_line(card.get("result"), max(20, room - len(did)))
    else:
        did, result = one_line(card.get("did"), 110), one_line(card.get("result"), 120)
    what = f"{did} -> {result}" if did and result and result.lower() not in did.lower() else (did or result)
    lines = [one_line(f"{head}: {what or '(nothing recorded)'}", CHARS_BY_LINES[1] if n == 1 else LINE_CHARS)]
    tools = "; ".join(p for p in (
        ("files: " + ", ".join(card["files"]) + (f" (+{card['files_more']})" if card.get("files_more") else ""))
        if card.get("files") else "",
        ("commands: " + ", ".join(card["commands"])) if card.get("commands") else "") if p)
    details = [("lesson", card.get("lesson")), ("why", card.get("why")), ("", tools)]
    if not any(text for _, text in details):
        details.append(("hit", card.get("pitfall")))
    for label, text in details:
        if len(lines) >= n:
            break
        if text:
            lines.append("  " + one_line(f"{label + ': ' if label else ''}{text}", DETAIL_CHARS - 2))
    return lines


def _episode_card(it: dict[str, Any]) -> dict[str, Any]:
    """The card the index item carries (``kinds.episode_card``); an index.json entry has only its goal."""
    meta = _meta(it)
    card = meta.get("card")
    if isinstance(card, dict) and card:
        return card
    return {"did": meta.get("goal_summary") or str(it.get("text") or "").split("\n", 1)[0]}


def item_lines(it: dict[str, Any], n: int, now: datetime) -> list[str]:
    """One item in at most ``n`` lines, starting ``- [id]``."""
    kind = str(it.get("type") or "memory")
    meta = _meta(it)
    if kind == "episode":  # when it ended
        when = ago(it.get("timestamp") or it.get("event_time"), now)
        bits = ", ".join(b for b in ("episode", when, str(meta.get("outcome") or "")) if b)
        return episode_lines(_episode_card(it), f"- [{it['id']}] {bits}", n)
    when = ago(it.get("event_time") or it.get("timestamp"), now) if kind != "rule" else ""
    bits = ", ".join(b for b in (kind, when) if b)
    return [one_line(f"- [{it['id']}] {bits}: {it.get('text') or ''}", min(CHARS_BY_LINES[n], LINE_CHARS))]


def _rank(it: dict[str, Any]) -> int:
    kind = str(it.get("type") or "")
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def render_items(items: list[dict[str, Any]], *, floor: float, title: str, now: datetime | None = None,
                 max_chars: int = MAX_INJECT_CHARS) -> str:
    """The injected text: ``title``, then each item once (by id and by what it says) in KIND_ORDER, in as
    many lines as its strength earns, within the sum of their budgets (at most ``max_chars``). '' when
    nothing is left."""
    now = now or datetime.now(UTC)
    ordered = sorted((it for it in items if isinstance(it, dict) and it.get("id")),
                     key=lambda it: (_rank(it), -strength(relevance(it), floor)))
    out, size = [title], len(title)
    seen: set[str] = set()
    for it in ordered:
        n = lines_for(strength(relevance(it), floor))
        lines = item_lines(it, n, now)
        key = " ".join(lines[0].split("]", 1)[-1].split(":", 1)[-1].lower().split())
        if it["id"] in seen or key in seen:
            continue
        seen.update((it["id"], key))
        room = min(CHARS_BY_LINES[n], max_chars - size)  # this item's share; its first line always if it fits
        for i, line in enumerate(lines):
            if len(line) + 1 > (room if i else max_chars - size):
                break
            out.append(line)
            size, room = size + len(line) + 1, room - len(line) - 1
    return "\n".join(out)[:HOOK_TEXT_CAP] if len(out) > 1 else ""
