"""CLAUDE.md identity block: where it was written and whether it is stale (seed 17.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import paths
from .atomic import read_json
from .timeutil import parse


def identity_staleness(home: Path, self_model: Any) -> dict[str, Any]:
    """Compare the self-model's ``updated_at`` with the last ``s3 refresh-identity`` run."""
    record = None
    try:
        record = read_json(paths.identity_record_path(home), default=None)
    except Exception:  # a broken record only means "unknown"
        record = None
    if not isinstance(record, dict) or not record.get("generated_at"):
        return {"path": None, "generated_at": None, "stale": True,
                "message": "not generated yet: run `s3 refresh-identity` (or /s3-refresh-identity)"}
    generated = parse(record.get("generated_at"))
    updated = parse(getattr(self_model, "updated_at", None))
    target = record.get("path")
    stale = bool(generated and updated and updated > generated) or not (target and Path(target).exists())
    msg = (f"{target} is older than the self-model: run `s3 refresh-identity`" if stale
           else f"{target} is up to date")
    return {"path": target, "generated_at": record.get("generated_at"), "stale": stale, "message": msg}
