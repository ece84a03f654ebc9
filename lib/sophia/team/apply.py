"""Applying pulled versions to the local files (the source of truth), then to the local index.

An item is overwritten or deleted only when the ledger says it was shared (pushed or pulled before)
or it is new here; a local item of the same id that was never shared is kept as it is. A rule's
confidence is merged (the larger), never overwritten. Guardian patterns go to config.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import read_json, write_json_atomic
from ..locking import locked
from . import collect

STEMS = {"fact": "facts", "procedure": "procedures"}


def _body(raw: Any) -> dict[str, Any]:
    return raw if isinstance(raw, dict) else json.loads(raw)


def _replaceable(rows: list[tuple[Any, ...]], exists: Any, book: dict[str, Any],
                 summary: dict[str, Any]) -> Any:
    """(id, body, deleted, confidence, validations) of each pulled row that may change this machine: a
    new id, or one shared before (the ledger); a local item never shared is kept (counted)."""
    for iid, _v, _k, body, deleted, conf, vals in rows:
        if exists(iid) and iid not in book["items"]:
            summary["kept_local"] += 1
            continue
        yield iid, body, deleted, conf, vals


def _apply_rules(home: Path, rows: list[tuple[Any, ...]], book: dict[str, Any], summary: dict[str, Any]) -> None:
    from ..memory import indexing
    from ..memory.rules import update_rules

    changed, gone = [], []
    with update_rules(home) as rules:
        by_id = {r.get("id"): r for r in rules}
        for iid, body, deleted, conf, vals in _replaceable(rows, lambda i: i in by_id, book, summary):
            cur = by_id.get(iid)
            if deleted:
                if cur is not None:
                    rules.remove(cur)
                    gone.append(iid)
                continue
            new = dict(_body(body))
            if cur is not None:
                new["confidence"] = max(float(cur.get("confidence") or 0), float(conf or 0))
                new["validation_count"] = max(int(cur.get("validation_count") or 0), int(vals or 0))
                cur.clear()
                cur.update(new)
            else:
                new["confidence"] = float(conf or new.get("confidence") or 0)
                rules.append(new)
            changed.append(cur if cur is not None else new)
    indexing.upsert([indexing.rule_item(r) for r in changed], home)
    indexing.delete(gone, home)
    summary["applied"] += len(changed)
    summary["deleted"] += len(gone)


def _apply_items(home: Path, stem: str, rows: list[tuple[Any, ...]], book: dict[str, Any],
                 summary: dict[str, Any]) -> None:
    from ..memory import indexing
    from ..memory.files import update_items

    changed, gone = [], []
    with update_items(stem, home) as items:
        by_id = {i.get("id"): n for n, i in enumerate(items)}
        for iid, body, deleted, _c, _n in _replaceable(rows, lambda i: i in by_id, book, summary):
            at = by_id.get(iid)
            if deleted:
                if at is not None:
                    items[at] = {}
                    gone.append(iid)
                continue
            new = _body(body)
            if at is None:
                by_id[iid] = len(items)
                items.append(new)
            else:
                items[at] = new
            changed.append(new)
        items[:] = [i for i in items if i]
    indexing.upsert(changed, home)
    indexing.delete(gone, home)
    summary["applied"] += len(changed)
    summary["deleted"] += len(gone)


def _apply_episodes(home: Path, rows: list[tuple[Any, ...]], book: dict[str, Any], summary: dict[str, Any]) -> None:
    from ..episode_store import episode_path, index_entry, upsert_index_entries
    from ..memory import indexing

    changed, gone, entries = [], [], []
    for iid, body, deleted, _c, _n in _replaceable(rows, lambda i: episode_path(i, home).exists(), book, summary):
        p = episode_path(iid, home)
        if deleted:
            if p.exists():
                p.unlink()
                gone.append(iid)
            continue
        ep = _body(body)
        write_json_atomic(p, ep)
        entries.append(index_entry(ep))
        changed.append(indexing.episode_item(ep))
    if entries:
        upsert_index_entries(entries, home)  # episodes/index.json: what SessionStart lists
    indexing.upsert(changed, home)
    indexing.delete(gone, home)
    summary["applied"] += len(changed)
    summary["deleted"] += len(gone)


def _apply_guardian(home: Path, rows: list[tuple[Any, ...]], book: dict[str, Any], summary: dict[str, Any]) -> None:
    p = paths.config_path(home)
    with locked(p, timeout=30):
        cfg = read_json(p, default={}) or {}
        g = cfg.setdefault("guardian", {})
        before = json.dumps(g, sort_keys=True)
        for iid, _v, _k, body, deleted, _c, _n in rows:
            if deleted:
                old = (book["items"].get(iid) or {}).get("body") or {}
                pat, which = old.get("pattern"), old.get("list")
            else:
                b = _body(body)
                pat, which = b.get("pattern"), b.get("list")
            if which not in ("allow", "deny") or not isinstance(pat, str):
                continue
            lst = g.setdefault(which, [])
            if deleted and pat in lst:
                lst.remove(pat)
                summary["deleted"] += 1
            elif not deleted and pat not in lst:
                lst.append(pat)
                summary["applied"] += 1
        if json.dumps(g, sort_keys=True) != before:
            write_json_atomic(p, cfg)


def apply_rows(home: Path, rows: list[tuple[Any, ...]], book: dict[str, Any], heads: dict[str, list[str]],
               summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Apply pulled rows (id, version, kind, body, deleted, confidence, validations); return ledger entries."""
    by_kind: dict[str, list[tuple[Any, ...]]] = {}
    for r in rows:
        by_kind.setdefault(r[2], []).append(r)
    for kind, group in by_kind.items():
        if kind == "rule":
            _apply_rules(home, group, book, summary)
        elif kind in STEMS:
            _apply_items(home, STEMS[kind], group, book, summary)
        elif kind == "episode":
            _apply_episodes(home, group, book, summary)
        elif kind == "guardian":
            _apply_guardian(home, group, book, summary)
    out = {}
    for iid, version, kind, body, deleted, conf, _n in rows:
        entry = {"version": version, "kind": kind, "heads": heads.get(iid) or [version],
                 "confidence": conf if kind == "rule" else None, "deleted": bool(deleted)}
        if kind == "guardian":
            entry["body"] = _body(body) if not deleted else (book["items"].get(iid) or {}).get("body")
        out[iid] = entry
    return out


def log_conflicts(conn: Any, home: Path, team: str) -> int:
    """Copy the team's conflict records into memory/conflicts.jsonl (the local conflict log)."""
    from ..memory.conflicts import log_records
    from ..memory.text import content_id

    recs = []
    for iid, versions, kept, detected in conn.execute(
            "SELECT id, versions, kept_version, detected_at FROM sophia.conflicts WHERE team_id = %s", (team,)):
        recs.append({"id": content_id("conflict_", "team", iid, str(detected)), "detected_at": str(detected),
                     "signal": "edited_on_two_machines", "resolution": "recency", "kept_id": iid,
                     "kept_version": kept, "superseded_id": iid,
                     "superseded_versions": [v for v in versions if v != kept], "team": team})
    log_records(recs, home)
    return len(recs)


__all__ = ["apply_rows", "log_conflicts", "collect"]
