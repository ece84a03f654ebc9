"""``s3 learn`` (seed 10.4) and ``s3 forget``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import kinds, paths
from ..atomic import write_json_atomic
from ..episode_store import _load_index, episode_path
from ..errors import BadInput, SophiaError
from ..locking import locked
from ..redact import redact
from ..timeutil import iso
from . import indexing, rules
from .domains import guess_domain
from .files import all_memory_stems, load_items, update_items


class UnknownMemory(BadInput):
    """An id that names no memory (bad input: exit code 2, cli/output.py)."""


def _existing_home(home: Path | None) -> Path:
    h = home or paths.sophia_home()
    if not h.is_dir():
        raise SophiaError(f"{h} does not exist: run `s3 init` first")
    return h


def learn(insight: str, domain: str | None = None, confidence: float = 0.8,
          home: Path | None = None, project: str | None = None) -> dict[str, Any]:
    """Add a manual SemanticRule (merged with a near-duplicate if there is one), under the lock.
    ``project``: the rule is that project's (never injected into another's); None: a general one."""
    h = _existing_home(home)
    rules.check_rule_text(insight.strip(), (domain or "").strip())  # before any work on a huge text
    text = redact(insight.strip())
    if not text:
        raise BadInput("the insight is empty")
    trigger = redact((domain or "").strip()) or guess_domain(text)
    with rules.update_rules(h) as rs:
        same = [r for r in rs if (r.get("project") or None) == (project or None)]
        status, rule = rules.add_or_merge(same, trigger=trigger, content=text, confidence=confidence,
                                          source="manual", source_episodes=[], digest=None)
        if status == "added":
            if project:
                rule["project"] = project
            rs.append(rule)
        rule = dict(rule)
        total = len(rs)
    indexing.upsert([indexing.rule_item(rule)], h)
    return {"status": status, "rule": rule, "total_rules": total}


def remember_fact(fact: str, project: str | None = None, home: Path | None = None) -> dict[str, Any]:
    """Add a fact the user or an agent states (``memory/facts.json``), redacted, under the store's lock;
    a near-duplicate of a fact of the same project is kept once (its time refreshed). Capped like a rule."""
    from .text import content_id, near_duplicate

    h = _existing_home(home)
    rules.check_rule_text(fact.strip(), "")
    text = redact(fact.strip())
    if not text:
        raise BadInput("the fact is empty")
    stamp = iso()
    with update_items("facts", h) as items:
        same = next((i for i in items if (i.get("project") or None) == (project or None)
                     and near_duplicate(str(i.get("text") or ""), text)), None)
        if same is not None:
            same["timestamp"] = stamp
            status, item = "merged", dict(same)
        else:
            item = kinds.make_item(content_id("fact_", text, project or ""), "fact", text, project=project,
                                   timestamp=stamp, event_time=stamp, temporality="historical",
                                   meta={"source": "manual"})
            items.append(item)
            status = "added"
    indexing.upsert([kinds.index_view(item)], h)
    return {"status": status, "fact": item}


def _drop_links(obj: dict[str, Any], mid: str) -> bool:
    links = obj.get("links") or []
    kept = [link for link in links if not (isinstance(link, dict) and link.get("id") == mid)]
    if len(kept) != len(links):
        obj["links"] = kept
        return True
    return False


Removed = tuple[dict[str, Any], str]  # (the stored object, where it was)


def _remove_rule(mid: str, h: Path, kind: kinds.Kind | None) -> Removed | None:
    with rules.update_rules(h) as rs:
        for i, r in enumerate(rs):
            if r.get("id") == mid:
                return rs.pop(i), "semantic_rules.json"
    return None


def _remove_episode(mid: str, h: Path, kind: kinds.Kind | None) -> Removed | None:
    try:
        ep_file = episode_path(mid, h)
    except ValueError:
        return None
    if not ep_file.exists():
        return None
    with locked(ep_file):
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
    return removed, f"episodes/{mid}.json"


def _remove_memory_item(mid: str, h: Path, kind: kinds.Kind | None) -> Removed | None:
    first = [kind.plural] if kind is not None and kind.store == "memory" else []
    for stem in first + [s for s in all_memory_stems(h) if s not in first]:
        if not any(i.get("id") == mid for i in load_items(stem, h)):
            continue
        with update_items(stem, h) as items:
            for i, item in enumerate(items):
                if item.get("id") == mid:
                    return items.pop(i), f"memory/{stem}.json"
    return None


def _remove_ingested(mid: str, h: Path, kind: kinds.Kind | None) -> Removed | None:
    from . import ingested

    return ingested.remove(mid, h)


def _refuse_claude_code(mid: str, h: Path, kind: kinds.Kind | None) -> Removed | None:
    if kind is None or kind.store != "claude_code":
        return None
    raise BadInput(f"{mid} is Claude Code's own memory, read-only here: edit or delete its file "
                   "(Claude Code's /memory); the index follows")


def _refuse_team(mid: str, h: Path, kind: kinds.Kind | None) -> Removed | None:
    if kind is None or kind.store != "team":
        return None
    from ..index import db

    conn = db.read_only(h, 1.0)
    row = conn.execute("SELECT source FROM items WHERE id = ?", (mid,)).fetchone() if conn is not None else None
    if conn is not None:
        conn.close()
    if row is None:
        return None
    raise BadInput(f"{mid} is team memory kept in the repository ({row[0]}): delete or edit that file and "
                   "commit it (the team reviews it); the index follows")


# store (sophia.kinds.STORES) -> its remover
REMOVERS: dict[str, Callable[[str, Path, kinds.Kind | None], Removed | None]] = {
    "rules": _remove_rule, "episodes": _remove_episode, "memory": _remove_memory_item,
    "conversations": _remove_ingested, "claude_code": _refuse_claude_code, "team": _refuse_team,
}


def _remove_index_row(mid: str, h: Path) -> Removed | None:
    """An id only the index still holds (its file went away): drop the row so recall stops showing it."""
    hit: list[Any] = []

    def change(conn: Any) -> None:
        from ..index import store

        row = conn.execute("SELECT text FROM items WHERE id = ?", (mid,)).fetchone()
        if row is not None:
            store.delete_items(conn, [mid])
            hit.append({"text": row[0]})

    indexing.write(change, h)
    return (hit[0], "index.db") if hit else None


def _remove(mid: str, h: Path) -> Removed | None:
    """Remove ``mid`` from the store its id prefix names first, then from any other store."""
    kind = kinds.for_id(mid)
    order = [kind.store] if kind is not None and kind.store in REMOVERS else []
    order += [s for s in REMOVERS if s not in order]
    for store in order:
        hit = REMOVERS[store](mid, h, kind)
        if hit is not None:
            return hit
    return _remove_index_row(mid, h)


def forget_source(name: str, home: Path | None = None) -> dict[str, Any]:
    """Remove a whole ingested conversation (``s3 forget --source``): its file and its index rows."""
    from . import ingested

    out = ingested.forget_source(name, home or paths.sophia_home())
    if out is None:
        raise UnknownMemory(f"no ingested source {name!r} (see `s3 list sources`)")
    return out


def _drop_references(mid: str, h: Path) -> None:
    """Drop dangling links and scene membership elsewhere (files and index)."""
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


def forget(mid: str, home: Path | None = None) -> dict[str, Any]:
    """Remove one memory of any kind from its file and from the index."""
    h = home or paths.sophia_home()
    hit = _remove(mid, h)
    if hit is None:
        listed = "|".join(k.plural for k in kinds.listed())
        raise UnknownMemory(f"no memory with id {mid!r} (see `s3 list {listed}` or `s3 recall`)")
    removed, where = hit
    _drop_references(mid, h)
    indexing.delete([mid], h)
    text = removed.get("text") or removed.get("rule_content") or removed.get("goal_summary") or ""
    return {"removed": mid, "from": where, "text": text}


def _refers(item: dict[str, Any], mid: str) -> bool:
    if any(isinstance(link, dict) and link.get("id") == mid for link in item.get("links") or []):
        return True
    members = (item.get("meta") or {}).get("member_ids")
    return isinstance(members, list) and mid in members


# ---------------------------------------------------------------- listing


def list_kind(word: str, home: Path | None = None) -> list[Any]:
    """The stored objects ``s3 list WORD`` shows: a kind's plural (sophia.kinds) or a ``kinds.OTHER_LISTS`` name."""
    h = home or paths.sophia_home()
    kind = kinds.by_plural(word)
    if kind is not None:
        return LOADERS[kind.store](kind, h)
    if word == "gaps":
        from ..models import SelfModel
        from ..state import _default_self_model, load_model

        sm = load_model(paths.self_model_path(h), SelfModel, _default_self_model)
        return [g.model_dump(mode="json") for g in sm.knowledge_gaps]
    if word == "conflicts":
        from .conflicts import load_records

        return load_records(h)
    if word == "sources":
        from . import ingested

        return ingested.sources(h)
    raise UnknownMemory(f"unknown kind {word!r}")


def _list_episodes(kind: kinds.Kind, h: Path) -> list[Any]:
    """The stored episodes (whole files: goal, actions, errors...), newest first."""
    from ..atomic import read_json
    from ..errors import StateFileError

    out = []
    ed = paths.episodes_dir(h)
    for p in sorted(ed.glob("*.json")) if ed.is_dir() else []:
        if p.name == "index.json" or p.name.startswith("index_archive_"):
            continue
        try:
            ep = read_json(p, default=None)
        except StateFileError:
            continue  # `s3 doctor` reports it
        if isinstance(ep, dict) and ep.get("id"):
            out.append(ep)
    return sorted(out, key=lambda e: str(e.get("timestamp") or e.get("ended_at") or ""), reverse=True)


def _list_memory(kind: kinds.Kind, h: Path) -> list[Any]:
    out: list[Any] = load_items(kind.plural, h)
    if kind.name == "memcell":  # plus the MemCells `s3 ingest` segmented (groups of turns)
        from . import ingested

        out += ingested.memcells(h)
    return out


def _list_claude_code(kind: kinds.Kind, h: Path) -> list[Any]:
    from . import claude_code

    return claude_code.items(h)


def _list_team(kind: kinds.Kind, h: Path) -> list[Any]:
    from . import team_repo

    return team_repo.items(h)


# store (sophia.kinds.STORES) -> its loader
LOADERS: dict[str, Callable[[kinds.Kind, Path], list[Any]]] = {
    "rules": lambda kind, h: rules.load_rules(h),
    "episodes": _list_episodes,
    "memory": _list_memory,
    "conversations": lambda kind, h: [],
    "claude_code": _list_claude_code,
    "team": _list_team,
}
