"""What the user model learns from the digests, and the profile lines SessionStart shows. Stdlib only.

:func:`refresh` derives three fields of ``user_models/<user>.json`` from what the digests stored and
leaves every other key as it is (lock, read, change, atomic write, only when something changed):

- ``preferences``: each live profile fact of kind ``preference`` (``memory/profile.json``, written by
  ``s3 apply extraction``), under its id: text, stability, confidence, when last confirmed, and
  ``"source": "digest"``. A key without that source is the user's own and is never touched.
- ``traits`` (an extra key): the live profile facts of kind ``stable_trait`` (texts, newest first);
- ``inferred_goals``: the live profile facts that state a goal (:data:`GOAL_WORDS`), newest first.
- ``knowledge_level``: per domain (``domains.guess_domain`` of an episode's goal and keywords), from the
  non-trivial episodes of the index: how often the user *asked* (the opening prompt is a question) and
  how often they *directed* the work. NOVICE: 2+ episodes, half or more questions. EXPERT: 5+
  episodes, at most one in five a question, most succeeded. INTERMEDIATE: any other domain with 2+.
  The counts behind each level are kept in ``knowledge_basis`` (why it says so).

A profile fact is live unless superseded (``meta.superseded_by``) or past its ``valid_until``.
:func:`profile_lines` is on SessionStart's path: it and this module's top level import nothing beyond
what that hook has loaded already (the writers' imports are inside the functions that write).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from .. import paths
from ..timeutil import iso, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_GOALS = 5
MAX_PREFERENCES = 30
MIN_EPISODES = 2
EXPERT_EPISODES = 5
# patterns, compiled on first use (re caches them): not on SessionStart's path
GOAL_WORDS = (r"(?i)\b(wants? to|goals?|aims? to|plans? to|planning to|trying to|working (on|towards?)|"
              r"intends? to|hopes? to|is learning|learning to|preparing for)\b")
QUESTION = r"(?i)^\s*(how|what|why|when|where|which|who|is|are|can|could|should|does|do|explain)\b|\?\s*$"
DIGEST = "digest"
FIRM_CONFIDENCE = 0.8  # a learned preference shown before it is stable (seen 3+ times over 7+ days)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _live(item: dict[str, Any], now: datetime) -> bool:
    meta = _dict(item.get("meta"))
    if meta.get("superseded_by") or not isinstance(item.get("text"), str) or not item["text"].strip():
        return False
    end = parse(item.get("valid_until")) if isinstance(item.get("valid_until"), str) else None
    return end is None or end > now


def _read(path: Path) -> Any:
    """A JSON file's content; None when it is missing or unreadable (a corrupt file is ``s3 doctor``'s)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None


def profile_facts(home: Path, now: datetime) -> list[dict[str, Any]]:
    """The live profile facts, most recently confirmed first."""
    data = _read(paths.memory_dir(home) / "profile.json")
    items = data.get("items") if isinstance(data, dict) else None
    live = [i for i in items or [] if isinstance(i, dict) and _live(i, now)]
    return sorted(live, key=lambda i: str((i.get("meta") or {}).get("last_confirmed") or i.get("timestamp") or ""),
                  reverse=True)


def preferences(facts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for f in facts:
        meta = _dict(f.get("meta"))
        if meta.get("kind") == "preference" and len(out) < MAX_PREFERENCES:
            out[str(f["id"])] = {"text": f["text"].strip(), "stability": meta.get("stability") or "transient",
                                 "confidence": meta.get("confidence"), "last_confirmed": meta.get("last_confirmed"),
                                 "source": DIGEST}
    return out


def traits(facts: list[dict[str, Any]]) -> list[str]:
    return [f["text"].strip() for f in facts if (f.get("meta") or {}).get("kind") == "stable_trait"][:MAX_GOALS]


def goals(facts: list[dict[str, Any]]) -> list[str]:
    return [f["text"].strip() for f in facts if re.search(GOAL_WORDS, f["text"])][:MAX_GOALS]


def knowledge(entries: list[Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(domain -> NOVICE | INTERMEDIATE | EXPERT, domain -> the counts behind it)."""
    from .domains import GENERAL, guess_domain

    seen: dict[str, list[int]] = {}  # domain -> [episodes, questions, successes]
    for e in entries:
        if not isinstance(e, dict) or e.get("trivial"):
            continue
        goal = str(e.get("goal_summary") or "")
        words = " ".join(k for k in e.get("keywords") or [] if isinstance(k, str))
        domain = guess_domain(f"{goal} {words}")
        if domain == GENERAL:
            continue
        c = seen.setdefault(domain, [0, 0, 0])
        c[0] += 1
        c[1] += bool(re.search(QUESTION, goal))
        c[2] += e.get("outcome") == "SUCCESS"
    levels, basis = {}, {}
    for domain, (n, asked, ok) in sorted(seen.items()):
        if n < MIN_EPISODES:
            continue
        if 2 * asked >= n:
            levels[domain] = "NOVICE"
        elif n >= EXPERT_EPISODES and 5 * asked <= n and 2 * ok > n:
            levels[domain] = "EXPERT"
        else:
            levels[domain] = "INTERMEDIATE"
        basis[domain] = f"{n} sessions: {asked} asked, {n - asked} directed, {ok} succeeded"
    return levels, basis


def _episode_entries(home: Path) -> list[Any]:
    index = _read(paths.episode_index_path(home))
    entries = index.get("entries") if isinstance(index, dict) else None
    return entries if isinstance(entries, list) else []


def learned(home: Path, now: datetime | None = None) -> dict[str, Any]:
    """The fields :func:`refresh` writes, derived afresh."""
    facts = profile_facts(home, now or datetime.now(UTC))
    levels, basis = knowledge(_episode_entries(home))
    return {"preferences": preferences(facts), "traits": traits(facts), "inferred_goals": goals(facts),
            "knowledge_level": levels, "knowledge_basis": basis}


def refresh(home: Path, user_id: str = "default", now: datetime | None = None) -> bool:
    """Fold what the digests learned into the user model. True when the file changed."""
    from ..atomic import read_json, write_json_atomic
    from ..locking import locked

    new = learned(home, now)
    p = paths.user_model_path(user_id, home)
    with locked(p, timeout=10):
        data = read_json(p, default=None)
        if not isinstance(data, dict):
            data = {"user_id": user_id, "created_at": iso()}  # every other field has its model default
        before = dict(data)
        prefs = _dict(data.get("preferences"))
        own = {k: v for k, v in prefs.items() if not (isinstance(v, dict) and v.get("source") == DIGEST)}
        data["preferences"] = {**own, **new["preferences"]}
        data.update({k: new[k] for k in ("traits", "inferred_goals", "knowledge_level", "knowledge_basis")})
        if data == before:
            return False
        data["updated_at"] = iso()
        write_json_atomic(p, data)
    return True


def profile_lines(home: Path, user_id: str = "default", max_chars: int = 400) -> list[str]:
    """At most two lines for SessionStart: who the user is (stable traits, firm preferences), then the
    domains they know well or are new to and their goals. Reads only the user model (one small file)."""
    data = _read(paths.user_model_path(user_id, home))
    if not isinstance(data, dict):
        return []
    who = [t for t in data.get("traits") or [] if isinstance(t, str)][:2] + _firm_preferences(data)[:3]
    levels = _dict(data.get("knowledge_level"))
    knows = [d for d, lv in levels.items() if lv == "EXPERT"][:4]
    new_to = [d for d, lv in levels.items() if lv == "NOVICE"][:4]
    goal_list = [g for g in data.get("inferred_goals") or [] if isinstance(g, str)][:2]
    more = ([f"knows {', '.join(knows)} well"] if knows else []) + (
        [f"new to {', '.join(new_to)} (explain more)"] if new_to else []) + (
        [f"goals: {'; '.join(goal_list)}"] if goal_list else [])
    lines = ([f"- About the user: {'; '.join(who)}"] if who else []) + (
        [f"- The user: {'; '.join(more)}"] if more else [])
    return [ln if len(ln) <= max_chars else ln[: max_chars - 3] + "..." for ln in lines]


def _firm_preferences(data: dict[str, Any]) -> list[str]:
    """The user's own preferences, and the learned ones that are stable or held with confidence."""
    prefs = _dict(data.get("preferences"))
    out = []
    for key, v in prefs.items():
        if not isinstance(v, dict):
            out.append(f"{key}: {v}")
        elif isinstance(v.get("text"), str) and (v.get("source") != DIGEST or v.get("stability") == "stable"
                                                 or float(v.get("confidence") or 0) >= FIRM_CONFIDENCE):
            out.append(v["text"])
    return out
