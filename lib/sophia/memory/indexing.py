"""The bridge to the derived SQLite index (``sophia.index``, owned by the recall engineer).

Files are the truth: when the index package is missing or fails, the write still stands and
the caller reports that the index was not updated (``s3 index rebuild`` re-derives it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .files import index_view


def _modules() -> tuple[Any, Any] | None:
    try:
        from ..index import db, store
    except ImportError:
        return None
    return db, store


def available() -> bool:
    return _modules() is not None


def _write(change: Callable[[Any, Any], None], home: Path | None) -> bool:
    """Run ``change(store, conn)`` on the index and commit; False when the index could not take it."""
    mods = _modules()
    if mods is None:
        return False
    db, store = mods
    try:
        conn = db.connect(home)
        try:
            change(store, conn)
            with contextlib.suppress(Exception):
                conn.commit()
        finally:
            conn.close()
    except Exception:
        return False
    return True


def upsert(items: list[dict[str, Any]], home: Path | None = None) -> bool:
    if not items:
        return available()
    return _write(lambda store, conn: store.upsert_items(conn, [index_view(i) for i in items]), home)


def delete(ids: list[str], home: Path | None = None) -> bool:
    if not ids:
        return available()
    return _write(lambda store, conn: store.delete_items(conn, ids), home)


def rule_item(rule: dict[str, Any]) -> dict[str, Any]:
    """The index item of a rule: the recall engineer's converter when present (so rebuild and
    live updates agree), else an equivalent one."""
    try:
        from ..index.rebuild import rule_item as theirs
    except ImportError:
        pass
    else:
        return dict(theirs(rule))
    from .files import make_item

    return make_item(
        str(rule["id"]), "rule", f"{rule.get('trigger_concept', '')}: {rule.get('rule_content', '')}",
        timestamp=str(rule.get("created_at") or ""), source_ids=list(rule.get("source_episodes") or []),
        links=list(rule.get("links") or []),
        meta={k: rule.get(k) for k in ("trigger_concept", "rule_content", "source", "confidence",
                                        "validation_count", "last_validated", "access_count")},
    )


def episode_item(ep: dict[str, Any]) -> dict[str, Any]:
    try:
        from ..index.rebuild import episode_item as theirs
    except ImportError:
        pass
    else:
        return dict(theirs(ep))
    from .files import make_item

    parts = [ep.get("goal_summary") or "", ep.get("goal") or "", ep.get("narrative") or "",
             " ".join(ep.get("heuristics") or []), " ".join(ep.get("keywords") or [])]
    return make_item(
        str(ep["id"]), "episode", " \n".join(p for p in parts if p),
        project=ep.get("project"), timestamp=str(ep.get("ended_at") or ep.get("timestamp") or ""),
        event_time=str(ep.get("started_at") or "") or None, links=list(ep.get("links") or []),
        meta={"outcome": ep.get("outcome"), "trivial": bool(ep.get("trivial")),
              "consolidated": bool(ep.get("consolidated")), "heuristics": list(ep.get("heuristics") or []),
              "tool_call_count": ep.get("tool_call_count"), "access_count": ep.get("access_count", 0)},
    )
