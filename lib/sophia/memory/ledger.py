"""``applied.json``: digests of the results already applied (``s3 apply`` is idempotent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..atomic import read_json, write_json_atomic
from ..errors import StateFileError
from ..paths import sophia_home

MAX_ENTRIES = 5000


def ledger_path(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "applied.json"


def load(home: Path | None = None) -> dict[str, Any]:
    p = ledger_path(home)
    data = read_json(p, default=None)
    if data is None:
        return {"applied": {}}
    if not isinstance(data, dict) or not isinstance(data.get("applied"), dict):
        raise StateFileError(p, 'expected {"applied": {digest: record}}')
    return data


def record(data: dict[str, Any], digest: str, entry: dict[str, Any], home: Path | None = None) -> None:
    """Caller holds ``locked(ledger_path(home))``."""
    applied = data["applied"]
    applied[digest] = entry
    if len(applied) > MAX_ENTRIES:
        for k in sorted(applied, key=lambda d: str(applied[d].get("applied_at", "")))[: len(applied) - MAX_ENTRIES]:
            del applied[k]
    write_json_atomic(ledger_path(home), data)
