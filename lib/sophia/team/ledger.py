"""The local push ledger ``<home>/team/ledger.json``: per shared id, the version this machine last
pushed or pulled, the heads it knew and the merged confidence. Written atomically after each
committed batch, so a crash between commit and ledger write only makes the next push repeat rows the
server already has (an upsert on (team, id, version): nothing duplicated)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..atomic import read_json, write_json_atomic
from ..locking import locked
from . import config


def load(home: Path, team: str) -> dict[str, Any]:
    data = read_json(config.ledger_path(home), default=None)
    if not isinstance(data, dict) or data.get("team") != team or not isinstance(data.get("items"), dict):
        return {"team": team, "items": {}}
    return data


def record(home: Path, team: str, entries: dict[str, dict[str, Any]]) -> None:
    """Merge ``entries`` (id -> {version, kind, heads, confidence, deleted}) into the ledger, atomically."""
    p = config.ledger_path(home)
    with locked(p, timeout=30):
        data = load(home, team)
        data["items"].update(entries)
        write_json_atomic(p, data)
