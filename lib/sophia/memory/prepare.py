"""Evidence packs the reflection and consolidation subagents start from."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import uuid4

from .. import paths
from ..atomic import read_json
from ..episode_store import episode_path, read_index
from ..timeutil import iso
from . import rules, scenes

MAX_ACTIONS = 20
MAX_TEXT = 400


def _short(v: Any) -> Any:
    if isinstance(v, str) and len(v) > MAX_TEXT:
        return v[:MAX_TEXT] + "..."
    if isinstance(v, dict):
        return {k: _short(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_short(x) for x in v]
    return v


def episode_brief(eid: str, home: Path) -> dict[str, Any] | None:
    try:
        ep = read_json(episode_path(eid, home), default=None)
    except Exception:
        return None
    if not isinstance(ep, dict):
        return None
    keep = ("id", "goal", "goal_summary", "outcome", "error_analysis", "heuristics", "keywords", "project",
            "started_at", "ended_at", "tool_call_count", "errors", "files_touched", "narrative", "consolidated",
            "reflected")
    out = {k: ep.get(k) for k in keep if k in ep}
    out["actions"] = _short(list(ep.get("actions") or [])[:MAX_ACTIONS])
    return _short(out)


def _task(agent: str, kind: str, home: Path) -> dict[str, Any]:
    tid = f"{agent}-{uuid4().hex[:12]}"
    result = paths.agent_results_dir(home) / f"{tid}.json"
    return {"task_id": tid, "agent_type": agent, "result_path": str(result),
            "apply_command": f"s3 apply {kind} {result}"}


def reflect_pack(n: int = 5, episode_id: str | None = None, home: Path | None = None) -> dict[str, Any]:
    from ..models import SelfModel
    from ..state import _default_self_model, load_model

    h = home or paths.sophia_home()
    entries = list(read_index(h).get("entries") or [])
    if episode_id:
        chosen = [episode_id]
    else:
        fresh = [e for e in entries if not e.get("consolidated") and not e.get("trivial")]
        unreflected = [e for e in fresh if not (episode_brief(e["id"], h) or {}).get("reflected")]
        chosen = [e["id"] for e in (unreflected or fresh)[:n]]
    episodes = [b for b in (episode_brief(eid, h) for eid in chosen) if b]
    sm = load_model(paths.self_model_path(h), SelfModel, _default_self_model)
    rs = sorted(rules.load_rules(h), key=lambda r: str(r.get("created_at") or ""), reverse=True)
    return {
        "generated_at": iso(),
        "task": _task("s3-reflection", "reflection", h),
        "episodes": episodes,
        "self_model": {
            "capabilities": {k: v.model_dump(mode="json", include={"proficiency", "experience_count",
                                                                   "success_rate"})
                             for k, v in sm.capabilities.items()},
            "knowledge_gaps": [{"text": g.text, "project": g.project} for g in sm.knowledge_gaps if g.is_open],
            "last_reflection": iso(sm.last_reflection) if sm.last_reflection else None,
        },
        "existing_rules": [{k: r.get(k) for k in ("id", "trigger_concept", "rule_content", "confidence")}
                           for r in rs[:50]],
    }


def consolidate_pack(home: Path | None = None, min_episodes: int | None = None) -> dict[str, Any]:
    h = home or paths.sophia_home()
    entries = [e for e in read_index(h).get("entries") or [] if not e.get("consolidated") and not e.get("trivial")]
    briefs = [b for b in (episode_brief(e["id"], h) for e in entries) if b]
    texts = [" ".join([b.get("goal_summary") or "", b.get("goal") or "", " ".join(b.get("keywords") or []),
                       " ".join(b.get("heuristics") or [])]) for b in briefs]
    clustering = scenes.cluster_texts(texts, h) if briefs else {"method": "none", "labels": []}
    labels = clustering.pop("labels")
    clusters: dict[int, list[dict[str, Any]]] = {}
    noise = []
    for b, label in zip(briefs, labels, strict=True):
        if label < 0:
            noise.append(b["id"])
        else:
            clusters.setdefault(label, []).append(b)
    out = [{"cluster_id": f"c{k}", "size": len(v), "episode_ids": [b["id"] for b in v],
            "outcomes": {o: sum(1 for b in v if b.get("outcome") == o) for o in {b.get("outcome") for b in v}},
            "episodes": v} for k, v in sorted(clusters.items())]
    return {"generated_at": iso(), "task": _task("s3-consolidation", "consolidation", h),
            "clustering": clustering, "unconsolidated": len(briefs), "clusters": out, "noise": noise,
            "min_episodes": min_episodes}
