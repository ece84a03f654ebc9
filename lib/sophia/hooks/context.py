"""Shared helpers for the hooks that bring memory back into context. Stdlib only."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from ..kinds import get as get_kind
from ..kinds import one_line  # noqa: F401 - re-exported for the hook modules
from ..timeutil import parse
from .words import stems, tokens

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

HOOK_TEXT_CAP = 9500  # Claude Code caps hook strings at 10,000 characters

__all__ = ["HOOK_TEXT_CAP", "ago", "episode_lines", "fit", "memory_items", "one_line", "overlap", "read_json_quiet",
           "render_items", "stems", "strength", "tokens"]

# What an injection says, kind by kind: what the team shares in the repository (reviewed by people), then
# lessons (rules, procedures), then what is known, raw sessions and conversations last.
KIND_ORDER = ("team", "rule", "procedure", "causal", "foresight", "fact", "profile", "scene", "episode", "memcell",
              "turn")
# By relevance (``strength``, 0 at the gate, 1 for a perfect match) the budget grows at three levels:
# - an item's first line says POINTER_CHARS characters after its id and kind (a weak match: a pointer
#   the model can follow with `s3 recall`) up to TEXT_CHARS (a strong one); a lesson or an episode
#   needs both its halves (trigger -> fix, what was done -> what came of it) even as a pointer, a raw
#   turn of a conversation does not;
# - a stronger item earns more lines (an episode's lesson, why, files and commands);
# - the whole text gets MAX_INJECT_CHARS times the best item's strength, never less than half of it.
LINES_BY_STRENGTH = ((0.34, 1), (0.67, 2), (1.01, 3))
TEXT_CHARS = 200
POINTER_CHARS = 96
RAW_POINTER_CHARS = {"turn": 48, "memcell": 48}
DETAIL_CHARS = 200  # an episode's lesson / why / files line
MAX_INJECT_CHARS = 1200
MIN_BUDGET_SHARE = 0.5


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


def text_chars(strength_: float, kind: str = "") -> int:
    """How much of an item's text its first line says, by its strength and kind (after the id and kind)."""
    lo = RAW_POINTER_CHARS.get(kind, POINTER_CHARS)
    return int(lo + (TEXT_CHARS - lo) * max(0.0, min(1.0, strength_)))


def episode_lines(card: dict[str, Any], head: str, n: int, room: int = TEXT_CHARS) -> list[str]:
    """An episode in ``n`` lines at most: ``head`` (id, age, outcome) with what was done and what came
    of it in ``room`` characters, then, as room allows: the lesson, why the outcome is not SUCCESS,
    files and commands, the error hit most (only when none of the others is known)."""
    did = one_line(card.get("did"), max(20, room // 2))
    result = one_line(card.get("result"), max(20, room - len(did) - 4))
    what = f"{did} -> {result}" if did and result and result.lower() not in did.lower() else (did or result)
    lines = [one_line(f"{head}: {what or '(nothing recorded)'}", len(head) + 2 + room)]
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


def item_bits(it: dict[str, Any], now: datetime) -> str:
    """What a line says about an item besides its id and text: kind, age, an episode's outcome."""
    kind = str(it.get("type") or "memory")
    if kind == "team":  # the team's, from the repository: what it is and who learned it
        meta = _meta(it)
        who = f"from {meta['learned_by']}" if meta.get("learned_by") else "from the team"
        return f"team {meta.get('shared_kind') or 'note'}, {who}"
    if kind == "episode":  # when it ended
        when = ago(it.get("timestamp") or it.get("event_time"), now)
        return ", ".join(b for b in ("episode", when, str(_meta(it).get("outcome") or "")) if b)
    when = ago(it.get("event_time") or it.get("timestamp"), now) if kind != "rule" else ""
    return ", ".join(b for b in (kind, when) if b)


def item_lines(it: dict[str, Any], n: int, now: datetime, bits: str | None = None,
               room: int = TEXT_CHARS) -> list[str]:
    """One item in at most ``n`` lines, starting ``- [id]``, then ``bits`` (``item_bits`` when None; ''
    under a group header that already says them), then ``room`` characters of what it says."""
    bits = item_bits(it, now) if bits is None else bits
    head = f"- [{it['id']}]" + (f" {bits}" if bits else "")
    if it.get("type") == "episode":
        return episode_lines(_episode_card(it), head, n, room)
    text = " ".join(str(it.get("text") or "").split())
    if it.get("type") in LESSONS:
        text = squeeze(text, room)
    return [one_line(f"{head}: {text}", len(head) + 2 + room)]


LESSONS = frozenset({"procedure", "rule", "causal", "team"})
_CODE = re.compile(r"`[^`]+`")
_AFTER = re.compile(r"\s*\((?:after|then|once|before)\b.*\)\s*$")
SQUEEZE_MIN = 10  # characters a shortened quoted part keeps


def squeeze(text: str, room: int) -> str:
    """``text`` in ``room`` characters before its end is cut: shorten its quoted commands and errors, the
    longest first, each once, never the fix ("`Y` worked", else the last quoted part) nor a trailing
    "(after ...)" (the steps are often the lesson); only when that is not enough, drop the "(after ...)"
    and shorten again. "when `X` fails with `E`, `Y` worked (after `Z`)" keeps Y, and Z while it fits."""
    if len(text) <= room:
        return text
    after = _AFTER.search(text)
    out = _shorten(text, room, after.start() if after else len(text))
    if len(out) <= room or after is None:
        return out
    bare = text[:after.start()]
    return _shorten(bare, room, len(bare))


def _shorten(text: str, room: int, upto: int) -> str:
    """The quoted parts before ``upto`` (but the fix) shortened, the longest first, until ``text`` fits."""
    spans = [m.span() for m in _CODE.finditer(text)]
    fix = next((k for k, (_, b) in enumerate(spans) if text[b:b + 7] == " worked"), len(spans) - 1)
    keep = {k: b - a - 2 for k, (a, b) in enumerate(spans) if k != fix and b <= upto}
    over = len(text) - room
    for k in sorted(keep, key=lambda k: -keep[k]):
        if over <= 0:
            break
        new = max(SQUEEZE_MIN, keep[k] - over - 1)
        if new + 1 < keep[k]:
            over -= keep[k] - new - 1
            keep[k] = new
        else:
            del keep[k]
    out, last = [], 0
    for k, (a, b) in enumerate(spans):
        if k in keep and keep[k] < b - a - 2:
            out += [text[last:a], "`", text[a + 1:a + 1 + keep[k]], "…`"]
            last = b
    return "".join(out) + text[last:]


def _rank(it: dict[str, Any]) -> int:
    kind = str(it.get("type") or "")
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def _group_header(bits: str) -> str:
    """``turn, 3 years ago`` -> ``turns, 3 years ago:`` (the header over items that share their bits)."""
    kind, _, rest = bits.partition(", ")
    k = get_kind(kind)
    return f"{k.plural if k else kind}{', ' + rest if rest else ''}:"


def _same_key(it: dict[str, Any]) -> str:
    """Two items with this key say the same thing (an episode: what was done and what came of it)."""
    if it.get("type") == "episode":
        card = _episode_card(it)
        return f"episode|{card.get('did') or ''}|{card.get('result') or ''}".lower()
    return " ".join(str(it.get("text") or "").lower().split())[:200]


def _entries(items: list[dict[str, Any]], floor: float, now: datetime) -> list[tuple[dict[str, Any], float, str]]:
    """(item, strength, bits) in KIND_ORDER and by strength, each item once (by id and by its text)."""
    ordered = sorted((it for it in items if isinstance(it, dict) and it.get("id")),
                     key=lambda it: (_rank(it), -strength(relevance(it), floor)))
    out: list[tuple[dict[str, Any], float, str]] = []
    seen: set[str] = set()
    for it in ordered:
        key = _same_key(it)
        if it["id"] in seen or (key and key in seen):
            continue
        seen.update(k for k in (it["id"], key) if k)
        out.append((it, strength(relevance(it), floor), item_bits(it, now)))
    return out


def render_items(items: list[dict[str, Any]], *, floor: float, title: str, now: datetime | None = None,
                 max_chars: int = MAX_INJECT_CHARS) -> str:
    """The injected text: ``title``, then each item once in KIND_ORDER, as long as its strength earns
    (``text_chars``, ``lines_for``), within a budget of ``max_chars`` times the best strength (at least
    MIN_BUDGET_SHARE of it). Items in a row that share their kind and age (and outcome) go under one
    header that says it once. '' when nothing is left."""
    now = now or datetime.now(UTC)
    entries = _entries(items, floor, now)
    best = max((st for _, st, _ in entries), default=0.0)
    max_chars = int(max_chars * max(MIN_BUDGET_SHARE, best))
    out, size, last = [title], len(title), None
    for i, (it, st, bits) in enumerate(entries):
        grouped = bits and (bits == last or (i + 1 < len(entries) and entries[i + 1][2] == bits))
        lines = item_lines(it, lines_for(st), now, "" if grouped else bits, text_chars(st, str(it.get("type") or "")))
        if grouped and bits != last:
            header = _group_header(bits)
            if len(header) + len(lines[0]) + 2 > max_chars - size:
                break
            out.append(header)
            size += len(header) + 1
        last = bits if grouped else None
        for line in lines:
            if len(line) + 1 > max_chars - size:
                break
            out.append(line)
            size += len(line) + 1
    return "\n".join(out)[:HOOK_TEXT_CAP] if len(out) > 1 else ""
