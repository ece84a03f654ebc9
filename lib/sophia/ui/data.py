"""What each page shows, read through the library functions the CLI uses (no second reader).

Every function takes the state home and returns plain dicts and lists for the templates.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from .. import paths
from ..timeutil import now, parse

PAGE = 50  # episodes per timeline page


def self_model(home: Path) -> dict[str, Any]:
    from ..models import SelfModel
    from ..state import _default_self_model, load_model

    return load_model(paths.self_model_path(home), SelfModel, _default_self_model).model_dump(mode="json")


def capability_history(home: Path, top: int = 5) -> dict[str, Any]:
    """The ``top`` domains (by current proficiency) over the days their proficiency changed, each day's
    last value carried forward: {"days": [...], "series": {domain: [value or None, ...]}}."""
    import json

    by_day: dict[str, dict[str, float]] = {}
    try:
        lines = paths.capability_history_path(home).read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            rec = json.loads(line)
            by_day.setdefault(str(rec["at"])[:10], {})[str(rec["domain"])] = float(rec["proficiency"])
        except (ValueError, KeyError, TypeError):
            continue  # a torn or foreign line is skipped, not fatal
    days = sorted(by_day)
    last: dict[str, float] = {}
    cols: dict[str, list[float | None]] = {}
    for i, day in enumerate(days):
        last.update(by_day[day])
        for dom, val in last.items():
            cols.setdefault(dom, [None] * len(days))[i] = val
    keep = sorted(cols, key=lambda d: -(last.get(d) or 0.0))[:top]
    return {"days": days, "series": {d: cols[d] for d in keep}}


def growth(home: Path, top: int = 4) -> dict[str, Any]:
    """Episodes per week (learning/metrics: all projects, and the busiest ``top`` ones apart) and the
    4-week trend ``s3 status`` shows."""
    from ..learning import metrics

    rs = metrics.rows(home)
    metrics.mark_repeats(rs)
    by_project: dict[str, list[dict[str, Any]]] = {}
    for r in rs:
        by_project.setdefault(r["project"] or "(no project)", []).append(r)
    busiest = sorted(by_project.items(), key=lambda kv: -len(kv[1]))[:top]
    tr = metrics.trend(rs)
    return {"weeks": metrics.weekly(rs)[-26:], "trend": tr, "episodes": len(rs), "trend_line": metrics.trend_line(tr),
            "projects": [{"project": p, "weeks": metrics.weekly(g)} for p, g in busiest]}


def guardian(home: Path, days: int = 30) -> dict[str, Any]:
    from ..guardian import stats

    entries, bad = stats.read(home)
    return {"summary": stats.summarize(entries, days=days), "recent": entries[-200:][::-1], "unreadable": bad,
            "total": len(entries)}


def guardian_empty() -> dict[str, Any]:
    """What the guardian pages show while the log is still being read."""
    from ..guardian import stats

    return {"summary": stats.summarize([]), "recent": [], "unreadable": 0, "total": 0}


def digests(home: Path) -> dict[str, Any]:
    from ..config_defaults import load
    from ..learning import ledger, queue

    cfg = load(paths.config_path(home))[0]
    per_day: dict[str, dict[str, float]] = {}
    for e in ledger.entries(home):
        d = per_day.setdefault(str(e.get("day") or "?"), {"cost_usd": 0.0, "runs": 0, "tokens": 0})
        d["cost_usd"] += float(e.get("cost_usd") or 0)
        d["runs"] += 1
        d["tokens"] += int(e.get("tokens") or 0)
    jobs = queue.jobs(home)
    for j in jobs:
        if j["state"] == "pending":
            j["deferred"] = ledger.deferral(home, cfg, j["id"])
    return {"jobs": jobs, "summary": ledger.summary(home, bool(cfg.get("learning_enabled")), cfg),
            "per_day": [{"day": k, **v} for k, v in sorted(per_day.items())][-60:]}


def storage(home: Path) -> dict[str, Any]:
    """The index's counts (``s3 index``) and sizes of the state tree's main parts."""
    from ..index import rebuild

    out: dict[str, Any] = {"home": str(home)}
    if paths.index_db_path(home).exists():
        try:
            out["index"] = rebuild.stats(home)
            from ..index.db import MIGRATIONS

            done, known = len(out["index"]["migrations"]), len(MIGRATIONS)
            out["index"]["layout"] = ("up to date" if done >= known else f"older than this kit's ({done} of {known} "
                                      "changes; the next write brings it up to date)")
        except sqlite3.Error as exc:
            out["index_error"] = f"{exc} (run `s3 doctor --repair`)"
    else:
        out["index_error"] = "no index yet (nothing recorded, or run `s3 index --rebuild`)"
    sizes = {}
    for name in ("episodes", "memory", "logs", "digests"):
        d = home / name
        sizes[name] = sum(e.stat().st_size for e in _scan(d)) if d.is_dir() else 0
    out["sizes"] = sizes
    return out


def _scan(d: Path) -> list[Any]:
    import os

    with os.scandir(d) as it:
        return [e for e in it if e.is_file(follow_symlinks=False)]


def episodes_page(home: Path, page: int) -> dict[str, Any]:
    """The newest episodes from the episode index (what ``s3 status`` lists), one page."""
    from ..episode_store import read_index

    idx = read_index(home)
    entries = idx.get("entries") or []
    start = max(0, page) * PAGE
    return {"entries": entries[start:start + PAGE], "total": int(idx.get("total_episodes") or len(entries)),
            "in_index": len(entries), "page": page, "has_next": start + PAGE < len(entries)}


def search(home: Path, query: str, as_of: str | None, known_at: str | None, types: list[str] | None,
           limit: int = 30) -> dict[str, Any]:
    """The recall engine of ``s3 recall`` (keyword and, when warm, semantic tiers), with as-of."""
    from ..index import semantic
    from ..index.db import connect_for_read
    from ..index.search import DEFAULT_KNOBS, QueryError, check_query, parse_as_of
    from ..index.search import search as run

    try:
        parse_as_of(as_of or None)
        parse_as_of(known_at or None, "known at")
        if not check_query(query):
            return {"results": [], "note": "no searchable words in the query"}
    except QueryError as exc:
        return {"results": [], "error": str(exc)}
    conn = connect_for_read(home)
    if conn is None:
        return {"results": [], "note": "the index is empty (nothing recorded yet)"}
    try:
        pending = semantic.start(query, max(semantic.SEMANTIC_K, limit), home, types)
        return {"results": run(conn, query, limit=limit, types=types, as_of=as_of or None, home=home,
                               knobs=DEFAULT_KNOBS, semantic_hits=pending, known_at=known_at or None)}
    finally:
        conn.close()


def episode(home: Path, eid: str) -> dict[str, Any] | None:
    from ..atomic import read_json
    from ..episode_store import episode_path

    try:
        p = episode_path(eid, home)
    except ValueError:
        return None
    ep = read_json(p, default=None)
    if not isinstance(ep, dict):
        return None
    ep["transcript_path"] = ep.get("transcript_path") or _transcript_of(home, str(ep.get("session_id") or ""))
    return ep


def _transcript_of(home: Path, session_id: str) -> str | None:
    """The transcript of an episode built before episodes recorded it: the session's state (while the hooks
    keep it), else what ``s3 backfill`` read it from, else its digest job."""
    if not session_id:
        return None
    from ..atomic import read_json
    from ..errors import SophiaError
    from ..hooks import backfill
    from ..learning import queue

    try:
        state = read_json(paths.buffers_dir(home) / f"{session_id}.state.json", default=None)
        path = ((state or {}).get("transcript") or {}).get("path") if isinstance(state, dict) else None
        if isinstance(path, str) and path:
            return path
        record = read_json(backfill.record_path(home), default=None)
    except (SophiaError, OSError, ValueError):
        record = None
    for path, entry in ((record or {}).get("transcripts") or {}).items() if isinstance(record, dict) else ():
        if isinstance(entry, dict) and entry.get("session") == session_id:
            return str(path)
    for j in queue.jobs(home):
        if j.get("session_id") == session_id and j.get("transcript"):
            return str(j["transcript"])
    return None


PROCEDURES_PAGE = 60  # procedures per page (each shows its evidence)
_PROC_KINDS = ("playbook", "fixes", "digest")


def procedures(home: Path, page: int = 0) -> dict[str, Any]:
    """What the learners taught, per project (busiest first): its playbook, its error -> fix procedures
    (surest first) and the procedures a digest wrote; each with its confidence, runs, status and
    evidence (the session's episode when it is known). One page of :data:`PROCEDURES_PAGE`, in that order."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {}
    items = listed(home, "procedures")
    for it in items:
        group = groups.setdefault(it.get("project") or "", {k: [] for k in _PROC_KINDS})
        group[_category(it)].append(it)
    order = [(p, k, it) for p, g in sorted(groups.items(), key=lambda kv: -sum(map(len, kv[1].values())))
             for k in _PROC_KINDS for it in sorted(g[k], key=_PROC_ORDER[k])]
    start = max(0, page) * PROCEDURES_PAGE
    episode_of = _episodes_by_session(home) if order[start:start + PROCEDURES_PAGE] else {}
    shown: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for p, k, it in order[start:start + PROCEDURES_PAGE]:
        shown.setdefault(p, {x: [] for x in _PROC_KINDS})[k].append(_procedure_view(it, episode_of))
    return {"groups": [{"project": p, **g} for p, g in shown.items()], "total": len(items), "page": page,
            "has_next": start + PROCEDURES_PAGE < len(order)}


def procedure(home: Path, pid: str) -> dict[str, Any] | None:
    """One procedure as the page shows it (the edit form's), or None."""
    it = next((i for i in listed(home, "procedures") if i.get("id") == pid), None)
    return None if it is None else _procedure_view(it, _episodes_by_session(home))


def _meta(it: dict[str, Any]) -> dict[str, Any]:
    return it["meta"] if isinstance(it.get("meta"), dict) else {}


def _category(it: dict[str, Any]) -> str:
    cat = _meta(it).get("category")
    return "fixes" if cat == "error_fix" else "playbook" if cat == "playbook" else "digest"


def _active(it: dict[str, Any]) -> bool:
    return str(_meta(it).get("status") or "active") == "active"


_PROC_ORDER: dict[str, Any] = {
    "playbook": lambda it: (not _active(it), str(_meta(it).get("class") or "")),
    "fixes": lambda it: (not _active(it), -float(_meta(it).get("confidence") or 0), -int(_meta(it).get("sessions") or 1)),
    "digest": lambda it: str(it.get("timestamp") or ""),
}


def _procedure_view(it: dict[str, Any], episode_of: dict[str, dict[str, Any]]) -> dict[str, Any]:
    meta = _meta(it)
    evidence = []
    for ev in meta.get("evidence") or []:
        if not isinstance(ev, dict):
            continue
        calls = ev.get("calls") or {}
        n = sum(len(v) if isinstance(v, list) else 1 for v in calls.values() if v) if isinstance(calls, dict) else 0
        entry = episode_of.get(str(ev.get("session"))) or {}
        evidence.append({"session": ev.get("session"), "episode": entry.get("id"), "when": entry.get("timestamp"),
                         "at": ev.get("at"), "calls": n, "proof": [str(x) for x in ev.get("proof") or []][:5]})
    return {**it, "meta": meta, "category": _category(it), "confidence": meta.get("confidence"), "status": str(meta.get("status") or "active"),
            "successes": int(meta.get("successes") or 0), "failures": int(meta.get("failures") or 0),
            "sessions": int(meta.get("sessions") or len(it.get("source_ids") or []) or 1), "evidence": evidence,
            "steps": [str(s) for s in meta.get("procedure_steps") or meta.get("steps") or []]}


def _episodes_by_session(home: Path) -> dict[str, dict[str, Any]]:
    from ..episode_store import read_index

    try:
        entries = read_index(home).get("entries") or []
    except Exception:  # noqa: BLE001 - a link is a convenience; `s3 doctor` names a broken index
        return {}
    return {str(e["session_id"]): e for e in entries if isinstance(e, dict) and e.get("session_id") and e.get("id")}


def learning(home: Path) -> dict[str, Any]:
    """Whether automatic learning is on, said as the installer says it (what it costs, how to switch it)."""
    from ..config_defaults import load
    from ..install.learning import describe

    cfg = load(paths.config_path(home))[0]
    return {"on": bool(cfg.get("learning_enabled")), "line": describe(paths.config_path(home))}


def rules(home: Path) -> list[dict[str, Any]]:
    from ..memory.rules import decayed_confidence, load_rules

    t = now()
    out = []
    for r in load_rules(home):
        r = dict(r)
        r["decayed"] = decayed_confidence(r, t)
        out.append(r)
    return sorted(out, key=lambda r: -float(r.get("confidence") or 0))


def listed(home: Path, word: str) -> list[Any]:
    from ..memory.manage import list_kind

    return list_kind(word, home)


def team(home: Path) -> list[dict[str, Any]]:
    """The team memory of the repositories the kit has seen (``<project>/.sophia/team``, read from the
    files): one group per project, its items with their origin (file, who learned them and when)."""
    from ..memory import team_repo

    groups: dict[str, list[dict[str, Any]]] = {}
    for it in team_repo.items(home):
        groups.setdefault(str(it["project"]), []).append(it)
    return [{"project": p, "items": its} for p, its in sorted(groups.items())]


def windows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item's validity window (for charts.windows): valid_from/valid_until, else event time."""
    out = []
    for it in items:
        start = parse(it.get("valid_from")) or parse(it.get("event_time"))
        end = parse(it.get("valid_until"))
        out.append({"label": it.get("text") or it.get("id"), "start": start, "end": end})
    return out


def profile(home: Path) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {"stable": [], "transient": []}
    for it in listed(home, "profile"):
        stability = str((it.get("meta") or {}).get("stability") or "transient")
        groups.setdefault(stability, []).append(it)
    return groups


def find_memory(home: Path, mid: str) -> dict[str, Any] | None:
    """The stored object behind an id (for the forget confirmation): its file, else its index row."""
    from .. import kinds

    kind = kinds.for_id(mid)
    if kind is not None and kind.store == "episodes":
        return episode(home, mid)
    if kind is not None and kind.store == "rules":
        return next((r for r in rules(home) if r.get("id") == mid), None)
    from ..memory.files import find_item

    hit = find_item(mid, home)
    if hit is not None:
        return hit[1]
    from ..index.db import connect_for_read

    conn = connect_for_read(home)
    if conn is None:
        return None
    try:
        row = conn.execute("SELECT id, type, text, timestamp, event_time FROM items WHERE id = ?", (mid,)).fetchone()
    finally:
        conn.close()
    return dict(zip(("id", "type", "text", "timestamp", "event_time"), row, strict=True)) if row else None
