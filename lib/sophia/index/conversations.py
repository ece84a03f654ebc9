"""The kept conversation files: ``memory/conversations/<source>.jsonl``, one turn item per line.

``sophia.ingest`` writes them (redacted, merged by turn id); ``sophia.index.rebuild`` reads them back
verbatim. Where they live and how a line is read are here, below both. Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import paths

_SAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


def conversations_dir(home: Path | None = None) -> Path:
    return paths.memory_dir(home) / "conversations"


def safe_source(source: str) -> str:
    s = _SAFE.sub("_", source).strip("._") or "conversation"
    return s[:120]


def conversation_path(source: str, home: Path | None = None) -> Path:
    return conversations_dir(home) / f"{safe_source(source)}.jsonl"


def conversation_files(home: Path | None = None) -> list[Path]:
    cd = conversations_dir(home)
    return sorted(cd.glob("*.jsonl")) if cd.is_dir() else []


def read_conversation(path: Path) -> list[dict[str, Any]]:
    """The turn items of one kept conversation file (bad lines are skipped, never fatal)."""
    return list(iter_conversation(path))


def iter_conversation(path: Path) -> Iterator[dict[str, Any]]:
    """The same, one at a time (a conversation of any size in constant memory)."""
    try:
        fh = path.open(encoding="utf-8")
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("id"), str) and isinstance(obj.get("text"), str):
                yield obj
