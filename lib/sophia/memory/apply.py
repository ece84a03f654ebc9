"""``s3 apply KIND``: check a subagent's result, then turn it into lasting memory.

Order of work: unwrap the envelope, redact, validate the contract (pydantic), check every id
the result refers to, and only then write. The whole apply runs under the ledger lock; a result
whose digest is already in ``applied.json`` changes nothing. Each effect is also idempotent on
its own (content ids, digests recorded on merged rules and capabilities), so a retry after a
crash half-way does not double-count. The terminal creed is never written by any applier.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .. import kinds, paths
from ..atomic import append_line, read_json
from ..contracts import (
    ConsolidationResult,
    ContractError,
    ExtractionResult,
    Link,
    MemoryResult,
    ReflectionResult,
    digest,
    unwrap,
    validate,
)
from ..episode_store import episode_path, upsert_episode
from ..errors import SophiaError
from ..locking import locked
from ..redact import redact_obj
from ..timeutil import iso, now, parse
from . import conflicts, gaps, indexing, ledger, rules, scenes
from .files import find_item, make_item, update_items
from .text import content_id, near_duplicate, normalise

MAX_GOALS = 20
CAP_DIGESTS = 20
PROMOTE_SIGHTINGS = 3
PROMOTE_SPAN = timedelta(days=7)


class ApplyError(SophiaError):
    pass


# ---------------------------------------------------------------- entry point


def apply_result(kind: str, data: Any, home: Path | None = None, at: datetime | None = None) -> dict[str, Any]:
    h = home or paths.sophia_home()
    if not h.is_dir():
        raise ApplyError(f"{h} does not exist: run `s3 init` first")
    result, env = unwrap(kind, data)
    result = redact_obj(result)
    model = validate(kind, result)
    dg = digest(result)
    if kind == "guardian":
        return _apply_guardian(result)
    t = at or now()
    lp = ledger.ledger_path(h)
    with locked(lp, timeout=30):
        led = ledger.load(h)
        if dg in led["applied"]:
            prev = led["applied"][dg]
            return {"kind": kind, "digest": dg, "already_applied": True, "applied_at": prev.get("applied_at"),
                    "changes": {}}
        appliers: dict[str, Callable[[Any, str, Path, datetime], dict[str, Any]]] = {
            "reflection": apply_reflection, "consolidation": apply_consolidation,
            "memory": apply_memory, "extraction": apply_extraction}
        changes = appliers[kind](model, dg, h, t)
        ledger.record(led, dg, {"kind": kind, "applied_at": iso(t), "task_id": (env or {}).get("task_id"),
                                "agent_type": (env or {}).get("agent_type")}, h)
    return {"kind": kind, "digest": dg, "already_applied": False, "applied_at": iso(t), "changes": changes}


def _apply_guardian(result: dict[str, Any]) -> dict[str, Any]:
    from ..guardian.audit import apply_guardian

    out = apply_guardian(result)
    return {"kind": "guardian", "already_applied": False, "changes": out if isinstance(out, dict) else {}}


# ---------------------------------------------------------------- shared effects


def _load_episode(eid: str, home: Path) -> dict[str, Any] | None:
    try:
        p = episode_path(eid, home)
    except ValueError:
        return None
    data = read_json(p, default=None)
    return data if isinstance(data, dict) else None


def _update_episode(eid: str, home: Path, defaults: dict[str, Any] | None = None,
                    **fields: Any) -> dict[str, Any] | None:
    """Set ``fields`` (and ``defaults`` where absent) on an episode file and its index entry."""
    p = episode_path(eid, home)
    with locked(p):
        ep = _load_episode(eid, home)
        if ep is None:
            return None
        if all(ep.get(k) == v for k, v in fields.items()) and all(k in ep for k in defaults or {}):
            return ep
        ep.update(fields)
        for k, v in (defaults or {}).items():
            ep.setdefault(k, v)
        upsert_episode(ep, home)
    return ep


Resolve = Callable[[str], "tuple[str, str] | None"]


def _resolver(home: Path, local: dict[str, dict[str, Any]] | None = None) -> Resolve:
    """Returns fn(ref) -> (store, id) | None. Stores: 'rules', 'episode', or a memory file stem."""
    rule_ids = {str(r.get("id")) for r in rules.load_rules(home)}

    def resolve(ref: str) -> tuple[str, str] | None:
        if local and ref in local:
            item = local[ref]
            return item["_store"], item["id"]
        if ref in rule_ids:
            return "rules", ref
        if _load_episode(ref, home) is not None:
            return "episode", ref
        hit = find_item(ref, home)
        if hit:
            return hit[0], ref
        if local:
            for item in local.values():
                if item["id"] == ref:
                    return item["_store"], ref
        return None

    return resolve


def _check_links(links: list[Link], resolve: Resolve,
                 field: str = "links") -> list[tuple[tuple[str, str], tuple[str, str], str]]:
    out = []
    for i, link in enumerate(links):
        src = resolve(link.source_id)
        if src is None:
            raise ContractError(f"{field}.{i}.source_id", f"unknown memory id {link.source_id!r}")
        dst = resolve(link.target_id)
        if dst is None:
            raise ContractError(f"{field}.{i}.target_id", f"unknown memory id {link.target_id!r}")
        if src == dst:
            raise ContractError(f"{field}.{i}", "a memory cannot link to itself")
        out.append((src, dst, link.relation))
    return out


def _add_link(obj: dict[str, Any], other: str, relation: str) -> bool:
    links = list(obj.get("links") or [])
    if any(link.get("id") == other and link.get("relation") == relation for link in links if isinstance(link, dict)):
        return False
    links.append({"id": other, "relation": relation})
    obj["links"] = links
    return True


def _write_links(resolved: list[tuple[tuple[str, str], tuple[str, str], str]], home: Path) -> int:
    """P2-1: each link is stored on BOTH memories."""
    by_store: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for (s_store, s_id), (d_store, d_id), rel in resolved:
        by_store[s_store].append((s_id, d_id, rel))
        by_store[d_store].append((d_id, s_id, rel))
    added = 0
    touched: list[dict[str, Any]] = []
    for store, entries in by_store.items():
        if store == "rules":
            with rules.update_rules(home) as rs:
                by_id = {r["id"]: r for r in rs}
                for own, other, rel in entries:
                    if own in by_id and _add_link(by_id[own], other, rel):
                        added += 1
                        touched.append(indexing.rule_item(by_id[own]))
        elif store == "episode":
            for own, other, rel in entries:
                p = episode_path(own, home)
                with locked(p):
                    ep = _load_episode(own, home)
                    if ep is not None and _add_link(ep, other, rel):
                        upsert_episode(ep, home)
                        added += 1
                        touched.append(indexing.episode_item(ep))
        else:
            with update_items(store, home) as items:
                by_id = {i["id"]: i for i in items}
                for own, other, rel in entries:
                    if own in by_id and _add_link(by_id[own], other, rel):
                        added += 1
                        touched.append(by_id[own])
    indexing.upsert(touched, home)
    return added


def digest_prospective(home: Path, at: datetime) -> list[str]:
    """P2-5: prospective facts whose time has passed become historical (run on reflection and
    consolidation)."""
    changed: list[dict[str, Any]] = []
    with update_items("facts", home) as items:
        for item in items:
            if item.get("temporality") != "prospective":
                continue
            et = parse(item.get("event_time"))
            if et is not None and et < at:
                item["temporality"] = "historical"
                item.setdefault("meta", {})["became_historical_at"] = iso(at)
                changed.append(item)
    indexing.upsert(changed, home)
    return [c["id"] for c in changed]


def _merge_rules(heuristics: list[Any], source: str, dg: str, home: Path, at: datetime,
                 decay: bool = False) -> dict[str, Any]:
    added, merged, decayed = [], [], []
    with rules.update_rules(home) as rs:
        for h in heuristics:
            status, rule = rules.add_or_merge(
                rs, trigger=h.trigger_concept, content=h.rule_content, confidence=h.confidence, source=source,
                source_episodes=list(h.source_episodes), digest=dg, at=at)
            if status == "added":
                added.append(rule)
            elif status == "merged":
                merged.append(rule)
        if decay:
            decayed = rules.apply_decay(rs, at)
        touched_ids = {r["id"] for r in added + merged} | {d["id"] for d in decayed}
        touched = [indexing.rule_item(r) for r in rs if r["id"] in touched_ids]
    indexing.upsert(touched, home)
    return {"rules_added": [_rule_brief(r) for r in added], "rules_merged": [_rule_brief(r) for r in merged],
            "rules_decayed": decayed}


def _rule_brief(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r.get(k) for k in ("id", "trigger_concept", "rule_content", "confidence", "validation_count")}


# ---------------------------------------------------------------- reflection (13.2, 5.3, P2-2)


def _update_self_model(home: Path, fn: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    from ..models import SelfModel
    from ..state import _default_self_model, update_model

    with update_model(paths.self_model_path(home), SelfModel, _default_self_model, home) as sm:
        creed = list(sm.terminal_creed)
        out = fn(sm)
        if list(sm.terminal_creed) != creed:  # defence in depth: no applier may touch it
            raise ApplyError("refusing to write: the terminal creed would change")
    return out


def apply_capability(sm: Any, cu: Any, dg: str, at: datetime) -> dict[str, Any] | None:
    from ..models import SkillRecord

    key = next((k for k in sm.capabilities if normalise(k) == normalise(cu.domain)), cu.domain)
    rec = sm.capabilities.get(key) or SkillRecord.model_validate({"last_refined": at})
    seen = list((rec.model_extra or {}).get("applied_digests") or [])
    if dg in seen:
        return None
    before = {"proficiency": rec.proficiency, "success_rate": rec.success_rate,
              "experience_count": rec.experience_count}
    prof, sr, exp = rec.proficiency, rec.success_rate, rec.experience_count
    for o in cu.outcomes:  # seed 5.3
        exp += 1
        sr = 0.1 * (1.0 if o.success else 0.0) + 0.9 * sr
        prof = min(1.0, prof + 0.05 * o.complexity) if o.success else max(0.0, prof - 0.02 * o.complexity)
    prof = min(1.0, max(0.0, prof + cu.proficiency_delta))
    rec.proficiency = round(prof, 4)
    rec.success_rate = round(sr, 4)
    rec.experience_count = exp
    rec.last_refined = at
    setattr(rec, "applied_digests", (seen + [dg])[-CAP_DIGESTS:])  # noqa: B010
    sm.capabilities[key] = rec
    return {"domain": key, "before": before, "after": {"proficiency": rec.proficiency,
            "success_rate": rec.success_rate, "experience_count": rec.experience_count}, "reason": cu.reason}


def _add_unique(existing: list[str], new: list[str], cap: int) -> tuple[list[str], list[str]]:
    added = []
    out = list(existing)
    for g in new:
        g = g.strip()
        if not g or any(near_duplicate(g, e, 0.85) for e in out):
            continue
        out.append(g)
        added.append(g)
    return out[-cap:], added


def reflection_gaps(r: ReflectionResult, home: Path) -> list[dict[str, Any]]:
    """The gaps a reflection identified, as records: in the project of the episodes it analysed when they
    share one; unscoped otherwise (listed by ``s3 status``, never shown at SessionStart)."""
    from .. import gaps as gap_records

    episodes = [ep for ep in (_load_episode(eid, home) for eid in r.episodes_analyzed) if ep]
    found = {ep.get("project") for ep in episodes}
    project = found.pop() if len(found) == 1 else None
    return [gap_records.record(g, project=project if isinstance(project, str) else None, source="reflection",
                               source_ids=r.episodes_analyzed) for g in r.knowledge_gaps_identified]


def apply_reflection(r: ReflectionResult, dg: str, home: Path, at: datetime) -> dict[str, Any]:
    resolved = _check_links(r.links, _resolver(home))
    changes = _merge_rules(r.heuristics, "reflection", dg, home, at)
    new_gaps = reflection_gaps(r, home)

    def mutate(sm: Any) -> dict[str, Any]:
        caps = [c for c in (apply_capability(sm, cu, dg, at) for cu in r.capability_updates) if c]
        added_gaps = gaps.add(sm, new_gaps, at)
        goals_before = list((sm.model_extra or {}).get("suggested_goals") or [])
        goals_after, goals = _add_unique(goals_before, r.suggested_goals, MAX_GOALS)
        if goals:
            setattr(sm, "suggested_goals", goals_after)  # noqa: B010
        if r.heuristics or r.capability_updates or r.knowledge_gaps_identified or r.episodes_analyzed:
            sm.last_reflection = at
        if caps or added_gaps or goals:
            sm.updated_at = now()
        return {"capability_updates": caps, "knowledge_gaps_added": added_gaps, "suggested_goals_added": goals}

    changes.update(_update_self_model(home, mutate))
    _log_capabilities(changes["capability_updates"], dg, home, at)
    analyzed: list[dict[str, Any]] = []
    unknown: list[str] = []
    reindex: list[dict[str, Any]] = []
    for eid in r.episodes_analyzed:
        ep, changed = _attach_lessons(eid, r, home, at)
        if ep is None:
            unknown.append(eid)
            continue
        analyzed.append({"id": eid, "goal_summary": ep.get("goal_summary"), "outcome": ep.get("outcome"),
                         "heuristics": list(ep.get("heuristics") or []), "error_analysis": ep.get("error_analysis")})
        if changed:
            reindex.append(indexing.episode_item(ep))
    indexing.upsert(reindex, home)
    changes["episodes_analyzed"] = analyzed
    changes["episodes_unknown"] = unknown
    changes["questions"] = [q.model_dump() for q in r.questions]
    changes["links_added"] = _write_links(resolved, home)
    changes["facts_now_historical"] = digest_prospective(home, at)
    return changes


def _log_capabilities(caps: list[dict[str, Any]], dg: str, home: Path, at: datetime) -> None:
    """Append each applied capability change to the history the viewer charts (the self-model keeps only
    the current values); a digest applied again changes nothing, so logs nothing."""
    for c in caps:
        line = {"at": iso(at), "domain": c["domain"], "digest": dg, **c["after"]}
        append_line(paths.capability_history_path(home), json.dumps(line, ensure_ascii=False))


def _attach_lessons(eid: str, r: ReflectionResult, home: Path, at: datetime) -> tuple[dict[str, Any] | None, bool]:
    """Mark an analysed episode reflected and keep on it the lessons drawn from it: each heuristic's rule
    (those naming source episodes only on these) and the error analysis. (episode or None, whether it
    changed); applying the same result again changes nothing."""
    try:
        p = episode_path(eid, home)
    except ValueError:
        return None, False
    with locked(p):
        ep = _load_episode(eid, home)
        if ep is None:
            return None, False
        heur = [str(h) for h in ep.get("heuristics") or []]
        heur += [h.rule_content for h in r.heuristics
                 if (not h.source_episodes or eid in h.source_episodes) and h.rule_content not in heur]
        fields: dict[str, Any] = {"reflected": True, "heuristics": list(dict.fromkeys(heur))}
        if r.error_analysis:
            fields["error_analysis"] = r.error_analysis
        if all(ep.get(k) == v for k, v in fields.items()) and "reflected_at" in ep:
            return ep, False
        ep.update(fields)
        ep.setdefault("reflected_at", iso(at))
        upsert_episode(ep, home)
    return ep, True


# ---------------------------------------------------------------- consolidation (15.3, 13.4)


def apply_consolidation(r: ConsolidationResult, dg: str, home: Path, at: datetime) -> dict[str, Any]:
    for i, eid in enumerate(r.episodes_consolidated):
        if _load_episode(eid, home) is None:
            raise ContractError(f"episodes_consolidated.{i}", f"unknown episode {eid!r}")
    for i, rule in enumerate(r.rules_created):
        if not rule.source_episodes:
            raise ContractError(f"rules_created.{i}.source_episodes", "a consolidated rule names its episodes")
    changes = _merge_rules(r.rules_created, "consolidation", dg, home, at, decay=True)
    done, items = [], []
    for eid in r.episodes_consolidated:
        ep = _update_episode(eid, home, {"consolidated_at": iso(at)}, consolidated=True)
        if ep is not None:
            done.append(eid)
            items.append(indexing.episode_item(ep))
    indexing.upsert(items, home)
    changes["episodes_consolidated"] = done
    changes["clusters_found"] = r.clusters_found
    changes["skipped_reason"] = r.skipped_reason
    changes["facts_now_historical"] = digest_prospective(home, at)
    return changes


# ---------------------------------------------------------------- memory (12.2 + verification)


def apply_memory(r: MemoryResult, dg: str, home: Path, at: datetime) -> dict[str, Any]:
    resolve = _resolver(home)
    used: dict[str, list[str]] = defaultdict(list)
    unknown = []
    for m in r.matches:
        loc = resolve(m.id)
        if loc is None:
            unknown.append(m.id)
        else:
            used[loc[0]].append(m.id)
    verified = {m.id for m in r.matches if m.verified}
    stamp = iso(at)

    def bump(obj: dict[str, Any], target: dict[str, Any]) -> None:
        target["access_count"] = int(target.get("access_count") or 0) + 1
        target["last_accessed"] = stamp
        if obj["id"] in verified:
            target["verified_count"] = int(target.get("verified_count") or 0) + 1

    indexing.upsert(_touch(used, bump, home), home)
    entry = {"at": stamp, "digest": dg, "query": r.query, "used": [m.id for m in r.matches if m.id not in unknown],
             "verified": sorted(verified), "rejected": r.rejected, "rounds": r.rounds,
             "rewritten_queries": r.rewritten_queries, "sub_queries": r.sub_queries, "sufficient": r.sufficient,
             "search_method": r.search_method}
    import json

    append_line(paths.memory_dir(home) / "retrievals.jsonl", json.dumps(entry, ensure_ascii=False))
    return {"query": r.query, "used": entry["used"], "verified": entry["verified"], "unknown": unknown,
            "rejected": r.rejected}


def _touch(used: dict[str, list[str]], bump: Callable[[dict[str, Any], dict[str, Any]], None],
           home: Path) -> list[dict[str, Any]]:
    """Apply ``bump(obj, counters)`` to each used memory in its store; return their index items."""
    touched: list[dict[str, Any]] = []
    for store, ids in used.items():
        if store == "rules":
            with rules.update_rules(home) as rs:
                for rule in rs:
                    if rule["id"] in ids:
                        bump(rule, rule)
                        touched.append(indexing.rule_item(rule))
        elif store == "episode":
            for eid in ids:
                with locked(episode_path(eid, home)):
                    ep = _load_episode(eid, home)
                    if ep is not None:
                        bump(ep, ep)
                        upsert_episode(ep, home)
                        touched.append(indexing.episode_item(ep))
        else:
            with update_items(store, home) as items:
                for item in items:
                    if item["id"] in ids:
                        bump(item, item.setdefault("meta", {}))
                        touched.append(item)
    return touched


# ---------------------------------------------------------------- extraction (EverMemOS, SHEEP, P2)
# Named steps: check -> build every item (nothing written) -> check links -> scene -> write -> index.
# The kinds built one per contract entry come from the registry (sophia.kinds.extracted()).


def _episode_project(eid: str | None, home: Path) -> str | None:
    """The project of the episode a digest came from: what it learned there belongs to that project
    (the profile, about the user, stays where the contract puts it)."""
    ep = _load_episode(eid, home) if eid else None
    project = ep.get("project") if ep else None
    return project if isinstance(project, str) and project else None


class _Extraction:
    """One extraction being applied: the result, its time and the items built from it."""

    def __init__(self, r: ExtractionResult, home: Path, at: datetime) -> None:
        self.r, self.home = r, home
        self.observed = parse(r.observed_at) or at
        self.stamp = iso(self.observed)
        self.base = {"project": r.project or _episode_project(r.episode_id, home), "timestamp": self.stamp,
                     "source_ids": [r.episode_id] if r.episode_id else []}
        self.narrative = " ".join(x for x in (r.subject, r.summary, r.episode) if x).strip()
        self.memcell: dict[str, Any] | None = None
        self.built: dict[str, list[dict[str, Any]]] = {}  # kind name -> new items
        self.local: dict[str, dict[str, Any]] = {}  # contract path ("atomic_facts.0") -> item
        self.written: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []

    @property
    def mc_id(self) -> str | None:
        return self.memcell["id"] if self.memcell else None

    def maker(self, kind: kinds.Kind) -> kinds.Maker:
        def new(parts: tuple[Any, ...], text: str, **kw: Any) -> dict[str, Any]:
            return make_item(content_id(kind.prefix, *parts), kind.name, text, memcell_id=self.mc_id,
                             **self.base, **kw)

        return kinds.Maker(kind, new, self.observed, self.r.episode_id)


def _build_memcell(x: _Extraction) -> None:
    """The narrative (subject, summary, episode) as one MemCell; links may call it ``episode``."""
    if not x.narrative:
        return
    r = x.r
    x.memcell = make_item(content_id("mc_", x.narrative, r.episode_id or ""), "memcell", x.narrative,
                          meta={"subject": r.subject, "summary": r.summary, "parent_episode_id": r.episode_id},
                          **x.base)
    x.memcell["_store"] = "memcells"
    x.local["episode"] = x.local["memcell"] = x.memcell


def _build_items(x: _Extraction) -> None:
    """One item per entry of each registered kind's contract field."""
    for kind in kinds.extracted():
        assert kind.build is not None and kind.contract_field
        m = x.maker(kind)
        items = x.built.setdefault(kind.name, [])
        for i, entry in enumerate(getattr(x.r, kind.contract_field, None) or []):
            item = kind.build(entry, m)
            item["_store"] = kind.plural
            x.local[f"{kind.contract_field}.{i}"] = item
            items.append(item)
    for i, pf in enumerate(x.r.profile):  # profile facts are merged by _apply_profile
        x.local[f"profile.{i}"] = {"id": content_id("prof_", pf.fact), "_store": "profile"}


def _assign_scene(x: _Extraction) -> str | None:
    """Online clustering: the extraction joins (or starts) one scene."""
    r = x.r
    facts = x.built.get("fact") or []
    scene_text = x.narrative or " ".join(f.fact for f in r.atomic_facts) or " ".join(p.fact for p in r.profile)
    if not scene_text:
        return None
    member = x.mc_id or (facts[0]["id"] if facts else content_id("mc_", scene_text))
    vecs = scenes.embed([scene_text], x.home)
    with update_items("scenes", x.home) as sc:
        scene = scenes.assign(sc, member, scene_text, x.observed, vecs[0] if vecs else None)
    indexing.upsert([scene], x.home)
    for it in [x.memcell, *(i for items in x.built.values() for i in items)]:
        if it is not None:
            it["scene_id"] = scene["id"]
    return str(scene["id"])


def _store_new(x: _Extraction, stem: str, new_items: list[dict[str, Any]], detect: bool = False) -> list[str]:
    """Add the items not yet in ``memory/<stem>.json`` (a known id gains the new sources)."""
    ids: list[str] = []
    with update_items(stem, x.home) as items:
        by_id = {i["id"]: i for i in items}
        for new in new_items:
            clean = {k: v for k, v in new.items() if k != "_store"}
            if clean["id"] in by_id:
                old = by_id[clean["id"]]
                old["source_ids"] = sorted(set(old.get("source_ids") or []) | set(clean["source_ids"]))
                continue
            if detect:
                x.records.extend(conflicts.detect_and_resolve(clean, items))
            items.append(clean)
            by_id[clean["id"]] = clean
            ids.append(clean["id"])
        x.written.extend(i for i in items if i["id"] in ids or (i.get("meta") or {}).get("superseded_by") in ids)
    return ids


def _update_source_episode(x: _Extraction) -> None:
    r = x.r
    if not r.episode_id:
        return
    fields: dict[str, Any] = {}
    if r.episode:
        fields["narrative"] = r.episode
    if x.mc_id:
        fields["memcell_id"] = x.mc_id
    if fields:
        ep = _update_episode(r.episode_id, x.home, **fields)
        if ep:
            indexing.upsert([indexing.episode_item(ep)], x.home)


def apply_extraction(r: ExtractionResult, dg: str, home: Path, at: datetime) -> dict[str, Any]:
    if r.episode_id and _load_episode(r.episode_id, home) is None:
        raise ContractError("episode_id", f"unknown episode {r.episode_id!r}")
    x = _Extraction(r, home, at)
    _build_memcell(x)
    _build_items(x)
    resolved = _check_links(r.links, _resolver(home, x.local))  # last check: nothing written before it
    changes: dict[str, Any] = {}
    scene_id = _assign_scene(x)
    if scene_id:
        changes["scene_id"] = scene_id
    if x.memcell is not None:
        changes["memcell"] = _store_new(x, "memcells", [x.memcell]) or [x.memcell["id"]]
    for kind in kinds.extracted():
        changes[kind.added_key] = _store_new(x, kind.plural, x.built[kind.name], detect=kind.detect_conflicts)
    changes["profile"] = _apply_profile(r, dg, home, x.observed, scene_id, x.mc_id, x.records, x.written)
    conflicts.log_records(x.records, home)
    changes["conflicts"] = x.records
    indexed = indexing.upsert(x.written, home)
    changes["links_added"] = _write_links(resolved, home)
    _update_source_episode(x)
    changes["index_updated"] = indexed
    return changes


def _apply_profile(r: ExtractionResult, dg: str, home: Path, observed: datetime, scene_id: str | None,
                   mc_id: str | None, records: list[dict[str, Any]], written: list[dict[str, Any]]) -> dict[str, Any]:
    """SHEEP profile discrimination: seen 3+ times over 7+ days -> stable; an explicit time ->
    transient with an end; otherwise transient."""
    out: dict[str, Any] = {"added": [], "confirmed": [], "promoted": []}
    if not r.profile:
        return out
    stamp = iso(observed)
    with update_items("profile", home) as items:
        by_id = {i["id"]: i for i in items}
        for pf in r.profile:
            pid = content_id("prof_", pf.fact)
            item = by_id.get(pid)
            if item is None:
                item = make_item(pid, "profile", pf.fact, project=r.project, timestamp=stamp,
                                 source_ids=[r.episode_id] if r.episode_id else [], scene_id=scene_id,
                                 memcell_id=mc_id,
                                 meta={"kind": pf.kind, "stability": "transient", "sightings": [],
                                       "first_seen": stamp, "last_confirmed": stamp, "confidence": pf.confidence})
                records.extend(conflicts.detect_and_resolve(item, items))
                items.append(item)
                by_id[pid] = item
                out["added"].append(pid)
            meta = item["meta"]
            sightings = list(meta.get("sightings") or [])
            if any(s.get("digest") == dg for s in sightings):
                continue
            sightings.append({"at": stamp, "digest": dg})
            meta["sightings"] = sightings
            meta["kind"] = pf.kind
            meta["confidence"] = max(float(meta.get("confidence") or 0.0), pf.confidence)
            times = sorted(t for t in (parse(s.get("at")) for s in sightings) if t)
            meta["first_seen"] = iso(times[0]) if times else stamp
            meta["last_confirmed"] = iso(times[-1]) if times else stamp
            if item["id"] not in out["added"]:
                out["confirmed"].append(pid)
            if pf.valid_until:
                item["valid_until"] = iso(parse(pf.valid_until))
                meta["stability"] = "transient"
            elif (len(times) >= PROMOTE_SIGHTINGS and times[-1] - times[0] >= PROMOTE_SPAN
                  and meta.get("stability") != "stable" and not item.get("valid_until")):
                meta["stability"] = "stable"
                meta["promoted_at"] = stamp
                out["promoted"].append(pid)
            written.append(item)
    return out
