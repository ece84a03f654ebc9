"""Shared helpers for the hooks that bring memory back into context. Stdlib only."""

from __future__ import annotations

import json
from pathlib import Path

from ..kinds import one_line  # noqa: F401 - re-exported for the hook modules
from .words import stems, tokens

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

HOOK_TEXT_CAP = 9500  # Claude Code caps hook strings at 10,000 characters

__all__ = ["HOOK_TEXT_CAP", "fit", "memory_items", "one_line", "overlap", "read_json_quiet", "stems", "tokens"]


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
