"""What the guardian did for the user: ``logs/guardian_blocks.jsonl`` summed per day and rule.

Read by ``s3 guardian stats``. A line that is not a JSON object is counted as unreadable and
skipped (the log is append-only and each line one ``write``; a torn last line is possible after a
crash), never fatal.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


def log_path(home: Path) -> Path:
    return home / "logs" / "guardian_blocks.jsonl"


def read(home: Path) -> tuple[list[dict[str, Any]], int]:
    """The log's entries and how many lines could not be read."""
    entries, bad = [], 0
    try:
        text = log_path(home).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(obj, dict):
            entries.append(obj)
        else:
            bad += 1
    return entries, bad


def summarize(entries: list[dict[str, Any]], *, days: int = 30, top: int = 10,
              now: datetime | None = None) -> dict[str, Any]:
    """Decisions per day and rule over the last ``days`` days, and the most frequent asked commands. The
    guardian's decisions are its denies, asks and the calls it let through on an allow-once grant
    (``allowed_once``); the grants themselves (``grant``: the user's act, not a decision) are counted
    apart, so every figure counts the same decisions."""
    since = ((now or datetime.now(UTC)) - timedelta(days=days)).strftime("%Y-%m-%d")
    window = [e for e in entries if str(e.get("ts") or "")[:10] >= since]
    recent = [e for e in window if e.get("decision") != "grant"]
    per_day: dict[str, Counter[str]] = {}
    per_rule: Counter[tuple[str, str]] = Counter()
    asked: Counter[str] = Counter()
    for e in recent:
        day, decision, rule = str(e.get("ts") or "?")[:10], str(e.get("decision") or "?"), str(e.get("rule") or "?")
        per_day.setdefault(day, Counter())[decision] += 1
        per_rule[(rule, decision)] += 1
        if decision == "ask" and e.get("command"):
            asked[" ".join(str(e["command"]).split())[:200]] += 1
    return {
        "days": days, "since": since, "total": len(recent), "grants": len(window) - len(recent),
        "by_decision": dict(Counter(str(e.get("decision") or "?") for e in recent)),
        "by_day": [{"day": d, **dict(c)} for d, c in sorted(per_day.items())],
        "by_rule": [{"rule": r, "decision": d, "count": n} for (r, d), n in per_rule.most_common()],
        "top_asked": [{"command": c, "count": n} for c, n in asked.most_common(top)],
    }
