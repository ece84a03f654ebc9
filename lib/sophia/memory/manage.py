"""``s3 learn`` (seed 10.4) and ``s3 forget``."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import write_json_atomic
from ..episode_store import _load_index, episode_path
from ..errors import SophiaError
from ..locking import locked
from ..redact import redact
from ..timeutil import iso
from . import indexing, rules
from .files import all_memory_stems, load_items, update_items


class UnknownMemory(SophiaError):
    exit_code = 2  # bad input: an id that names no memory (cli/output.py's exit codes)


def infer_domain(insight: str) -> str:
    from .text import content_terms

    terms = [t for t in content_terms(insight) if len(t) > 3 and not t.isdigit()]
    return terms[0].capitalize() if terms else "General"


def learn(insight: str, domain: str | None = None, confidence: float = 0.8,
          home: Path | None = None) -> dict[str, Any]:
    """Add a manual SemanticRule (merged with a near-duplicate if there is one), under the lock."""
    h = home or paths.sophia_home()
    if not h.is_dir():
        raise SophiaError(f"{h} does not exist: run `s3 init` first")
    text = redact(insight.strip())
    if not text:
        raise SophiaError("the insight is empty")
    trigger = redact((domain or "").strip()) or infer_domain(text)
    with rules.update_rules(h) as rs:
        status, rule = rules.add_or_merge(rs, trigger=trigger, content=text, confidence=confidence,
                                          source="manual", source_episodes=[], digest=None)
        rule = dict(rule)
        total = len(rs)
    indexing.upsert([indexing.rule_item(rule)], h)
    return {"status": status, "rule": rule, "total_rules": total}


def _drop_links(obj: dict[str, Any], mid: str) -> bool:
    links = obj.get("links") or []
    kept = [link for link in links if not (isinstance(link, dict) and link.get("id") == mid)]
    if len(kept) != len(links):
        obj["links"] = kept
        return True
    return False


def forget(mid: str, home: Path | None = None) -> dict[str, Any]:
    """Remove one memory (rule, episode or memory item) from its file and from the index."""
    h = home or paths.sophia_home()
    removed: dict[str, Any] | None = None
    where = ""
    with rules.update_rules(h) as rs:
        for i, r in enumerate(rs):
            if r.get("id") == mid:
                removed, where = rs.pop(i), "semantic_rules.json"
                break
    if removed is None:
        try:
            ep_file = episode_path(mid, h)
        except ValueError:
            ep_file = None
        if ep_file is not None and ep_file.exists():
            with locked(ep_file):
                import json

                removed = json.loads(ep_file.read_text(encoding="utf-8"))
                os.unlink(ep_file)
            ip = paths.episode_index_path(h)
            with locked(ip):
                idx = _load_index(ip)
                before = len(idx["entries"])
                idx["entries"] = [e for e in idx["entries"] if e.get("id") != mid]
                if len(idx["entries"]) != before:
                    idx["total_episodes"] = max(0, int(idx.get("total_episodes") or 0) - 1)
                    idx["last_updated"] = iso()
                    write_json_atomic(ip, idx)
            where = f"episodes/{mid}.json"
    if removed is None:
        for stem in all_memory_stems(h):
            if not any(i.get("id") == mid for i in load_items(stem, h)):
                continue
            with update_items(stem, h) as items:
                for i, item in enumerate(items):
                    if item.get("id") == mid:
                        removed, where = items.pop(i), f"memory/{stem}.json"
                        break
            break
    if removed is None:
        raise UnknownMemory(f"no memory with id {mid!r} (see `s3 list rules|episodes|facts|foresight|profile`)")
    # drop dangling links and scene membership elsewhere
    touched: list[dict[str, Any]] = []
    for stem in all_memory_stems(h):
        if not any(_refers(i, mid) for i in load_items(stem, h)):
            continue
        with update_items(stem, h) as items:
            for item in items:
                changed = _drop_links(item, mid)
                members = (item.get("meta") or {}).get("member_ids")
                if isinstance(members, list) and mid in members:
                    item["meta"]["member_ids"] = [m for m in members if m != mid]
                    changed = True
                if changed:
                    touched.append(item)
    with rules.update_rules(h) as rs:
        for r in rs:
            if _drop_links(r, mid):
                touched.append(indexing.rule_item(r))
    indexing.upsert(touched, h)
    with contextlib.suppress(Exception):
        indexing.delete([mid], h)
    text = removed.get("text") or removed.get("rule_content") or removed.get("goal_summary") or ""
    return {"removed": mid, "from": where, "text": text}


def _refers(item: dict[str, Any], mid: str) -> bool:
    if any(isinstance(link, dict) and link.get("id") == mid for link in item.get("links") or []):
        return True
    members = (item.get("meta") or {}).get("member_ids")
    return isinstance(members, list) and mid in members


# ---------------------------------------------------------------- listing helpers


def list_kind(kind: str, home: Path | None = None) -> list[Any]:
    from ..episode_store import read_index

    h = home or paths.sophia_home()
    if kind == "rules":
        return rules.load_rules(h)
    if kind == "episodes":
        return list(read_index(h).get("entries") or [])
    if kind == "gaps":
        from ..models import SelfModel
        from ..state import _default_self_model, load_model

        return list(load_model(paths.self_model_path(h), SelfModel, _default_self_model).knowledge_gaps)
    if kind == "conflicts":
        from .conflicts import load_records

        return load_records(h)
    return load_items(kind, h)
