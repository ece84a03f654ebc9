"""Items read by id or by time, not by words: what ``get`` and ``timeline`` of the MCP server
(``lib/sophia/cli/mcp_tools.py``) show. Read-only, one short query each.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import Any

from ..kinds import bulk_types
from ..timeutil import iso

_COLS = ("id", "type", "text", "project", "timestamp", "event_time", "source_ids", "valid_from", "valid_until",
         "temporality", "scene_id", "memcell_id", "links", "meta")
_JSON: dict[str, Any] = {"source_ids": [], "links": [], "meta": {}}
WHEN = "COALESCE(event_time, timestamp)"


def _item(row: tuple[Any, ...]) -> dict[str, Any]:
    out = dict(zip(_COLS, row, strict=True))
    for key, default in _JSON.items():
        try:
            out[key] = json.loads(out[key]) if out[key] else default
        except (ValueError, TypeError):
            out[key] = default
    return out


def get_items(conn: sqlite3.Connection, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The index items of ``ids`` that exist, by id (the whole text, meta and links)."""
    if not ids:
        return {}
    rows = conn.execute(f"SELECT {', '.join(_COLS)} FROM items WHERE id IN ({','.join('?' * len(ids))})", ids)
    return {r[0]: _item(r) for r in rows}


def when_of(item: dict[str, Any]) -> str | None:
    """When an item happened (its event time), else when it was recorded."""
    return item.get("event_time") or item.get("timestamp")


def around(conn: sqlite3.Connection, at: datetime, *, days: float, project: str | None = None,
           limit: int = 20, types: list[str] | None = None) -> list[dict[str, Any]]:
    """The items that happened within ``days`` of ``at`` (this project's and global ones when ``project``
    is given), nearest first then in time order; ingested conversation turns only when ``types`` names them."""
    lo, hi = iso(at - timedelta(days=days)), iso(at + timedelta(days=days))
    clauses, params = [f"{WHEN} >= ?", f"{WHEN} <= ?"], [lo, hi]
    if types:
        clauses.append(f"type IN ({','.join('?' * len(types))})")
        params += types
    else:
        bulk = bulk_types()
        clauses.append(f"type NOT IN ({','.join('?' * len(bulk))})")
        params += bulk
    if project:
        clauses.append("(project IS NULL OR project = ?)")
        params.append(project)
    centre = iso(at)
    sql = (f"SELECT {', '.join(_COLS)} FROM items WHERE {' AND '.join(clauses)} "
           f"ORDER BY ABS(julianday({WHEN}) - julianday(?)) LIMIT ?")
    items = [_item(r) for r in conn.execute(sql, [*params, centre, max(1, limit)])]
    return sorted(items, key=lambda it: str(when_of(it) or ""))
