"""Shared helpers for the hooks that bring memory back into context. Stdlib only."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .episode import STOPWORDS

_TOKEN = re.compile(r"[a-z0-9][a-z0-9_+#-]{1,}")
HOOK_TEXT_CAP = 9500  # Claude Code caps hook strings at 10,000 characters


def tokens(text: str) -> set[str]:
    return {t for t in _TOKEN.findall((text or "").lower()) if len(t) >= 3 and t not in STOPWORDS}


def related(a: str, b: str) -> bool:
    """Same word, or the same stem by a shared prefix of at least 5 letters (deploy / deployment)."""
    if a == b:
        return True
    n = min(len(a), len(b))
    return n >= 5 and a[:5] == b[:5] and (a.startswith(b) or b.startswith(a) or a[:6] == b[:6])


def overlap(query: set[str], text_tokens: set[str]) -> int:
    return sum(1 for q in query if q in text_tokens or any(related(q, t) for t in text_tokens))


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


def one_line(text: Any, limit: int) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


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
